/* usr1_tail N: a flight recorder's dump asked just after a known moment.
 * N times, 300 ms apart: prints `mark T` (CLOCK_MONOTONIC ns), sleeps 6 ms
 * (twice the 3 ms merge lag: its records are then due) and sends SIGUSR1
 * to its parent (`gotracectl record --flight -- usr1_tail N`), which dumps.
 * A dump asked at T + 6 ms must hold this thread's records from T on (the
 * sleep's at least): record_usr1.sh, usr1_tail_*. */
#include <signal.h>

#include "wl_common.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct timespec gap = {.tv_sec = 0, .tv_nsec = 300000000};
	struct timespec due = {.tv_sec = 0, .tv_nsec = 6000000};
	long n = wl_arg(argc, argv, 1, 3);

	for (long i = 0; i < n; i++) {
		nanosleep(&gap, NULL); /* the dump before is written meanwhile */
		wl_say("mark %llu\n", (unsigned long long)now_ns());
		nanosleep(&due, NULL);
		kill(getppid(), SIGUSR1);
	}
	nanosleep(&gap, NULL);
	return 0;
}
