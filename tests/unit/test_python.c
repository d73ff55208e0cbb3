// tier: system (root: another process's /proc/PID/map_files and mem; real CPythons)
/* CPython's names from outside (daemon/sym/python.h), against CPython
 * itself as the oracle: the line of every instruction of every code
 * object of a stdlib module, from gt_python_addr2line over the object's
 * co_linetable, equals what the interpreter's own co_lines() says
 * (Debian 12's python3.11 and a pyenv 3.12 where there is one); a live
 * interpreter is found (gt_python_detect) and the code objects it prints
 * the addresses of are named as traceback would (gt_python_name), while
 * addresses that are not code objects give "[python]" and no crash; and
 * line tables of random bytes end, bounded.  What the target decides is
 * bounded too: a line past INT_MAX, the names' memory and code objects
 * (past the budgets "[python]"), and the reads of a code object that does
 * not read (remembered, or tried a few times: the reads of a round stay
 * for the others).  As the engine names them (async), a code object is
 * read on a loader thread: while that read is held (a memory that does
 * not answer), the caller gets "[python]" at once, and the name after. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pthread.h>

#include "gt_test.h"
#include "sym/python.h"
#include "sym/testing.h"

static const char *const pythons[] = {
	"/usr/bin/python3.11",
	"/root/.pyenv/versions/3.12.1/bin/python3.12",
};

/* Each code object of threading.py, nested ones too: "T firstlineno
 * hex(co_linetable)" then "L start end line" for each co_lines() range
 * (line -1: none). */
static const char lines_script[] =
	"import threading, types\n"
	"def walk(co):\n"
	"    yield co\n"
	"    for c in co.co_consts:\n"
	"        if isinstance(c, types.CodeType):\n"
	"            yield from walk(c)\n"
	"src = open(threading.__file__).read()\n"
	"for co in walk(compile(src, threading.__file__, 'exec')):\n"
	"    print('T', co.co_firstlineno, co.co_linetable.hex())\n"
	"    for s, e, l in co.co_lines():\n"
	"        print('L', s, e, -1 if l is None else l)\n";

static int unhex(const char *s, uint8_t *out, size_t max)
{
	size_t n = 0;
	unsigned b;

	while (n < max && sscanf(s + 2 * n, "%2x", &b) == 1)
		out[n++] = (uint8_t)b;
	return (int)n;
}

static void lines_of(const char *py)
{
	char cmd[512], line[1 << 17];
	static uint8_t tab[1 << 16];
	int n = -1, first = 0, objects = 0, checked = 0, wrong = 0;
	FILE *p;

	if (access(py, X_OK)) {
		printf("# %s: not here\n", py);
		return;
	}
	char script[] = "/tmp/gt_test_pylinesXXXXXX";
	int fd = mkstemp(script);

	GT_REQUIRE(fd >= 0 && write(fd, lines_script, sizeof(lines_script) - 1) > 0, "script");
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s %s", py, script);
	p = popen(cmd, "r");
	GT_REQUIRE(p, "popen %s", py);
	while (fgets(line, sizeof(line), p)) {
		int s, e, l;

		if (line[0] == 'T') {
			char *hex = strchr(line + 2, ' ');

			first = atoi(line + 2);
			n = hex ? unhex(hex + 1, tab, sizeof(tab)) : -1;
			objects++;
		} else if (n >= 0 && sscanf(line, "L %d %d %d", &s, &e, &l) == 3) {
			for (int a = s; a < e; a += 2, checked++)
				if (gt_python_addr2line(tab, (size_t)n, first, a) != l && wrong++ < 5)
					GT_CHECK(0, "%s: line of %d is %d, co_lines says %d", py, a,
						 gt_python_addr2line(tab, (size_t)n, first, a), l);
		}
	}
	GT_CHECK(pclose(p) == 0, "%s failed", py);
	unlink(script);
	GT_CHECK(objects > 50 && checked > 5000, "%s: %d objects, %d instructions", py, objects,
		 checked);
	GT_CHECK(wrong == 0, "%s: %d of %d lines wrong", py, wrong, checked);
	GT_CHECK(gt_python_addr2line(tab, (size_t)n, 7, -2) == 7, "before the first: firstlineno");
}

static void test_lines(void)
{
	for (size_t i = 0; i < sizeof(pythons) / sizeof(pythons[0]); i++)
		lines_of(pythons[i]);
	GT_CHECK(access(pythons[0], X_OK) == 0, "no %s (Debian 12's python3.11-minimal)", pythons[0]);
}

static void test_random_tables(void)
{
	uint8_t tab[256];

	srand(38);
	for (int k = 0; k < 20000; k++) {
		size_t n = (size_t)(rand() % (int)sizeof(tab));

		for (size_t i = 0; i < n; i++)
			tab[i] = (uint8_t)rand();
		(void)gt_python_addr2line(tab, n, rand() % 1000, rand() % 4096);
	}
	GT_CHECK(gt_python_addr2line(NULL, 0, 5, 4) == -1, "an empty table has no line");
}

/* co_firstlineno is the target's: a delta past INT_MAX clamps, never
 * overflows (UB, and a negative line). */
static void test_line_overflow(void)
{
	/* one entry, 2 bytes of code, long form (13): line delta +5 */
	const uint8_t up[] = {0x80 | 13 << 3, 5 << 1};
	const uint8_t down[] = {0x80 | 13 << 3, 5 << 1 | 1};

	GT_CHECK(gt_python_addr2line(up, sizeof(up), INT_MAX, 0) == INT_MAX, "%d",
		 gt_python_addr2line(up, sizeof(up), INT_MAX, 0));
	GT_CHECK(gt_python_addr2line(down, sizeof(down), INT_MIN, 0) == INT_MIN, "%d",
		 gt_python_addr2line(down, sizeof(down), INT_MIN, 0));
	GT_CHECK(gt_python_addr2line(up, sizeof(up), 7, 0) == 12, "a plain delta");
}

static void test_binary_names(void)
{
	static const struct {
		const char *path;
		int is;
	} cases[] = {
		{"/usr/bin/python3.11", 1},
		{"/root/.pyenv/versions/3.12.1/bin/python3.12", 1},
		{"/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0", 1},
		{"/usr/lib/libpython3.12.so", 1},
		{"/usr/bin/python3.11-config", 0},
		{"/usr/lib/python3.11/lib-dynload/_ssl.cpython-311-x86_64-linux-gnu.so", 0},
		{"/home/u/python3.11/x.so", 0},
		{"/tmp/python3.", 0},
		{"/tmp/mypython3.11", 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		GT_CHECK(gt_python_binary_name(cases[i].path, strlen(cases[i].path)) == cases[i].is,
			 "%s", cases[i].path);
}

/* A live interpreter prints where two functions' code objects are, and a
 * str's address (not a code object); then waits. */
static const char live_script[] =
	"import sys\n"
	"def outer_fn():\n"
	"    return 1\n"
	"class K:\n"
	"    def method_fn(self):\n"
	"        pass\n"
	"def f\u00fc():\n"
	"    pass\n"
	"s = 'not code' * 3\n"
	"print(id(outer_fn.__code__), id(K.method_fn.__code__), id(s), id(f\u00fc.__code__),\n"
	"      __file__, flush=True)\n"
	"sys.stdin.read()\n";

/* Named in a fresh set: 0 and func, or -errno. */
static int name_one(struct gt_python_names *n, pid_t pid, int mem, const struct gt_py_proc *proc,
		    uint64_t code, const char **func)
{
	struct gt_py_frame fr = {code, code + 200};
	const char *file;
	unsigned line;

	return gt_python_name(n, pid, mem, proc, &fr, func, &file, &line);
}

/* code3 is named fü: not ASCII, "[python]"; code1 and code2 are fine. */
static void bounded_in(const char *py, pid_t pid, int mem, const struct gt_py_proc *proc,
		       uint64_t code1, uint64_t code2, uint64_t code3)
{
	struct gt_python_names *n = gt_python_names_new();
	const char *func;
	int fails = 0;

	GT_REQUIRE(n, "names");
	/* failures remembered: a round's reads (64) stay for code2 after
	 * 200 frames of a non-ASCII name and of an unreadable header */
	gt_python_names_round(n);
	for (int i = 0; i < 200; i++) {
		fails += name_one(n, pid, mem, proc, code3, &func) != 0 && !strcmp(func, "[python]");
		fails += name_one(n, pid, mem, proc, 16, &func) != 0 && !strcmp(func, "[python]");
	}
	GT_CHECK(fails == 400, "%s: %d of 400 named \"[python]\"", py, fails);
	GT_CHECK(name_one(n, pid, mem, proc, code2, &func) == 0 && strstr(func, "method_fn"),
		 "%s: failures are re-read each frame: %s", py, func);
	/* the per-round cap: past 64 new reads, a new object waits */
	gt_python_names_round(n);
	for (uint64_t i = 0; i < 64; i++)
		name_one(n, pid, mem, proc, 0x1000 + 8 * i, &func);
	GT_CHECK(name_one(n, pid, mem, proc, code1, &func) != 0 && !strcmp(func, "[python]"),
		 "%s: read past the round's cap: %s", py, func);
	gt_python_names_round(n);
	GT_CHECK(name_one(n, pid, mem, proc, code1, &func) == 0 && strstr(func, "outer_fn"),
		 "%s: not named in the next round: %s", py, func);
	gt_python_names_free(n);

	/* the code objects' budget */
	n = gt_python_names_new();
	GT_REQUIRE(n, "names");
	gt_python_names_limit(n, 1 << 20, 1);
	GT_CHECK(name_one(n, pid, mem, proc, code1, &func) == 0, "%s: the first", py);
	GT_CHECK(name_one(n, pid, mem, proc, code2, &func) != 0 && !strcmp(func, "[python]"),
		 "%s: past 1 code object: %s", py, func);
	gt_python_names_free(n);

	/* the bytes' budget: never passed, "[python]" or a name past it */
	for (size_t max = 0; max < 400; max += 40) {
		n = gt_python_names_new();
		GT_REQUIRE(n, "names");
		gt_python_names_limit(n, max, 100);
		for (int k = 0; k < 3; k++) {
			int rc = name_one(n, pid, mem, proc, k == 1 ? code2 : code1, &func);

			GT_CHECK(rc ? !strcmp(func, "[python]") : strstr(func, "_fn") != NULL,
				 "%s: %zu: %d %s", py, max, rc, func);
		}
		GT_CHECK(gt_python_names_bytes(n) <= max, "%s: %zu bytes past %zu", py,
			 gt_python_names_bytes(n), max);
		gt_python_names_free(n);
	}
}

/* The loader hook (sym/testing.h) holds the reads of code objects until
 * released, as a memory that does not answer would. */
static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cond = PTHREAD_COND_INITIALIZER;
static int held, released;

static void hold_code_reads(const char *what)
{
	if (!strstr(what, "(CPython code"))
		return;
	pthread_mutex_lock(&hold_lock);
	held++;
	pthread_cond_broadcast(&hold_cond);
	while (!released)
		pthread_cond_wait(&hold_cond, &hold_lock);
	pthread_mutex_unlock(&hold_lock);
}

static void async_in(const char *py, pid_t pid, int mem, const struct gt_py_proc *proc,
		     uint64_t code1)
{
	struct gt_python_names *n = gt_python_names_new();
	const char *func = NULL;
	int rc = -1;

	GT_REQUIRE(n, "names");
	gt_python_names_async(n, 1);
	held = released = 0;
	gt_sym_load_hook = hold_code_reads;
	GT_CHECK(name_one(n, pid, mem, proc, code1, &func) != 0 && !strcmp(func, "[python]"),
		 "%s: async: named at once: %s", py, func);
	pthread_mutex_lock(&hold_lock);
	while (!held) /* a loader thread reads it, not this one */
		pthread_cond_wait(&hold_cond, &hold_lock);
	pthread_mutex_unlock(&hold_lock);
	gt_python_names_round(n);
	GT_CHECK(name_one(n, pid, mem, proc, code1, &func) != 0 && !strcmp(func, "[python]"),
		 "%s: async: named while its read is held: %s", py, func);
	GT_CHECK(held == 1, "%s: async: %d reads of one code object", py, held);
	pthread_mutex_lock(&hold_lock);
	released = 1;
	pthread_cond_broadcast(&hold_cond);
	pthread_mutex_unlock(&hold_lock);
	GT_CHECK(gt_sym_loader_idle(10000000000ull), "%s: the read did not end", py);
	gt_python_names_round(n);
	rc = name_one(n, pid, mem, proc, code1, &func);
	GT_CHECK(rc == 0 && strstr(func, "outer_fn"), "%s: async: not named once read: %d %s",
		 py, rc, func);
	gt_sym_load_hook = NULL;
	gt_python_names_free(n);
}

static void named_in(const char *py)
{
	char script[] = "/tmp/gt_test_pythonXXXXXX";
	char out[600], want[700], file[512];
	unsigned long long code1, code2, str, code3;
	int in[2], outp[2], fd, rc, mem;
	struct gt_python_names *n;
	struct gt_py_proc proc;
	const char *func, *f;
	unsigned line;
	pid_t pid;
	FILE *rd;

	if (access(py, X_OK))
		return;
	fd = mkstemp(script);
	GT_REQUIRE(fd >= 0 && write(fd, live_script, sizeof(live_script) - 1) > 0, "script");
	close(fd);
	GT_REQUIRE(pipe(in) == 0 && pipe(outp) == 0, "pipes");
	pid = fork();
	GT_REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(outp[1], 1);
		close(in[1]);
		close(outp[0]);
		execl(py, py, script, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(outp[1]);
	rd = fdopen(outp[0], "r");
	GT_REQUIRE(rd && fgets(out, sizeof(out), rd), "%s printed nothing", py);
	GT_REQUIRE(sscanf(out, "%llu %llu %llu %llu %511s", &code1, &code2, &str, &code3, file) == 5,
		   "%s", out);

	rc = gt_python_detect(pid, &proc);
	GT_CHECK(rc == 0, "%s: detect: %s", py, strerror(-rc));
	n = gt_python_names_new();
	GT_REQUIRE(n, "names");
	mem = gt_python_open_mem(pid);
	GT_CHECK(mem >= 0, "%s: open mem: %s", py, strerror(-mem));
	if (rc == 0) {
		/* a frame not started: prev_instr one unit before the code */
		struct gt_py_frame fr = {code1, 0};
		uint64_t co_code = proc.version_minor == 11 ? 184 : 192;

		fr.instr = code1 + co_code - 2;
		GT_CHECK(gt_python_name(n, pid, mem, &proc, &fr, &func, &f, &line) == 0, "%s: name", py);
		snprintf(want, sizeof(want), "outer_fn (%s:2)", file);
		GT_CHECK(!strcmp(func, want) && !strcmp(f, file) && line == 2,
			 "%s: %s %s:%u, wanted %s", py, func, f, line, want);
		fr = (struct gt_py_frame){code2, code2 + co_code};
		GT_CHECK(gt_python_name(n, pid, mem, &proc, &fr, &func, &f, &line) == 0, "%s: name", py);
		snprintf(want, sizeof(want), "method_fn (%s:5)", file);
		GT_CHECK(!strcmp(func, want), "%s: %s, wanted %s", py, func, want);
		/* not code objects: named "[python]", never a crash */
		for (uint64_t bad = 0; bad < 4; bad++) {
			const uint64_t addrs[] = {str, 16, ~0ull - 64, code1 + 3};

			fr = (struct gt_py_frame){addrs[bad], addrs[bad] + 200};
			if (gt_python_name(n, pid, mem, &proc, &fr, &func, &f, &line))
				GT_CHECK(!strcmp(func, "[python]") && line == 0, "%s: %s", py, func);
		}
		bounded_in(py, pid, mem, &proc, code1, code2, code3);
		async_in(py, pid, mem, &proc, code1);
	}
	gt_python_names_free(n);
	if (mem >= 0)
		close(mem);
	close(in[1]);
	fclose(rd);
	waitpid(pid, NULL, 0);
	unlink(script);
	GT_CHECK(gt_python_detect(getpid(), &proc) == -ENOENT, "this test is no CPython");
}

static void test_live(void)
{
	for (size_t i = 0; i < sizeof(pythons) / sizeof(pythons[0]); i++)
		named_in(pythons[i]);
}

int main(void)
{
	GT_RUN(test_lines);
	GT_RUN(test_random_tables);
	GT_RUN(test_line_overflow);
	GT_RUN(test_binary_names);
	GT_RUN(test_live);
	return gt_test_done();
}
