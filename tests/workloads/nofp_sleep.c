/* nofp_sleep [--wait] N USEC: thread "io" calls nanosleep N times, USEC
 * microseconds each, from io_thread().  Built WITHOUT frame pointers
 * (-O2 -fomit-frame-pointer, see the Makefile), like Debian's libc: a
 * frame-pointer walk from inside nanosleep skips io_thread, the DWARF
 * unwinder (--call-graph=dwarf) does not.  gdb's backtrace at the block:
 *   clock_nanosleep <- nanosleep <- io_thread <- start_thread */
#include "wl_common.h"

static long n, usec;
static struct wl_gates gates;

__attribute__((noinline)) static void *io_thread(void *arg)
{
	struct timespec ts = {.tv_sec = usec / 1000000, .tv_nsec = (usec % 1000000) * 1000};
	volatile long done = 0;

	(void)arg;
	wl_announce("io");
	wl_gates_before_work(&gates);
	for (long i = 0; i < n; i++) {
		nanosleep(&ts, NULL);
		done++;
	}
	wl_gates_after_work(&gates);
	return NULL;
}

int main(int argc, char **argv)
{
	int wait = wl_take_wait_flag(&argc, &argv);
	pthread_t t;

	n = wl_arg(argc, argv, 1, 50);
	usec = wl_arg(argc, argv, 2, 2000);
	wl_start_main("wl-nofp");
	wl_gates_init(&gates, 2);
	if (pthread_create(&t, NULL, io_thread, NULL))
		wl_die("pthread_create");
	wl_gates_main(&gates, wait);
	pthread_join(t, NULL);
	wl_say("sleeps %ld\n", n);
	return 0;
}
