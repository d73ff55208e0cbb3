/* bench_unwind [ROUNDS]: what --call-graph=dwarf costs in user space per
 * stack, next to a frame-pointer walk of the same stack (the BPF side of
 * both is unwind_cost.sh's).
 *
 * Inside qsort()'s comparison callback (libc, built without frame
 * pointers on Debian, calls it), the bench takes what BPF copies at a
 * block: the registers and 8 KiB of stack from sp; then unwinds that copy
 * ROUNDS times with the daemon's unwinder (daemon/sym/unwind.h) as the
 * engine does for each GT_KEV_USTACK record, one libdwfl session kept
 * for the process, and walks the frame pointers of the same copy for
 * comparison.  Prints ns per stack and the frames each found.  No
 * assertion: numbers for docs/mapping.md. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gt_ucopy.h"
#include "sym/unwind.h"

static struct gt_ucopy cp;
static int taken;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The registers and the stack, as BPF copies them (DWARF numbering). */
static void take(void)
{
	gt_ucopy_take(&cp);
	taken = 1;
}

static int cmp(const void *a, const void *b)
{
	if (!taken)
		take();
	return *(const int *)a - *(const int *)b;
}

/* A frame-pointer walk of the copy, as the kernel's (rbp / x29 chain). */
static int fp_walk(uint64_t *ips, int max)
{
#if defined(__x86_64__)
	uint64_t fp = cp.regs[6];
#else
	uint64_t fp = cp.regs[29];
#endif
	int n = 0;

	ips[n++] = cp.ip;
	while (n < max && fp >= cp.sp && fp + 16 <= cp.sp + sizeof(cp.stack)) {
		uint64_t f[2];

		memcpy(f, cp.stack + (fp - cp.sp), sizeof(f));
		if (!f[1])
			break;
		ips[n++] = f[1];
		if (f[0] <= fp)
			break;
		fp = f[0];
	}
	return n;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20000, v[64], n = 0, nfp = 0;
	struct gt_unwinder *u = gt_unwinder_new();
	struct gt_unwind_in in;
	uint64_t ips[128], t0, t1, t2;

	/* 8 KiB of stack above the callback's sp, whatever the environment
	 * above main's frame: the copy stays inside the stack */
	volatile char pad[GT_UCOPY_BYTES];

	pad[0] = pad[GT_UCOPY_BYTES - 1] = 0;
	for (int i = 0; i < 64; i++)
		v[i] = (i * 7919) % 64;
	qsort(v, 64, sizeof(v[0]), cmp);
	in = (struct gt_unwind_in){.tgid = getpid(), .tid = (pid_t)syscall(SYS_gettid),
				   .ip = cp.ip, .sp = cp.sp, .regs = cp.regs, .stack = cp.stack,
				   .size = sizeof(cp.stack)};
	if (!u || gt_unwind(u, &in, ips, 128) < 1) { /* the first: opens the session */
		fprintf(stderr, "bench_unwind: unwinder failed\n");
		return 1;
	}
	t0 = now_ns();
	for (int i = 0; i < rounds; i++)
		n = gt_unwind(u, &in, ips, 128);
	t1 = now_ns();
	for (int i = 0; i < rounds; i++)
		nfp = fp_walk(ips, 128);
	t2 = now_ns();
	printf("dwarf unwind (user space, libdwfl) %8.0f ns/stack  %d frames\n",
	       (double)(t1 - t0) / rounds, n);
	printf("fp walk of the same copy           %8.1f ns/stack  %d frames (qsort has no frame pointer)\n",
	       (double)(t2 - t1) / rounds, nfp);
	gt_unwinder_free(u);
	return 0;
}
