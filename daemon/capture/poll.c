/* Draining the rings and delivering events in timestamp order.
 *
 * Each ring is in (near) timestamp order, but CPUs race: an event stamped
 * on CPU 1 may reach its ring after a later one on CPU 0 was read.  So an
 * event is delivered only once it is older than the watermark: now minus
 * the merge lag (the time a record can take from stamp to commit), and,
 * when the merge pool filled before a ring was emptied, no newer than that
 * ring's newest event read (the rest of that ring is unseen).  The perf
 * records (mmap_events.c) are one more queue of the same merge, with
 * their own rule: nothing newer than T0, the time taken before their rings
 * were read, while they are open. */
#include <errno.h>
#include <linux/types.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <time.h>

#include <bpf/bpf.h>

#include "common/clock.h"
#include "internal.h"

#define GT_CAPTURE_TICK_MS 10

/* Records copied per ring per round: small rounds keep the merge heap
 * small and its slots hot in cache. */
#define DRAIN_BUDGET 1024
#define MAX_ROUNDS 256 /* per poll: a producer faster than us cannot hold poll forever */
/* Perf records read per ring per round: those of several CPUs are sorted
 * into one queue, at a cost that grows with the square of a round's. */
#define MMAP_BUDGET 256

/* Drains the rings round by round, delivering after each round what is
 * known complete: older than now - lag (poll only) and not newer than the
 * newest record read from a ring that still holds more.  `final` (flush)
 * ignores the lag and delivers everything once the rings are empty. */
static int drain_deliver(struct gt_capture *c, int final, gt_capture_cb cb, void *ctx,
			 int *stopped)
{
	int total = 0;

	*stopped = 0;
	for (int round = 0; round < MAX_ROUNDS; round++) {
		uint64_t now = gt_now_ns(), undrained = UINT64_MAX, limit;
		int all, full = 0;

		/* mappings first, with now as their T0 (mmap_events.c) */
		all = gt_mmaps_drain(c, MMAP_BUDGET, &undrained);
		for (int i = 0; i < c->ncpus; i++) {
			struct gt_fifo *f = &c->m.q[i];

			if (gt_ring_drain(c, i, DRAIN_BUDGET))
				continue;
			all = 0;
			full |= f->tail - f->head == f->cap;
			if (c->rings[i].newest_ts < undrained)
				undrained = c->rings[i].newest_ts;
		}
		limit = final ? UINT64_MAX : (now > c->lag_ns ? now - c->lag_ns : 0);
		if (undrained < limit || full)
			limit = undrained; /* a queue full: make room, whatever the lag */
		if (!final && gt_mmaps_open(c) && limit > now)
			limit = now; /* T0: a later perf record may be unread */
		/* a goroutine's labels being read (gt_capture_hold): bounded
		 * by the engine's deadline, and by the queues' room */
		if (!final && !full && c->hold_ts && limit >= c->hold_ts)
			limit = c->hold_ts - 1;
		total += gt_ring_merge_deliver(c, limit, cb, ctx, stopped);
		if (*stopped || all)
			break;
	}
	return total;
}

/* Whether some ring holds records not read yet (no syscall): after the
 * last traced process exits, its filter entry is gone but its exit record
 * may still wait in a ring, and nothing would wake us for it. */
static int rings_pending(const struct gt_capture *c)
{
	for (int i = 0; i < c->ncpus; i++) {
		const struct gt_ring *r = &c->rings[i];

		if (r->consumer && __atomic_load_n(r->consumer, __ATOMIC_ACQUIRE) !=
				   __atomic_load_n(r->producer, __ATOMIC_ACQUIRE))
			return 1;
	}
	return 0;
}

/* Whether the hash map fd (values of 4 bytes) holds an entry: the key
 * found the last time looked up first (one bucket), else the first key.
 * bpf_map_get_next_key from no key walks the buckets up to the first
 * entry, all 65 536 of tgids when it is empty or its entry is far in;
 * walking it at every 10 ms tick was a third of an idle flight recorder's
 * CPU. */
static int map_any(int fd, struct gt_any_key *k)
{
	uint32_t value;

	if (k->have && bpf_map_lookup_elem(fd, &k->key, &value) == 0)
		return 1;
	k->have = bpf_map_get_next_key(fd, NULL, &k->key) == 0;
	return k->have;
}

/* Whether any filter entry exists: a cgroup first (1 024 buckets; a
 * container's session has one, a -p session none), then a tgid. */
static int tracing_any(struct gt_capture *c)
{
	return map_any(c->cgroups_fd, &c->any_cgroup) || map_any(c->tgids_fd, &c->any_tgid);
}

/* Not the lag for the buffered records: a traced process that does
 * anything leaves some buffered at every poll, and waking at the lag
 * (3 ms) was ~300 wakeups a second of an embedded recorder of a process
 * that sleeps 2 000 times a second, a third of them (the daemon's loop
 * drains at the same 10 ms tick).  They wait at most a tick longer. */
int gt_capture_tick_ms(uint64_t lag_ns)
{
	int lag_ms = (int)(lag_ns / 1000000) + 1;

	return lag_ms > GT_CAPTURE_TICK_MS ? lag_ms : GT_CAPTURE_TICK_MS;
}

int gt_capture_poll(struct gt_capture *c, int timeout_ms, gt_capture_cb cb, void *ctx)
{
	struct epoll_event evs[8];
	int stopped, n, tick_ms = gt_capture_tick_ms(c->lag_ns);

	/* BPF wakes us only when a ring is a quarter full: while records are
	 * buffered (deliverable as time passes), a ring holds some or anything
	 * is traced, look at the rings every tick anyway */
	if ((timeout_ms < 0 || timeout_ms > tick_ms) &&
	    (c->m.nbuf || rings_pending(c) || tracing_any(c)))
		timeout_ms = tick_ms;
	n = epoll_wait(c->epfd, evs, 8, timeout_ms);
	if (n < 0)
		return -errno; /* -EINTR: a signal, a clean exit for the caller */
	n = drain_deliver(c, 0, cb, ctx, &stopped);
	if (!c->attached) /* idle: what the last session buffered goes back */
		gt_ring_merge_release(&c->m);
	return stopped ? stopped : n;
}

void gt_capture_set_goid_cb(struct gt_capture *c, gt_capture_goid_cb cb, void *ctx)
{
	c->goid_cb = cb;
	c->goid_ctx = ctx;
}

void gt_capture_hold(struct gt_capture *c, uint64_t ts)
{
	c->hold_ts = ts == UINT64_MAX ? 0 : ts;
}

int gt_capture_deliver_due(struct gt_capture *c, gt_capture_cb cb, void *ctx)
{
	int stopped, n = drain_deliver(c, 0, cb, ctx, &stopped);

	return stopped ? stopped : n;
}

int gt_capture_flush(struct gt_capture *c, gt_capture_cb cb, void *ctx)
{
	int stopped, n = drain_deliver(c, 1, cb, ctx, &stopped);

	return stopped ? stopped : n;
}
