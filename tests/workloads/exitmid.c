/* exitmid [--wait] MS [THREADS]: after the go, THREADS threads (exit-0..)
 * sleep-loop in 1 ms naps while main waits MS milliseconds, then the whole
 * process exits at once (exit_group), in the middle of a recording. */
#include "wl_common.h"

static struct wl_gates gates;

__attribute__((noinline)) static void nap_forever(void)
{
	struct timespec ts = {.tv_nsec = 1000000};

	for (;;)
		nanosleep(&ts, NULL);
}

static void *napper(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "exit-%ld", (long)(intptr_t)arg);
	wl_announce(name);
	wl_gates_before_work(&gates);
	nap_forever();
	return NULL;
}

int main(int argc, char **argv)
{
	int wait = wl_take_wait_flag(&argc, &argv);
	long ms = wl_arg(argc, argv, 1, 500);
	long n = wl_arg(argc, argv, 2, 2);
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
	pthread_t t;

	wl_start_main("wl-exitmid");
	pthread_barrier_init(&gates.ready, NULL, (unsigned)n + 1);
	pthread_barrier_init(&gates.start, NULL, (unsigned)n + 1);
	for (long i = 0; i < n; i++)
		if (pthread_create(&t, NULL, napper, (void *)(intptr_t)i))
			wl_die("pthread_create");
	pthread_barrier_wait(&gates.ready);
	wl_wait_go(wait);
	pthread_barrier_wait(&gates.start);
	nanosleep(&ts, NULL);
	wl_say("exiting\n");
	exit(0);
}
