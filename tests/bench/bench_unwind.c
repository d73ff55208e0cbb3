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

#include "sym/unwind.h"

#define COPY 8192

static uint64_t regs[GT_UNWIND_REGS], ip, sp;
static uint8_t stack[COPY];
static size_t size;
static int taken;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The registers and the stack, as BPF copies them (DWARF numbering). */
__attribute__((noinline)) static void take(void)
{
#if defined(__x86_64__)
	__asm__ volatile("movq %%rbx, %0\n\tmovq %%rbp, %1\n\tmovq %%rsp, %2\n\t"
			 "movq %%r12, %3\n\tmovq %%r13, %4\n\tmovq %%r14, %5\n\t"
			 "movq %%r15, %6\n\tleaq 0(%%rip), %%rax\n\tmovq %%rax, %7"
			 : "=m"(regs[3]), "=m"(regs[6]), "=m"(regs[7]), "=m"(regs[12]),
			   "=m"(regs[13]), "=m"(regs[14]), "=m"(regs[15]), "=m"(regs[16])
			 : : "rax", "memory");
	ip = regs[16];
	sp = regs[7];
#elif defined(__aarch64__)
	uint64_t *r = regs;
	__asm__ volatile("stp x19, x20, [%0, #152]\n\tstp x21, x22, [%0, #168]\n\t"
			 "stp x23, x24, [%0, #184]\n\tstp x25, x26, [%0, #200]\n\t"
			 "stp x27, x28, [%0, #216]\n\tstp x29, x30, [%0, #232]\n\t"
			 "mov x9, sp\n\tstr x9, [%0, #248]\n\tadr x9, .\n\tstr x9, [%1]"
			 : : "r"(r), "r"(&ip) : "x9", "memory");
	sp = regs[31];
#endif
	size = COPY;
	memcpy(stack, (void *)(uintptr_t)sp, size);
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
	uint64_t fp = regs[6];
#else
	uint64_t fp = regs[29];
#endif
	int n = 0;

	ips[n++] = ip;
	while (n < max && fp >= sp && fp + 16 <= sp + size) {
		uint64_t f[2];

		memcpy(f, stack + (fp - sp), sizeof(f));
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
	volatile char pad[COPY];

	pad[0] = pad[COPY - 1] = 0;
	for (int i = 0; i < 64; i++)
		v[i] = (i * 7919) % 64;
	qsort(v, 64, sizeof(v[0]), cmp);
	in = (struct gt_unwind_in){.tgid = getpid(), .tid = (pid_t)syscall(SYS_gettid),
				   .ip = ip, .sp = sp, .regs = regs, .stack = stack, .size = size};
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
