/* Benchmark of the Go trace writer: events per second on one core and bytes
 * per event (dictionaries included) for a realistic mix -- mostly scheduling
 * events carrying stack ids, on 8 CPUs, 200 threads, 2000 distinct stacks.
 * Prints figures next to the targets; asserts nothing.
 *
 *   bench_writer [MILLION_EVENTS]   (default 40)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "writer/gt_writer.h"

#define NP 8
#define NTHREADS 200
#define NSTACKS 2000
#define PREGEN (1 << 21) /* events generated once, replayed */

struct bev {
	uint64_t ts;
	uint64_t a[3];
	uint8_t p, type, nargs;
};

static uint64_t rng = 88172645463325252ULL;

static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

/* CPU time of this thread: the figure for "one core", unaffected by other
 * load on the machine (wall time would count time spent descheduled). */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Realistic stacks: ~12 frames of shared functions, symbolized. */
static void make_stacks(struct gt_writer *w, uint64_t *ids)
{
	static const char *fns[] = {"main", "worker_loop", "handle_request", "parse",
				    "malloc", "free", "pthread_mutex_lock", "__lll_lock_wait",
				    "futex_wait", "read", "write", "epoll_wait", "memcpy",
				    "json_decode", "hash_lookup", "send_reply"};
	struct gt_frame fr[32];

	for (int i = 0; i < NSTACKS; i++) {
		int n = 4 + (int)rnd(16);

		for (int k = 0; k < n; k++) {
			uint64_t f = rnd(16);

			fr[k] = (struct gt_frame){0x400000 + f * 0x1000 + rnd(64) * 4, fns[f],
						  "/src/app/server.c", 100 + f * 10};
		}
		ids[i] = gt_writer_stack(w, fr, n);
	}
}

/* The mix the translator writes for a busy server: switch in/out, wakeups,
 * syscalls, a few heap updates. */
static void pregen(struct bev *ev, const uint64_t *stacks, int tick_shift)
{
	uint64_t ts[NP] = {0}, seq[NTHREADS + 1] = {0};

	rng = 88172645463325252ULL;
	for (int i = 0; i < PREGEN; i++) {
		struct bev *e = &ev[i];
		uint64_t r = rnd(100), g = 1 + rnd(NTHREADS);
		/* Hot paths dominate: a skewed pick among the stacks. */
		uint64_t stk = stacks[rnd(NSTACKS) * rnd(NSTACKS) / NSTACKS];

		e->p = (uint8_t)rnd(NP);
		/* A busy CPU: an event every 0.2 to 20 us. */
		ts[e->p] += 200 + rnd(20000);
		e->ts = ts[e->p] >> tick_shift;
		if (r < 25) {
			e->type = GT_EV_GO_START, e->nargs = 2;
			e->a[0] = g, e->a[1] = ++seq[g];
		} else if (r < 50) {
			static const uint8_t out[] = {GT_EV_GO_PREEMPT, GT_EV_GO_BLOCK_SYNC,
						      GT_EV_GO_BLOCK_SELECT, GT_EV_GO_SLEEP};
			e->type = out[rnd(4)], e->nargs = 1;
			e->a[0] = stk;
		} else if (r < 70) {
			e->type = GT_EV_GO_UNBLOCK, e->nargs = 3;
			e->a[0] = g, e->a[1] = ++seq[g], e->a[2] = stk;
		} else if (r < 85) {
			e->type = GT_EV_GO_SYSCALL, e->nargs = 1;
			e->a[0] = stk;
		} else if (r < 90) {
			e->type = GT_EV_GO_SYSBLOCK, e->nargs = 0;
		} else if (r < 95) {
			e->type = GT_EV_GO_SYSEXIT, e->nargs = 3;
			e->a[0] = g, e->a[1] = ++seq[g], e->a[2] = 0;
		} else {
			e->type = GT_EV_HEAP_ALLOC, e->nargs = 1;
			e->a[0] = 1000000 + rnd(1 << 30);
		}
	}
}

/* Writes `total` events of the mix with ticks of 2^tick_shift ns; prints
 * the figures.  Returns 0 or 1. */
static int run(long total, int tick_shift)
{
	char path[] = "/tmp/gt_bench_writer.XXXXXX";
	int fd = mkstemp(path);
	struct bev *ev = malloc(PREGEN * sizeof(*ev));
	uint64_t stacks[NSTACKS], span = 0;
	struct gt_writer *w;
	struct gt_writer_stats st;
	struct stat sb;
	double t0, t1, t2;
	long done = 0;
	int err;

	if (fd < 0 || !ev || gt_writer_open(&w, fd, GT_V1_19, 1000000000 >> tick_shift) != 0) {
		fprintf(stderr, "bench_writer: setup failed: %s\n", strerror(errno));
		return 1;
	}
	unlink(path);
	make_stacks(w, stacks);
	pregen(ev, stacks, tick_shift);
	for (int i = 0; i < PREGEN; i++)
		if (ev[i].ts > span)
			span = ev[i].ts;
	t0 = now();
	for (uint64_t round = 0; done < total; round++) {
		uint64_t off = round * (span + 1);

		for (int i = 0; i < PREGEN && done < total; i++, done++) {
			const struct bev *e = &ev[i];

			if (gt_writer_event(w, e->p, e->type, e->ts + off, e->a, e->nargs)) {
				fprintf(stderr, "bench_writer: event refused\n");
				return 1;
			}
		}
	}
	t1 = now();
	gt_writer_stats(w, &st);
	err = gt_writer_close(w);
	t2 = now();
	if (err || fstat(fd, &sb) != 0) {
		fprintf(stderr, "bench_writer: close: %s\n", strerror(-err));
		return 1;
	}
	close(fd);
	free(ev);
	printf("  -- ticks of %d ns (frequency %d/s) --\n", 1 << tick_shift, 1000000000 >> tick_shift);
	printf("  %-34s %10.1f M/s   (target >= 30 M/s)\n", "events/s, one core (incl. close)",
	       (double)total / (t2 - t0) / 1e6);
	printf("  %-34s %10.1f M/s\n", "events/s, event calls only", (double)total / (t1 - t0) / 1e6);
	printf("  %-34s %10.2f B     (target <= 5 B)\n", "bytes/event incl. dictionaries",
	       (double)sb.st_size / (double)total);
	printf("  %-34s %10lld B, %llu batches, %llu stacks, %llu strings\n", "file",
	       (long long)sb.st_size, (unsigned long long)st.batches,
	       (unsigned long long)st.stacks, (unsigned long long)st.strings);
	return 0;
}

/* Interning cost seen by the translator: a 12-frame stack already known. */
static int bench_stack_interning(void)
{
	struct gt_frame fr[12];
	struct gt_writer *w;
	int fd = open("/dev/null", O_WRONLY);
	long n = 2000000;
	double t0, t1;

	for (int k = 0; k < 12; k++)
		fr[k] = (struct gt_frame){0x400000 + (uint64_t)k * 64, "handle_request",
					  "/src/app/server.c", 10 + (uint64_t)k};
	if (fd < 0 || gt_writer_open(&w, fd, GT_V1_19, 1000000000) != 0)
		return 1;
	t0 = now();
	for (long i = 0; i < n; i++) {
		fr[0].pc = 0x500000 + (uint64_t)(i & 1023) * 4;
		if (!gt_writer_stack(w, fr, 12))
			return 1;
	}
	t1 = now();
	printf("  %-34s %10.2f M/s\n", "12-frame stack interning (hits)", (double)n / (t1 - t0) / 1e6);
	gt_writer_free(w);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	long millions = argc > 1 ? atol(argv[1]) : 40;

	printf("bench_writer: %ld M events, %d CPUs, %d threads, %d stacks, go 1.19 format, "
	       "CPU time of one thread\n", millions, NP, NTHREADS, NSTACKS);
	/* Nanosecond ticks (what the translator writes today), then the Go
	 * runtime's choice of coarser ticks, which shortens every delta. */
	if (run(millions * 1000000L, 0) || run(millions * 1000000L, 6))
		return 1;
	return bench_stack_interning();
}
