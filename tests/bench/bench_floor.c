/* bench_floor [ROUNDS]: what any BPF program on the capture's tracepoints
 * costs a process that is not traced, on this machine: the floor under the
 * "untraced neighbour" figures of overhead.sh.
 *
 * Loads programs that do nothing at all (r0 = 0; exit: two instructions,
 * raw tracepoints, the mechanism of the capture's tp_btf programs) on
 * sched_switch + sched_waking, and on sys_enter, and times two untraced
 * loops with and without them: a pipe ping-pong between two threads on
 * CPU 0 (switch-heavy) and a getppid loop (syscall-heavy).  Whatever a
 * real program adds (filter, ring, stacks) comes on top of this.  Needs
 * root and BPF.  No assertion: numbers for the report.
 *
 * bench_floor --hold TP...: attaches the empty program to each tracepoint
 * TP and waits for SIGINT or SIGTERM (servers.sh times a real server
 * beside it). */
#include <bpf/bpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define RUNS 9

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* ---- the loops ------------------------------------------------------------ */

static long rounds;
static int ab[2], ba[2];

static void pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void *pong(void *arg)
{
	char c;

	(void)arg;
	pin_cpu0();
	for (long i = 0; i < rounds; i++)
		if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
			break;
	return NULL;
}

static uint64_t pingpong_ns(void)
{
	pthread_t t;
	char c = 'x';
	uint64_t t0;

	if (pipe(ab) || pipe(ba) || pthread_create(&t, NULL, pong, NULL)) {
		perror("bench_floor: ping-pong setup");
		exit(1);
	}
	pin_cpu0();
	t0 = now_ns();
	for (long i = 0; i < rounds; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			break;
	t0 = now_ns() - t0;
	pthread_join(t, NULL);
	close(ab[0]), close(ab[1]), close(ba[0]), close(ba[1]);
	return t0;
}

static uint64_t syscalls_ns(void)
{
	uint64_t t0 = now_ns();

	for (long i = 0; i < rounds * 4; i++)
		syscall(SYS_getppid);
	return now_ns() - t0;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median_of(uint64_t *v)
{
	qsort(v, RUNS, sizeof(v[0]), by_value);
	return v[RUNS / 2];
}

/* ---- empty programs ------------------------------------------------------ */

/* An empty raw-tracepoint program on tracepoint tp; returns the link fd. */
static int attach_empty(const char *tp)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int prog = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "gt_floor", "GPL", insns, 2, NULL);
	int link;

	if (prog < 0) {
		fprintf(stderr, "bench_floor: loading an empty program: %s (root and BPF needed)\n",
			strerror(errno));
		exit(1);
	}
	link = bpf_raw_tracepoint_open(tp, prog);
	if (link < 0) {
		fprintf(stderr, "bench_floor: attaching to %s: %s\n", tp, strerror(errno));
		exit(1);
	}
	close(prog); /* the link holds it */
	return link;
}

/* Alone and with the empty programs in turn, RUNS times: the drifts of a
 * noisy machine hit both sides alike. */
static void row(const char *what, const char *on, uint64_t (*loop)(void),
		const char *const *tps, int ntps)
{
	uint64_t alone[RUNS], with[RUNS], a, w;
	int links[4];

	for (int r = 0; r < RUNS; r++) {
		alone[r] = loop();
		for (int i = 0; i < ntps; i++)
			links[i] = attach_empty(tps[i]);
		with[r] = loop();
		for (int i = 0; i < ntps; i++)
			close(links[i]);
	}
	a = median_of(alone);
	w = median_of(with);
	printf("%-14s alone %8.1f ms, empty program on %-26s %8.1f ms: %+.1f%% (the floor under target < 1%%)\n",
	       what, a / 1e6, on, w / 1e6, (double)w / a * 100 - 100);
}

static void on_stop(int sig)
{
	(void)sig;
	_exit(0);
}

/* --hold: the empty programs stay attached until a signal. */
static _Noreturn void hold(int n, char **tps)
{
	/* a shell's background job starts with SIGINT ignored */
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	for (int i = 0; i < n; i++)
		attach_empty(tps[i]);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	static const char *const sched[] = { "sched_switch", "sched_waking" };
	static const char *const sys[] = { "sys_enter" };

	if (argc > 2 && !strcmp(argv[1], "--hold"))
		hold(argc - 2, argv + 2);
	rounds = argc > 1 ? atol(argv[1]) : 50000;
	setvbuf(stdout, NULL, _IOLBF, 0);
	row("switch-heavy", "sched_switch+sched_waking", pingpong_ns, sched, 2);
	row("syscall-heavy", "sys_enter", syscalls_ns, sys, 1);
	return 0;
}
