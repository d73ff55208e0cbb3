/* jitmap: a tiny JIT whose perf map (/tmp/perf-PID.map) is written as a
 * JVM writes its own (record_jit.sh, jit_rewrite and jit_at_exit).
 *
 *   jitmap rewrite|atexit MAPS_COPY
 *
 * Places 2 * HALF functions in one anonymous RWX mapping (each: a frame,
 * a call of tick(), which sleeps 1 ms, and a return), then
 *   rewrite: writes a map naming the first half only, runs every function
 *     for a while, then truncates the map and writes it again (as
 *     `jcmd PID Compiler.perfmap` does: the same file, its lines in a new
 *     order, the second half's first), and runs every function again;
 *   atexit: runs every function, and writes the whole map only as it exits
 *     (as -XX:+DumpPerfMapAtExit does).
 * Before it exits it copies /proc/self/maps to MAPS_COPY (the test's check
 * needs the JIT mapping).  x86-64 and arm64. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define HALF 48
#define FN_BYTES 64
#define ROUNDS 6 /* calls of every function, per phase */

typedef void (*jit_fn)(int i);

__attribute__((noinline)) static void tick(int i)
{
	struct timespec ts = { 0, 1000000 };

	(void)i;
	nanosleep(&ts, NULL);
}

/* One function at p calling target with a frame pointer kept. */
static void emit(unsigned char *p, void (*target)(int))
{
	uint64_t t = (uint64_t)(uintptr_t)target;
#if defined(__x86_64__)
	static const unsigned char head[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0xb8 };
	static const unsigned char tail[] = { 0xff, 0xd0, 0x5d, 0xc3 };

	memcpy(p, head, sizeof(head)); /* push rbp; mov rbp,rsp; movabs rax, */
	memcpy(p + sizeof(head), &t, 8);
	memcpy(p + sizeof(head) + 8, tail, sizeof(tail)); /* call rax; pop rbp; ret */
#elif defined(__aarch64__)
	static const uint32_t code[] = {
		0xa9bf7bfd, /* stp x29, x30, [sp, #-16]! */
		0x910003fd, /* mov x29, sp */
		0x58000090, /* ldr x16, #16 (the target, below) */
		0xd63f0200, /* blr x16 */
		0xa8c17bfd, /* ldp x29, x30, [sp], #16 */
		0xd65f03c0, /* ret */
	};

	memcpy(p, code, sizeof(code));
	memcpy(p + 24, &t, 8); /* the ldr at +8 reads +24 */
#else
#error "jitmap: x86-64 and arm64 only"
#endif
}

static unsigned char *code;

/* The map: lines for functions [from, to), in that order. */
static void write_lines(FILE *f, int from, int to)
{
	for (int i = from; i < to; i++)
		fprintf(f, "%lx %x jitmap::fn_%02d\n", (unsigned long)(uintptr_t)(code + i * FN_BYTES),
			FN_BYTES, i);
}

static int write_map(int rewrite)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w"); /* truncates: the same file written again */
	if (!f) {
		perror(path);
		return -1;
	}
	if (rewrite) {
		write_lines(f, HALF, 2 * HALF);
		write_lines(f, 0, HALF);
	} else {
		write_lines(f, 0, 2 * HALF);
	}
	return fclose(f);
}

static void run_all(void)
{
	for (int r = 0; r < ROUNDS; r++)
		for (int i = 0; i < 2 * HALF; i++)
			((jit_fn)(void *)(code + i * FN_BYTES))(i);
}

static int copy_maps(const char *to)
{
	char buf[4096];
	FILE *in = fopen("/proc/self/maps", "re"), *out = fopen(to, "we");
	size_t n;

	if (!in || !out) {
		perror("maps");
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	fclose(in);
	return fclose(out);
}

int main(int argc, char **argv)
{
	int rewrite;
	FILE *f;
	char path[64];

	if (argc != 3 || (strcmp(argv[1], "rewrite") && strcmp(argv[1], "atexit"))) {
		fprintf(stderr, "usage: jitmap rewrite|atexit MAPS_COPY\n");
		return 2;
	}
	rewrite = !strcmp(argv[1], "rewrite");
	code = mmap(NULL, 2 * HALF * FN_BYTES, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (int i = 0; i < 2 * HALF; i++)
		emit(code + i * FN_BYTES, tick);
	__builtin___clear_cache((char *)code, (char *)code + 2 * HALF * FN_BYTES);
	if (rewrite) {
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
		f = fopen(path, "w");
		if (!f) {
			perror(path);
			return 1;
		}
		write_lines(f, 0, HALF);
		if (fclose(f))
			return 1;
	}
	run_all();
	if (rewrite && write_map(1))
		return 1;
	if (rewrite)
		run_all();
	if (copy_maps(argv[2]) || (!rewrite && write_map(0)))
		return 1;
	printf("pid %d\n", (int)getpid());
	return 0;
}
