/* sleeper [--wait] N USEC: thread "sleeper" does N nanosleeps of USEC
 * microseconds (GoSleep in the trace, N of them). */
#include "wl_common.h"

static long n, usec;
static struct wl_gates gates;

__attribute__((noinline)) static void sleep_many_times(void)
{
	struct timespec ts = {.tv_sec = usec / 1000000, .tv_nsec = (usec % 1000000) * 1000};

	for (long i = 0; i < n; i++)
		nanosleep(&ts, NULL);
}

static void *sleeper(void *arg)
{
	(void)arg;
	wl_announce("sleeper");
	wl_gates_before_work(&gates);
	sleep_many_times();
	wl_gates_after_work(&gates);
	return NULL;
}

int main(int argc, char **argv)
{
	int wait = wl_take_wait_flag(&argc, &argv);
	pthread_t t;

	n = wl_arg(argc, argv, 1, 100);
	usec = wl_arg(argc, argv, 2, 1000);
	wl_start_main("wl-sleeper");
	wl_gates_init(&gates, 2);
	if (pthread_create(&t, NULL, sleeper, NULL))
		wl_die("pthread_create");
	wl_gates_main(&gates, wait);
	pthread_join(t, NULL);
	wl_say("sleeps %ld\n", n);
	return 0;
}
