/* Unit tests of the analysis behind `gotracectl report`: the log-linear
 * histogram (percentiles within 1%), the folded-stack writer, and the
 * per-goroutine figures of a small hand-written trace whose every number
 * is known. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analyze/gt_analyze.h"
#include "gt_test.h"
#include "writer/gt_writer.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The exact value at percentile p of sorted v[0..n): rank ceil(p*n). */
static uint64_t exact_pct(const uint64_t *v, size_t n, double p)
{
	size_t r = (size_t)((p / 100.0) * (double)n + 0.999999);

	return v[(r ? r : 1) - 1];
}

static void test_hist_small_exact(void)
{
	struct gt_hist h = {0};

	for (uint64_t v = 0; v < 64; v++)
		gt_hist_add(&h, v);
	GT_CHECK(h.count == 64 && h.min == 0 && h.max == 63, "count %llu", (unsigned long long)h.count);
	GT_CHECK(gt_hist_pct(&h, 50) == 31, "p50 %llu, want 31", (unsigned long long)gt_hist_pct(&h, 50));
	GT_CHECK(gt_hist_pct(&h, 100) == 63, "p100");
	gt_hist_free(&h);
}

/* Log-spread values from 1ns to ~100s: every percentile within 1%. */
static void test_hist_error_under_1pct(void)
{
	enum { N = 100000 };
	uint64_t *v = malloc(N * sizeof(*v));
	struct gt_hist h = {0};
	static const double ps[] = { 1, 10, 25, 50, 75, 90, 99, 99.9 };
	uint64_t x = 88172645463325252ull;

	GT_REQUIRE(v, "malloc");
	for (size_t i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		v[i] = (x % 1000000) * (1ull << (x >> 58) % 27) + 1; /* up to ~1.3e14 */
		gt_hist_add(&h, v[i]);
	}
	qsort(v, N, sizeof(*v), cmp_u64);
	for (size_t k = 0; k < sizeof(ps) / sizeof(*ps); k++) {
		uint64_t want = exact_pct(v, N, ps[k]), got = gt_hist_pct(&h, ps[k]);
		double err = got > want ? (double)(got - want) / want : (double)(want - got) / want;

		GT_CHECK(err < 0.01, "p%g: %llu, exact %llu (%.3f%% off)", ps[k],
			 (unsigned long long)got, (unsigned long long)want, err * 100);
	}
	GT_CHECK(gt_hist_pct(&h, 100) == v[N - 1], "max not exact");
	GT_CHECK(gt_hist_pct(&h, 0) == v[0], "min not exact");
	free(v);
	gt_hist_free(&h);
}

static void test_hist_merge(void)
{
	struct gt_hist a = {0}, b = {0}, all = {0};

	for (uint64_t v = 1; v < 5000; v += 7) {
		gt_hist_add(v % 2 ? &a : &b, v * 1000);
		gt_hist_add(&all, v * 1000);
	}
	GT_REQUIRE(gt_hist_merge(&a, &b) == 0, "merge");
	GT_CHECK(a.count == all.count && a.sum == all.sum && a.max == all.max && a.min == all.min,
		 "totals differ after merge");
	for (int p = 1; p < 100; p += 7)
		GT_CHECK(gt_hist_pct(&a, p) == gt_hist_pct(&all, p), "p%d differs after merge", p);
	gt_hist_free(&a);
	gt_hist_free(&b);
	gt_hist_free(&all);
}

/* Runs gt_an_fold_line into a string. */
static char *fold_line(const char *root, const struct gt_an_frame *f, size_t n, uint64_t c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return NULL;
	gt_an_fold_line(m, root, f, n, c);
	fclose(m);
	return buf;
}

static void test_fold_line(void)
{
	struct gt_an_frame f[3] = {
		{ .fn = "leaf;x", .fn_len = 6 },  /* innermost */
		{ .pc = 0x10 },                   /* no name: its PC */
		{ .fn = "main\nmore", .fn_len = 4 }, /* only fn_len bytes count */
	};
	char *s = fold_line("thr;ead", f, 3, 7);

	GT_REQUIRE(s, "memstream");
	GT_CHECK(!strcmp(s, "thr_ead;main;0x10;leaf_x 7\n"), "got '%s'", s);
	free(s);
	/* a name's control bytes are escaped, a newline never ends the line */
	f[0] = (struct gt_an_frame){ .fn = "a\nb\033[2J\x9b;c", .fn_len = 10 };
	s = fold_line("t\r", f, 1, 2);
	GT_CHECK(s && !strcmp(s, "t\\r;a\\nb\\e[2J\\x9b_c 2\n"), "escaped: got '%s'",
		 s ? s : "(null)");
	free(s);
	s = fold_line("idle", f, 0, 1);
	GT_CHECK(s && !strcmp(s, "idle 1\n"), "no frames: got '%s'", s ? s : "(null)");
	free(s);
}

static void test_syscall_names(void)
{
	static const struct { const char *fn, *want; } cases[] = {
		{ "__libc_read", "read" }, { "__GI___libc_write", "write" },
		{ "__x64_sys_futex", "futex" }, { "__read_nocancel", "read" },
		{ "epoll_wait", "epoll_wait" }, { "syscall.Syscall", NULL },
		{ "internal/poll.(*FD).Read", NULL }, { "", NULL },
	};
	char buf[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct gt_an_frame f = { .fn = cases[i].fn, .fn_len = strlen(cases[i].fn) };
		const char *got = gt_an_syscall_name(&f, buf, sizeof(buf));

		if (!cases[i].want)
			GT_CHECK(!got, "%s named %s", cases[i].fn, got);
		else
			GT_CHECK(got && !strcmp(got, cases[i].want), "%s named %s, want %s",
				 cases[i].fn, got ? got : "(null)", cases[i].want);
	}
}

#define EV(w, p, type, ts, ...) \
	gt_writer_event((w), (p), (type), (ts), (const uint64_t[]){__VA_ARGS__}, \
			sizeof((uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t))

/* G1 "worker" (tid 42): created at 0, starts at 100, read() blocks from
 * 300 to 4000, runs 4500..5000, blocks on a lock until G2 wakes it at 6000,
 * runs 6300..6400 on P1.  Times in ns after the first event. */
static int write_trace(int fd)
{
	struct gt_writer *w;
	uint64_t name1, name2, sread, slock;
	int rc = gt_writer_open(&w, fd, GT_V1_19, 1000000000);

	if (rc)
		return rc;
	name1 = gt_writer_stack(w, (struct gt_frame[]){ { 1, "worker", "[thread]", 42 } }, 1);
	name2 = gt_writer_stack(w, (struct gt_frame[]){ { 1, "waker", "[thread]", 43 } }, 1);
	sread = gt_writer_stack(w, (struct gt_frame[]){ { 0x20, "__libc_read", "read.c", 26 },
							{ 0x30, "main", "m.c", 5 } }, 2);
	slock = gt_writer_stack(w, (struct gt_frame[]){ { 0x40, "pthread_mutex_lock", "l.c", 9 },
							{ 0x30, "main", "m.c", 6 } }, 2);
	EV(w, 0, GT_EV_GO_CREATE, 1000, 1, name1, 0);
	EV(w, 1, GT_EV_GO_CREATE, 1000, 2, name2, 0);
	EV(w, 0, GT_EV_GO_START, 1100, 1, 1);
	EV(w, 0, GT_EV_GO_SYSCALL, 1200, sread);
	EV(w, 0, GT_EV_GO_SYSBLOCK, 1300);
	EV(w, 0, GT_EV_GO_SYSEXIT, 5000, 1, 2, 0);
	EV(w, 0, GT_EV_GO_START, 5500, 1, 3);
	EV(w, 0, GT_EV_GO_BLOCK_SYNC, 6000, slock);
	EV(w, 1, GT_EV_GO_START, 6400, 2, 1);
	EV(w, 1, GT_EV_GO_UNBLOCK, 7000, 1, 4, 0);
	EV(w, 1, GT_EV_GO_BLOCK, 7200, 0);
	EV(w, 1, GT_EV_GO_START, 7300, 1, 5);
	EV(w, 1, GT_EV_GO_END, 7400);
	return gt_writer_close(w);
}

static void check_g1(const struct gt_an_thread *t)
{
	GT_CHECK(t->delay.count == 3 && t->delay.sum == 900 && t->delay.max == 500,
		 "sched count %llu total %llu max %llu, want 3 900 500",
		 (unsigned long long)t->delay.count, (unsigned long long)t->delay.sum,
		 (unsigned long long)t->delay.max);
	GT_CHECK(t->worst_at_ns == 4500, "worst at %lld, want 4500", (long long)t->worst_at_ns);
	GT_CHECK(t->offcpu_ns[GT_BLK_SYSCALL] == 4200 && t->offcpu_ns[GT_BLK_SYNC] == 1300,
		 "off-CPU syscall %llu sync %llu, want 4200 1300",
		 (unsigned long long)t->offcpu_ns[GT_BLK_SYSCALL],
		 (unsigned long long)t->offcpu_ns[GT_BLK_SYNC]);
	GT_CHECK(t->oncpu_ns == 800 && t->starts == 3 && t->migrations == 1,
		 "on-CPU %llu starts %llu migrations %llu, want 800 3 1",
		 (unsigned long long)t->oncpu_ns, (unsigned long long)t->starts,
		 (unsigned long long)t->migrations);
	GT_REQUIRE(t->nsys == 1, "%zu syscall entries, want 1", t->nsys);
	GT_CHECK(t->sys[0].count == 1 && t->sys[0].total_ns == 3800 && t->sys[0].blocked_ns == 4200,
		 "syscall count %llu total %llu blocked %llu, want 1 3800 4200",
		 (unsigned long long)t->sys[0].count, (unsigned long long)t->sys[0].total_ns,
		 (unsigned long long)t->sys[0].blocked_ns);
	GT_REQUIRE(t->nwak == 1, "%zu wakers, want 1", t->nwak);
	GT_CHECK(t->wak[0].g == 2 && t->wak[0].count == 1 && t->wak[0].delay_max_ns == 300,
		 "waker G%llu count %llu delay %llu, want G2 1 300", (unsigned long long)t->wak[0].g,
		 (unsigned long long)t->wak[0].count, (unsigned long long)t->wak[0].delay_max_ns);
}

/* The known trace (write_trace) in a memfd, mapped. */
struct mapped {
	int fd;
	uint8_t *data;
	size_t len;
};

static void map_known(struct mapped *m)
{
	m->fd = memfd_create("report", 0);
	GT_REQUIRE(m->fd >= 0, "memfd: %s", strerror(errno));
	GT_REQUIRE(write_trace(m->fd) == 0, "writing the trace");
	m->len = (size_t)lseek(m->fd, 0, SEEK_END);
	m->data = mmap(NULL, m->len, PROT_READ, MAP_PRIVATE, m->fd, 0);
	GT_REQUIRE(m->data != MAP_FAILED, "mmap");
}

static void unmap_known(struct mapped *m)
{
	munmap(m->data, m->len);
	close(m->fd);
}

static void test_analyze_known_trace(void)
{
	struct mapped mp;
	struct gt_analysis a;
	const struct gt_an_thread *t;
	char *folded = NULL;
	size_t flen = 0;
	FILE *m;
	int64_t tid;
	size_t nlen;
	const char *name;

	map_known(&mp);
	GT_REQUIRE(gt_analyze(&a, mp.data, mp.len, NULL) == 0, "analyze: %s", a.error);
	t = gt_an_thread_of(&a, 1);
	GT_REQUIRE(t, "no G1");
	check_g1(t);
	name = gt_an_thread_name(&a, t, &nlen, &tid);
	GT_CHECK(nlen == 6 && !memcmp(name, "worker", 6) && tid == 42,
		 "G1 named '%.*s' tid %lld, want worker 42", (int)nlen, name, (long long)tid);
	GT_CHECK(!strcmp(a.names[t->sys[0].name], "read"), "syscall named %s", a.names[t->sys[0].name]);
	t = gt_an_thread_of(&a, 2);
	GT_CHECK(t && t->delay.count == 1 && t->delay.max == 5400, "G2's delay wrong");
	m = open_memstream(&folded, &flen);
	GT_REQUIRE(m, "memstream");
	GT_CHECK(gt_an_fold(&a, -1, NULL, NULL, m) == 0, "fold");
	fclose(m);
	GT_CHECK(folded && !strcmp(folded, "worker;main;__libc_read 4\nworker;main;pthread_mutex_lock 1\n"),
		 "folded off-CPU:\n%s", folded ? folded : "(null)");
	free(folded);
	gt_analysis_free(&a);
	unmap_known(&mp);
}

/* --since/--until: a delay counts when its GoStart is in the window. */
static void test_analyze_window(void)
{
	struct mapped mp;
	struct gt_analyze_opts o = { 4000, 4600, NULL, 0 };
	struct gt_analysis a;
	const struct gt_an_thread *t;

	map_known(&mp);
	GT_REQUIRE(gt_analyze(&a, mp.data, mp.len, &o) == 0, "analyze: %s", a.error);
	t = gt_an_thread_of(&a, 1);
	GT_CHECK(t && t->delay.count == 1 && t->delay.max == 500 && t->oncpu_ns == 100,
		 "window 4000..4600: count %llu max %llu on-CPU %llu, want 1 500 100",
		 t ? (unsigned long long)t->delay.count : 0ULL,
		 t ? (unsigned long long)t->delay.max : 0ULL, t ? (unsigned long long)t->oncpu_ns : 0ULL);
	gt_analysis_free(&a);
	unmap_known(&mp);
}

/* The Go viewers' profile totals of the same trace, by each reader's rules
 * (gt_analyze_viewers.c).  Go 1.19: the GoCreates and the GoUnblock have
 * no stack, so no scheduling delay; the lock wait runs 5000..6000, the
 * read() 200..4000 (GoSysCall -> GoSysExit).  Go 1.23: the read() runs
 * from its GoSysCall to the next event with a stack, the lock wait at
 * 5000; the lock wait itself never ends there, its wakeup has no stack. */
static void test_analyze_viewers(void)
{
	struct mapped mp;
	static const uint64_t ns19[GT_AN_VIEW_COUNT] = { 0, 1000, 3800, 0 };
	static const uint64_t ns23[GT_AN_VIEW_COUNT] = { 0, 0, 4800, 0 };
	struct gt_analysis a;

	map_known(&mp);
	GT_REQUIRE(gt_analyze(&a, mp.data, mp.len, NULL) == 0, "analyze: %s", a.error);
	for (int k = 0; k < GT_AN_VIEW_COUNT; k++) {
		GT_CHECK(a.go119.ns[k] == ns19[k] && a.go119.n[k] == (ns19[k] != 0),
			 "go1.19 profile %d: %llu ns in %llu, want %llu", k,
			 (unsigned long long)a.go119.ns[k], (unsigned long long)a.go119.n[k],
			 (unsigned long long)ns19[k]);
		GT_CHECK(a.go123.ns[k] == ns23[k] && a.go123.n[k] == (ns23[k] != 0),
			 "go1.23 profile %d: %llu ns in %llu, want %llu", k,
			 (unsigned long long)a.go123.ns[k], (unsigned long long)a.go123.n[k],
			 (unsigned long long)ns23[k]);
	}
	gt_analysis_free(&a);
	unmap_known(&mp);
}

static void test_analyze_rejects_garbage(void)
{
	static const uint8_t junk[] = "not a trace file at all";
	struct gt_analysis a;

	GT_CHECK(gt_analyze(&a, junk, sizeof(junk), NULL) == -EINVAL && a.error[0],
		 "garbage accepted");
	gt_analysis_free(&a);
}

/* G1 "worker": created at 1000, runs at 1100, preempted at 1500, runs
 * again at 1800, blocks on a lock at 2000 until G2 wakes it at 2500, runs
 * at 3000, where a gotraced.trigger UserLog names it. */
static int write_split_trace(int fd)
{
	struct gt_writer *w;
	uint64_t name1, name2, slock;
	int rc = gt_writer_open(&w, fd, GT_V1_19, 1000000000);

	if (rc)
		return rc;
	name1 = gt_writer_stack(w, (struct gt_frame[]){ { 1, "worker", "[thread]", 42 } }, 1);
	name2 = gt_writer_stack(w, (struct gt_frame[]){ { 1, "waker", "[thread]", 43 } }, 1);
	slock = gt_writer_stack(w, (struct gt_frame[]){ { 0x40, "pthread_mutex_lock", "l.c", 9 },
							{ 0x30, "main", "m.c", 6 } }, 2);
	EV(w, 0, GT_EV_GO_CREATE, 1000, 1, name1, 0);
	EV(w, 1, GT_EV_GO_CREATE, 1000, 2, name2, 0);
	EV(w, 0, GT_EV_GO_START, 1100, 1, 1);
	EV(w, 0, GT_EV_GO_PREEMPT, 1500, 0);
	EV(w, 0, GT_EV_GO_START, 1800, 1, 2);
	EV(w, 0, GT_EV_GO_BLOCK_SYNC, 2000, slock);
	EV(w, 1, GT_EV_GO_START, 2100, 2, 1);
	EV(w, 1, GT_EV_GO_UNBLOCK, 2500, 1, 3, 0);
	EV(w, 1, GT_EV_GO_END, 2600);
	EV(w, 0, GT_EV_GO_START, 3000, 1, 4);
	rc = gt_writer_user_log(w, 0, 3050, 0, gt_writer_string(w, "gotraced.trigger"), 0,
				"offcpu>900ns fired");
	return rc ? rc : gt_writer_close(w);
}

/* Wakeup delay (timehist's sch delay) and preemption delay apart, their
 * sum in runqlat's slots; the longest single waits; a trigger's UserLog
 * with the wait before it. */
static void test_analyze_split_waits_marks(void)
{
	struct gt_analyze_opts o = { 0, -1, NULL, 0 };
	struct gt_analysis a;
	const struct gt_an_thread *t;
	int fd = memfd_create("split", 0);
	uint8_t *data;
	size_t len;

	GT_REQUIRE(fd >= 0 && write_split_trace(fd) == 0, "writing the trace");
	len = (size_t)lseek(fd, 0, SEEK_END);
	data = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	GT_REQUIRE(data != MAP_FAILED, "mmap");
	o.mark_key = "gotraced.trigger";
	GT_REQUIRE(gt_analyze(&a, data, len, &o) == 0, "analyze: %s", a.error);
	t = gt_an_thread_of(&a, 1);
	GT_REQUIRE(t, "no G1");
	GT_CHECK(t->wdelay.count == 2 && t->wdelay.max == 500 && t->wdelay.sum == 600,
		 "wakeup delay count %llu max %llu sum %llu, want 2 500 600",
		 (unsigned long long)t->wdelay.count, (unsigned long long)t->wdelay.max,
		 (unsigned long long)t->wdelay.sum);
	GT_CHECK(t->pdelay.count == 1 && t->pdelay.max == 300,
		 "preemption delay count %llu max %llu, want 1 300",
		 (unsigned long long)t->pdelay.count, (unsigned long long)t->pdelay.max);
	GT_CHECK(t->delay.count == 3 && t->rq_log2[0] == 3, "run-queue count %llu, slot 0 %llu",
		 (unsigned long long)t->delay.count, (unsigned long long)t->rq_log2[0]);
	GT_REQUIRE(a.nwaits == 2, "%zu waits kept, want 2", a.nwaits);
	GT_CHECK(a.waits[0].g == 1 && a.waits[0].reason == GT_BLK_SYNC &&
		 a.waits[0].stop_ns == 1000 && a.waits[0].woken_ns == 1500 &&
		 a.waits[0].start_ns == 2000,
		 "longest wait G%llu reason %d %lld..%lld woken %lld, want G1 sync 1000..2000 woken 1500",
		 (unsigned long long)a.waits[0].g, a.waits[0].reason, (long long)a.waits[0].stop_ns,
		 (long long)a.waits[0].start_ns, (long long)a.waits[0].woken_ns);
	GT_CHECK(a.waits[1].reason == GT_BLK_PREEMPT && a.waits[1].start_ns - a.waits[1].stop_ns == 300,
		 "second wait reason %d, %lld ns", a.waits[1].reason,
		 (long long)(a.waits[1].start_ns - a.waits[1].stop_ns));
	GT_REQUIRE(a.nmarks == 1, "%zu marks, want 1", a.nmarks);
	GT_CHECK(a.marks[0].g == 1 && a.marks[0].ns == 2050 &&
		 !strcmp(a.marks[0].msg, "offcpu>900ns fired") && a.marks[0].wait.reason == GT_BLK_SYNC && a.marks[0].wait.start_ns == 2000,
		 "mark G%llu at %lld '%s', its wait ends %lld", (unsigned long long)a.marks[0].g,
		 (long long)a.marks[0].ns, a.marks[0].msg, (long long)a.marks[0].wait.start_ns);
	GT_CHECK(!a.sys_calls, "a trace without GoSysCall counts calls");
	gt_analysis_free(&a);
	/* --until before the trigger: its wait is still the one before it
	 * (the lock wait, outside the window), not the window's last one */
	o.until_ns = 1900;
	GT_REQUIRE(gt_analyze(&a, data, len, &o) == 0, "analyze: %s", a.error);
	GT_REQUIRE(a.nmarks == 1, "%zu marks with --until, want 1", a.nmarks);
	GT_CHECK(a.marks[0].wait.reason == GT_BLK_SYNC && a.marks[0].wait.stop_ns == 1000 &&
		 a.marks[0].wait.start_ns == 2000,
		 "with --until 1900 the trigger's wait is reason %d %lld..%lld, want sync 1000..2000",
		 a.marks[0].wait.reason, (long long)a.marks[0].wait.stop_ns,
		 (long long)a.marks[0].wait.start_ns);
	GT_CHECK(a.nwaits == 1 && a.waits[0].reason == GT_BLK_PREEMPT,
		 "with --until 1900: %zu longest waits, want the preemption alone", a.nwaits);
	gt_analysis_free(&a);
	munmap(data, len);
	close(fd);
}

/* A Go thread (G1, tid 42) whose switch-outs name its goroutine (UserLog
 * "goroutine N" just before the stop, docs/mapping.md "Goroutines of Go
 * programs"): goroutine 7 preempted at 2000 until 2500 and at 3000 until
 * 4000, goroutine 9 blocked at 5000 until 5100; the stop at 6000 names
 * none (the runtime's g0 writes no log), and a log another start came
 * after (here 6200, then 6300 start) names no stop. */
static int write_go_trace(int fd)
{
	struct gt_writer *w;
	uint64_t name, key;
	int rc = gt_writer_open(&w, fd, GT_V1_19, 1000000000);

	if (rc)
		return rc;
	name = gt_writer_stack(w, (struct gt_frame[]){ { 1, "goserver", "[thread]", 42 } }, 1);
	key = gt_writer_string(w, "goroutine");
	EV(w, 0, GT_EV_GO_CREATE, 1000, 1, name, 0);
	EV(w, 0, GT_EV_GO_START, 1100, 1, 1);
	gt_writer_user_log(w, 0, 2000, 0, key, 0, "goroutine 7");
	EV(w, 0, GT_EV_GO_PREEMPT, 2000, 0);
	EV(w, 0, GT_EV_GO_START, 2500, 1, 2);
	gt_writer_user_log(w, 0, 3000, 0, key, 0, "goroutine 7");
	EV(w, 0, GT_EV_GO_PREEMPT, 3000, 0);
	EV(w, 0, GT_EV_GO_START, 4000, 1, 3);
	gt_writer_user_log(w, 0, 5000, 0, key, 0, "goroutine 9");
	EV(w, 0, GT_EV_GO_BLOCK, 5000, 0);
	EV(w, 1, GT_EV_GO_UNBLOCK, 5050, 1, 4, 0);
	EV(w, 0, GT_EV_GO_START, 5100, 1, 5);
	EV(w, 0, GT_EV_GO_BLOCK, 6000, 0);
	EV(w, 1, GT_EV_GO_UNBLOCK, 6050, 1, 6, 0);
	EV(w, 0, GT_EV_GO_START, 6100, 1, 7);
	gt_writer_user_log(w, 0, 6200, 0, key, 0, "alloc 12");
	EV(w, 0, GT_EV_GO_END, 6400);
	return gt_writer_close(w);
}

/* A thread (G1) throttled at 2000 until 2500 (UserLog "throttled" before
 * its GoPreempt, after its goroutine's), preempted at 3000 until 4000, and
 * blocked at 5000 after a "throttled" log (never written there: no
 * throttling, the block is the stop's reason). */
static int write_throttled_trace(int fd)
{
	struct gt_writer *w;
	uint64_t name, key, thr;
	int rc = gt_writer_open(&w, fd, GT_V1_19, 1000000000);

	if (rc)
		return rc;
	name = gt_writer_stack(w, (struct gt_frame[]){ { 1, "spin", "[thread]", 42 } }, 1);
	key = gt_writer_string(w, "goroutine");
	thr = gt_writer_string(w, "throttled");
	EV(w, 0, GT_EV_GO_CREATE, 1000, 1, name, 0);
	EV(w, 0, GT_EV_GO_START, 1100, 1, 1);
	gt_writer_user_log(w, 0, 2000, 0, key, 0, "goroutine 7");
	gt_writer_user_log(w, 0, 2000, 0, thr, 0, "cgroup /q");
	EV(w, 0, GT_EV_GO_PREEMPT, 2000, 0);
	EV(w, 0, GT_EV_GO_START, 2500, 1, 2);
	gt_writer_user_log(w, 0, 3000, 0, key, 0, "goroutine 7");
	EV(w, 0, GT_EV_GO_PREEMPT, 3000, 0);
	EV(w, 0, GT_EV_GO_START, 4000, 1, 3);
	gt_writer_user_log(w, 0, 5000, 0, thr, 0, "cgroup /q");
	EV(w, 0, GT_EV_GO_BLOCK, 5000, 0);
	EV(w, 1, GT_EV_GO_UNBLOCK, 5050, 1, 4, 0);
	EV(w, 0, GT_EV_GO_START, 5100, 1, 5);
	EV(w, 0, GT_EV_GO_END, 6400);
	return gt_writer_close(w);
}

/* The throttled wait is its cgroup's (count, time, max), and not its
 * goroutine's preemption. */
static void test_analyze_throttled(void)
{
	struct gt_analysis a;
	uint8_t *data;
	size_t len;
	int fd = memfd_create("report-throttled", 0);

	GT_REQUIRE(fd >= 0 && write_throttled_trace(fd) == 0, "writing the trace");
	len = (size_t)lseek(fd, 0, SEEK_END);
	data = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	GT_REQUIRE(data != MAP_FAILED, "mmap");
	GT_REQUIRE(gt_analyze(&a, data, len, NULL) == 0, "analyze: %s", a.error);
	GT_REQUIRE(a.nthrottles == 1, "%zu throttling cgroups, want 1", a.nthrottles);
	GT_CHECK(!strcmp(a.throttles[0].cgroup, "cgroup /q") && a.throttles[0].count == 1 &&
		 a.throttles[0].ns == 500 && a.throttles[0].max_ns == 500,
		 "%s: %llu waits, %llu ns (max %llu), want cgroup /q: 1, 500 (500)",
		 a.throttles[0].cgroup, (unsigned long long)a.throttles[0].count,
		 (unsigned long long)a.throttles[0].ns, (unsigned long long)a.throttles[0].max_ns);
	GT_REQUIRE(a.ngoros == 1, "%zu goroutines, want 1", a.ngoros);
	GT_CHECK(a.goros[0].stops == 2 && a.goros[0].preempts == 1 && a.goros[0].preempt_ns == 1000,
		 "goroutine 7: %llu stops, %llu preempts, %llu ns; want 2, 1 (not the throttling), 1000",
		 (unsigned long long)a.goros[0].stops, (unsigned long long)a.goros[0].preempts,
		 (unsigned long long)a.goros[0].preempt_ns);
	gt_analysis_free(&a);
	munmap(data, len);
	close(fd);
}

/* 300 throttled waits, each in a cgroup of its own (a hostile file: every
 * new name is looked for among the kept ones): 255 cgroups kept, the
 * other 45 waits under one row. */
static int write_many_cgroups(int fd)
{
	struct gt_writer *w;
	uint64_t name, thr;
	int64_t ts = 2000;
	int rc = gt_writer_open(&w, fd, GT_V1_19, 1000000000);
	char cg[32];

	if (rc)
		return rc;
	name = gt_writer_stack(w, (struct gt_frame[]){ { 1, "spin", "[thread]", 42 } }, 1);
	thr = gt_writer_string(w, "throttled");
	EV(w, 0, GT_EV_GO_CREATE, 1000, 1, name, 0);
	EV(w, 0, GT_EV_GO_START, 1100, 1, 1);
	for (int i = 0; i < 300; i++, ts += 100) {
		snprintf(cg, sizeof(cg), "cgroup /q%d", i);
		gt_writer_user_log(w, 0, ts, 0, thr, 0, cg);
		EV(w, 0, GT_EV_GO_PREEMPT, ts, 0);
		EV(w, 0, GT_EV_GO_START, ts + 50, 1, (uint64_t)i + 2);
	}
	EV(w, 0, GT_EV_GO_END, ts);
	return gt_writer_close(w);
}

static void test_analyze_throttled_many(void)
{
	struct gt_analysis a;
	uint8_t *data;
	size_t len;
	int fd = memfd_create("report-throttled-many", 0);

	GT_REQUIRE(fd >= 0 && write_many_cgroups(fd) == 0, "writing the trace");
	len = (size_t)lseek(fd, 0, SEEK_END);
	data = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	GT_REQUIRE(data != MAP_FAILED, "mmap");
	GT_REQUIRE(gt_analyze(&a, data, len, NULL) == 0, "analyze: %s", a.error);
	GT_REQUIRE(a.nthrottles == 256, "%zu rows, want 256", a.nthrottles);
	GT_CHECK(!strcmp(a.throttles[255].cgroup, "(other cgroups)") &&
		 a.throttles[255].count == 45 && a.throttles[254].count == 1,
		 "last row %s: %llu waits, want (other cgroups): 45", a.throttles[255].cgroup,
		 (unsigned long long)a.throttles[255].count);
	gt_analysis_free(&a);
	munmap(data, len);
	close(fd);
}

static void test_analyze_go_goroutines(void)
{
	struct gt_analysis a;
	uint8_t *data;
	size_t len;
	int fd = memfd_create("report-go", 0);

	GT_REQUIRE(fd >= 0 && write_go_trace(fd) == 0, "writing the trace");
	len = (size_t)lseek(fd, 0, SEEK_END);
	data = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	GT_REQUIRE(data != MAP_FAILED, "mmap");
	GT_REQUIRE(gt_analyze(&a, data, len, NULL) == 0, "analyze: %s", a.error);
	GT_REQUIRE(a.ngoros == 2, "%zu goroutines, want 2", a.ngoros);
	GT_CHECK(a.goros[0].thread == 1 && a.goros[0].goid == 7 && a.goros[0].stops == 2 &&
		 a.goros[0].preempts == 2 && a.goros[0].preempt_ns == 1500 &&
		 a.goros[0].preempt_max_ns == 1000 && a.goros[0].offcpu_ns == 1500,
		 "goroutine %llu on G%llu: %llu stops, %llu preempts %llu ns (max %llu)",
		 (unsigned long long)a.goros[0].goid, (unsigned long long)a.goros[0].thread,
		 (unsigned long long)a.goros[0].stops, (unsigned long long)a.goros[0].preempts,
		 (unsigned long long)a.goros[0].preempt_ns, (unsigned long long)a.goros[0].preempt_max_ns);
	GT_CHECK(a.goros[1].goid == 9 && a.goros[1].stops == 1 && a.goros[1].preempts == 0 &&
		 a.goros[1].offcpu_ns == 100, "goroutine %llu: %llu stops, %llu ns off CPU",
		 (unsigned long long)a.goros[1].goid, (unsigned long long)a.goros[1].stops,
		 (unsigned long long)a.goros[1].offcpu_ns);
	gt_analysis_free(&a);
	munmap(data, len);
	close(fd);
}

/* G1 "worker" (tid 42) blocks at 2000 and G2's wakeup is written at that
 * same time, as gotraced writes one whose sched_waking raced the
 * switch-out (docs/mapping.md); it runs at 2600.  It blocks again at 3000,
 * woken at 3500 after its switch-out, runs at 3600.  G3, a goroutine of a
 * Go runtime (no [thread] frame), is woken at its block's time too. */
static int write_raced_trace(int fd)
{
	struct gt_writer *w;
	uint64_t name1, name2, slock, sgo;
	int rc = gt_writer_open(&w, fd, GT_V1_19, 1000000000);

	if (rc)
		return rc;
	name1 = gt_writer_stack(w, (struct gt_frame[]){ { 1, "worker", "[thread]", 42 } }, 1);
	name2 = gt_writer_stack(w, (struct gt_frame[]){ { 1, "waker", "[thread]", 43 } }, 1);
	slock = gt_writer_stack(w, (struct gt_frame[]){ { 0x40, "pthread_mutex_lock", "l.c", 9 },
							{ 0x30, "main", "m.c", 6 } }, 2);
	sgo = gt_writer_stack(w, (struct gt_frame[]){ { 0x50, "main.worker", "m.go", 7 } }, 1);
	EV(w, 0, GT_EV_GO_CREATE, 1000, 1, name1, 0);
	EV(w, 1, GT_EV_GO_CREATE, 1000, 2, name2, 0);
	EV(w, 2, GT_EV_GO_CREATE, 1000, 3, sgo, 0);
	EV(w, 0, GT_EV_GO_START, 1100, 1, 1);
	EV(w, 1, GT_EV_GO_START, 1500, 2, 1);
	EV(w, 2, GT_EV_GO_START, 1600, 3, 1);
	EV(w, 0, GT_EV_GO_BLOCK_SYNC, 2000, slock);
	EV(w, 1, GT_EV_GO_UNBLOCK, 2000, 1, 2, 0);
	EV(w, 0, GT_EV_GO_START, 2600, 1, 3);
	EV(w, 0, GT_EV_GO_BLOCK_SYNC, 3000, slock);
	EV(w, 1, GT_EV_GO_UNBLOCK, 3500, 1, 4, 0);
	EV(w, 0, GT_EV_GO_START, 3600, 1, 5);
	EV(w, 2, GT_EV_GO_BLOCK_SYNC, 4000, sgo);
	EV(w, 1, GT_EV_GO_UNBLOCK, 4000, 3, 2, 0);
	EV(w, 2, GT_EV_GO_START, 4700, 3, 3);
	return gt_writer_close(w);
}

/* A wakeup that raced its block is no wakeup delay (perf sched timehist
 * drops a sched_waking that came before the switch-out: sch delay 0) but
 * run-queue latency (runqlat's), filed with the preemption delay. */
static void test_analyze_raced_wakeup(void)
{
	struct gt_analysis a;
	const struct gt_an_thread *t;
	int fd = memfd_create("raced", 0);
	uint8_t *data;
	size_t len;

	GT_REQUIRE(fd >= 0 && write_raced_trace(fd) == 0, "writing the trace");
	len = (size_t)lseek(fd, 0, SEEK_END);
	data = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	GT_REQUIRE(data != MAP_FAILED, "mmap");
	GT_REQUIRE(gt_analyze(&a, data, len, NULL) == 0, "analyze: %s", a.error);
	t = gt_an_thread_of(&a, 1);
	GT_REQUIRE(t, "no G1");
	GT_CHECK(t->wdelay.count == 2 && t->wdelay.max == 100 && t->wdelay.sum == 200,
		 "wakeup delay count %llu max %llu sum %llu, want 2 100 200 (created, woken at 3500)",
		 (unsigned long long)t->wdelay.count, (unsigned long long)t->wdelay.max,
		 (unsigned long long)t->wdelay.sum);
	GT_CHECK(t->pdelay.count == 1 && t->pdelay.max == 600,
		 "preemption delay count %llu max %llu, want 1 600 (the raced wakeup)",
		 (unsigned long long)t->pdelay.count, (unsigned long long)t->pdelay.max);
	GT_CHECK(t->delay.count == 3 && t->delay.max == 600, "run-queue count %llu max %llu",
		 (unsigned long long)t->delay.count, (unsigned long long)t->delay.max);
	GT_REQUIRE(t->nwak == 1, "%zu wakers, want 1", t->nwak);
	GT_CHECK(t->wak[0].g == 2 && t->wak[0].count == 2 && t->wak[0].delay_max_ns == 600,
		 "waker G%llu count %llu delay max %llu, want G2 2 600",
		 (unsigned long long)t->wak[0].g, (unsigned long long)t->wak[0].count,
		 (unsigned long long)t->wak[0].delay_max_ns);
	t = gt_an_thread_of(&a, 3);
	GT_REQUIRE(t, "no G3");
	GT_CHECK(t->wdelay.count == 2 && t->wdelay.max == 700 && t->pdelay.count == 0,
		 "a Go goroutine's wakeup at its block's time: wakeup delay count %llu max %llu, "
		 "preemption %llu, want 2 700 0", (unsigned long long)t->wdelay.count,
		 (unsigned long long)t->wdelay.max, (unsigned long long)t->pdelay.count);
	gt_analysis_free(&a);
	munmap(data, len);
	close(fd);
}

/* G1 "busy" waits 1000 ns 70 times (more than GT_AN_WAITS), G2 "quiet"
 * once for 100 ns. */
static int write_many_waits_trace(int fd)
{
	struct gt_writer *w;
	uint64_t name1, name2, s;
	int64_t ts = 2000;
	int rc = gt_writer_open(&w, fd, GT_V1_19, 1000000000);

	if (rc)
		return rc;
	name1 = gt_writer_stack(w, (struct gt_frame[]){ { 1, "busy", "[thread]", 42 } }, 1);
	name2 = gt_writer_stack(w, (struct gt_frame[]){ { 1, "quiet", "[thread]", 43 } }, 1);
	s = gt_writer_stack(w, (struct gt_frame[]){ { 0x40, "nanosleep", "s.c", 9 } }, 1);
	EV(w, 0, GT_EV_GO_CREATE, 1000, 1, name1, 0);
	EV(w, 1, GT_EV_GO_CREATE, 1000, 2, name2, 0);
	EV(w, 1, GT_EV_GO_START, 1100, 2, 1);
	EV(w, 1, GT_EV_GO_BLOCK_SYNC, 1200, s);
	EV(w, 0, GT_EV_GO_START, 1250, 1, 1);
	EV(w, 0, GT_EV_GO_UNBLOCK, 1300, 2, 2, 0);
	EV(w, 1, GT_EV_GO_START, 1300, 2, 3);
	for (uint64_t i = 0; i < 70; i++, ts += 2000) {
		EV(w, 0, GT_EV_GO_BLOCK_SYNC, ts, s);
		EV(w, 1, GT_EV_GO_UNBLOCK, ts + 1000, 1, 2 + 2 * i, 0);
		EV(w, 0, GT_EV_GO_START, ts + 1000, 1, 3 + 2 * i);
	}
	return gt_writer_close(w);
}

static int only_g2(const struct gt_analysis *a, const struct gt_an_thread *t, void *arg)
{
	(void)a;
	(void)arg;
	return t->id == 2;
}

/* report --thread: the longest waits kept are the selected threads' own,
 * not the longest of all filtered afterwards (G2's one wait is shorter
 * than 64 of G1's). */
static void test_analyze_waits_of_thread(void)
{
	struct gt_analyze_opts o = { 0, -1, NULL, 0 };
	struct gt_analysis a;
	int fd = memfd_create("waits", 0);
	uint8_t *data;
	size_t len;

	GT_REQUIRE(fd >= 0 && write_many_waits_trace(fd) == 0, "writing the trace");
	len = (size_t)lseek(fd, 0, SEEK_END);
	data = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	GT_REQUIRE(data != MAP_FAILED, "mmap");
	GT_REQUIRE(gt_analyze(&a, data, len, &o) == 0, "analyze: %s", a.error);
	GT_CHECK(a.nwaits == GT_AN_WAITS && a.waits[GT_AN_WAITS - 1].g == 1,
		 "all threads: %zu waits kept, the last of G%llu, want %d of G1", a.nwaits,
		 a.nwaits ? (unsigned long long)a.waits[a.nwaits - 1].g : 0ULL, GT_AN_WAITS);
	gt_analysis_free(&a);
	o.keep_waits_of = only_g2;
	GT_REQUIRE(gt_analyze(&a, data, len, &o) == 0, "analyze: %s", a.error);
	GT_CHECK(a.nwaits == 1 && a.waits[0].g == 2 && a.waits[0].start_ns - a.waits[0].stop_ns == 100,
		 "G2 only: %zu waits kept, the first of G%llu, want its one 100 ns wait", a.nwaits,
		 a.nwaits ? (unsigned long long)a.waits[0].g : 0ULL);
	gt_analysis_free(&a);
	munmap(data, len);
	close(fd);
}

int main(void)
{
	GT_RUN(test_hist_small_exact);
	GT_RUN(test_hist_error_under_1pct);
	GT_RUN(test_hist_merge);
	GT_RUN(test_fold_line);
	GT_RUN(test_syscall_names);
	GT_RUN(test_analyze_known_trace);
	GT_RUN(test_analyze_window);
	GT_RUN(test_analyze_viewers);
	GT_RUN(test_analyze_rejects_garbage);
	GT_RUN(test_analyze_split_waits_marks);
	GT_RUN(test_analyze_go_goroutines);
	GT_RUN(test_analyze_throttled);
	GT_RUN(test_analyze_throttled_many);
	GT_RUN(test_analyze_raced_wakeup);
	GT_RUN(test_analyze_waits_of_thread);
	return gt_test_done();
}
