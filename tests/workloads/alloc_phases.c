/* Allocates and frees known amounts in phases, for the heap tests:
 *   grow:  64 blocks of 1 MiB (malloc, touched)     -> 64 MiB live
 *   free:  every other block                          -> 32 MiB live
 *   regrow: 64 more blocks                            -> 96 MiB live
 * After each phase it sleeps 100 ms (`--pause MS` after --wait: MS) and prints
 *   `phase NAME live=BYTES rss=BYTES t=NS usable=BYTES` (VmRSS from
 *   /proc/self/status, t = CLOCK_MONOTONIC, usable = the allocator's
 *   malloc_usable_size of the live blocks: what --heap interpose counts),
 *   so a test can hold the trace to them.
 * Protocol of wl_common.h (--wait: start on a byte from stdin, park after
 * `done`, exit on a second byte or EOF). */
#include <malloc.h>

#include "wl_common.h"

#define MIB (1024 * 1024)
#define NBLOCKS 128

static void *blocks[NBLOCKS];
static long pause_ms = 100;

static long vm_rss_bytes(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb * 1024;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long usable_bytes(void)
{
	long sum = 0;

	for (int i = 0; i < NBLOCKS; i++)
		sum += blocks[i] ? (long)malloc_usable_size(blocks[i]) : 0;
	return sum;
}

static void phase(const char *name, long live)
{
	usleep((useconds_t)pause_ms * 1000);
	wl_say("phase %s live=%ld rss=%ld t=%lld usable=%ld\n", name, live, vm_rss_bytes(),
	       now_ns(), usable_bytes());
}

static void *alloc_block(void)
{
	char *p = malloc(MIB);

	if (!p) {
		perror("malloc");
		exit(1);
	}
	memset(p, 0x5a, MIB); /* resident, so RSS follows too */
	return p;
}

int main(int argc, char **argv)
{
	int wait = wl_take_wait_flag(&argc, &argv);
	long live = 0;

	if (argc > 2 && !strcmp(argv[1], "--pause"))
		pause_ms = wl_arg(argc, argv, 2, 100);
	/* a fixed threshold: glibc's dynamic one would move blocks between
	 * mmap and the brk heap from one phase to the next */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	wl_say("pid %d\n", (int)getpid());
	wl_announce("alloc_phases");
	wl_say("ready\n");
	if (wait && getchar() == EOF)
		return 0;
	phase("start", live);
	for (int i = 0; i < 64; i++, live += MIB)
		blocks[i] = alloc_block();
	phase("grow", live);
	for (int i = 0; i < 64; i += 2, live -= MIB) {
		free(blocks[i]);
		blocks[i] = NULL;
	}
	phase("free", live);
	for (int i = 64; i < NBLOCKS; i++, live += MIB)
		blocks[i] = alloc_block();
	phase("regrow", live);
	wl_say("done\n");
	if (wait)
		getchar();
	for (int i = 0; i < NBLOCKS; i++)
		free(blocks[i]);
	return 0;
}
