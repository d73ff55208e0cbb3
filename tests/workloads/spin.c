/* spin [--wait] THREADS MS: THREADS threads (spin-0..) burn CPU for MS
 * milliseconds of wall time each; with more spinners than CPUs the
 * scheduler preempts them (GoPreempt, nonvoluntary switches).  THREADS 0:
 * the main thread spins, alone in its process, printing nothing (no
 * --wait; the throttle checks: a
 * second runnable thread, throttled in the same period, is a second wait
 * for one throttle of cpu.stat's). */
#include "wl_common.h"

static long ms;
static struct wl_gates gates;

__attribute__((noinline)) static void spin_until(uint64_t deadline)
{
	volatile unsigned long x = 0;

	while (wl_now_ns() < deadline)
		for (int i = 0; i < 1000; i++)
			x++;
}

static void *spinner(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "spin-%ld", (long)(intptr_t)arg);
	wl_announce(name);
	wl_gates_before_work(&gates);
	spin_until(wl_now_ns() + (uint64_t)ms * 1000000ull);
	wl_gates_after_work(&gates);
	return NULL;
}

int main(int argc, char **argv)
{
	int wait = wl_take_wait_flag(&argc, &argv);
	long n = wl_arg(argc, argv, 1, 4);

	ms = wl_arg(argc, argv, 2, 300);
	if (n < 0 || n > 64) {
		fprintf(stderr, "spin: THREADS must be 0..64\n");
		return 2;
	}
	if (n == 0 && wait) {
		fprintf(stderr, "spin: THREADS 0 takes no --wait (no thread lines, no gates)\n");
		return 2;
	}
	if (n == 0) {
		spin_until(wl_now_ns() + (uint64_t)ms * 1000000ull);
		return 0;
	}
	wl_start_main("wl-spin");
	wl_run_workers(&gates, n, spinner, wait);
	return 0;
}
