/* Benchmark of the Go 1.22+ (v2) encoder (format/v2/gt_v2enc.h): events per
 * second on one core and bytes per event (tables included) for the
 * translator's mix -- switch in, a syscall, a wakeup, a block, on 8 Ms
 * each holding its P, 200 goroutines, 2000 distinct 4-20 frame stacks,
 * a generation every million events (its stacks and reasons interned
 * again, as a caller caching ids per generation would) -- and the cost of
 * interning a known 12-frame stack.  Prints figures; asserts nothing.
 *
 *   bench_v2enc [MILLION_EVENTS]   (default 20)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "v2/gt_v2.h"
#include "v2/gt_v2enc.h"

#define NM 8
#define GPM 25 /* goroutines per M: 200 */
#define NSTACKS 2000
#define GEN_EVENTS 1000000

static uint64_t rng = 88172645463325252ULL;

static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static size_t bytes;

static int sink(void *ctx, const void *p, size_t n)
{
	(void)ctx;
	(void)p;
	bytes += n;
	return 0;
}

static const char *fns[] = {"main", "worker_loop", "handle_request", "parse", "malloc", "free",
			    "pthread_mutex_lock", "__lll_lock_wait", "futex_wait", "read", "write",
			    "epoll_wait", "memcpy", "json_decode", "hash_lookup", "send_reply"};

/* The same 2000 stacks every generation (fixed seed): their ids in it. */
static int intern(struct gt_v2enc *e, uint64_t *ids, uint64_t *reasons)
{
	struct gt_v2enc_frame fr[20];
	uint64_t save = rng;

	rng = 12345;
	for (int i = 0; i < NSTACKS; i++) {
		int n = 4 + (int)rnd(16);

		for (int k = 0; k < n; k++) {
			uint64_t f = rnd(16);

			fr[k] = (struct gt_v2enc_frame){ 0x400000 + f * 0x1000 + rnd(64) * 4, fns[f],
							 "/src/app/server.c", 100 + f * 10 };
		}
		if (!(ids[i] = gt_v2enc_stack(e, fr, (size_t)n)))
			return -1;
	}
	reasons[0] = gt_v2enc_string(e, "sync");
	reasons[1] = gt_v2enc_string(e, "network");
	rng = save;
	return reasons[0] && reasons[1] ? 0 : -1;
}

/* One M's cycle: start a runnable goroutine of its own, a syscall, wake
 * the waiting one, block.  5 events. */
static int cycle(struct gt_v2enc *e, uint64_t m, uint64_t *ts, const uint64_t *stk,
		 const uint64_t *reasons, uint8_t *waiting)
{
	uint64_t base = 1 + m * GPM, g, w, s = stk[rnd(NSTACKS) * rnd(NSTACKS) / NSTACKS];
	int rc;

	do
		g = rnd(GPM);
	while (waiting[base + g]);
	do /* one waits always: the one each cycle blocks */
		w = rnd(GPM);
	while (!waiting[base + w]);
	rc = gt_v2enc_go_start(e, m, *ts += 300, base + g);
	rc = rc ? rc : gt_v2enc_syscall_begin(e, m, *ts += 2000, s);
	rc = rc ? rc : gt_v2enc_syscall_end(e, m, *ts += 800);
	rc = rc ? rc : gt_v2enc_go_unblock(e, m, *ts += 500, base + w, s);
	waiting[base + w] = 0;
	rc = rc ? rc : gt_v2enc_go_block(e, m, *ts += 1500, reasons[rnd(2)], s);
	waiting[base + g] = 1;
	return rc;
}

static int run(long total)
{
	struct gt_v2enc e;
	uint64_t stk[NSTACKS], reasons[2], ts[NM] = { 0 };
	uint8_t waiting[1 + NM * GPM] = { 0 };
	long done = 0, gens = 1, next_gen = GEN_EVENTS;
	double t0, t1;

	if (gt_v2enc_init(&e, 23, 1000000000, sink, NULL))
		return 1;
	t0 = now();
	if (intern(&e, stk, reasons))
		goto fail;
	for (uint64_t m = 0; m < NM; m++) {
		if (gt_v2enc_proc_start(&e, m, ++ts[m], m))
			goto fail;
		for (int i = 0; i < GPM; i++)
			if (gt_v2enc_go_create(&e, m, ++ts[m], 1 + m * GPM + (uint64_t)i, stk[0], 0))
				goto fail;
		waiting[1 + m * GPM] = 1; /* one waits: the first wakeup's */
		if (gt_v2enc_go_start(&e, m, ++ts[m], 1 + m * GPM) ||
		    gt_v2enc_go_block(&e, m, ++ts[m], reasons[0], stk[0]))
			goto fail;
	}
	while (done < total) {
		uint64_t m = rnd(NM);

		if (cycle(&e, m, &ts[m], stk, reasons, waiting))
			goto fail;
		done += 5;
		if (done >= next_gen) {
			uint64_t max = 0;

			for (int i = 0; i < NM; i++)
				max = ts[i] > max ? ts[i] : max;
			if (gt_v2enc_generation(&e, max + 1) || intern(&e, stk, reasons))
				goto fail;
			next_gen += GEN_EVENTS;
			gens++;
		}
	}
	if (gt_v2enc_finish(&e))
		goto fail;
	t1 = now();
	printf("  %-34s %10.1f M/s\n", "v2 events/s, one core (incl. tables)",
	       (double)total / (t1 - t0) / 1e6);
	printf("  %-34s %10.2f B\n", "v2 bytes/event incl. tables", (double)bytes / (double)total);
	printf("  %-34s %10zu B, %ld generations\n", "file", bytes, gens);
	gt_v2enc_free(&e);
	return 0;
fail:
	fprintf(stderr, "bench_v2enc: %s\n", e.error);
	gt_v2enc_free(&e);
	return 1;
}

/* A known 12-frame stack, interned again (one generation). */
static int stack_hits(void)
{
	struct gt_v2enc_frame fr[12];
	struct gt_v2enc e;
	long n = 2000000;
	double t0, t1;

	for (int k = 0; k < 12; k++)
		fr[k] = (struct gt_v2enc_frame){ 0x400000 + (uint64_t)k * 64, "handle_request",
						 "/src/app/server.c", 10 + (uint64_t)k };
	if (gt_v2enc_init(&e, 23, 1000000000, sink, NULL))
		return 1;
	t0 = now();
	for (long i = 0; i < n; i++) {
		fr[0].pc = 0x500000 + (uint64_t)(i & 1023) * 4;
		if (!gt_v2enc_stack(&e, fr, 12))
			return 1;
	}
	t1 = now();
	printf("  %-34s %10.2f M/s\n", "v2 12-frame stack interning (hits)",
	       (double)n / (t1 - t0) / 1e6);
	gt_v2enc_free(&e);
	return 0;
}

int main(int argc, char **argv)
{
	long millions = argc > 1 ? atol(argv[1]) : 20;

	if (millions <= 0) {
		fprintf(stderr, "usage: bench_v2enc [MILLION_EVENTS]\n");
		return 2;
	}
	return run(millions * 1000000) || stack_hits();
}
