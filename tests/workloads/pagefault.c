/* pagefault [--wait] N DIR: thread "faulter" maps a file of N pages in DIR
 * (on a disk, not tmpfs), drops it from the page cache, and touches each
 * page once with readahead off: every touch is a major fault that sleeps on
 * the disk read outside any syscall, the block the trace shows as GoBlock
 * (with the kernel stack that explains it).  Prints `faults N sleeps M`:
 * the thread's own count of major faults during the work, and of the
 * times it slept (voluntary switches, getrusage).  A fault whose read
 * the disk finishes before the thread goes to sleep never blocks, one
 * that waits on the read and then on the page lock blocks twice: the
 * sleeps, not the faults, are what the trace must show. */
#include "wl_common.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>

static long n;
static const char *dir;
static volatile char *map;
static long page;
static struct wl_gates gates;

/* A file of n pages in dir, unlinked at once (it lives while mapped). */
static int make_file(void)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/wl-pagefault.XXXXXX", dir);
	int fd = mkstemp(path);
	if (fd < 0)
		wl_die("mkstemp in the directory given");
	unlink(path);
	char *buf = calloc(1, (size_t)page);
	for (long i = 0; i < n; i++) {
		buf[0] = (char)i;
		if (write(fd, buf, (size_t)page) != page)
			wl_die("writing the file");
	}
	free(buf);
	if (fsync(fd))
		wl_die("fsync");
	return fd;
}

__attribute__((noinline)) static long touch_pages(void)
{
	long sum = 0;
	for (long i = 0; i < n; i++)
		sum += map[i * page];
	return sum;
}

static void *faulter(void *arg)
{
	(void)arg;
	wl_announce("faulter");
	wl_gates_before_work(&gates);
	struct rusage a, b;
	getrusage(RUSAGE_THREAD, &a);
	long sum = touch_pages();
	getrusage(RUSAGE_THREAD, &b);
	wl_say("faults %ld sleeps %ld sum %ld\n", b.ru_majflt - a.ru_majflt,
	       b.ru_nvcsw - a.ru_nvcsw, sum);
	wl_gates_after_work(&gates);
	return NULL;
}

int main(int argc, char **argv)
{
	int wait = wl_take_wait_flag(&argc, &argv);
	pthread_t t;

	n = wl_arg(argc, argv, 1, 64);
	dir = argc > 2 ? argv[2] : ".";
	page = sysconf(_SC_PAGESIZE);
	int fd = make_file();
	map = mmap(NULL, (size_t)(n * page), PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		wl_die("mmap");
	/* out of the page cache, and no readahead: one disk read per touch */
	if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) ||
	    madvise((void *)map, (size_t)(n * page), MADV_RANDOM))
		wl_die("dropping the file's pages");
	wl_start_main("wl-pagefault");
	wl_gates_init(&gates, 2);
	if (pthread_create(&t, NULL, faulter, NULL))
		wl_die("pthread_create");
	wl_gates_main(&gates, wait);
	pthread_join(t, NULL);
	return 0;
}
