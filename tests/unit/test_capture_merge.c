/* The capture's one merge (capture/merge.c): the events of the per-CPU
 * rings and the perf records of every CPU leave in one (ts, arrival)
 * order, whatever queue they waited in; a perf record's held copy is
 * handed over once (the callback owns it), and one never delivered is
 * freed with the merge.  No BPF: the queues are filled by hand, as
 * ring.c and mmap_events.c fill them.  And how long a poll waits for
 * buffered records, and what a dump delivers before it (poll.c). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/internal.h"
#include "common/clock.h"
#include "gt_test.h"

#define MAXLOG 64

/* What came out, in order: ts, and 'e' (event) or 'm' (perf record). */
struct log {
	int n;
	uint64_t ts[MAXLOG];
	char kind[MAXLOG];
	uint32_t pid[MAXLOG];
};

static void note(struct log *l, char kind, uint64_t ts, uint32_t pid)
{
	if (l->n < MAXLOG) {
		l->ts[l->n] = ts;
		l->kind[l->n] = kind;
		l->pid[l->n] = pid;
	}
	l->n++;
}

static int on_event(void *ctx, const struct gt_kev_hdr *ev, size_t len)
{
	(void)len;
	note(ctx, 'e', ev->ts, ev->tgid);
	return 0;
}

static void on_mmap(void *ctx, struct gt_mmap_held *h)
{
	note(ctx, 'm', h->r.ts, h->r.pid);
	free(h); /* ours: a leak here is the sanitizer's to report */
}

static void event(struct gt_capture *c, int q, uint64_t ts, uint32_t tgid)
{
	struct gt_slot *s = gt_ring_merge_slot(&c->m, q);

	GT_REQUIRE(s, "queue %d full", q);
	memset(&s->ev, 0, sizeof(s->ev));
	s->ev.hdr.ts = ts;
	s->ev.hdr.type = GT_KEV_SWITCH;
	s->ev.hdr.tgid = tgid;
	s->len = sizeof(struct gt_kev_switch);
	gt_ring_merge_push(&c->m, q, s);
}

static void perf(struct gt_capture *c, uint64_t ts, uint32_t pid, const char *path)
{
	struct gt_mmap_rec r = {.kind = GT_MMAP_MAP, .pid = pid, .ts = ts, .start = 0x1000,
				.end = 0x2000, .path = path, .path_len = strlen(path)};
	struct gt_mmap_held *h = gt_mmap_record_hold(&r);

	GT_REQUIRE(h && gt_ring_merge_push_mmap(&c->m, h) == 0, "perf record not queued");
}

static void setup(struct gt_capture *c, struct log *l)
{
	memset(c, 0, sizeof(*c));
	memset(l, 0, sizeof(*l));
	GT_REQUIRE(gt_ring_merge_init(&c->m, 2, 8192) == 0, "merge init");
	gt_capture_on_mmap(c, on_mmap, l);
}

static int deliver(struct gt_capture *c, struct log *l, uint64_t upto)
{
	int stopped, n = gt_ring_merge_deliver(c, upto, on_event, l, &stopped);

	GT_CHECK(!stopped, "stopped: %d", stopped);
	return n;
}

/* A process migrates: its exec's mappings are read from one CPU's perf
 * ring, its switches from two BPF rings; each queue is filled in the
 * order its ring was read, and one order comes out. */
static void test_one_order(void)
{
	static const uint64_t want[] = {5, 10, 12, 15, 20, 25, 30, 31, 40};
	static const char kinds[] = "emeemeeme";
	struct gt_capture c;
	struct log l;
	int n;

	setup(&c, &l);
	perf(&c, 10, 7, "/bin/prog");
	perf(&c, 31, 7, "/lib/libc.so.6");
	perf(&c, 20, 7, "/lib/ld.so"); /* another CPU's ring, read after */
	event(&c, 0, 5, 7);
	event(&c, 0, 15, 7);
	event(&c, 0, 40, 7);
	event(&c, 1, 12, 7);
	event(&c, 1, 25, 7);
	event(&c, 1, 30, 7);
	n = deliver(&c, &l, UINT64_MAX);
	GT_CHECK(n == 6, "%d events counted (perf records are not events)", n);
	GT_REQUIRE(l.n == 9, "%d delivered", l.n);
	for (int i = 0; i < 9; i++)
		GT_CHECK(l.ts[i] == want[i] && l.kind[i] == kinds[i], "#%d: %c at %llu, want %c at %llu",
			 i, l.kind[i], (unsigned long long)l.ts[i], kinds[i],
			 (unsigned long long)want[i]);
	GT_CHECK(c.st.out_of_order == 0, "%llu out of order",
		 (unsigned long long)c.st.out_of_order);
	gt_ring_merge_free(&c.m);
}

/* The watermark holds back a perf record as it does an event; equal
 * times leave in arrival order. */
static void test_watermark_and_ties(void)
{
	struct gt_capture c;
	struct log l;

	setup(&c, &l);
	perf(&c, 100, 1, "/a");
	event(&c, 0, 100, 2);
	perf(&c, 300, 3, "/b");
	event(&c, 1, 200, 4);
	deliver(&c, &l, 250);
	GT_REQUIRE(l.n == 3, "%d delivered up to 250", l.n);
	GT_CHECK(l.kind[0] == 'm' && l.kind[1] == 'e' && l.pid[2] == 4,
		 "ties: %c%c, then pid %u", l.kind[0], l.kind[1], l.pid[2]);
	GT_CHECK(c.m.nbuf == 1, "%u buffered", c.m.nbuf);
	deliver(&c, &l, UINT64_MAX);
	GT_CHECK(l.n == 4 && l.kind[3] == 'm' && l.pid[3] == 3, "last: %c pid %u", l.kind[3],
		 l.pid[3]);
	gt_ring_merge_free(&c.m);
}

/* Records never delivered are the merge's to free (the sanitizer build
 * reports a leak otherwise); without a callback, delivered ones too. */
static void test_ownership(void)
{
	struct gt_capture c;
	struct log l;

	setup(&c, &l);
	gt_capture_on_mmap(&c, NULL, NULL);
	perf(&c, 1, 1, "/x");
	deliver(&c, &l, UINT64_MAX);
	perf(&c, 2, 1, "/y");
	perf(&c, 3, 1, "/z");
	GT_CHECK(c.m.nbuf == 2, "%u buffered", c.m.nbuf);
	gt_ring_merge_free(&c.m);
}

/* A queue under a steady load is never empty (records newer than the
 * watermark wait): its slots in use stay near the start, not walked over
 * the whole queue (each page walked stayed resident: 9.8 MiB under nginx),
 * and every record still leaves once, in order. */
static void test_steady_stays_low(void)
{
	struct gt_capture c;
	struct log l;
	uint64_t ts = 0, last = 0;
	uint32_t top = 0, mask;
	int delivered = 0, order = 1;

	setup(&c, &l);
	mask = c.m.q[0].cap - 1;
	for (int round = 0; round < 2000; round++) {
		for (int i = 0; i < 10; i++) {
			event(&c, 0, ++ts, 1);
			if (((c.m.q[0].tail - 1) & mask) > top)
				top = (c.m.q[0].tail - 1) & mask;
		}
		l.n = 0; /* only the order is kept: last */
		delivered += deliver(&c, &l, ts > 100 ? ts - 100 : 0);
		for (int i = 0; i < l.n && i < MAXLOG; i++) {
			order &= l.ts[i] == last + 1;
			last = l.ts[i];
		}
	}
	GT_CHECK(top < 2048, "slot %u of %u used by a queue never more than 110 long", top,
		 mask + 1);
	GT_CHECK(order && delivered == 19900, "%d delivered, in order: %d", delivered, order);
	GT_CHECK(c.m.nbuf == 100, "%u buffered", c.m.nbuf);
	gt_ring_merge_free(&c.m);
}

/* The poll sleeps a tick (10 ms) while records wait for the merge's lag,
 * not the lag (2 ms): it woke 3 times as often for them (poll.c). */
static void test_poll_tick(void)
{
	GT_CHECK(gt_capture_tick_ms(2000000) == 10, "%d ms at the default lag",
		 gt_capture_tick_ms(2000000));
	GT_CHECK(gt_capture_tick_ms(0) == 10, "%d ms at no lag", gt_capture_tick_ms(0));
	GT_CHECK(gt_capture_tick_ms(50000000) == 51, "%d ms at a 50 ms lag",
		 gt_capture_tick_ms(50000000));
}

/* What a flight dump delivers before it freezes (gt_capture_deliver_due):
 * every buffered record older than now - lag, at once, none newer (no
 * rings here: ncpus 0, no perf rings open). */
static void test_deliver_due(void)
{
	struct gt_capture c;
	struct log l;
	uint64_t now = gt_now_ns();
	int n;

	setup(&c, &l);
	c.lag_ns = 3000000;
	event(&c, 0, now - 1000000000, 1);
	event(&c, 1, now - 4000000, 2);
	event(&c, 0, now + 1000000000, 3); /* a second ahead: never due */
	n = gt_capture_deliver_due(&c, on_event, &l);
	GT_CHECK(n == 2 && l.n == 2, "%d delivered (%d noted), want 2", n, l.n);
	GT_CHECK(l.n >= 2 && l.pid[0] == 1 && l.pid[1] == 2, "order %u %u", l.pid[0], l.pid[1]);
	GT_CHECK(c.m.nbuf == 1, "%u left buffered, want 1", c.m.nbuf);
	gt_ring_merge_free(&c.m);
}

int main(void)
{
	GT_RUN(test_one_order);
	GT_RUN(test_watermark_and_ties);
	GT_RUN(test_ownership);
	GT_RUN(test_steady_stays_low);
	GT_RUN(test_poll_tick);
	GT_RUN(test_deliver_due);
	return gt_test_done();
}
