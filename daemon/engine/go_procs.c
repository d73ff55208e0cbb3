/* Go processes: on first sight of a process and at each exec, whether its
 * program is Go 1.19+ and where its goroutine ids are (sym/goinfo.h), for
 * BPF (capture's go_procs map): a thread's switch-out then carries the
 * goroutine it ran (docs/mapping.md, "Goroutines of Go programs").
 *
 * The program is its owner's file: it may sit on a file system that never
 * answers, and its DWARF may take tenths of a second to read.  It is read
 * on a loader thread (sym/loader.h: on its user's budget; a stuck read
 * holds one thread; docs/security.md), which puts the answer in BPF
 * itself as soon as it has it: applied at the engine's next drain, it
 * waited for that drain, up to a tick on this machine and seconds on an
 * emulated one, where gotracectl's own recording waits for a Go binary's
 * symbols before its next drain (sym/loader.h, "A caller that lets it
 * wait").  A drain only lets finished reads go. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/procfs.h"
#include "internal.h"
#include "sym/goinfo.h"
#include "sym/loader.h"
#include "sym/safe_open.h"
#include "util/gt_grow.h"

/* A read's own state (the job's arg): the process, where its answer goes,
 * and whether the engine still wants it: under mu, the loader thread
 * applies it only while not dropped, and the engine sets dropped before
 * it deletes an entry, so a read let go never puts one back. */
struct go_arg {
	uint32_t tgid;
	struct gt_capture *capture;
	pthread_mutex_t mu;
	int dropped;
	struct gt_goinfo gi;
};

struct gt_go_read {
	uint32_t tgid;
	struct gt_sym_job *job;
	struct go_arg *arg; /* the job's: valid until the job is dropped */
};

static void arg_free(void *p)
{
	struct go_arg *a = p;

	pthread_mutex_destroy(&a->mu);
	free(a);
}

/* The answer (err: not Go, or not read) into BPF, on the loader thread.
 * A process gone while its read ran gets no entry (forget() may have
 * come already). */
static void apply(struct go_arg *a, int err)
{
	struct gt_go_proc gp = {0};

	pthread_mutex_lock(&a->mu);
	if (a->dropped) {
		pthread_mutex_unlock(&a->mu);
		return;
	}
	if (err)
		gt_capture_go_proc(a->capture, a->tgid, NULL); /* not Go */
	else if (gt_proc_alive((pid_t)a->tgid) != GT_PROC_DEAD) {
		gp.tls_off = a->gi.tls_off;
		gp.goid_off = a->gi.goid_off;
		gp.labels_off = a->gi.labels_off;
		gp.m_off = a->gi.m_off;
		gp.curg_off = a->gi.curg_off;
		gt_capture_go_proc(a->capture, a->tgid, &gp);
	}
	pthread_mutex_unlock(&a->mu);
}

static int read_go(void *p)
{
	struct go_arg *a = p;
	char path[64];
	int pfd, fd = -1, err = -ENOENT;

	/* the kernel's link, then the checks of every user file: a regular
	 * file of at most 4 GiB, reopened non-blocking (docs/security.md) */
	snprintf(path, sizeof(path), "/proc/%u/exe", a->tgid);
	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd >= 0) {
		fd = gt_sym_reopen(pfd, path, NULL, GT_SYM_FILE_MAX);
		close(pfd);
	}
	if (fd >= 0) {
		err = gt_goinfo_read(fd, &a->gi);
		close(fd);
	}
	apply(a, err);
	return err;
}

static void drop_at(struct gt_engine *e, size_t i)
{
	struct go_arg *a = e->go_reads[i]->arg;

	pthread_mutex_lock(&a->mu);
	a->dropped = 1;
	pthread_mutex_unlock(&a->mu);
	gt_sym_job_drop(e->go_reads[i]->job);
	free(e->go_reads[i]);
	e->go_reads[i] = e->go_reads[--e->ngo_reads];
}

/* Lets the reads of tgid (NULL: every one) go. */
static void drop_reads(struct gt_engine *e, const uint32_t *tgid)
{
	for (size_t i = e->ngo_reads; i-- > 0;)
		if (!tgid || e->go_reads[i]->tgid == *tgid)
			drop_at(e, i);
}

void gt_engine_go_procs_forget(struct gt_engine *e, const uint32_t *tgid)
{
	/* BPF deletes a process's entry at its last switch-out, but a read
	 * that ended after that put it back (apply): a dead
	 * process's entry would stay, and a reused pid would get its offsets */
	drop_reads(e, tgid); /* first: a read under way puts nothing back */
	if (tgid && e->capture)
		gt_capture_go_proc(e->capture, *tgid, NULL);
	if (!tgid) {
		free(e->go_reads);
		e->go_reads = NULL;
		e->capgo_reads = 0;
	}
}

void gt_engine_go_proc(struct gt_engine *e, uint32_t tgid)
{
	struct gt_go_read *r;
	struct go_arg *a;
	char what[64];

	/* The entry stays until this read answers (set, or deleted if the
	 * image is not Go): the exec may have been read from the ring seconds
	 * after it ran (a loaded or emulated machine), when an earlier read
	 * had already found the new image, and deleting it now left a Go
	 * program's switches without ids for as long as this read took. */
	drop_reads(e, &tgid); /* an earlier image's read */
	if (gt_grow(&e->go_reads, &e->capgo_reads, e->ngo_reads + 1, sizeof(*e->go_reads)))
		return;
	r = calloc(1, sizeof(*r));
	a = calloc(1, sizeof(*a));
	if (!r || !a) {
		free(r);
		free(a);
		return;
	}
	a->tgid = tgid;
	a->capture = e->capture;
	pthread_mutex_init(&a->mu, NULL);
	snprintf(what, sizeof(what), "/proc/%u/exe (Go build info)", tgid);
	r->tgid = tgid;
	r->arg = a;
	r->job = gt_sym_call_post((pid_t)tgid, what, read_go, a, arg_free);
	if (!r->job) {
		free(r);
		arg_free(a);
		return;
	}
	e->go_reads[e->ngo_reads++] = r;
}

void gt_engine_go_procs_poll(struct gt_engine *e)
{
	/* answered: their loader thread applied them (apply) */
	for (size_t i = e->ngo_reads; i-- > 0;)
		if (gt_sym_job_wait(e->go_reads[i]->job, 0))
			drop_at(e, i);
}

void gt_engine_go_proc_known(struct gt_engine *e, uint32_t tgid, const struct gt_go_proc *gp)
{
	drop_reads(e, &tgid); /* an earlier image's, which would undo this */
	gt_capture_go_proc(e->capture, tgid, gp);
}
