/* shortlived [N] [USEC]: a process that lives a few milliseconds, gone
 * before the recorder can read its /proc/PID/maps (record_shortlived.sh).
 * Its main thread blocks N times (default 5) in a pipe read made by
 * read_short_pipe(); thread "feeder" writes one byte each USEC (default
 * 1000) microseconds, once the reader sleeps in read.  Then it exits:
 * about N * USEC in all.  No --wait protocol: its brevity is the point. */
#include "wl_common.h"
#include "wl_asleep.h"

static int fds[2];
static long n, usec;
static pid_t reader_tid;

__attribute__((noinline)) static void feed_short_pipe(void)
{
	struct timespec ts = {.tv_sec = usec / 1000000, .tv_nsec = (usec % 1000000) * 1000};
	char c = 's';

	for (long i = 0; i < n; i++) {
		nanosleep(&ts, NULL);
		wl_wait_asleep_in(reader_tid, SYS_read, (unsigned long)fds[0]);
		if (write(fds[1], &c, 1) != 1)
			wl_die("feeder write");
	}
}

__attribute__((noinline)) static void read_short_pipe(void)
{
	char c;

	for (long i = 0; i < n; i++)
		if (read(fds[0], &c, 1) != 1)
			wl_die("reader read");
}

static void *feeder(void *arg)
{
	(void)arg;
	feed_short_pipe();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	n = wl_arg(argc, argv, 1, 5);
	usec = wl_arg(argc, argv, 2, 1000);
	reader_tid = wl_tid();
	if (pipe(fds))
		wl_die("pipe");
	if (pthread_create(&t, NULL, feeder, NULL))
		wl_die("pthread_create");
	read_short_pipe();
	pthread_join(t, NULL);
	return 0;
}
