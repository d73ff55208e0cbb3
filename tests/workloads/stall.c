/* stall [--wait] RUN_MS STALL_MS [COUNT [GAP_MS]]: a flight recorder's prey.
 *
 * Three threads ("ticker") and the main thread each sleep 1 ms at a time
 * (nanosleep) for RUN_MS; one more thread, "staller", does the same but,
 * at a random moment in the middle third of the run, stalls once: it sleeps
 * STALL_MS inside ppoll (the only ppoll of the process), COUNT times
 * (default 1) GAP_MS apart (default 400).  It prints `stall TID START_NS
 * END_NS` (CLOCK_MONOTONIC) for each, then `done` when every thread ended.
 * The ppoll is made with syscall(2), so that its number is ppoll whatever
 * libc's poll does.  --wait: says `ready`, and starts (the run's clock
 * too) at the first byte on stdin, for a recorder attached by -p. */
#include <poll.h>

#include "wl_common.h"

static long run_ms, stall_ms, count = 1, gap_ms = 400;
static uint64_t t0;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void tick_until(uint64_t end)
{
	struct timespec ms = {.tv_sec = 0, .tv_nsec = 1000000};

	while (now_ns() < end)
		nanosleep(&ms, NULL);
}

static void *ticker(void *arg)
{
	(void)arg;
	wl_announce("ticker");
	tick_until(t0 + (uint64_t)run_ms * 1000000ull);
	return NULL;
}

static void stall_once(void)
{
	struct timespec ts = {.tv_sec = stall_ms / 1000, .tv_nsec = stall_ms % 1000 * 1000000};
	uint64_t a = now_ns(), b;

	syscall(SYS_ppoll, NULL, 0, &ts, NULL, 0);
	b = now_ns();
	wl_say("stall %d %llu %llu\n", (int)wl_tid(), (unsigned long long)a, (unsigned long long)b);
}

static void *staller(void *arg)
{
	uint64_t third = (uint64_t)run_ms * 1000000ull / 3;
	uint64_t at = t0 + third + (uint64_t)(*(long *)arg) % (third ? third : 1);

	wl_announce("staller");
	tick_until(at);
	for (long i = 0; i < count; i++) {
		if (i)
			tick_until(now_ns() + (uint64_t)gap_ms * 1000000ull);
		stall_once();
	}
	tick_until(t0 + (uint64_t)run_ms * 1000000ull);
	return NULL;
}

int main(int argc, char **argv)
{
	int wait = wl_take_wait_flag(&argc, &argv);
	pthread_t th[4];
	long seed;

	if (wait)
		wl_wait_go(1);
	run_ms = wl_arg(argc, argv, 1, 3000);
	stall_ms = wl_arg(argc, argv, 2, 80);
	count = wl_arg(argc, argv, 3, 1);
	gap_ms = wl_arg(argc, argv, 4, 400);
	t0 = now_ns();
	seed = (long)(t0 ^ (uint64_t)getpid() * 2654435761u) & 0x7fffffff;
	wl_say("pid %d\n", (int)getpid());
	for (int i = 0; i < 3; i++)
		if (pthread_create(&th[i], NULL, ticker, NULL))
			wl_die("pthread_create");
	if (pthread_create(&th[3], NULL, staller, &seed))
		wl_die("pthread_create");
	tick_until(t0 + (uint64_t)run_ms * 1000000ull);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	wl_say("done\n");
	return 0;
}
