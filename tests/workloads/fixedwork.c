/* fixedwork cpu|sys|switch N: a fixed amount of work, timed by itself,
 * for the bystander benchmarks: `cpu` is N rounds of arithmetic (no
 * syscall, no switch), `sys` is N getppid() syscalls, `switch` is N
 * round trips of a byte over two pipes between two threads pinned to CPU
 * 0 under SCHED_FIFO (as `pingpong N strict pipe`; needs root).  Prints
 * `elapsed_ns NS cpu_ns NS` (the work's wall time and the process's CPU
 * time over it).
 *
 * fixedwork serve: the same, resident: reads `KIND N` lines on stdin and
 * answers each with its `elapsed_ns ... cpu_ns ...` line once the work is
 * done, until EOF.  One
 * process measured in every setting of a comparison: a short syscall
 * loop's time differs between processes by up to 15% (the first blocks
 * of a new process are slower, and some processes stay slower: where
 * their pages landed), which a median of a few fresh processes does not
 * cancel (docs/design.md, "Cost"). */
#include "wl_common.h"

static int to_pong[2], to_ping[2];

__attribute__((noinline)) static void cpu_work(long n)
{
	volatile uint64_t x = 1;

	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
}

__attribute__((noinline)) static void sys_work(long n)
{
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
}

static void pass(int out_fd, int in_fd)
{
	char c = 'x';

	if (out_fd >= 0 && write(out_fd, &c, 1) != 1)
		wl_die("write");
	if (in_fd >= 0 && read(in_fd, &c, 1) != 1)
		wl_die("read");
}

static void *pong(void *arg)
{
	long n = *(long *)arg;

	wl_pin_fifo_cpu0("fixedwork: switch");
	for (long i = 0; i < n; i++) {
		pass(-1, to_pong[0]);
		pass(to_ping[1], -1);
	}
	return NULL;
}

/* The pong thread is made for each run (the pipes once, and the calling
 * thread pinned then: a resident process serves one kind): the threads'
 * stacks come from glibc's cache of them. */
__attribute__((noinline)) static void switch_work(long n)
{
	pthread_t t;

	if (to_pong[1] == 0) { /* the first run: the pipes, and this thread pinned */
		if (pipe(to_pong) || pipe(to_ping))
			wl_die("pipe");
		wl_pin_fifo_cpu0("fixedwork: switch");
	}
	if (pthread_create(&t, NULL, pong, &n))
		wl_die("pthread_create");
	for (long i = 0; i < n; i++)
		pass(to_pong[1], to_ping[0]);
	pthread_join(t, NULL);
}

static uint64_t process_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One run of KIND: 0, or -1 for an unknown kind. */
static int run(const char *kind, long n)
{
	uint64_t t0 = wl_now_ns(), c0 = process_cpu_ns();

	if (!strcmp(kind, "cpu"))
		cpu_work(n);
	else if (!strcmp(kind, "sys"))
		sys_work(n);
	else if (!strcmp(kind, "switch"))
		switch_work(n);
	else
		return -1;
	printf("elapsed_ns %llu cpu_ns %llu\n", (unsigned long long)(wl_now_ns() - t0),
	       (unsigned long long)(process_cpu_ns() - c0));
	fflush(stdout);
	return 0;
}

static int serve(void)
{
	char line[128], kind[16];
	long n;

	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "%15s %ld", kind, &n) != 2 || n < 0 || run(kind, n)) {
			fprintf(stderr, "fixedwork: bad request '%s' (KIND N, KIND cpu|sys|switch)\n",
				strtok(line, "\n") ? line : "");
			return 2;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "serve"))
		return serve();
	if (argc != 3 || run(argv[1], wl_arg(argc, argv, 2, 1000000))) {
		fprintf(stderr, "usage: fixedwork cpu|sys|switch N | fixedwork serve\n");
		return 2;
	}
	return 0;
}
