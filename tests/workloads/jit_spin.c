/* jit_spin: code that exists only in memory, named only by a perf map, as a
 * JIT makes it: a tiny countdown loop copied into an anonymous executable
 * mapping and named gt_jit_spin in /tmp/perf-PID.map, PID as getpid()
 * gives it (in a container: its own pid namespace's, in its own /tmp).
 * Then it runs that code for MS milliseconds of its CPU time (default 300),
 * however loaded the machine is, prints `done` and exits.
 *
 *   jit_spin [MS]    stdout: `pid PID`, `map FILE`, `ready`, `done`
 */
#include <sys/mman.h>

#include "wl_common.h"

typedef uint64_t (*spin_fn)(uint64_t n);

#if defined(__x86_64__)
/* mov rax,rdi; 1: dec rax; jnz 1b; ret */
static const unsigned char code[] = {0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3};
#elif defined(__aarch64__)
/* 1: subs x0,x0,#1; b.ne 1b; ret (little-endian words) */
static const unsigned char code[] = {0x00, 0x04, 0x00, 0xf1, 0xe1, 0xff, 0xff, 0x54,
				     0xc0, 0x03, 0x5f, 0xd6};
#else
#error "jit_spin: no code for this architecture"
#endif

static long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 300;
	size_t len = 4096;
	char map[64];
	FILE *f;
	void *mem = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);

	if (mem == MAP_FAILED) {
		perror("jit_spin: mmap");
		return 1;
	}
	memcpy(mem, code, sizeof(code));
	__builtin___clear_cache((char *)mem, (char *)mem + sizeof(code));
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(map, "w");
	if (!f || fprintf(f, "%lx %zx gt_jit_spin\n", (unsigned long)(uintptr_t)mem,
			  sizeof(code)) < 0 || fclose(f)) {
		perror(map);
		return 1;
	}
	wl_say("pid %d\n", (int)getpid());
	wl_say("map %s\n", map);
	wl_say("ready\n");
	long long until = cpu_ns() + ms * 1000000LL;
	spin_fn spin = (spin_fn)(uintptr_t)mem;

	while (cpu_ns() < until)
		spin(1000000);
	wl_say("done\n");
	return 0;
}
