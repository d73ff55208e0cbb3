/* Burns CPU in one function, cpu_hot_spin(), for a given time (default
 * 400 ms), for the CPU-profile tests: most samples must name it.
 * Protocol of wl_common.h. */
#include "wl_common.h"

static volatile uint64_t sink;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* noinline and frame pointers (the workload build flags): it must be a
 * frame of its own in every sampled stack */
__attribute__((noinline)) void cpu_hot_spin(long long until)
{
	uint64_t x = 1;

	while (now_ns() < until) {
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
	cpu_hot_spin(now_ns() + ms * 1000000LL);
	wl_say("done\n");
	if (wait)
		getchar();
	return 0;
}
