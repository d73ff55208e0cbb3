/* A malloc-heavy loop for the allocation-tracing benchmark: N rounds of
 * malloc(64..1087) + free, timed with CLOCK_MONOTONIC; prints
 * `allocs N ns T`.  Protocol of wl_common.h (argv[1] = N, default 1e6). */
#include "wl_common.h"

static void *volatile keep;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) static void churn(long n)
{
	for (long i = 0; i < n; i++) {
		char *p = malloc(64 + (size_t)(i & 1023));

		p[0] = (char)i;
		keep = p;
		free(p);
	}
}

int main(int argc, char **argv)
{
	int wait = wl_take_wait_flag(&argc, &argv);
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	long long t0;

	wl_say("pid %d\n", (int)getpid());
	wl_announce("malloc_loop");
	wl_say("ready\n");
	if (wait && getchar() == EOF)
		return 0;
	t0 = now_ns();
	churn(n);
	wl_say("allocs %ld ns %lld\n", n, now_ns() - t0);
	wl_say("done\n");
	if (wait)
		getchar();
	return 0;
}
