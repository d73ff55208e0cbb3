/* See worker.h. */
#include "worker.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

static void *worker_main(void *arg)
{
	struct gt_worker *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct gt_job *j = w->todo;

		if (!j) {
			pthread_cond_broadcast(&w->idle);
			if (w->quit)
				break;
			pthread_cond_wait(&w->cond, &w->lock);
			continue;
		}
		w->todo = j->next;
		if (!w->todo)
			w->todo_tail = &w->todo;
		w->running = 1;
		pthread_mutex_unlock(&w->lock);
		j->run(j);
		pthread_mutex_lock(&w->lock);
		w->running = 0;
		j->next = NULL;
		*w->done_tail = j;
		w->done_tail = &j->next;
		pthread_cond_broadcast(&w->idle); /* gt_worker_reap_wait */
		if (w->efd >= 0) {
			uint64_t one = 1;

			if (write(w->efd, &one, sizeof(one)) < 0) {
				/* cannot fail but on overflow: the engine
				 * reaps at its next poll anyway */
			}
		}
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int gt_worker_start(struct gt_worker *w)
{
	int rc;

	memset(w, 0, sizeof(*w));
	w->todo_tail = &w->todo;
	w->done_tail = &w->done;
	w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->efd < 0)
		return -errno;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	pthread_cond_init(&w->idle, NULL);
	rc = pthread_create(&w->thread, NULL, worker_main, w);
	if (rc) {
		close(w->efd);
		w->efd = -1;
		return -rc;
	}
	w->threaded = 1;
	return 0;
}

void gt_worker_post(struct gt_worker *w, struct gt_job *j)
{
	j->next = NULL;
	if (!w->threaded) {
		j->run(j);
		j->done(j);
		return;
	}
	pthread_mutex_lock(&w->lock);
	*w->todo_tail = j;
	w->todo_tail = &j->next;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

int gt_worker_reap(struct gt_worker *w)
{
	struct gt_job *j;
	uint64_t n;
	int count = 0;

	if (!w->threaded)
		return 0;
	if (read(w->efd, &n, sizeof(n)) < 0) {
		/* EAGAIN: nothing signalled; the list is checked anyway */
	}
	pthread_mutex_lock(&w->lock);
	j = w->done;
	w->done = NULL;
	w->done_tail = &w->done;
	pthread_mutex_unlock(&w->lock);
	while (j) {
		struct gt_job *next = j->next;

		j->done(j); /* may post more work, may free j */
		j = next;
		count++;
	}
	return count;
}

int gt_worker_reap_wait(struct gt_worker *w)
{
	int idle;

	if (!w->threaded)
		return -1;
	pthread_mutex_lock(&w->lock);
	while (!w->done && (w->todo || w->running))
		pthread_cond_wait(&w->idle, &w->lock);
	idle = !w->done;
	pthread_mutex_unlock(&w->lock);
	return idle ? -1 : gt_worker_reap(w);
}

void gt_worker_settle(struct gt_worker *w)
{
	if (!w->threaded)
		return;
	/* done() may post more jobs: until nothing is left */
	do {
		pthread_mutex_lock(&w->lock);
		while (w->todo || w->running)
			pthread_cond_wait(&w->idle, &w->lock);
		pthread_mutex_unlock(&w->lock);
	} while (gt_worker_reap(w) > 0);
}

void gt_worker_stop(struct gt_worker *w)
{
	if (!w->threaded)
		return;
	gt_worker_settle(w);
	pthread_mutex_lock(&w->lock);
	w->quit = 1;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	close(w->efd);
	w->efd = -1;
	w->threaded = 0;
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	pthread_cond_destroy(&w->idle);
}

int gt_worker_fd(const struct gt_worker *w)
{
	return w->threaded ? w->efd : -1;
}
