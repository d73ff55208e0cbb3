/* Draining the rings and delivering events in timestamp order.
 *
 * Each ring is in (near) timestamp order, but CPUs race: an event stamped
 * on CPU 1 may reach its ring after a later one on CPU 0 was read.  So an
 * event is delivered only once it is older than the watermark: now minus
 * the merge lag (the time a record can take from stamp to commit), and,
 * when the merge pool filled before a ring was emptied, no newer than that
 * ring's newest event read (the rest of that ring is unseen). */
#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <time.h>

#include "capture_internal.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Copies every ring into the pool.  Returns the delivery limit. */
static uint64_t drain_all(struct gt_capture *c, int *all_drained)
{
	uint64_t now = mono_ns();
	uint64_t limit = now > c->lag_ns ? now - c->lag_ns : 0;
	uint64_t undrained = UINT64_MAX;

	*all_drained = 1;
	for (int i = 0; i < c->ncpus; i++) {
		if (gt_ring_drain(c, &c->rings[i]))
			continue;
		*all_drained = 0;
		if (c->rings[i].newest_ts < undrained)
			undrained = c->rings[i].newest_ts;
	}
	/* pool full: make room from the oldest, whatever the lag says */
	return undrained != UINT64_MAX ? undrained : limit;
}

int gt_capture_poll(struct gt_capture *c, int timeout_ms, gt_capture_cb cb, void *ctx)
{
	struct epoll_event evs[8];
	int all, stopped, n, lag_ms = (int)(c->lag_ns / 1000000) + 1;
	uint64_t limit;

	/* buffered events become deliverable as time passes: do not sleep
	 * much longer than the lag while holding some */
	if (c->m.nheap && (timeout_ms < 0 || timeout_ms > lag_ms))
		timeout_ms = lag_ms;
	n = epoll_wait(c->epfd, evs, 8, timeout_ms);
	if (n < 0)
		return -errno; /* -EINTR: a signal, a clean exit for the caller */
	limit = drain_all(c, &all);
	n = gt_merge_deliver(c, limit, cb, ctx, &stopped);
	return stopped ? stopped : n;
}

int gt_capture_flush(struct gt_capture *c, gt_capture_cb cb, void *ctx)
{
	int all = 0, stopped = 0, total = 0;

	while (!all && !stopped) {
		drain_all(c, &all);
		total += gt_merge_deliver(c, UINT64_MAX, cb, ctx, &stopped);
	}
	return stopped ? stopped : total;
}
