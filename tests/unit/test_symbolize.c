/* The symbolizer against real binaries: this test's own functions (DWARF),
 * a PIE child symbolized after it exited, libc through .dynsym, a stripped
 * Go binary built now with Debian's go (.gopclntab), the kernel through
 * /proc/kallsyms, the parsers on hand-made lines, and garbage. */
#include <dlfcn.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gt_test.h"
#include "sym/crc_cache.h"
#include "sym/debug_file.h"
#include "sym/loader.h"
#include "sym/demangle.h"
#include "sym/maps.h"
#include "sym/pclntab.h"
#include "sym/perfmap.h"
#include "sym/symbolize.h"
#include "sym/testing.h"

static const char *build_dir = "build";

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* The line binutils' addr2line gives for symbol sym of bin (the oracle
 * for DWARF lines), or 0. */
static unsigned oracle_line(const char *bin, const char *sym)
{
	char cmd[1400], out[1024];
	unsigned line = 0;
	const char *colon;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "addr2line -e '%1$s' $(nm '%1$s' | awk '$3 == \"%2$s\" { print $1 }')",
		 bin, sym);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	if (fgets(out, sizeof(out), p) && (colon = strrchr(out, ':')))
		line = (unsigned)strtoul(colon + 1, NULL, 10);
	pclose(p);
	return line;
}

/* ---- the test's own code --------------------------------------------- */

static const int probe_line = __LINE__ + 2;
__attribute__((noinline))
int sym_probe(int x)
{
	return x * 7 + 3;
}

static void test_own_functions(void)
{
	struct gt_symbolizer *s = gt_symbolizer_new();
	uint64_t ip = (uint64_t)(uintptr_t)sym_probe;
	struct gt_sym sym;
	int rc, info;
	char self[512];
	ssize_t n;
	unsigned want;

	GT_REQUIRE(s, "out of memory");
	rc = gt_symbolizer_add_process(s, getpid());
	GT_REQUIRE(rc == 0, "add_process(self): %s", strerror(-rc));
	rc = gt_symbolize_user(s, getpid(), ip, &sym);
	GT_CHECK(rc == 0 && !strcmp(sym.func, "sym_probe"),
		 "entry: rc %d func %s", rc, sym.func);
	GT_CHECK(ends_with(sym.file, "test_symbolize.c"), "file %s", sym.file);
	/* The entry's row: the declarator's, the brace's or the body's line. */
	GT_CHECK(sym.line >= (unsigned)probe_line &&
		 sym.line <= (unsigned)probe_line + 3, "line %u, function at %d",
		 sym.line, probe_line);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	want = oracle_line(self, "sym_probe");
	GT_CHECK(sym.line == want, "line %u, addr2line says %u", sym.line, want);
	GT_CHECK(strstr(sym.module, "test_symbolize") != NULL, "module %s",
		 sym.module);
	/* Inside the body: still the function, a line within it. */
	rc = gt_symbolize_user(s, getpid(), ip + 4, &sym);
	GT_CHECK(rc == 0 && !strcmp(sym.func, "sym_probe"), "ip+4: %s", sym.func);
	GT_CHECK(sym.line >= (unsigned)probe_line &&
		 sym.line <= (unsigned)probe_line + 3, "ip+4 line %u", sym.line);
	/* Another function of ours, and one called through main's stack. */
	rc = gt_symbolize_user(s, getpid(), (uint64_t)(uintptr_t)test_own_functions + 1, &sym);
	GT_CHECK(rc == 0 && !strcmp(sym.func, "test_own_functions"), "got %s",
		 sym.func);
	info = gt_symbolizer_binary_info(s, getpid(), ip);
	GT_CHECK(info >= 0 && (info & GT_SYM_HAS_DWARF) && (info & GT_SYM_HAS_SYMTAB),
		 "binary info %d", info);
	GT_CHECK(info >= 0 && (info & GT_SYM_FRAME_POINTERS),
		 "built with -fno-omit-frame-pointer but info says %d", info);
	gt_symbolizer_free(s);
}

/* The vDSO has no file: it is symbolized from our own copy. */
static void test_vdso(void)
{
	struct gt_symbolizer *s = gt_symbolizer_new();
	uint64_t start = 0, end = 0;
	char line[512], name[64] = "";
	int found = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	GT_REQUIRE(s && f, "setup: %s", strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]"))
			sscanf(line, "%" SCNx64 "-%" SCNx64, &start, &end);
	fclose(f);
	GT_REQUIRE(start && end > start, "no [vdso] in /proc/self/maps");
	GT_REQUIRE(gt_symbolizer_add_process(s, getpid()) == 0, "add self");
	for (uint64_t ip = start; ip < end && !found; ip += 4) {
		struct gt_sym sym;

		if (gt_symbolize_user(s, getpid(), ip, &sym) == 0 &&
		    strstr(sym.func, "clock_gettime")) {
			found = 1;
			snprintf(name, sizeof(name), "%s", sym.func);
			GT_CHECK(!strcmp(sym.module, "[vdso]"), "module %s", sym.module);
		}
	}
	GT_CHECK(found, "no address of [vdso] %" PRIx64 "-%" PRIx64
		 " resolved to *clock_gettime*", start, end);
	gt_symbolizer_free(s);
}

/* C++ names come back demangled: a libstdc++ function loaded into us. */
static void test_cplusplus(void)
{
	struct gt_symbolizer *s = gt_symbolizer_new();
	void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
	void *fn = h ? dlsym(h, "_ZNSt9exceptionD1Ev") : NULL;
	char *d = gt_demangle("_ZN3foo3barEi");
	struct gt_sym sym;
	int rc;

	GT_CHECK(d && !strcmp(d, "foo::bar(int)"), "demangled %s", d ? d : "(null)");
	free(d);
	GT_CHECK(gt_demangle("main") == NULL && gt_demangle("_Zgarbage") == NULL,
		 "demangled something not mangled");
	GT_REQUIRE(s && fn, "libstdc++.so.6 or std::exception::~exception missing: %s",
		   dlerror());
	GT_REQUIRE(gt_symbolizer_add_process(s, getpid()) == 0, "add self");
	rc = gt_symbolize_user(s, getpid(), (uint64_t)(uintptr_t)fn, &sym);
	GT_CHECK(rc == 0 && !strcmp(sym.func, "std::exception::~exception()"),
		 "rc %d func %s", rc, sym.func);
	GT_CHECK(strstr(sym.module, "libstdc++") != NULL, "module %s", sym.module);
	gt_symbolizer_free(s);
	dlclose(h);
}

/* ---- child processes ---------------------------------------------------- */

struct child {
	pid_t pid;
	FILE *out;  /* its stdout */
	int in_fd;  /* its stdin: closing it lets it exit */
};

static int spawn(struct child *c, char *const argv[])
{
	int in[2], out[2];

	if (pipe(in) || pipe(out))
		return -errno;
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (c->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in_fd = in[1];
	c->out = fdopen(out[0], "r");
	return c->out ? 0 : -errno;
}

static void reap(struct child *c)
{
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
		c->pid = 0;
	}
	if (c->out)
		fclose(c->out);
	if (c->in_fd > 0)
		close(c->in_fd);
	c->out = NULL;
	c->in_fd = -1;
}

/* Reads child lines until one starting with "ready"; fills the fields the
 * sym_target workload prints. */
static int read_target(struct child *c, uint64_t *leaf, int *leaf_line,
		       uint64_t *wr)
{
	char line[256];
	void *p;

	while (fgets(line, sizeof(line), c->out)) {
		if (sscanf(line, "leaf %p %d", &p, leaf_line) == 2)
			*leaf = (uint64_t)(uintptr_t)p;
		else if (sscanf(line, "write %p", &p) == 1)
			*wr = (uint64_t)(uintptr_t)p;
		else if (!strncmp(line, "ready", 5))
			return 0;
	}
	return -EIO;
}

static void test_child_after_exit(void)
{
	char path[512];
	char *argv[] = { path, NULL };
	struct child c = { 0 }, c2 = { 0 };
	struct gt_symbolizer *s = gt_symbolizer_new();
	uint64_t leaf = 0, wr = 0, leaf2 = 0, wr2 = 0;
	int line = 0, line2 = 0, rc;
	struct gt_sym a, b;
	const char *shared_name;
	pid_t pid, pid2;
	unsigned want_line;

	GT_REQUIRE(s, "out of memory");
	snprintf(path, sizeof(path), "%s/workloads/sym_target", build_dir);
	GT_REQUIRE(access(path, X_OK) == 0, "%s not built: %s", path, strerror(errno));
	GT_REQUIRE(spawn(&c, argv) == 0 && read_target(&c, &leaf, &line, &wr) == 0,
		   "starting %s failed", path);
	GT_REQUIRE(spawn(&c2, argv) == 0 && read_target(&c2, &leaf2, &line2, &wr2) == 0,
		   "starting a second %s failed", path);
	rc = gt_symbolizer_add_process(s, c.pid);
	GT_CHECK(rc == 0, "add_process: %s", strerror(-rc));
	rc = gt_symbolizer_add_process(s, c2.pid);
	GT_CHECK(rc == 0, "add_process 2: %s", strerror(-rc));
	pid = c.pid;
	pid2 = c2.pid;
	reap(&c); /* gone: everything needed was read while it lived */
	reap(&c2);
	GT_CHECK(kill(pid, 0) == -1 && errno == ESRCH, "child %d still alive", (int)pid);

	rc = gt_symbolize_user(s, pid, leaf, &a);
	GT_CHECK(rc == 0 && !strcmp(a.func, "sym_target_leaf"),
		 "leaf after exit: rc %d func %s", rc, a.func);
	want_line = oracle_line(path, "sym_target_leaf");
	GT_CHECK(want_line >= (unsigned)line && want_line <= (unsigned)line + 3,
		 "addr2line oracle says %u, function spans %d..%d", want_line,
		 line, line + 3);
	GT_CHECK(ends_with(a.file, "sym_target.c") && a.line == want_line,
		 "leaf at %s:%u, addr2line says sym_target.c:%u", a.file, a.line,
		 want_line);
	GT_CHECK(ends_with(a.module, "workloads/sym_target"), "module %s", a.module);

	rc = gt_symbolize_user(s, pid, wr, &a);
	GT_CHECK(rc == 0 && (!strcmp(a.func, "write") || !strcmp(a.func, "__write") ||
			     !strcmp(a.func, "__libc_write") ||
			     !strcmp(a.func, "__GI___libc_write")),
		 "libc write: rc %d func %s", rc, a.func);
	GT_CHECK(strstr(a.module, "libc.so") != NULL, "write module %s", a.module);

	/* Same binary in two processes (different ASLR bases): one parse, so
	 * the very same name string comes back. */
	rc = gt_symbolize_user(s, pid2, leaf2, &b);
	shared_name = a.func;
	GT_CHECK(rc == 0 && !strcmp(b.func, "sym_target_leaf"), "second: %s", b.func);
	gt_symbolize_user(s, pid, leaf, &a);
	GT_CHECK(a.func == b.func, "binary parsed twice (names at %p and %p)",
		 (const void *)a.func, (const void *)b.func);
	gt_symbolize_user(s, pid2, wr2, &b);
	GT_CHECK(b.func == shared_name, "libc parsed twice");

	/* Forgotten: unknown pid again. */
	gt_symbolizer_forget_process(s, pid);
	rc = gt_symbolize_user(s, pid, leaf, &a);
	GT_CHECK(rc == -ESRCH && !strncmp(a.func, "0x", 2), "forgotten: rc %d %s",
		 rc, a.func);
	gt_symbolizer_free(s);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* A binary no snapshotted process maps any more is parked, then closed
 * (a daemon that saw thousands of processes kept every one of their
 * files open): parked, it is not loaded again by the next that maps it. */
static void test_forget_closes_binaries(void)
{
	char path[512];
	char *argv[] = { path, NULL };
	struct child c = { 0 };
	struct gt_symbolizer *s = gt_symbolizer_new();
	uint64_t leaf = 0, wr = 0;
	int line = 0, before, held, after;
	struct gt_sym a;

	GT_REQUIRE(s, "out of memory");
	snprintf(path, sizeof(path), "%s/workloads/sym_target", build_dir);
	GT_REQUIRE(spawn(&c, argv) == 0 && read_target(&c, &leaf, &line, &wr) == 0,
		   "starting %s failed", path);
	gt_sym_loader_idle(30000000000ull); /* earlier tests' loads */
	before = count_fds();
	GT_CHECK(gt_symbolizer_add_process(s, c.pid) == 0, "add_process");
	GT_CHECK(gt_symbolize_user(s, c.pid, leaf, &a) == 0, "lookup");
	held = count_fds();
	gt_symbolizer_forget_process(s, c.pid);
	/* the loads not needed yet (libc's) finish on their threads */
	GT_CHECK(gt_sym_loader_idle(30000000000ull), "loads still running after 30 s");
	gt_symbolizer_close_parked(s);
	after = count_fds();
	GT_CHECK(held > before, "no file held while the process is known (%d, %d)", before, held);
	GT_CHECK(after == before, "%d descriptors before, %d held, %d after forgetting",
		 before, held, after);
	/* known again: opened again */
	GT_CHECK(gt_symbolizer_add_process(s, c.pid) == 0, "add again");
	GT_CHECK(gt_symbolize_user(s, c.pid, leaf, &a) == 0 && !strcmp(a.func, "sym_target_leaf"),
		 "lookup after re-adding: %s", a.func);
	reap(&c);
	gt_symbolizer_free(s);
}

/* .gnu_debuglink is another user's data: a bare printable file name,
 * NUL-padded to 4 bytes, then the CRC in the file's byte order. */
static void test_debuglink_names(void)
{
	static const struct { const char *bytes; size_t n; int ok; } cases[] = {
		{ "libx.so.debug\0\0\0\x78\x56\x34\x12", 20, 1 },
		{ "a.debug\0\x78\x56\x34\x12", 12, 1 },
		{ "../../../tmp/x/fifo\0\x78\x56\x34\x12", 24, 0 },
		{ "dir/x.debug\0\x78\x56\x34\x12", 16, 0 },
		{ "/etc/shadow\0\x78\x56\x34\x12", 16, 0 },
		{ ".\0\0\0\x78\x56\x34\x12", 8, 0 },
		{ "..\0\0\x78\x56\x34\x12", 8, 0 },
		{ "\0\0\0\0\x78\x56\x34\x12", 8, 0 },
		{ "a b\0\x78\x56\x34\x12", 8, 0 },
		{ "a\nb\0\x78\x56\x34\x12", 8, 0 },
		{ "a.debug\0\x78\x56\x34", 11, 0 },  /* CRC cut short */
		{ "a.debug", 7, 0 },                      /* no NUL */
	};
	char name[GT_DEBUGLINK_MAX + 1], longname[300 + 8];
	uint32_t crc = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = gt_debuglink_parse(cases[i].bytes, cases[i].n, 0, name, &crc);

		GT_CHECK((rc == 0) == cases[i].ok, "case %zu (%s): rc %d", i, cases[i].bytes, rc);
		if (rc == 0)
			GT_CHECK(crc == 0x12345678 && !strchr(name, '/'), "case %zu: crc %x", i, crc);
	}
	GT_CHECK(gt_debuglink_parse(cases[1].bytes, cases[1].n, 1, name, &crc) == 0 &&
		 crc == 0x78563412, "big-endian CRC: %x", crc);
	memset(longname, 'a', 300);
	memset(longname + 300, 0, 8);
	GT_CHECK(gt_debuglink_parse(longname, sizeof(longname), 0, name, &crc) != 0,
		 "a 300-byte name was taken");
}

/* A load that never returns (a FUSE file system that does not answer):
 * the hook holds every load of sym_target until released. */
static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cond = PTHREAD_COND_INITIALIZER;
static int hold;

static void hold_hook(const char *path)
{
	size_t n = strlen(path);

	if (n < 11 || strcmp(path + n - 11, "/sym_target"))
		return;
	pthread_mutex_lock(&hold_lock);
	while (hold)
		pthread_cond_wait(&hold_cond, &hold_lock);
	pthread_mutex_unlock(&hold_lock);
}

static void set_hold(int on)
{
	pthread_mutex_lock(&hold_lock);
	hold = on;
	pthread_cond_broadcast(&hold_cond);
	pthread_mutex_unlock(&hold_lock);
}

/* Opening and parsing run on loader threads (sym/loader.h): a load stuck
 * forever costs the lookups one bounded wait and names (module+0xOFF
 * meanwhile), never the caller's thread; once it finishes the names come;
 * a symbolizer freed while one is stuck does not wait for it.  On the old
 * build, add_process opened the file itself and would never return. */
/* Waits up to 30 s for the loader pool to be back to its idle threads
 * (one just started may not have looked at the empty queue yet). */
static unsigned loader_threads_settled(void)
{
	struct timespec pause = { 0, 10000000 };

	for (int i = 0; i < 3000 && gt_sym_loader_threads() > GT_SYM_LOADERS_IDLE; i++)
		nanosleep(&pause, NULL);
	return gt_sym_loader_threads();
}

static void test_stuck_load(void)
{
	char path[512];
	char *argv[] = { path, NULL };
	struct child c = { 0 };
	struct gt_symbolizer *s = gt_symbolizer_new(), *s2 = gt_symbolizer_new();
	uint64_t leaf = 0, wr = 0;
	int line = 0, rc;
	unsigned peak, threads;
	struct gt_sym a;

	GT_REQUIRE(s && s2, "out of memory");
	snprintf(path, sizeof(path), "%s/workloads/sym_target", build_dir);
	GT_REQUIRE(spawn(&c, argv) == 0 && read_target(&c, &leaf, &line, &wr) == 0,
		   "starting %s failed", path);
	gt_sym_loader_idle(30000000000ull);
	gt_sym_load_hook = hold_hook;
	set_hold(1);
	GT_CHECK(gt_symbolizer_add_process(s, c.pid) == 0, "add_process");
	rc = gt_symbolize_user(s, c.pid, leaf, &a);
	GT_CHECK(rc == -ENOENT && strstr(a.func, "sym_target+0x"),
		 "while its load is stuck: rc %d, %s (want module+0xOFF)", rc, a.func);
	/* a second symbolizer, freed while its load is stuck */
	GT_CHECK(gt_symbolizer_add_process(s2, c.pid) == 0, "add_process (2)");
	gt_symbolize_user(s2, c.pid, leaf, &a);
	gt_symbolizer_free(s2);
	/* two loads stuck at once: two threads at least */
	peak = gt_sym_loader_threads();
	set_hold(0);
	GT_CHECK(gt_sym_loader_idle(30000000000ull), "loads still running after 30 s");
	/* the pool shrinks back: it kept its peak (each thread with its stack
	 * and allocator cache, about 1 MB in ASan: daemon_soak grew by it) */
	threads = loader_threads_settled();
	GT_CHECK(peak >= 2 && threads <= GT_SYM_LOADERS_IDLE,
		 "loader threads: %u at the peak, %u once idle (want at most %d)", peak,
		 threads, GT_SYM_LOADERS_IDLE);
	rc = gt_symbolize_user(s, c.pid, leaf, &a);
	GT_CHECK(rc == 0 && !strcmp(a.func, "sym_target_leaf"),
		 "once the load finished: rc %d, %s", rc, a.func);
	gt_sym_load_hook = NULL;
	reap(&c);
	gt_symbolizer_free(s);
}

/* In gotraced each user has a budget of loads running at once
 * (sym/loader.h, gt_sym_loader_budget): with
 * every load of sym_target stuck, GT_SYM_LOADS_PER_UID of ours run and
 * the others wait in the queue (ten symbolizers, ten loads of one file);
 * the symbolizers freed, the queued loads go at once (cancelled, never
 * started), and the stuck ones end when released.  On the old build all
 * ten ran, each on its thread, and stayed queued or running after their
 * symbolizers were gone. */
static void test_load_budget(void)
{
	char path[512];
	char *argv[] = { path, NULL };
	struct child c = { 0 };
	struct gt_symbolizer *s[10];
	struct timespec pause = { 0, 20000000 };
	uint64_t leaf = 0, wr = 0;
	unsigned running = 0, queued = 0;
	int line = 0;
	struct gt_sym a;

	snprintf(path, sizeof(path), "%s/workloads/sym_target", build_dir);
	GT_REQUIRE(spawn(&c, argv) == 0 && read_target(&c, &leaf, &line, &wr) == 0,
		   "starting %s failed", path);
	gt_sym_loader_idle(30000000000ull);
	gt_sym_loader_budget(GT_SYM_LOADS_PER_UID); /* as gotraced's */
	gt_sym_load_hook = hold_hook;
	set_hold(1);
	for (int i = 0; i < 10; i++) {
		s[i] = gt_symbolizer_new();
		GT_REQUIRE(s[i], "out of memory");
		gt_symbolizer_set_wait(s[i], 0);
		GT_CHECK(gt_symbolizer_add_process(s[i], c.pid) == 0, "add_process %d", i);
		GT_CHECK(gt_symbolize_user(s[i], c.pid, leaf, &a) == -ENOENT, "%d: named while held", i);
	}
	/* once two of sym_target's are stuck, the rest of our loads (its
	 * other copies, the libraries') wait behind them */
	for (int i = 0; i < 500; i++) {
		gt_sym_loads_now(&running, &queued);
		if (running >= GT_SYM_LOADS_PER_UID && queued >= 10 - GT_SYM_LOADS_PER_UID)
			break;
		nanosleep(&pause, NULL);
	}
	/* never more than the budget at once, the rest waiting */
	for (int i = 0; i < 20; i++) {
		unsigned r, q;

		nanosleep(&pause, NULL);
		gt_sym_loads_now(&r, &q);
		running = r > running ? r : running;
		queued = q;
	}
	GT_CHECK(running == GT_SYM_LOADS_PER_UID && queued >= 10 - GT_SYM_LOADS_PER_UID,
		 "one user's loads: at most %u running, %u queued (want %d running at most)",
		 running, queued, GT_SYM_LOADS_PER_UID);
	for (int i = 0; i < 10; i++)
		gt_symbolizer_free(s[i]);
	gt_sym_loads_now(&running, &queued);
	GT_CHECK(queued == 0, "%u loads still queued once nobody wants them", queued);
	set_hold(0);
	GT_CHECK(gt_sym_loader_idle(30000000000ull), "loads still running after 30 s");
	gt_sym_loader_budget(0);
	gt_sym_load_hook = NULL;
	reap(&c);
}

/* A debug-link candidate's CRC is remembered by device, inode, size,
 * modification and change times (sym/crc_cache.h): a file written since
 * is not taken for the one read; the cache holds GT_CRC_CACHE_SLOTS
 * files, the one unused longest replaced. */
static void test_crc_cache(void)
{
	struct stat st = { 0 }, other;
	uint32_t crc = 0;

	gt_crc_cache_clear();
	st.st_dev = 8;
	st.st_ino = 1234;
	st.st_size = 1023ll << 20;
	st.st_mtim.tv_sec = 1000;
	st.st_ctim.tv_sec = 1000;
	GT_CHECK(!gt_crc_cache_get(&st, &crc), "found before it was put");
	gt_crc_cache_put(&st, 0xdeadbeef);
	GT_CHECK(gt_crc_cache_get(&st, &crc) && crc == 0xdeadbeef, "not found: %x", crc);
	other = st;
	other.st_mtim.tv_nsec = 1;
	GT_CHECK(!gt_crc_cache_get(&other, &crc), "found with another mtime");
	other = st;
	other.st_ctim.tv_sec = 1001; /* written, then its mtime set back */
	GT_CHECK(!gt_crc_cache_get(&other, &crc), "found with another ctime");
	other = st;
	other.st_size++;
	GT_CHECK(!gt_crc_cache_get(&other, &crc), "found with another size");
	for (unsigned i = 0; i < GT_CRC_CACHE_SLOTS; i++) {
		other = st;
		other.st_ino = 5000 + i;
		gt_crc_cache_put(&other, i);
		GT_CHECK(gt_crc_cache_get(&st, &crc), "the one used last was replaced (%u)", i);
	}
	other.st_ino = 5000; /* the oldest: replaced by the last put */
	GT_CHECK(!gt_crc_cache_get(&other, &crc), "more than %d files kept", GT_CRC_CACHE_SLOTS);
	gt_crc_cache_clear();
}

/* Maps change after they were read: a library loaded later is found by a
 * re-read on the miss (rate-limited, so after a short wait), and a process
 * that exited, zombie or reaped, keeps the maps read while it lived. */
static void test_maps_reread(void)
{
	char path[512];
	char *argv[] = { path, NULL };
	struct child c = { 0 };
	struct gt_symbolizer *s = gt_symbolizer_new();
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	uint64_t leaf = 0, wr = 0;
	int line = 0, rc;
	struct gt_sym sym;
	char stat_path[64], st[256] = "";

	GT_REQUIRE(s, "out of memory");
	GT_REQUIRE(gt_symbolizer_add_process(s, getpid()) == 0, "add self");
	void *h = dlopen("libcrypt.so.1", RTLD_NOW | RTLD_LOCAL); /* essential in Debian */
	void *fn = h ? dlsym(h, "crypt") : NULL;
	GT_REQUIRE(fn, "libcrypt.so.1 crypt: %s", dlerror());
	nanosleep(&pause, NULL);
	rc = gt_symbolize_user(s, getpid(), (uint64_t)(uintptr_t)fn, &sym);
	GT_CHECK(rc == 0 && !strcmp(sym.func, "crypt") && strstr(sym.module, "libcrypt"),
		 "library loaded after the snapshot: rc %d func %s module %s", rc, sym.func,
		 sym.module);
	dlclose(h);

	snprintf(path, sizeof(path), "%s/workloads/sym_target", build_dir);
	GT_REQUIRE(spawn(&c, argv) == 0 && read_target(&c, &leaf, &line, &wr) == 0,
		   "starting %s failed", path);
	GT_REQUIRE(gt_symbolizer_add_process(s, c.pid) == 0, "add child");
	kill(c.pid, SIGKILL);
	snprintf(stat_path, sizeof(stat_path), "/proc/%d/stat", (int)c.pid);
	/* up to 60 s: a busy machine may take its time to reap the kill */
	for (int i = 0; i < 3000 && !strstr(st, ") Z"); i++) {
		FILE *f = fopen(stat_path, "r");
		st[0] = '\0';
		if (f) {
			if (!fgets(st, sizeof(st), f))
				st[0] = '\0';
			fclose(f);
		}
		nanosleep(&pause, NULL);
	}
	GT_CHECK(strstr(st, ") Z") != NULL, "child did not become a zombie: %s", st);
	rc = gt_symbolizer_add_process(s, c.pid);
	GT_CHECK(rc == -ESRCH, "re-read of a zombie: %d, want -ESRCH", rc);
	rc = gt_symbolize_user(s, c.pid, leaf, &sym);
	GT_CHECK(rc == 0 && !strcmp(sym.func, "sym_target_leaf"), "zombie: rc %d func %s", rc,
		 sym.func);
	pid_t pid = c.pid;
	reap(&c);
	rc = gt_symbolizer_add_process(s, pid);
	GT_CHECK(rc == -ENOENT, "re-read of a reaped process: %d, want -ENOENT", rc);
	rc = gt_symbolize_user(s, pid, leaf, &sym);
	GT_CHECK(rc == 0 && !strcmp(sym.func, "sym_target_leaf"), "reaped: rc %d func %s", rc,
		 sym.func);
	gt_symbolizer_free(s);
}

static int run(const char *cmd)
{
	int st = system(cmd);

	return st == 0 ? 0 : -1;
}

/* A binary deleted while running: found again through map_files. */
static void test_deleted_binary(void)
{
	char src[512], copy[600], cmd[1400];
	char *argv[] = { copy, NULL };
	struct child c = { 0 };
	struct gt_symbolizer *s = gt_symbolizer_new();
	uint64_t leaf = 0, wr = 0;
	int line = 0, rc;
	struct gt_sym sym;
	pid_t pid;

	GT_REQUIRE(s, "out of memory");
	snprintf(src, sizeof(src), "%s/workloads/sym_target", build_dir);
	snprintf(copy, sizeof(copy), "%s/sym-deleted-%d", build_dir, (int)getpid());
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", src, copy);
	GT_REQUIRE(run(cmd) == 0, "%s failed", cmd);
	rc = spawn(&c, argv);
	/* Delete it only once it runs: before its exec the file must exist. */
	if (rc == 0)
		rc = read_target(&c, &leaf, &line, &wr);
	unlink(copy);
	if (rc != 0) {
		gt_symbolizer_free(s);
		GT_REQUIRE(rc == 0, "starting %s failed", copy);
	}
	rc = gt_symbolizer_add_process(s, c.pid);
	pid = c.pid;
	reap(&c);
	GT_CHECK(rc == 0, "add_process: %s", strerror(-rc));
	rc = gt_symbolize_user(s, pid, leaf, &sym);
	GT_CHECK(rc == 0 && !strcmp(sym.func, "sym_target_leaf"),
		 "deleted binary: rc %d func %s module %s", rc, sym.func, sym.module);
	GT_CHECK(strstr(sym.module, "sym-deleted-") != NULL, "module %s", sym.module);
	gt_symbolizer_free(s);
}

/* ---- Go ------------------------------------------------------------------- */

/* Address and line of FUNC in the unstripped build, via `go tool nm -n`
 * and the source (the line of "func NAME("). */
static uint64_t nm_addr(const char *bin, const char *func)
{
	char cmd[1024], line[512], want[128];
	uint64_t addr = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "go tool nm %s 2>/dev/null", bin);
	snprintf(want, sizeof(want), " T %s\n", func);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p))
		if (ends_with(line, want))
			addr = strtoull(line, NULL, 16);
	pclose(p);
	return addr;
}

static int source_line(const char *file, const char *text)
{
	char line[512];
	int n = 0, found = 0;
	FILE *f = fopen(file, "r");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		n++;
		found = !strncmp(line, text, strlen(text));
	}
	fclose(f);
	return found ? n : 0;
}

/* Reads symgo's `work ADDR` line, up to `ready`. */
static int read_go(struct child *c, uint64_t *work)
{
	char line[256];

	while (fgets(line, sizeof(line), c->out)) {
		if (!strncmp(line, "work ", 5))
			*work = strtoull(line + 5, NULL, 16);
		else if (!strncmp(line, "ready", 5))
			return *work ? 0 : -EIO;
	}
	return -EIO;
}

/* Builds symgo with extra go flags (e.g. -buildmode=pie), stripped and
 * not, runs the stripped one and checks main.main / main.work. */
static void check_go_build(const char *tag, const char *goflags)
{
	static const char src[] = "tests/workloads/go/symgo.go";
	char dir[512], cmd[8192], stripped[600], full[600];
	char *argv[] = { stripped, NULL };
	struct child c = { 0 };
	struct gt_symbolizer *s;
	struct gt_sym sym;
	uint64_t main_addr, work_addr, work_rt = 0;
	int main_line = source_line(src, "func main()");
	int work_line = source_line(src, "func work(");
	int rc, info;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s/go-sym", build_dir);
	snprintf(stripped, sizeof(stripped), "%s/symgo-%s-stripped", dir, tag);
	snprintf(full, sizeof(full), "%s/symgo-%s", dir, tag);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %1$s && export GOCACHE=$PWD/%1$s/cache GOPATH=$PWD/%1$s/gopath"
		 " GO111MODULE=off GOFLAGS= CGO_ENABLED=0 && "
		 "go build %5$s -o %2$s %4$s && go build %5$s -ldflags='-s -w' -o %3$s %4$s",
		 dir, full, stripped, src, goflags);
	GT_REQUIRE(main_line && work_line, "cannot read %s", src);
	GT_REQUIRE(run(cmd) == 0, "go build failed: %s", cmd);
	main_addr = nm_addr(full, "main.main");
	work_addr = nm_addr(full, "main.work");
	GT_REQUIRE(main_addr && work_addr, "go tool nm %s: no main.main/main.work", full);
	GT_REQUIRE(nm_addr(stripped, "main.main") == 0,
		   "%s still has a symbol table: not a stripped test", stripped);

	s = gt_symbolizer_new();
	GT_REQUIRE(s, "out of memory");
	GT_REQUIRE(spawn(&c, argv) == 0 && read_go(&c, &work_rt) == 0,
		   "running %s failed", stripped);
	/* PIE: shift the link-time addresses by the load bias. */
	main_addr += work_rt - work_addr;
	work_addr = work_rt;
	rc = gt_symbolizer_add_process(s, c.pid);
	pid = c.pid;
	reap(&c);
	GT_CHECK(rc == 0, "add_process(go): %s", strerror(-rc));

	rc = gt_symbolize_user(s, pid, main_addr, &sym);
	GT_CHECK(rc == 0 && !strcmp(sym.func, "main.main"), "main.main: rc %d %s",
		 rc, sym.func);
	GT_CHECK(ends_with(sym.file, "symgo.go") && sym.line == (unsigned)main_line,
		 "main.main at %s:%u, want symgo.go:%d", sym.file, sym.line, main_line);
	rc = gt_symbolize_user(s, pid, work_addr + 8, &sym);
	GT_CHECK(rc == 0 && !strcmp(sym.func, "main.work"), "main.work+8: %s", sym.func);
	GT_CHECK(sym.line >= (unsigned)work_line && sym.line < (unsigned)work_line + 7,
		 "main.work+8 line %u, function starts at %d", sym.line, work_line);
	info = gt_symbolizer_binary_info(s, pid, main_addr);
	GT_CHECK(info >= 0 && (info & GT_SYM_HAS_PCLNTAB) && !(info & GT_SYM_HAS_DWARF),
		 "go binary info %d", info);
	gt_symbolizer_free(s);
}

static void test_go_stripped(void)
{
	check_go_build("exe", "");
}

static void test_go_stripped_pie(void)
{
	check_go_build("pie", "-buildmode=pie");
}

/* ---- kernel --------------------------------------------------------------- */

static uint64_t kallsyms_addr(const char *name)
{
	char line[512], want[128];
	uint64_t addr = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	snprintf(want, sizeof(want), " %s\n", name);
	while (f && !addr && fgets(line, sizeof(line), f))
		if ((strstr(line, " T ") || strstr(line, " t ")) && ends_with(line, want))
			addr = strtoull(line, NULL, 16);
	if (f)
		fclose(f);
	return addr;
}

static void test_kernel(void)
{
	struct gt_symbolizer *s = gt_symbolizer_new();
	uint64_t addr = kallsyms_addr("schedule");
	struct gt_sym sym;
	int rc;

	GT_REQUIRE(s, "out of memory");
	GT_REQUIRE(addr, "schedule has address 0 in /proc/kallsyms: run as root");
	rc = gt_symbolize_kernel(s, addr, &sym);
	GT_CHECK(rc == 0 && !strcmp(sym.func, "schedule"), "rc %d func %s", rc, sym.func);
	GT_CHECK(!strcmp(sym.file, "[kernel]") && !strcmp(sym.module, "[kernel]"),
		 "not marked kernel: file %s module %s", sym.file, sym.module);
	rc = gt_symbolize_kernel(s, addr + 5, &sym);
	GT_CHECK(rc == 0 && !strcmp(sym.func, "schedule"), "schedule+5: %s", sym.func);
	rc = gt_symbolize_kernel(s, 0x1234, &sym);
	GT_CHECK(rc == -ENOENT && !strcmp(sym.func, "0x1234"), "low garbage: %d %s",
		 rc, sym.func);
	gt_symbolizer_free(s);
}

/* ---- garbage ------------------------------------------------------------ */

static void test_garbage(void)
{
	static const uint64_t bad[] = { 0, 1, 0xfff, 0x7fffffffffffull,
					0xffffffffffffffffull,
					0xdeadbeefcafef00dull };
	struct gt_symbolizer *s = gt_symbolizer_new();
	struct gt_sym sym;
	char want[32];
	int rc;

	GT_REQUIRE(s, "out of memory");
	rc = gt_symbolize_user(s, 12345678, 0x401000, &sym);
	GT_CHECK(rc == -ESRCH && !strcmp(sym.func, "0x401000") && sym.file &&
		 sym.module, "unknown pid: rc %d func %s", rc, sym.func);
	rc = gt_symbolizer_add_process(s, 0x3fffffff);
	GT_CHECK(rc == -ENOENT, "nonexistent pid: rc %d", rc);
	GT_REQUIRE(gt_symbolizer_add_process(s, getpid()) == 0, "add self");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(want, sizeof(want), "0x%" PRIx64, bad[i]);
		rc = gt_symbolize_user(s, getpid(), bad[i], &sym);
		GT_CHECK(rc == -EFAULT && !strcmp(sym.func, want) && !sym.line,
			 "user %s: rc %d func %s (want -EFAULT: in no mapping)", want, rc, sym.func);
		rc = gt_symbolize_kernel(s, bad[i], &sym);
		GT_CHECK(sym.func && sym.file && sym.module, "kernel %s: NULL", want);
	}
	gt_symbolizer_free(s);
}

/* A long-lived daemon's symbolizer keeps nothing of processes gone: the
 * "0xADDR" of garbage frames (broken frame-pointer chains: countless with
 * ASLR) is never kept, and the names learned from processes go with the
 * last of them (1 000 sessions grew a daemon by 65 strings each). */
static void test_names_dropped(void)
{
	struct gt_symbolizer *s = gt_symbolizer_new();
	uint64_t ip = (uint64_t)(uintptr_t)sym_probe;
	struct gt_sym sym, kept;
	size_t known, after;
	int rc, bad = 0;
	pid_t ghost = 0x3ffffff0;

	GT_REQUIRE(s, "out of memory");
	GT_REQUIRE(gt_symbolizer_add_process(s, getpid()) == 0, "add self");
	GT_CHECK(gt_symbolize_user(s, getpid(), ip, &kept) == 0, "sym_probe: %s", kept.func);
	known = gt_symbolizer_names(s);
	for (uint64_t a = 0x10000; a < 0x10000 + 1000 * 16; a += 16) {
		char want[24];

		snprintf(want, sizeof(want), "0x%" PRIx64, a);
		rc = gt_symbolize_user(s, getpid(), a, &sym);
		bad += rc != -EFAULT || strcmp(sym.func, want);
	}
	after = gt_symbolizer_names(s);
	GT_CHECK(!bad, "%d of 1000 garbage lookups not -EFAULT with their address", bad);
	GT_CHECK(after == known, "1000 garbage lookups kept %zu strings", after - known);
	/* an unknown process's frames are kept (they go into stacks as they are) */
	rc = gt_symbolize_user(s, ghost, 0x401000, &sym);
	GT_CHECK(rc == -ESRCH && gt_symbolizer_names(s) == known + 1,
		 "unknown pid: rc %d, %zu strings, was %zu", rc, gt_symbolizer_names(s), known);
	/* another process forgotten: ours keeps its names */
	GT_CHECK(gt_symbolizer_clone_process(s, getpid(), ghost) == 0, "clone");
	gt_symbolizer_forget_process(s, ghost);
	GT_CHECK(gt_symbolizer_names(s) == known + 1 && strstr(kept.module, "test_symbolize"),
		 "forgetting another process: %zu strings, module %s", gt_symbolizer_names(s),
		 kept.module);
	gt_symbolizer_forget_process(s, getpid());
	GT_CHECK(gt_symbolizer_names(s) == 0, "no process left, %zu strings kept",
		 gt_symbolizer_names(s));
	/* and all works again from nothing */
	GT_REQUIRE(gt_symbolizer_add_process(s, getpid()) == 0, "add self again");
	rc = gt_symbolize_user(s, getpid(), ip, &sym);
	GT_CHECK(rc == 0 && !strcmp(sym.func, "sym_probe") && strstr(sym.module, "test_symbolize"),
		 "after the names were dropped: rc %d func %s module %s", rc, sym.func, sym.module);
	gt_symbolizer_free(s);
}

/* ---- parsers on hand-made input -------------------------------------------- */

static void test_maps_lines(void)
{
	struct gt_map_line m;
	const char *l1 = "7f1c2a000000-7f1c2a028000 r-xp 00028000 fd:01 1835043"
			 "                    /usr/lib/x86_64-linux-gnu/libc.so.6\n";
	const char *l2 = "55d0e0000000-55d0e0001000 r-xp 00001000 00:2a 77 /tmp/a b (deleted)\n";
	const char *l3 = "7ffd1b1f0000-7ffd1b1f2000 r-xp 00000000 00:00 0                          [vdso]";
	const char *l4 = "7f00-7e00 r-xp 0 0:0 0";
	const char *l5 = "1000-2000 rwzp 0 0:0 0";

	GT_CHECK(gt_map_line_parse(l1, strlen(l1), &m) == 0 &&
		 m.start == 0x7f1c2a000000ull && m.end == 0x7f1c2a028000ull &&
		 m.offset == 0x28000 && m.executable && !m.writable &&
		 m.dev_major == 0xfd && m.dev_minor == 1 && m.inode == 1835043 &&
		 m.path_len == strlen("/usr/lib/x86_64-linux-gnu/libc.so.6") &&
		 !strncmp(m.path, "/usr/lib/x86_64-linux-gnu/libc.so.6", m.path_len),
		 "libc line misparsed");
	GT_CHECK(gt_map_line_parse(l2, strlen(l2), &m) == 0 && m.deleted &&
		 m.path_len == 8 && !strncmp(m.path, "/tmp/a b", 8), "deleted line");
	GT_CHECK(gt_map_line_parse(l3, strlen(l3), &m) == 0 && !m.inode &&
		 m.path_len == 6, "vdso line");
	GT_CHECK(gt_map_line_parse(l4, strlen(l4), &m) == -EINVAL, "end < start accepted");
	GT_CHECK(gt_map_line_parse(l5, strlen(l5), &m) == -EINVAL, "bad perms accepted");
	GT_CHECK(gt_map_line_parse("", 0, &m) == -EINVAL, "empty accepted");
}

static void test_pclntab_rejects(void)
{
	uint8_t buf[64] = { 0xf0, 0xff, 0xff, 0xff, 0, 0, 1, 8 };
	struct gt_pcln t;
	struct gt_pcln_result r;

	/* Plausible header, nfunc = 0 then huge: refused, not read past. */
	GT_CHECK(gt_pcln_open(&t, buf, sizeof(buf), 0) == -EINVAL, "nfunc 0 accepted");
	buf[8] = 0xff;
	buf[9] = 0xff;
	GT_CHECK(gt_pcln_open(&t, buf, sizeof(buf), 0) == -EINVAL, "huge nfunc accepted");
	buf[0] = 0x12;
	GT_CHECK(gt_pcln_open(&t, buf, sizeof(buf), 0) < 0, "bad magic accepted");
	GT_CHECK(gt_pcln_find(buf, sizeof(buf)) == -ENOENT, "found a table in noise");
	memset(&t, 0, sizeof(t));
	(void)r;
}

/* The hand-built Go 1.18 table the fuzzer starts from (two functions,
 * main.a lines 10-11 and main.b line 20, text at 0x401000). */
static void test_pclntab_seed(void)
{
	static uint8_t buf[4096];
	const char *path = "tests/fuzz/seeds/sym_pclntab/go118_in_noise";
	FILE *f = fopen(path, "rb");
	struct gt_pcln t;
	struct gt_pcln_result r;
	size_t n;
	long off;

	GT_REQUIRE(f, "%s: %s", path, strerror(errno));
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	off = gt_pcln_find(buf, n);
	GT_REQUIRE(off == 36, "table found at %ld, not 36", off);
	GT_REQUIRE(gt_pcln_open(&t, buf + off, n - (size_t)off, 0) == 0, "open");
	GT_CHECK(gt_pcln_lookup(&t, 0x401000, &r) == 0 && !strcmp(r.func, "main.a") &&
		 r.file && !strcmp(r.file, "a.go") && r.line == 10 && r.entry == 0x401000,
		 "0x401000: %s %s:%d", r.func, r.file, r.line);
	GT_CHECK(gt_pcln_lookup(&t, 0x40100f, &r) == 0 && !strcmp(r.func, "main.a") &&
		 r.line == 11, "0x40100f: %s line %d", r.func, r.line);
	GT_CHECK(gt_pcln_lookup(&t, 0x401010, &r) == 0 && !strcmp(r.func, "main.b") &&
		 r.line == 20, "0x401010: %s line %d", r.func, r.line);
	GT_CHECK(gt_pcln_lookup(&t, 0x401020, &r) == -ENOENT, "past the end found");
	GT_CHECK(gt_pcln_lookup(&t, 0x400fff, &r) == -ENOENT, "before text found");
}

/* ---- speed ------------------------------------------------------------------ */

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* add_process cost, first lookups (ELF + DWARF of libc's debug file if
 * installed) and repeated ones (the cache), on 2000 libc addresses. */
static void test_lookup_speed(void)
{
	struct gt_symbolizer *s = gt_symbolizer_new();
	uint64_t base = (uint64_t)(uintptr_t)write, t0, t1, t2, t3;
	struct gt_sym sym;
	const int distinct = 2000, rounds = 100;
	const pid_t self = getpid();
	int hits = 0;

	GT_REQUIRE(s, "out of memory");
	t0 = now_ns();
	GT_REQUIRE(gt_symbolizer_add_process(s, self) == 0, "add self");
	t1 = now_ns();
	for (int i = 0; i < distinct; i++)
		hits += gt_symbolize_user(s, self, base + (uint64_t)i * 16, &sym) == 0;
	t2 = now_ns();
	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < distinct; i++)
			gt_symbolize_user(s, self, base + (uint64_t)i * 16, &sym);
	t3 = now_ns();
	printf("# add_process(self) %.1f ms; libc lookups: first %.0f ns, "
	       "repeated %.0f ns (%d of %d named)\n", (t1 - t0) / 1e6,
	       (double)(t2 - t1) / distinct,
	       (double)(t3 - t2) / ((double)distinct * rounds), hits, distinct);
	GT_CHECK(hits > distinct / 2, "only %d of %d libc addresses named", hits,
		 distinct);
	GT_CHECK((t2 - t1) / distinct < 2000000, "first lookups too slow: %" PRIu64 " ns",
		 (t2 - t1) / distinct);
	GT_CHECK((t3 - t2) / ((uint64_t)distinct * rounds) < 5000,
		 "repeated lookups too slow");
	gt_symbolizer_free(s);
}

/* Perf map lines as perf reads them; later lines win where they overlap;
 * a map read in two pieces (a JIT appending) names alike. */
static void test_perfmap_lines(void)
{
	static const char text[] =
		"1000 100 first\n"
		"0x2000 0x10 hex prefixed\n"
		"1000 100 again\n"           /* same start: the later line */
		"1080 10 inner\n"            /* inside again: the later line */
		"zz 10 bad\n3000 0 zero\nffffffffffffffff 10 wraps\n4000 10\n"
		"5000 10 \001" "ctl\n"
		"6000 10 partial";           /* no newline yet: left out */
	struct gt_perfmap pm = { 0 }, a = { 0 }, b = { 0 };
	size_t used, used_a, cut = 30;
	const char *n;

	GT_CHECK(gt_perfmap_build(&pm, text, sizeof(text) - 1, &used) == 0, "build");
	GT_CHECK(used == (size_t)(strstr(text, "6000") - text), "used %zu", used);
	n = gt_perfmap_find(&pm, 0x1000);
	GT_CHECK(n && !strcmp(n, "again"), "0x1000: %s", n ? n : "(none)");
	n = gt_perfmap_find(&pm, 0x1085);
	GT_CHECK(n && !strcmp(n, "inner"), "0x1085: %s", n ? n : "(none)");
	n = gt_perfmap_find(&pm, 0x10ff);
	GT_CHECK(n && !strcmp(n, "again"), "0x10ff: %s", n ? n : "(none)");
	GT_CHECK(!gt_perfmap_find(&pm, 0x1100), "0x1100 named");
	n = gt_perfmap_find(&pm, 0x200f);
	GT_CHECK(n && !strcmp(n, "hex prefixed"), "0x200f: %s", n ? n : "(none)");
	GT_CHECK(!gt_perfmap_find(&pm, 0x3000) && !gt_perfmap_find(&pm, 0x4000) &&
		 !gt_perfmap_find(&pm, 0x6000), "a bad line names something");
	n = gt_perfmap_find(&pm, 0x5000);
	GT_CHECK(n && !strcmp(n, "?ctl"), "0x5000: %s", n ? n : "(none)");
	GT_CHECK(gt_perfmap_build(&a, text, cut, &used_a) == 0, "first piece");
	b.lines = a.lines;
	GT_CHECK(gt_perfmap_build(&b, text + used_a, sizeof(text) - 1 - used_a, &used) == 0 &&
		 gt_perfmap_merge(&a, &b) == 0, "second piece");
	for (uint64_t addr = 0xff0; addr < 0x6010; addr += 4) {
		const char *x = gt_perfmap_find(&pm, addr), *y = gt_perfmap_find(&a, addr);

		GT_CHECK(!x == !y && (!x || !strcmp(x, y)), "%#" PRIx64 ": %s vs %s", addr,
			 x ? x : "-", y ? y : "-");
	}
	gt_perfmap_free(&pm);
	gt_perfmap_free(&a);
	gt_perfmap_free(&b);
}

/* Our own "JIT code" (an anonymous executable mapping) is named from
 * /tmp/perf-PID.map, and lines appended later are read on a miss. */
static void test_perfmap_jit(void)
{
	char path[64];
	struct gt_symbolizer *s = gt_symbolizer_new();
	uint8_t *code = mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t base = (uint64_t)(uintptr_t)code;
	struct gt_sym sym;
	FILE *f;
	int rc;

	GT_CHECK(code != MAP_FAILED, "mmap");
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	GT_CHECK(f != NULL, "create %s", path);
	if (!f || code == MAP_FAILED)
		return;
	fprintf(f, "%" PRIx64 " 100 JS:*first /srv/app.js:1:1\n", base);
	fflush(f);
	GT_CHECK(gt_symbolizer_add_process(s, getpid()) == 0, "add_process");
	rc = gt_symbolize_user(s, getpid(), base + 0x10, &sym);
	GT_CHECK(rc == 0 && !strcmp(sym.func, "JS:*first /srv/app.js:1:1"), "first: %d %s", rc,
		 sym.func);
	fprintf(f, "%" PRIx64 " 100 JS:*second /srv/app.js:9:1\n", base + 0x1000);
	fclose(f);
	usleep(2000); /* past the wait between two reads (JIT_REREAD_MIN_NS, 1 ms
		       * from the last read's post): sooner, the miss is not read */
	rc = gt_symbolize_user(s, getpid(), base + 0x1010, &sym);
	GT_CHECK(rc == 0 && !strcmp(sym.func, "JS:*second /srv/app.js:9:1"), "appended: %d %s",
		 rc, sym.func);
	rc = gt_symbolize_user(s, getpid(), base + 0x200, &sym);
	GT_CHECK(rc == -ENOENT, "unnamed JIT address: %d %s", rc, sym.func);
	unlink(path);
	munmap(code, 8192);
	gt_symbolizer_free(s);
}

/* A map truncated and written again, larger, its new lines first (jcmd
 * PID Compiler.perfmap): read whole, not as if appended to; a line only
 * the old file had still names its code. */
static void test_perfmap_rewrite(void)
{
	char path[64];
	struct gt_symbolizer *s = gt_symbolizer_new();
	uint8_t *code = mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t base = (uint64_t)(uintptr_t)code;
	struct gt_sym sym;
	FILE *f;
	int rc;

	GT_CHECK(code != MAP_FAILED, "mmap");
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	GT_CHECK(f != NULL, "create %s", path);
	if (!f || code == MAP_FAILED)
		return;
	fprintf(f, "%" PRIx64 " 100 old_a\n%" PRIx64 " 100 gone\n", base, base + 0x800);
	fclose(f);
	GT_CHECK(gt_symbolizer_add_process(s, getpid()) == 0, "add_process");
	rc = gt_symbolize_user(s, getpid(), base + 0x10, &sym);
	GT_CHECK(rc == 0 && !strcmp(sym.func, "old_a"), "first: %d %s", rc, sym.func);
	f = fopen(path, "w"); /* the same file, truncated */
	GT_CHECK(f != NULL, "rewrite %s", path);
	if (!f)
		return;
	fprintf(f, "%" PRIx64 " 100 new_b\n%" PRIx64 " 100 new_c\n%" PRIx64 " 100 old_a\n",
		base + 0x1000, base + 0x1200, base);
	fclose(f);
	usleep(5000); /* past the wait after a read that found a change */
	rc = gt_symbolize_user(s, getpid(), base + 0x1010, &sym);
	GT_CHECK(rc == 0 && !strcmp(sym.func, "new_b"), "rewritten, new first: %d %s", rc,
		 sym.func);
	rc = gt_symbolize_user(s, getpid(), base + 0x1210, &sym);
	GT_CHECK(rc == 0 && !strcmp(sym.func, "new_c"), "rewritten: %d %s", rc, sym.func);
	rc = gt_symbolize_user(s, getpid(), base + 0x810, &sym);
	GT_CHECK(rc == 0 && !strcmp(sym.func, "gone"), "a line the new file lacks: %d %s", rc,
		 sym.func);
	unlink(path);
	munmap(code, 8192);
	gt_symbolizer_free(s);
}

int main(int argc, char **argv)
{
	build_dir = gt_test_build_dir(argc > 0 ? argv[0] : NULL);
	GT_RUN(test_own_functions);
	GT_RUN(test_vdso);
	GT_RUN(test_cplusplus);
	GT_RUN(test_child_after_exit);
	GT_RUN(test_forget_closes_binaries);
	GT_RUN(test_debuglink_names);
	GT_RUN(test_stuck_load);
	GT_RUN(test_load_budget);
	GT_RUN(test_crc_cache);
	GT_RUN(test_maps_reread);
	GT_RUN(test_deleted_binary);
	GT_RUN(test_go_stripped);
	GT_RUN(test_go_stripped_pie);
	GT_RUN(test_kernel);
	GT_RUN(test_garbage);
	GT_RUN(test_names_dropped);
	GT_RUN(test_maps_lines);
	GT_RUN(test_pclntab_rejects);
	GT_RUN(test_pclntab_seed);
	GT_RUN(test_lookup_speed);
	GT_RUN(test_perfmap_lines);
	GT_RUN(test_perfmap_jit);
	GT_RUN(test_perfmap_rewrite);
	return gt_test_done();
}
