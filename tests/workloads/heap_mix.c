/* heap_mix [--wait] MODE: known heap changes for the --heap interpose tests,
 * across threads, fork and exec.  stdin and stdout are unbuffered, so stdio
 * allocates nothing of its own between the marks.  Each `delta=BYTES` is
 * the malloc_usable_size sum of the blocks the step left live (what the
 * interposer counts), so a test can compare the heap record exactly.
 *
 *   threads  4 threads, created and parked, then `mark before`; after the
 *            go, each allocates 64 blocks (1000 + 16 i bytes), they exit,
 *            and the main thread frees every other block (frees crossing
 *            threads): `mark after delta=BYTES`.
 *   fork     `mark before`; after the go, 1 MiB + 16 small blocks, then a
 *            fork: the child allocates 512 KiB more and prints
 *            `child PID delta=BYTES` (its live blocks since the mark,
 *            the parent's copies included), the parent `mark after
 *            delta=BYTES`.
 *   exec     after the go, 1 MiB, then a fork whose child re-executes this
 *            program (`heap_mix exec-child`): it allocates 3000 bytes and
 *            prints `execd PID delta=BYTES`; its heap starts from zero.
 *   jemalloc (run with LD_PRELOAD order or a program linked to another
 *            allocator) the same as threads.
 * Children park in pause() until the parent exits (PR_SET_PDEATHSIG).
 * Then `done`; with --wait the program exits on the next byte or EOF. */
#include <signal.h>
#include <malloc.h>
#include <sys/wait.h>

#include "wl_common.h"

#define NTHREADS 4
#define PER_THREAD 64
#define MIB (1024 * 1024)

static void *blocks[NTHREADS][PER_THREAD];
static pthread_barrier_t go_barrier;

/* A child dies with its parent (PR_SET_PDEATHSIG), also when the parent
 * was gone before the child asked for it. */
static void die_with(pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != parent)
		_exit(0);
}

static long usable(void *p)
{
	return p ? (long)malloc_usable_size(p) : 0;
}

static void *thread_main(void *arg)
{
	void **mine = arg;

	pthread_barrier_wait(&go_barrier);
	for (int i = 0; i < PER_THREAD; i++)
		if (!(mine[i] = malloc(1000 + 16 * (size_t)i)))
			wl_die("malloc");
	return NULL;
}

static void go_or_exit(int wait)
{
	if (wait && getchar() == EOF)
		exit(0);
}

static void mode_threads(int wait)
{
	pthread_t t[NTHREADS];
	long delta = 0;

	pthread_barrier_init(&go_barrier, NULL, NTHREADS + 1);
	for (int i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, thread_main, blocks[i]))
			wl_die("pthread_create");
	wl_say("mark before\n");
	go_or_exit(wait);
	pthread_barrier_wait(&go_barrier);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < NTHREADS; i++) {
		for (int j = 0; j < PER_THREAD; j++) {
			if (j % 2) {
				free(blocks[i][j]);
				blocks[i][j] = NULL;
			}
			delta += usable(blocks[i][j]);
		}
	}
	wl_say("mark after delta=%ld\n", delta);
}

static void mode_fork(int wait)
{
	void *big, *small[16], *more;
	pid_t pid, parent = getpid();
	long delta;

	wl_say("mark before\n");
	go_or_exit(wait);
	if (!(big = malloc(MIB)))
		wl_die("malloc");
	delta = usable(big);
	for (int i = 0; i < 16; i++) {
		if (!(small[i] = malloc(100 + (size_t)i)))
			wl_die("malloc");
		delta += usable(small[i]);
	}
	pid = fork();
	if (pid < 0)
		wl_die("fork");
	if (pid == 0) {
		die_with(parent);
		if (!(more = malloc(512 * 1024)))
			wl_die("malloc");
		wl_say("child %d delta=%ld\n", (int)getpid(), delta + usable(more));
		for (;;)
			pause();
	}
	wl_say("mark after delta=%ld\n", delta);
}

static void mode_exec(int wait)
{
	pid_t pid, parent = getpid();
	void *big;

	go_or_exit(wait);
	if (!(big = malloc(MIB)))
		wl_die("malloc");
	pid = fork();
	if (pid < 0)
		wl_die("fork");
	if (pid == 0) {
		die_with(parent); /* kept across exec */
		execl("/proc/self/exe", "heap_mix", "exec-child", (char *)NULL);
		_exit(127);
	}
	wl_say("forked %d\n", (int)pid);
}

static void exec_child(void)
{
	void *p = malloc(3000);

	if (!p)
		wl_die("malloc");
	wl_say("execd %d delta=%ld\n", (int)getpid(), usable(p));
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	int wait = wl_take_wait_flag(&argc, &argv);
	const char *mode = argc > 1 ? argv[1] : "threads";

	setvbuf(stdout, NULL, _IONBF, 0);
	setvbuf(stdin, NULL, _IONBF, 0);
	if (!strcmp(mode, "exec-child"))
		exec_child();
	wl_say("pid %d\n", (int)getpid());
	wl_announce("heap_mix");
	wl_say("ready\n");
	if (!strcmp(mode, "fork"))
		mode_fork(wait);
	else if (!strcmp(mode, "exec"))
		mode_exec(wait);
	else
		mode_threads(wait);
	wl_say("done\n");
	if (wait)
		getchar();
	return 0;
}
