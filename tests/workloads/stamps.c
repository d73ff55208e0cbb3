/* stamps MS: prints `start_us T` first thing (CLOCK_REALTIME, in
 * microseconds: what bash's $EPOCHREALTIME reads), sleeps MS milliseconds,
 * prints `end_us T` last thing and exits.  The startstop bench times a
 * recorder's start from its launch to start_us and its stop from end_us to
 * its exit. */
#include "wl_common.h"

static unsigned long long real_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000;
}

int main(int argc, char **argv)
{
	unsigned long long start = real_us();
	long ms = wl_arg(argc, argv, 1, 200);
	struct timespec d = {ms / 1000, (ms % 1000) * 1000000};

	wl_say("start_us %llu\n", start);
	while (nanosleep(&d, &d))
		;
	wl_say("end_us %llu\n", real_us());
	return 0;
}
