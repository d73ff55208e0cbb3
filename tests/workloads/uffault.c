/* uffault [--wait] N: thread "faulter" touches each of N pages of an
 * anonymous mapping registered with userfaultfd, and thread "filler"
 * fills each page in (UFFDIO_COPY) once its fault arrives.  Every touch
 * sleeps in the page fault, outside any syscall, until the filler's ioctl
 * wakes it: the block the trace shows as GoBlock, with the kernel's fault
 * path in its stack, as a fault that waits for a disk does.  Unlike a
 * disk, the wait cannot finish before the thread sleeps (the filler
 * reads the fault only after it is queued).  Prints `faults N sleeps M`:
 * the touches, and the faulter's own voluntary switches over them
 * (getrusage), the count the trace must show. */
#include "wl_common.h"

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>

static long n;
static long page;
static char *map;
static int uffd;
static struct wl_gates gates;

__attribute__((noinline)) static long touch_pages(void)
{
	long sum = 0;

	for (long i = 0; i < n; i++)
		sum += ((volatile char *)map)[i * page];
	return sum;
}

static void *faulter(void *arg)
{
	struct rusage a, b;
	long sum;

	(void)arg;
	wl_announce("faulter");
	wl_gates_before_work(&gates);
	getrusage(RUSAGE_THREAD, &a);
	sum = touch_pages();
	getrusage(RUSAGE_THREAD, &b);
	wl_say("faults %ld sleeps %ld sum %ld\n", n, b.ru_nvcsw - a.ru_nvcsw, sum);
	wl_gates_after_work(&gates);
	return NULL;
}

/* Fills the page of one fault with its index, which wakes the faulter. */
static void fill(const struct uffd_msg *m, char *buf)
{
	unsigned long at = (unsigned long)m->arg.pagefault.address & ~(unsigned long)(page - 1);
	struct uffdio_copy c = {
		.dst = at, .src = (unsigned long)buf, .len = (unsigned long)page,
	};

	memset(buf, (int)((at - (unsigned long)map) / (unsigned long)page), (size_t)page);
	if (ioctl(uffd, UFFDIO_COPY, &c))
		wl_die("UFFDIO_COPY");
}

static void *filler(void *arg)
{
	char *buf = malloc((size_t)page);
	struct uffd_msg m;
	long done = 0;

	(void)arg;
	if (!buf)
		wl_die("malloc");
	wl_announce("filler");
	wl_gates_before_work(&gates);
	while (done < n) {
		struct pollfd p = { .fd = uffd, .events = POLLIN };

		if (poll(&p, 1, -1) < 0 || read(uffd, &m, sizeof(m)) != sizeof(m))
			wl_die("reading the userfaultfd");
		if (m.event != UFFD_EVENT_PAGEFAULT)
			continue;
		fill(&m, buf);
		done++;
	}
	free(buf);
	wl_gates_after_work(&gates);
	return NULL;
}

static void register_map(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register r;

	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api))
		wl_die("userfaultfd (is the kernel built with CONFIG_USERFAULTFD?)");
	map = mmap(NULL, (size_t)(n * page), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		wl_die("mmap");
	r = (struct uffdio_register){
		.range = { .start = (unsigned long)map, .len = (unsigned long)(n * page) },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	if (ioctl(uffd, UFFDIO_REGISTER, &r))
		wl_die("UFFDIO_REGISTER");
}

int main(int argc, char **argv)
{
	int wait = wl_take_wait_flag(&argc, &argv);
	pthread_t t[2];

	n = wl_arg(argc, argv, 1, 256);
	page = sysconf(_SC_PAGESIZE);
	register_map();
	wl_start_main("wl-uffault");
	wl_gates_init(&gates, 3);
	if (pthread_create(&t[0], NULL, faulter, NULL) || pthread_create(&t[1], NULL, filler, NULL))
		wl_die("pthread_create");
	wl_gates_main(&gates, wait);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	return 0;
}
