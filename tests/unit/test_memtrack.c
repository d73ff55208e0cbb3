// tier: system (BPF, root or real programs: not in make check-unit)
/* Memory tracking on the real kernel: allocator discovery, live
 * heap bytes from malloc probes following a workload's known phases (on
 * uprobe_multi links where the kernel has them, and on the perf-event
 * links of older kernels), RSS
 * following /proc VmRSS, allocation samples with stacks, a Go program
 * recorded in RSS mode with no uretprobe ever attached, and the cgroup
 * limit as HeapGoal.  Needs BPF (root); GOTRACED_SKIP_BPF=1 skips. */
#include <dirent.h>
#include <dlfcn.h>
#include <bpf/bpf.h>
#include <inttypes.h>
#include <sys/utsname.h>

#include "memtrack/alloc_syms.h"
#include "common/cgroup_resolve.h"
#include "memtrack/memtrack.h"
#include "engine/session_memtrack.h"
#include "mem_test_util.h"
#include "memtrack/testing.h"
#include "memtrack/uprobe_multi.h"
#include "engine/testing.h"

#define MIB (1024ull * 1024)
/* HeapAlloc (malloc mode) counts requested bytes: only the workload's own
 * small allocations (stdio, /proc reads) come on top of the 1 MiB blocks. */
#define HEAP_SLACK (256 * 1024ull)

static struct gt_engine *engine;
static struct mt_trace *trace;

/* ---- allocator discovery (no BPF) ---- */

static void test_alloc_find_self(void)
{
	struct gt_alloc_target t;
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *real_malloc = libc ? dlsym(libc, "malloc") : NULL;
	uint64_t want = 0;
	char line[4096];
	FILE *f;
	int rc = gt_alloc_find(getpid(), &t), found = 0;

	GT_REQUIRE(rc == 0, "gt_alloc_find(self): %s", strerror(-rc));
	GT_CHECK(!t.is_go, "this C test is taken for a Go program");
	GT_REQUIRE(real_malloc, "dlsym(libc, malloc) failed");
	/* the file offset of libc's malloc, from our own mappings */
	f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;

		if (sscanf(line, "%llx-%llx %*s %llx", &lo, &hi, &off) == 3 &&
		    (uintptr_t)real_malloc >= lo && (uintptr_t)real_malloc < hi)
			want = (uintptr_t)real_malloc - lo + off;
	}
	if (f)
		fclose(f);
	for (int i = 0; i < t.nlibs; i++) {
		if (!strstr(t.libs[i].path, "libc.so"))
			continue;
		found = 1;
		GT_CHECK(t.libs[i].offset[GT_AF_MALLOC] == want,
			 "malloc at file offset 0x%" PRIx64 ", maps say 0x%" PRIx64,
			 t.libs[i].offset[GT_AF_MALLOC], want);
		for (int k = 0; k < GT_AF_COUNT; k++)
			GT_CHECK(t.libs[i].offset[k], "%s not found in %s", gt_alloc_fn_names[k],
				 t.libs[i].path);
	}
	GT_CHECK(found, "libc not among the %d allocator libraries", t.nlibs);
	GT_CHECK(gt_alloc_find(999999999, &t) == -ESRCH, "a missing pid is not -ESRCH");
	GT_CHECK(gt_alloc_elf_offsets("/etc/passwd", t.libs[0].offset) < 0,
		 "a text file parsed as ELF");
}

/* ---- helpers ---- */

static void trace_path(char *path, size_t len, const char *tag)
{
	snprintf(path, len, "%s/tests/memtrack-%s.trace", mt_build, tag);
}

static int temp_trace(char *path, size_t len, const char *tag)
{
	trace_path(path, len, tag);
	return open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

/* Index of the first heap value at or after from inside [lo, hi], or -1. */
static long find_value(const struct mt_trace *t, size_t from, uint64_t lo, uint64_t hi)
{
	for (size_t i = from; i < t->nheap; i++)
		if (t->heap[i] >= lo && t->heap[i] <= hi)
			return (long)i;
	return -1;
}

static uint64_t max_value(const struct mt_trace *t, size_t from, size_t to)
{
	uint64_t m = 0;

	for (size_t i = from; i < to && i < t->nheap; i++)
		m = t->heap[i] > m ? t->heap[i] : m;
	return m;
}

struct probe_seen {
	int uprobes, uretprobes;
	enum gt_heap_mode mode;
	int kernel_ret_links;   /* functions under gt_alloc_ret, as the kernel lists them */
	int multi_links, perf_links; /* gt_alloc_ret links of each kind */
};

static int prog_is_alloc_ret(uint32_t prog_id)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(prog_id), is;

	if (fd < 0)
		return 0;
	memset(&info, 0, sizeof(info));
	is = bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && !strcmp(info.name, "gt_alloc_ret");
	close(fd);
	return is;
}

/* BPF links of this process (its descriptors, as the kernel describes them
 * in /proc/self/fdinfo) whose program is gt_alloc_ret: the kernel's view,
 * independent of memtrack's bookkeeping, and blind to other processes.
 * Returns the functions they probe (a perf link probes one, a
 * uprobe_multi link says how many: uprobe_cnt); ps (may be NULL) gets the
 * links of each kind. */
static int kernel_ret_links(struct probe_seen *ps)
{
	DIR *d = opendir("/proc/self/fdinfo");
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d))) {
		char path[300], line[256], type[64] = "";
		unsigned prog = 0;
		int cnt = 1;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%s", de->d_name);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f)) {
			sscanf(line, "link_type: %63s", type);
			sscanf(line, "prog_id: %u", &prog);
			sscanf(line, "uprobe_cnt: %d", &cnt);
		}
		if (f)
			fclose(f);
		if (!type[0] || !prog || !prog_is_alloc_ret(prog))
			continue;
		n += cnt;
		if (ps && strstr(type, "probe_multi")) /* uprobe_multi, uretprobe_multi */
			ps->multi_links++;
		else if (ps)
			ps->perf_links++;
	}
	if (d)
		closedir(d);
	return n;
}

static void note_probes(struct gt_engine *e, struct mt_child *c, void *arg)
{
	struct probe_seen *ps = arg;
	struct gt_memtrack *m = gt_engine_memtrack(e);

	if (!m)
		return;
	gt_memtrack_probe_count(m, c->target, &ps->uprobes, &ps->uretprobes);
	ps->mode = gt_memtrack_mode(m, 0, c->target);
	ps->multi_links = ps->perf_links = 0;
	ps->kernel_ret_links = kernel_ret_links(ps);
}

/* One recording: its file, and why it failed. */
struct run {
	char path[700], why[600];
};

/* Starts alloc_phases and records it with o into memtrack-TAG.trace;
 * lines and ps (note_probes, if not NULL) as mt_record takes them.  0, or
 * not 0 with r->why. */
static int record_phases(struct gt_session_opts *o, const char *tag, struct mt_lines *lines,
			 struct probe_seen *ps, struct run *r)
{
	struct mt_child c;

	trace_path(r->path, sizeof(r->path), tag);
	if (mt_start_workload(&c, "alloc_phases", NULL) != 0) {
		snprintf(r->why, sizeof(r->why), "alloc_phases did not start");
		return -1;
	}
	return mt_record_file(engine, o, &c, r->path, lines, ps ? note_probes : NULL, ps, r->why,
			      sizeof(r->why));
}

/* ---- malloc mode ---- */

static void test_heap_phases_malloc(void)
{
	struct gt_session_opts o = { .heap = GT_HEAP_MALLOC };
	struct probe_seen ps = { 0 };
	struct mt_lines lines = { .n = 0 };
	struct run r;
	long grow, freed, regrow;
	int up = -1, ret = -1;

	GT_REQUIRE(record_phases(&o, "malloc", &lines, &ps, &r) == 0, "%s", r.why);
	GT_CHECK(ps.mode == GT_HEAP_MALLOC, "mode %d, want malloc", ps.mode);
	GT_CHECK(ps.uprobes >= 9 && ps.uretprobes >= 8, "probes while recording: %d entry, %d return",
		 ps.uprobes, ps.uretprobes);
	GT_CHECK(ps.kernel_ret_links >= ps.uretprobes,
		 "the kernel lists %d gt_alloc_ret probes of ours, bookkeeping %d", ps.kernel_ret_links,
		 ps.uretprobes);
	/* the kind of link memtrack chose is the kind the kernel lists */
	if (gt_memtrack_uses_multi(gt_engine_memtrack(engine)))
		GT_CHECK(ps.multi_links > 0 && ps.perf_links == 0,
			 "uprobe_multi chosen, the kernel lists %d uprobe_multi and %d other "
			 "gt_alloc_ret links", ps.multi_links, ps.perf_links);
	else
		GT_CHECK(ps.perf_links > 0 && ps.multi_links == 0,
			 "perf-event links chosen, the kernel lists %d uprobe_multi and %d other "
			 "gt_alloc_ret links", ps.multi_links, ps.perf_links);
	gt_memtrack_probe_count(gt_engine_memtrack(engine), 0, &up, &ret);
	GT_CHECK(up == 0 && ret == 0, "probes left after the session: %d + %d", up, ret);
	GT_CHECK(kernel_ret_links(NULL) == 0, "the kernel still lists gt_alloc_ret links");
	mt_check_valid(r.path);
	GT_REQUIRE(mt_scan(r.path, trace) == 0, "cannot read back %s", r.path);
	GT_REQUIRE(trace->nheap > 0, "no HeapAlloc in the trace");
	/* the phases, in order, each within HEAP_SLACK above the exact bytes */
	grow = find_value(trace, 0, 64 * MIB, 64 * MIB + HEAP_SLACK);
	freed = grow < 0 ? -1 : find_value(trace, (size_t)grow, 32 * MIB, 32 * MIB + HEAP_SLACK);
	regrow = freed < 0 ? -1 : find_value(trace, (size_t)freed, 96 * MIB, 96 * MIB + HEAP_SLACK);
	GT_CHECK(grow >= 0, "never reached 64 MiB (max %" PRIu64 ")", max_value(trace, 0, trace->nheap));
	GT_CHECK(freed >= 0, "never fell back to 32 MiB after the peak");
	GT_CHECK(regrow >= 0, "never reached 96 MiB after the free");
	if (grow >= 0 && freed >= 0)
		GT_CHECK(max_value(trace, 0, (size_t)freed) <= 64 * MIB + HEAP_SLACK,
			 "above 64 MiB before the free: %" PRIu64, max_value(trace, 0, (size_t)freed));
	GT_CHECK(max_value(trace, 0, trace->nheap) <= 96 * MIB + HEAP_SLACK, "above 96 MiB: %" PRIu64,
		 max_value(trace, 0, trace->nheap));
	GT_CHECK(trace->heap[trace->nheap - 1] >= 96 * MIB &&
		 trace->heap[trace->nheap - 1] <= 96 * MIB + HEAP_SLACK,
		 "final value %" PRIu64 ", want 96 MiB", trace->heap[trace->nheap - 1]);
	/* coalescing: ~192 block calls + a few small ones, not thousands */
	GT_CHECK(trace->nheap >= 150 && trace->nheap < 2000, "%zu HeapAlloc events", trace->nheap);
	printf("# malloc mode: %zu HeapAlloc events, final %" PRIu64 " bytes\n", trace->nheap,
	       trace->heap[trace->nheap - 1]);
	mt_free(trace);
}

/* The same on the other kind of link: perf-event links, one per function
 * (what kernels before 6.6 get; forced here by the environment), on a
 * fresh load of the memory programs. */
static void test_heap_phases_malloc_fallback(void)
{
	const char *was = getenv(GT_NO_UPROBE_MULTI_ENV);
	char keep[16];

	snprintf(keep, sizeof(keep), "%s", was ? was : "");
	setenv(GT_NO_UPROBE_MULTI_ENV, "1", 1);
	gt_engine_mem_close(engine); /* the next session loads them again */
	test_heap_phases_malloc();
	GT_CHECK(!gt_memtrack_uses_multi(gt_engine_memtrack(engine)),
		 "%s=1, yet the probes were uprobe_multi links", GT_NO_UPROBE_MULTI_ENV);
	if (was)
		setenv(GT_NO_UPROBE_MULTI_ENV, keep, 1);
	else
		unsetenv(GT_NO_UPROBE_MULTI_ENV);
	gt_engine_mem_close(engine);
}

/* uprobe_multi links are chosen where the kernel filters them by process:
 * Linux 6.10 and later (6.6 to 6.9 only with a stable update: either is
 * right there), never before 6.6, never when the environment says no. */
static void test_uprobe_multi_choice(void)
{
	const char *no = getenv(GT_NO_UPROBE_MULTI_ENV);
	struct utsname u;
	int major = 0, minor = 0, v;

	GT_REQUIRE(uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2,
		   "cannot read the kernel version");
	v = major * 1000 + minor;
	if (no && !strcmp(no, "1"))
		GT_CHECK(gt_mt_multi_available() == 0, "chosen although %s=1", GT_NO_UPROBE_MULTI_ENV);
	else if (v >= 6010)
		GT_CHECK(gt_mt_multi_available() == 1, "not found on Linux %s", u.release);
	else if (v < 6006)
		GT_CHECK(gt_mt_multi_available() == 0, "found on Linux %s, which has none", u.release);
	setenv(GT_NO_UPROBE_MULTI_ENV, "1", 1);
	GT_CHECK(gt_mt_multi_available() == 0, "%s=1 does not turn it off", GT_NO_UPROBE_MULTI_ENV);
	if (no)
		setenv(GT_NO_UPROBE_MULTI_ENV, no, 1);
	else
		unsetenv(GT_NO_UPROBE_MULTI_ENV);
	printf("# Linux %s: %s links\n", u.release,
	       gt_mt_multi_available() ? "uprobe_multi" : "perf-event");
}

/* ---- allocation samples ---- */

static void test_alloc_stacks(void)
{
	struct gt_session_opts o = { .heap = GT_HEAP_MALLOC, .alloc_stack_every = 4 };
	struct run r;
	size_t named = 0, mib = 0;

	GT_REQUIRE(record_phases(&o, "allocstacks", NULL, NULL, &r) == 0, "%s", r.why);
	mt_check_valid(r.path);
	GT_REQUIRE(mt_scan(r.path, trace) == 0, "cannot read back %s", r.path);
	/* 128 block allocations (+ a few small ones): every 4th is logged */
	GT_CHECK(trace->nlogs >= 30 && trace->nlogs <= 60, "%zu allocation logs, want ~32",
		 trace->nlogs);
	GT_CHECK(!strcmp(mt_string(trace, trace->alloc_key), "alloc"), "log category \"%s\"",
		 mt_string(trace, trace->alloc_key));
	for (size_t i = 0; i < trace->nlogs; i++) {
		mib += !strcmp(trace->log_values[i], "1048576 bytes");
		named += strstr(mt_stack(trace, trace->log_stacks[i]), "alloc_block") != NULL;
	}
	GT_CHECK(mib >= 28, "only %zu logs say \"1048576 bytes\"", mib);
	GT_CHECK(named >= 28, "only %zu allocation stacks name alloc_block", named);
	mt_free(trace);
}

/* ---- RSS mode ---- */

/* With no --heap, a native program gets no uprobe at all (the
 * malloc probes as a default slowed nginx 25-50x): RSS, like Go. */
static void test_default_is_rss(void)
{
	struct gt_session_opts o = { .heap = GT_HEAP_DEFAULT };
	struct probe_seen ps = { .mode = GT_HEAP_OFF, .uprobes = -1, .uretprobes = -1 };
	struct mt_lines lines = { .n = 0 };
	struct run r;

	GT_REQUIRE(record_phases(&o, "default", &lines, &ps, &r) == 0, "%s", r.why);
	GT_CHECK(ps.mode == GT_HEAP_RSS && ps.uprobes == 0 && ps.uretprobes == 0,
		 "default: mode %d with %d+%d probes, want rss and none", ps.mode, ps.uprobes,
		 ps.uretprobes);
	mt_check_valid(r.path);
}

static void test_heap_phases_rss(void)
{
	struct gt_session_opts o = { .heap = GT_HEAP_RSS };
	struct probe_seen ps = { 0 };
	struct mt_lines lines = { .n = 0 };
	struct run r;
	size_t from = 0;

	GT_REQUIRE(record_phases(&o, "rss", &lines, &ps, &r) == 0, "%s", r.why);
	GT_CHECK(ps.mode == GT_HEAP_RSS && ps.uprobes == 0 && ps.uretprobes == 0,
		 "rss mode %d with %d+%d probes", ps.mode, ps.uprobes, ps.uretprobes);
	mt_check_valid(r.path);
	GT_REQUIRE(mt_scan(r.path, trace) == 0, "cannot read back %s", r.path);
	GT_REQUIRE(lines.n == 4, "%d phase lines", lines.n);
	/* each phase's VmRSS appears in order, within 2 MiB (per-CPU counter
	 * batches and the 64 KiB coalescing step) */
	for (int i = 1; i < lines.n; i++) {
		long long live, rss, t;
		char name[32];
		long at;

		GT_REQUIRE(sscanf(lines.l[i], "phase %31s live=%lld rss=%lld t=%lld", name, &live,
				  &rss, &t) == 4, "bad line %s", lines.l[i]);
		at = find_value(trace, from, (uint64_t)(rss > (long long)(2 * MIB) ? rss - 2 * MIB : 0),
				(uint64_t)rss + 2 * MIB);
		GT_CHECK(at >= 0, "phase %s: VmRSS %lld never in the trace after event %zu", name,
			 rss, from);
		if (at >= 0)
			from = (size_t)at;
	}
	printf("# rss mode: %zu HeapAlloc events\n", trace->nheap);
	mt_free(trace);
}

/* ---- a Go program with the default settings ---- */

static int build_go(char *bin, size_t len)
{
	char cmd[4096];

	snprintf(bin, len, "%s/workloads/memgo", mt_build);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %1$s/go-mem && export GOCACHE=$PWD/%1$s/go-mem/cache "
		 "GOPATH=$PWD/%1$s/go-mem/gopath GO111MODULE=off GOFLAGS= CGO_ENABLED=0 && "
		 "go build -o %2$s tests/workloads/go/memgo/main.go", mt_build, bin);
	return system(cmd);
}

/* heap = what the session asks: the default, or malloc probes with
 * allocation samples (the most probe-hungry options): a Go program must
 * get RSS either way and never a probe. */
static void record_go(enum gt_heap_mode heap, unsigned alloc_every)
{
	struct gt_session_opts o = { .heap = heap, .alloc_stack_every = alloc_every };
	struct probe_seen ps = { .mode = GT_HEAP_OFF, .kernel_ret_links = -1 };
	struct mt_child c;
	char bin[600], path[700], why[600];
	char *argv[] = { bin, "--wait", NULL };
	char line[256];
	int st = -1;

	GT_REQUIRE(build_go(bin, sizeof(bin)) == 0, "go build of tests/workloads/go/memgo failed");
	GT_REQUIRE(gt_alloc_is_go_binary(bin) == 1, "%s not recognised as Go", bin);
	GT_REQUIRE(mt_spawn(&c, argv) == 0 && mt_expect(&c, "pid", line, sizeof(line), 10000) == 0 &&
		   mt_expect(&c, "ready", line, sizeof(line), 10000) == 0, "memgo did not start");
	o.out_fd = temp_trace(path, sizeof(path), "go");
	GT_REQUIRE(o.out_fd >= 0, "cannot create %s", path);
	int rc = mt_record(engine, &o, &c, NULL, note_probes, &ps, why, sizeof(why));
	close(o.out_fd);
	/* let it finish on its own: a crash would show in its status */
	close(c.in);
	c.in = -1;
	waitpid(c.pid, &st, 0);
	close(c.out);
	GT_REQUIRE(rc == 0, "%s", why);
	GT_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the Go program died (status 0x%x)", st);
	GT_CHECK(ps.mode == GT_HEAP_RSS, "Go program in heap mode %d, want rss", ps.mode);
	GT_CHECK(ps.uprobes == 0 && ps.uretprobes == 0, "probes on the Go program: %d + %d",
		 ps.uprobes, ps.uretprobes);
	GT_CHECK(ps.kernel_ret_links == 0, "the kernel lists %d gt_alloc_ret links while only Go is traced",
		 ps.kernel_ret_links);
	mt_check_valid(path);
	GT_REQUIRE(mt_scan(path, trace) == 0, "cannot read back %s", path);
	/* it grows to ~48 MiB of touched slices: RSS must show it */
	GT_CHECK(trace->nheap > 0 && max_value(trace, 0, trace->nheap) >= 40 * MIB,
		 "%zu HeapAlloc events, max %" PRIu64, trace->nheap,
		 max_value(trace, 0, trace->nheap));
	mt_free(trace);
}

static void test_go_default_rss(void)
{
	record_go(GT_HEAP_DEFAULT, 0);
}

static void test_go_malloc_asked_rss(void)
{
	record_go(GT_HEAP_MALLOC, 10);
}

/* `record -- CMD` starts from a forked recorder that execs CMD once the
 * session runs: with --heap=malloc the recorder's image gets probes, and
 * the exec of a Go program must take every one of them away. */
static struct probe_seen exec_seen;
static int exec_lines;

static void look_at_done(struct gt_engine *e, struct mt_child *c, const char *line)
{
	exec_lines++;
	if (!strcmp(line, "ready")) {
		/* memgo (after the exec) waits for its own go */
		if (write(c->in, "g", 1) != 1)
			return;
	}
	if (strcmp(line, "done"))
		return;
	/* the engine may still be behind (it symbolizes the new image
	 * first): give it time to see the exec, then look; on a busy
	 * machine that time may be long (up to 60 s) */
	for (time_t end = time(NULL) + 60; time(NULL) < end;) {
		enum gt_heap_mode m = gt_memtrack_mode(gt_engine_memtrack(e), 0, c->target);

		if (m != GT_HEAP_MALLOC)
			break;
		gt_engine_poll(e, 10);
	}
	note_probes(e, c, &exec_seen);
}

static void test_exec_into_go(void)
{
	struct gt_session_opts o = { .heap = GT_HEAP_MALLOC, .alloc_stack_every = 10 };
	struct probe_seen before = { 0 };
	struct mt_child c;
	char bin[600], path[700], why[600];
	int in[2], out[2], st = -1;

	GT_REQUIRE(build_go(bin, sizeof(bin)) == 0, "go build of tests/workloads/go/memgo failed");
	GT_REQUIRE(pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0, "pipe");
	memset(&c, 0, sizeof(c));
	c.pid = fork();
	GT_REQUIRE(c.pid >= 0, "fork");
	if (c.pid == 0) {
		/* the held child: a C image (this test) until it is released */
		char go, *argv[] = { bin, "--wait", NULL };

		dup2(in[0], 0);
		dup2(out[1], 1);
		if (read(0, &go, 1) != 1)
			_exit(1);
		execv(bin, argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c.in = in[1];
	c.out = out[0];
	c.target = c.pid;
	o.out_fd = temp_trace(path, sizeof(path), "exec-go");
	GT_REQUIRE(o.out_fd >= 0, "cannot create %s", path);
	exec_seen = (struct probe_seen){ .mode = GT_HEAP_OFF, .uprobes = -1, .uretprobes = -1 };
	mt_on_line = look_at_done;
	int rc = mt_record(engine, &o, &c, NULL, note_probes, &before, why, sizeof(why));
	mt_on_line = NULL;
	close(o.out_fd);
	close(c.in);
	waitpid(c.pid, &st, 0);
	close(c.out);
	GT_REQUIRE(rc == 0, "%s", why);
	GT_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the Go program died (status 0x%x)", st);
	GT_CHECK(before.mode == GT_HEAP_MALLOC && before.uretprobes > 0,
		 "before exec: mode %d, %d uretprobes (the C image should be probed)", before.mode,
		 before.uretprobes);
	GT_CHECK(exec_seen.mode == GT_HEAP_RSS, "after exec into Go: mode %d, want rss (%s)",
		 exec_seen.mode, gt_engine_error(engine));
	GT_CHECK(exec_seen.uprobes == 0 && exec_seen.uretprobes == 0 &&
		 exec_seen.kernel_ret_links == 0,
		 "after exec into Go: %d uprobes, %d uretprobes, kernel lists %d", exec_seen.uprobes,
		 exec_seen.uretprobes, exec_seen.kernel_ret_links);
	mt_check_valid(path);
}

/* ---- the cgroup memory limit as HeapGoal ---- */

/* Where to make a memory cgroup: the v2 hierarchy when it has the memory
 * controller, else the v1 memory hierarchy (hybrid systems).  Fills the
 * directory and its limit file name; 0 if neither exists. */
static int memory_cgroup(char *dir, size_t dirlen, const char **limit_file)
{
	char mnt[512], why[256], file[600], line[512];
	FILE *f;
	int v2 = 0;

	if (gt_cgroup_mount(mnt, sizeof(mnt), why, sizeof(why)) == 0) {
		snprintf(file, sizeof(file), "%s/cgroup.subtree_control", mnt);
		f = fopen(file, "r");
		if (f && fgets(line, sizeof(line), f))
			v2 = strstr(line, "memory") != NULL;
		if (f)
			fclose(f);
	}
	if (v2) {
		snprintf(dir, dirlen, "%s/gotraced-test-memtrack", mnt);
		*limit_file = "memory.max";
		return 1;
	}
	if (access("/sys/fs/cgroup/memory/memory.limit_in_bytes", F_OK) == 0) {
		snprintf(dir, dirlen, "/sys/fs/cgroup/memory/gotraced-test-memtrack");
		*limit_file = "memory.limit_in_bytes";
		return 1;
	}
	printf("skip test_cgroup_heap_goal: no memory controller (cgroup v2 or v1)\n");
	return 0;
}

static void test_cgroup_heap_goal(void)
{
	struct gt_session_opts o = { .heap = GT_HEAP_MALLOC };
	const char *limit_file = NULL;
	struct mt_child c;
	char cg[700], path[700], why[600], file[800];
	FILE *f;
	int rc;

	GT_REQUIRE(memory_cgroup(cg, sizeof(cg), &limit_file), "no memory cgroup");
	GT_REQUIRE(mkdir(cg, 0755) == 0 || errno == EEXIST, "mkdir %s: %s", cg, strerror(errno));
	snprintf(file, sizeof(file), "%s/%s", cg, limit_file);
	f = fopen(file, "r+"); /* must exist: never create files in a cgroup */
	GT_REQUIRE(f, "open %s: %s", file, strerror(errno));
	fprintf(f, "%llu\n", 512 * MIB);
	GT_REQUIRE(fclose(f) == 0, "writing %s failed", file);
	GT_REQUIRE(mt_start_workload(&c, "alloc_phases", NULL) == 0, "alloc_phases did not start");
	snprintf(file, sizeof(file), "%s/cgroup.procs", cg);
	f = fopen(file, "r+");
	GT_REQUIRE(f, "cannot open %s", file);
	fprintf(f, "%d\n", (int)c.target);
	GT_REQUIRE(fclose(f) == 0, "moving pid %d into %s failed", (int)c.target, cg);
	trace_path(path, sizeof(path), "goal");
	rc = mt_record_file(engine, &o, &c, path, NULL, NULL, NULL, why, sizeof(why));
	rmdir(cg);
	GT_REQUIRE(rc == 0, "%s", why);
	mt_check_valid(path);
	GT_REQUIRE(mt_scan(path, trace) == 0, "cannot read back %s", path);
	GT_CHECK(trace->heap_goal == 512 * MIB, "HeapGoal %" PRIu64 ", want 512 MiB (%s)",
		 trace->heap_goal, file);
	mt_free(trace);
}

static void bpf_cases(void)
{
	char cg[700];
	const char *lf;

	GT_RUN(test_uprobe_multi_choice);
	GT_RUN(test_heap_phases_malloc);
	GT_RUN(test_heap_phases_malloc_fallback);
	GT_RUN(test_default_is_rss);
	GT_RUN(test_heap_phases_rss);
	GT_RUN(test_alloc_stacks);
	GT_RUN(test_go_default_rss);
	GT_RUN(test_go_malloc_asked_rss);
	GT_RUN(test_exec_into_go);
	if (memory_cgroup(cg, sizeof(cg), &lf))
		GT_RUN(test_cgroup_heap_goal);
}

int main(int argc, char **argv)
{
	mt_find_build(argc, argv);
	GT_RUN(test_alloc_find_self);
	mt_run_bpf("test_memtrack", &engine, &trace, bpf_cases);
	return gt_test_done();
}
