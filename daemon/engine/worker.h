/* The engine's worker: one thread that runs the slow parts of starting
 * and stopping a session (memtrack's uprobe and perf-event attach and
 * detach, loading the memory programs, reading allocator binaries) so
 * that the thread draining the rings never waits on them.
 *
 * A job runs on the worker (run), then its completion runs back on the
 * engine's thread (done) when the engine reaps it: the sessions, their
 * translators and writers are only ever touched by the engine's thread.
 * Jobs run one at a time, in the order posted.
 *
 * Without a thread (gt_worker_start not called: gotracectl's embedded
 * mode, the tests), post runs both halves at once, on the caller's thread.
 */
#ifndef GT_ENGINE_WORKER_H
#define GT_ENGINE_WORKER_H

#include <pthread.h>

struct gt_job {
	struct gt_job *next;
	void (*run)(struct gt_job *j);   /* on the worker thread */
	void (*done)(struct gt_job *j);  /* on the engine's thread; may free j */
};

struct gt_worker {
	pthread_t thread;
	int threaded;                    /* the thread runs */
	pthread_mutex_t lock;
	pthread_cond_t cond;             /* work posted, or quit */
	pthread_cond_t idle;             /* the queue ran dry */
	struct gt_job *todo, **todo_tail, *done, **done_tail;
	int running;                     /* a job is in run() */
	int quit;
	int efd;                         /* eventfd: readable while jobs are done */
};

/* 0 or -errno (the worker then stays inline). */
int gt_worker_start(struct gt_worker *w);
void gt_worker_post(struct gt_worker *w, struct gt_job *j);
/* Runs done() of every finished job; returns how many. */
int gt_worker_reap(struct gt_worker *w);
/* Waits until some job has finished, then reaps; -1 if nothing is posted
 * (or no thread). */
int gt_worker_reap_wait(struct gt_worker *w);
/* Waits until every posted job has run, then reaps them all. */
void gt_worker_settle(struct gt_worker *w);
/* Settles, then ends the thread. */
void gt_worker_stop(struct gt_worker *w);
/* Readable while finished jobs wait to be reaped; -1 inline. */
int gt_worker_fd(const struct gt_worker *w);

#endif
