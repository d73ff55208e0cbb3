/* fsyncloop N [DIR]: one thread, "syncer" (no lock, no other thread:
 * nothing it does is a wait for a lock), does N rounds of
 * write(256 KiB) to a file in DIR (default /var/tmp: on disk, not tmpfs),
 * fsync, pread(4 KiB), then sleeps 2 ms; it counts its own calls and
 * prints `calls fsync N`, `calls write N`, `calls read N` at the end (the
 * ground truth a report of its syscalls is held to).  The file is removed
 * before exit. */
#include <fcntl.h>

#include "wl_common.h"

static long n;
static const char *dir;
static long fsyncs, writes, reads;

__attribute__((noinline)) static void sync_rounds(int fd)
{
	static char buf[256 * 1024];
	struct timespec nap = {.tv_sec = 0, .tv_nsec = 2000000};

	memset(buf, 'f', sizeof(buf));
	for (long i = 0; i < n; i++) {
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			wl_die("write");
		writes++;
		if (fsync(fd))
			wl_die("fsync");
		fsyncs++;
		if (pread(fd, buf, 4096, 0) != 4096)
			wl_die("pread");
		reads++;
		nanosleep(&nap, NULL);
	}
}

int main(int argc, char **argv)
{
	char path[512];
	int fd;

	n = wl_arg(argc, argv, 1, 50);
	dir = argc > 2 ? argv[2] : "/var/tmp";
	snprintf(path, sizeof(path), "%s/gt-fsyncloop.%d", dir, (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		wl_die("open");
	unlink(path);
	wl_start_main("syncer");
	wl_say("ready\n");
	sync_rounds(fd);
	close(fd);
	wl_say("calls fsync %ld\ncalls write %ld\ncalls read %ld\n", fsyncs, writes, reads);
	return 0;
}
