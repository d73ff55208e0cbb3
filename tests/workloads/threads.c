/* threads [--wait] N: after the go, main creates N short-lived threads
 * (child-0..), each sleeps 1 ms and exits, and joins them; so the trace
 * shows N GoCreate (with main's stack) and N GoEnd.  Each child prints its
 * own `thread TID NAME` line; main prints `created N` at the end. */
#include "wl_common.h"

__attribute__((noinline)) static void short_life(void)
{
	struct timespec ts = {.tv_nsec = 1000000};

	nanosleep(&ts, NULL);
}

static void *child(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "child-%ld", (long)(intptr_t)arg);
	wl_announce(name);
	short_life();
	return NULL;
}

__attribute__((noinline)) static void create_and_join(long n)
{
	pthread_t t;

	for (long i = 0; i < n; i++) {
		if (pthread_create(&t, NULL, child, (void *)(intptr_t)i))
			wl_die("pthread_create");
		pthread_join(t, NULL);
	}
}

int main(int argc, char **argv)
{
	int wait = wl_take_wait_flag(&argc, &argv);
	long n = wl_arg(argc, argv, 1, 10);

	wl_start_main("wl-threads");
	wl_wait_go(wait);
	create_and_join(n);
	wl_say("created %ld\n", n);
	wl_wait_end(wait);
	return 0;
}
