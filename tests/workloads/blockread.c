/* blockread [--wait] N USEC: thread "feeder" writes one byte into a pipe
 * every USEC microseconds, N times; thread "reader" does blocking 1-byte
 * reads of it, so it blocks N times inside read (a syscall block).
 *
 * Exactly N: before each write the feeder waits until the reader sleeps in
 * read on the pipe (wl_asleep.h), so a reader the scheduler ran late never
 * finds two bytes waiting and skips a block. */
#include "wl_common.h"
#include "wl_asleep.h"

static int fds[2];
static long n, usec;
static struct wl_gates gates;
static pid_t reader_tid;

__attribute__((noinline)) static void feed_slowly(void)
{
	struct timespec ts = {.tv_sec = usec / 1000000, .tv_nsec = (usec % 1000000) * 1000};
	char c = 'b';

	for (long i = 0; i < n; i++) {
		nanosleep(&ts, NULL);
		wl_wait_asleep_in(reader_tid, SYS_read, (unsigned long)fds[0]);
		if (write(fds[1], &c, 1) != 1)
			wl_die("feeder write");
	}
}

__attribute__((noinline)) static void read_blocking(void)
{
	char c;

	for (long i = 0; i < n; i++)
		if (read(fds[0], &c, 1) != 1)
			wl_die("reader read");
}

static void *feeder(void *arg)
{
	(void)arg;
	wl_announce("feeder");
	wl_gates_before_work(&gates);
	feed_slowly();
	wl_gates_after_work(&gates);
	return NULL;
}

static void *reader(void *arg)
{
	(void)arg;
	reader_tid = wl_tid();
	wl_announce("reader");
	wl_gates_before_work(&gates);
	read_blocking();
	wl_gates_after_work(&gates);
	return NULL;
}

int main(int argc, char **argv)
{
	int wait = wl_take_wait_flag(&argc, &argv);
	pthread_t a, b;

	n = wl_arg(argc, argv, 1, 50);
	usec = wl_arg(argc, argv, 2, 2000);
	if (pipe(fds))
		wl_die("pipe");
	wl_start_main("wl-blockread");
	wl_gates_init(&gates, 3);
	if (pthread_create(&a, NULL, reader, NULL) || pthread_create(&b, NULL, feeder, NULL))
		wl_die("pthread_create");
	wl_gates_main(&gates, wait);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	wl_say("reads %ld\n", n);
	return 0;
}
