/* Burns CPU in one function, cpu_hot_spin(), for a given CPU time (default
 * 400 ms of its own CPU time, however loaded the machine is), for the
 * CPU-profile tests: most samples must name it.  Prints `cpu_ns N` (its
 * thread CPU time spent spinning) before `done`.  Protocol of wl_common.h. */
#include "wl_common.h"

static volatile uint64_t sink;

static long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* noinline and frame pointers (the workload build flags): it must be a
 * frame of its own in every sampled stack */
__attribute__((noinline)) void cpu_hot_spin(long long until)
{
	uint64_t x = 1;

	while (cpu_ns() < until) {
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		sink = x;
	}
}

int main(int argc, char **argv)
{
	int wait = wl_take_wait_flag(&argc, &argv);
	long ms = argc > 1 ? atol(argv[1]) : 400;

	wl_say("pid %d\n", (int)getpid());
	wl_announce("cpu_hot");
	wl_say("ready\n");
	if (wait && getchar() == EOF)
		return 0;
	long long t0 = cpu_ns();

	cpu_hot_spin(t0 + ms * 1000000LL);
	wl_say("cpu_ns %lld\n", cpu_ns() - t0);
	wl_say("done\n");
	if (wait)
		getchar();
	return 0;
}
