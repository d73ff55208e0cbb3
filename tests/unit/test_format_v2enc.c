/* Unit tests of the Go 1.22+ (v2) encoder (format/v2/gt_v2enc.h): small
 * traces written as "go 1.22 trace" and "go 1.23 trace" — two and more Ms,
 * goroutines created, blocked, unblocked, preempted and in syscalls, a P
 * stolen from a syscall, threads blocked in syscalls across generation
 * boundaries (with their P and without), stack and string tables — read
 * back by our own decoder and analysis (inspect's strict rules) and by Go's
 * own readers (tests/lib/gocheck.sh: Go 1.22's parser for a 1.22 file, Go
 * 1.23's parser and viewer pages for both): a file Go's reader accepts is
 * the only proof.  A staged trace cut after a generation, read whole.
 * Then a trace past Go's 64 KiB batch limit (events and strings cut into
 * several batches), the calls the encoder refuses, each naming why, and
 * random walks of four Ms with skewed clocks, checked like the first.
 * And the analysis never reads a generation's bytes once it said it was
 * done with them (gt_analyze_opts.release: report lets those pages go). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analyze/gt_analyze.h"
#include "gt_test.h"
#include "v2/gt_v2.h"
#include "v2/gt_v2enc.h"

struct mem {
	uint8_t *b;
	size_t n, cap;
};

static int mem_write(void *ctx, const void *p, size_t n)
{
	struct mem *m = ctx;

	if (m->n + n > m->cap) {
		size_t cap = (m->n + n) * 2;
		uint8_t *b = realloc(m->b, cap);

		if (!b)
			return -ENOMEM;
		m->b = b;
		m->cap = cap;
	}
	memcpy(m->b + m->n, p, n);
	m->n += n;
	return 0;
}

/* The number of events of each type in the file (our decoder). */
static int count_types(const struct mem *m, unsigned counts[GT_V2_NTYPES], char *why, size_t wl)
{
	struct gt_v2_file f;
	struct gt_v2_batch b;
	struct gt_v2_cursor c;
	struct gt_v2_ev e;
	int rc;

	memset(counts, 0, sizeof(unsigned) * GT_V2_NTYPES);
	if (gt_v2_open(&f, m->b, m->n)) {
		snprintf(why, wl, "%s", f.error);
		return -1;
	}
	while ((rc = gt_v2_next_batch(&f, &b)) == 1) {
		gt_v2_cursor_init(&c, &f, &b);
		while ((rc = gt_v2_next_event(&c, &e, why, wl)) == 1)
			counts[e.type]++;
		if (rc)
			return -1;
		counts[GT_V2_EVENT_BATCH]++;
	}
	if (rc)
		snprintf(why, wl, "%s", f.error);
	return rc;
}

/* Our strict analysis and Go's readers on the file, each asked whatever
 * the other says: "" or why not. */
static void both_readers(const char *name, const struct mem *m, struct gt_analysis *a,
			 char *why, size_t wl)
{
	struct gt_analyze_opts o = { .since_ns = 0, .until_ns = -1, .strict = 1 };
	char path[] = "/tmp/gt-v2enc-XXXXXX", go[1024];
	int fd = mkstemp(path), n = 0;

	why[0] = 0;
	if (gt_analyze(a, m->b, m->n, &o))
		n = snprintf(why, wl, "%s: our analysis: %s; ", name, a->error);
	if (fd < 0 || write(fd, m->b, m->n) != (ssize_t)m->n) {
		snprintf(why + n, wl - (size_t)n, "%s: cannot write %s", name, path);
	} else if (gt_test_gocheck(path, go, sizeof(go))) {
		snprintf(why + n, wl - (size_t)n, "%s: Go: %s", name,
			 go[0] ? go : "its readers refused it");
	}
	if (fd >= 0)
		close(fd);
	unlink(path);
}

#define OK(call) GT_REQUIRE((call) == 0, "%s: %s", #call, e.error)

/* The scheduling shapes, at version ver (times in ns).  stage: whole
 * generations only (gt_v2enc_stage); cuts: the bytes written after each
 * of the two generation ends, and before the last one's. */
static void sched_trace(int ver, struct mem *m, int stage, size_t cuts[3])
{
	struct gt_v2enc e;
	struct gt_v2enc_frame f[2] = { { 0x401000, "main.worker", "/src/main.go", 10 },
				       { 0x402000, "runtime.goexit", "/go/proc.go", 1700 } };
	uint64_t st, st2, chan, sync, yield;

	memset(m, 0, sizeof(*m));
	OK(gt_v2enc_init(&e, ver, 1000000000, mem_write, m));
	if (stage)
		gt_v2enc_stage(&e);
	st = gt_v2enc_stack(&e, f, 2);
	st2 = gt_v2enc_stack(&e, f + 1, 1);
	chan = gt_v2enc_string(&e, "chan receive");
	yield = gt_v2enc_string(&e, "preempted");
	GT_REQUIRE(st == 1 && st2 == 2 && gt_v2enc_stack(&e, f, 2) == st, "stack ids %llu %llu",
		   (unsigned long long)st, (unsigned long long)st2);
	/* generation 1: g1 ran before tracing (stated at first use) */
	OK(gt_v2enc_proc_start(&e, 1, 1000, 0));
	OK(gt_v2enc_go_start(&e, 1, 1100, 1));
	OK(gt_v2enc_go_create(&e, 1, 1200, 2, st, st));
	OK(gt_v2enc_go_create(&e, 1, 1250, 3, st, st));
	OK(gt_v2enc_go_create(&e, 1, 1260, 4, st2, st));
	OK(gt_v2enc_proc_start(&e, 2, 1300, 1));
	OK(gt_v2enc_cpu_sample(&e, 1150, 1, 0, 1, st));
	OK(gt_v2enc_cpu_sample(&e, 1350, 2, 1, GT_V2ENC_NONE, st2)); /* no goroutine */
	OK(gt_v2enc_go_start(&e, 2, 1400, 2));
	OK(gt_v2enc_go_block(&e, 2, 1500, chan, st));
	OK(gt_v2enc_go_start(&e, 2, 1600, 3));
	OK(gt_v2enc_syscall_begin(&e, 2, 1700, st)); /* g3 blocks in it, P taken */
	OK(gt_v2enc_go_unblock(&e, 1, 1800, 2, st));
	OK(gt_v2enc_go_unblock(&e, 1, 1850, 9, st)); /* g9 waited before tracing */
	/* g10 waited before tracing and never runs: named by its status's
	 * stack where the version has GoStatusStack */
	OK(gt_v2enc_go_status_stack(&e, 2, 1860, 10, GT_V2_G_WAITING, ver == 23 ? st2 : 0));
	OK(gt_v2enc_go_stop(&e, 1, 1900, yield, st));
	OK(gt_v2enc_go_start(&e, 1, 2000, 2));
	OK(gt_v2enc_proc_steal(&e, 3, 2100, 1));
	OK(gt_v2enc_proc_start(&e, 3, 2150, 1));
	OK(gt_v2enc_go_start(&e, 3, 2200, 1));
	OK(gt_v2enc_proc_start(&e, 4, 2300, 2));
	OK(gt_v2enc_go_start(&e, 4, 2400, 4));
	OK(gt_v2enc_syscall_begin(&e, 4, 2500, st2)); /* g4 keeps its P across */
	OK(gt_v2enc_generation(&e, 3000));
	cuts[0] = m->n;
	GT_CHECK(e.complete == m->n, "complete %llu, written %zu",
		 (unsigned long long)e.complete, m->n);
	/* generation 2: new tables; M 2 and M 4 still in their syscalls */
	sync = gt_v2enc_string(&e, "sync");
	st = gt_v2enc_stack(&e, f, 2);
	GT_REQUIRE(sync == 1, "tables start again: sync is %llu", (unsigned long long)sync);
	OK(gt_v2enc_syscall_end(&e, 2, 3100));       /* EndBlocked: g3 runnable */
	OK(gt_v2enc_go_block(&e, 1, 3200, sync, st)); /* g2 waits */
	OK(gt_v2enc_go_start(&e, 1, 3300, 3));
	OK(gt_v2enc_go_destroy(&e, 1, 3400));
	OK(gt_v2enc_go_start(&e, 1, 3500, 9));
	OK(gt_v2enc_cpu_sample(&e, 3550, 1, 0, 9, st));
	OK(gt_v2enc_go_block(&e, 1, 3600, sync, st)); /* g9 waits across the next */
	OK(gt_v2enc_go_unblock(&e, 3, 3700, 2, st));
	OK(gt_v2enc_go_stop(&e, 3, 3800, gt_v2enc_string(&e, "preempted"), st)); /* g1 */
	OK(gt_v2enc_go_start(&e, 3, 3900, 2));
	OK(gt_v2enc_generation(&e, 4000));
	cuts[1] = m->n;
	/* generation 3 */
	OK(gt_v2enc_syscall_end(&e, 4, 4100)); /* kept its P: GoSyscallEnd */
	OK(gt_v2enc_go_destroy(&e, 4, 4200));
	OK(gt_v2enc_proc_stop(&e, 4, 4300));
	OK(gt_v2enc_go_unblock(&e, 3, 4400, 9, 0));
	OK(gt_v2enc_go_destroy(&e, 3, 4500)); /* g2 */
	OK(gt_v2enc_go_start(&e, 3, 4600, 9));
	OK(gt_v2enc_go_destroy(&e, 3, 4700));
	OK(gt_v2enc_go_start(&e, 1, 4800, 1));
	OK(gt_v2enc_proc_stop(&e, 3, 4900));
	cuts[2] = m->n;
	OK(gt_v2enc_finish(&e));
	gt_v2enc_free(&e);
}

static void test_sched(int ver)
{
	struct mem m;
	struct gt_analysis a;
	unsigned n[GT_V2_NTYPES];
	char why[2048];
	size_t cuts[3];

	sched_trace(ver, &m, 0, cuts);
	if (gt_test_failed_now)
		goto out;
	GT_REQUIRE(count_types(&m, n, why, sizeof(why)) == 0, "our decoder: %s", why);
	/* generation 3 names no string and no stack: no table batch */
	GT_CHECK(n[GT_V2_FREQUENCY] == 3 && n[GT_V2_STRINGS] == 2 && n[GT_V2_STACKS] == 2,
		 "one frequency batch per generation, tables where used: %u %u %u",
		 n[GT_V2_FREQUENCY], n[GT_V2_STRINGS], n[GT_V2_STACKS]);
	GT_CHECK(n[GT_V2_CPU_SAMPLES] == 2 && n[GT_V2_CPU_SAMPLE] == 3,
		 "CPU samples: %u batches, %u samples", n[GT_V2_CPU_SAMPLES], n[GT_V2_CPU_SAMPLE]);
	GT_CHECK(n[GT_V2_PROC_STEAL] == 1 && n[GT_V2_GO_SYSCALL_END_BLOCKED] == 1 &&
		 n[GT_V2_GO_SYSCALL_END] == 1, "steal %u, end blocked %u, end %u",
		 n[GT_V2_PROC_STEAL], n[GT_V2_GO_SYSCALL_END_BLOCKED], n[GT_V2_GO_SYSCALL_END]);
	/* gen 1: P0-2 idle, g1 runnable, g9 waiting (at first use), g10
	 * (with its stack in 1.23); gen 2: P0-2, g1-4, g9, g10; gen 3: P0-2,
	 * g1, g2, g4, g9, g10 */
	GT_CHECK(n[GT_V2_PROC_STATUS] == 3 + 3 + 3 &&
		 n[GT_V2_GO_STATUS] + n[GT_V2_GO_STATUS_STACK] == 3 + 6 + 5 &&
		 n[GT_V2_GO_STATUS_STACK] == (ver == 23 ? 1u : 0u),
		 "%u ProcStatus, %u GoStatus, %u GoStatusStack", n[GT_V2_PROC_STATUS],
		 n[GT_V2_GO_STATUS], n[GT_V2_GO_STATUS_STACK]);
	both_readers(ver == 22 ? "go 1.22 trace" : "go 1.23 trace", &m, &a, why, sizeof(why));
	GT_CHECK(!why[0], "%s", why);
	GT_CHECK(a.generations == 3 && a.nthreads == 6 && a.samples == 3,
		 "%llu generations, %zu goroutines, %llu samples",
		 (unsigned long long)a.generations, a.nthreads, (unsigned long long)a.samples);
	gt_analysis_free(&a);
out:
	free(m.b);
}

/* Staged: nothing of an open generation is written, so a recording killed
 * at any time ends at a generation boundary; the file cut there (two of
 * three generations) is read whole by our analysis and Go's readers. */
static void test_cut_at_generation(void)
{
	struct mem m;
	struct gt_analysis a;
	char why[2048];
	size_t cuts[3];

	sched_trace(23, &m, 1, cuts);
	if (gt_test_failed_now)
		goto out;
	GT_CHECK(cuts[2] == cuts[1] && cuts[1] > cuts[0] && m.n > cuts[1],
		 "staged: %zu, %zu, %zu before the end, %zu after", cuts[0], cuts[1], cuts[2], m.n);
	m.n = cuts[1];
	both_readers("cut after generation 2", &m, &a, why, sizeof(why));
	GT_CHECK(!why[0], "%s", why);
	GT_CHECK(a.generations == 2, "%llu generations", (unsigned long long)a.generations);
	gt_analysis_free(&a);
out:
	free(m.b);
}

static void test_sched_go122(void)
{
	test_sched(22);
}

static void test_sched_go123(void)
{
	test_sched(23);
}

/* Past Go's limits: one M's events over several batches, a string table
 * over several batches, 128 frames.  stage: whole generation held; *open:
 * the bytes written before the generation ended. */
static void big_trace(struct mem *m, int stage, size_t *open)
{
	struct gt_v2enc e;
	struct gt_v2enc_frame f[GT_V2_MAX_FRAMES];
	char name[1024], fn[GT_V2_MAX_FRAMES][32];
	uint64_t ts = 1000, reason, st;

	memset(m, 0, sizeof(*m));
	OK(gt_v2enc_init(&e, 23, 1000000000, mem_write, m));
	if (stage)
		gt_v2enc_stage(&e);
	for (unsigned i = 0; i < GT_V2_MAX_FRAMES; i++) {
		snprintf(fn[i], sizeof(fn[i]), "main.f%u", i);
		f[i] = (struct gt_v2enc_frame){ 0x400000 + 16 * (uint64_t)i, fn[i], "/src/deep.go",
						(uint64_t)i + 1 };
	}
	st = gt_v2enc_stack(&e, f, GT_V2_MAX_FRAMES);
	OK(gt_v2enc_proc_start(&e, 7, ts, 0));
	for (int i = 0; i < 12000; i++) {
		snprintf(name, sizeof(name), "reason %d %0900d", i % 100, 0);
		reason = gt_v2enc_string(&e, name);
		OK(gt_v2enc_go_start(&e, 7, ts += 10 + i % 7, 1));
		OK(gt_v2enc_go_stop(&e, 7, ts += 10, reason, st));
	}
	*open = m->n;
	OK(gt_v2enc_finish(&e));
	gt_v2enc_free(&e);
}

/* The times of M 7's events in the big trace are the ones written, in
 * every batch: a new batch's first event has delta 0 from the batch's
 * time (one carried from the last batch moved it and the rest of its
 * batch late: v2 files of long recordings had a P's stop stamped after the
 * next holder's start).  The number of events checked, -1 on a mismatch. */
static int big_times(const struct mem *m, char *why, size_t wl)
{
	struct gt_v2_file f;
	struct gt_v2_batch b;
	struct gt_v2_cursor c;
	struct gt_v2_ev ev;
	uint64_t want = 1000;
	int k = 0, rc;

	if (gt_v2_open(&f, m->b, m->n))
		return -1;
	while ((rc = gt_v2_next_batch(&f, &b)) == 1) {
		if (b.m != 7 || b.kind != GT_V2_K_EVENTS)
			continue;
		gt_v2_cursor_init(&c, &f, &b);
		while ((rc = gt_v2_next_event(&c, &ev, why, wl)) == 1) {
			if (ev.type != GT_V2_GO_START && ev.type != GT_V2_GO_STOP)
				continue; /* ProcStart, GoStatus: at the first times */
			want += ev.type == GT_V2_GO_START ? 10 + (uint64_t)(k / 2 % 7) : 10;
			k++;
			if (ev.ts != want) {
				snprintf(why, wl, "event %d (%s) at offset %zu: time %llu, written "
					 "%llu", k, gt_v2_name(ev.type), ev.off,
					 (unsigned long long)ev.ts, (unsigned long long)want);
				return -1;
			}
		}
		if (rc)
			return -1;
	}
	return rc ? -1 : k;
}

static void test_big(void)
{
	struct mem m, staged;
	struct gt_analysis a;
	unsigned n[GT_V2_NTYPES];
	char why[2048];
	size_t open, sopen;

	big_trace(&m, 0, &open);
	big_trace(&staged, 1, &sopen);
	GT_CHECK(open > GT_V2_MAX_BATCH && sopen == GT_V2_HEADER_LEN,
		 "written before the end: %zu, staged %zu", open, sopen);
	GT_CHECK(staged.n == m.n && !memcmp(staged.b, m.b, m.n), "staging changed the bytes");
	free(staged.b);
	GT_REQUIRE(count_types(&m, n, why, sizeof(why)) == 0, "our decoder: %s", why);
	GT_CHECK(n[GT_V2_STRINGS] >= 2 && n[GT_V2_EVENT_BATCH] >= 5 && n[GT_V2_GO_START] == 12000,
		 "%u strings batches, %u batches, %u GoStart", n[GT_V2_STRINGS],
		 n[GT_V2_EVENT_BATCH], n[GT_V2_GO_START]);
	GT_CHECK(big_times(&m, why, sizeof(why)) == 24000, "times: %s", why);
	both_readers("big", &m, &a, why, sizeof(why));
	GT_CHECK(!why[0], "%s", why);
	gt_analysis_free(&a);
	free(m.b);
}

/* refused(call, words): the call fails and e.error holds words. */
#define REFUSED(call, words)                                                          \
	do {                                                                          \
		int rc_ = (call);                                                     \
		GT_CHECK(rc_ == -EINVAL && strstr(e.error, words), "%s: %d, %s", #call, \
			 rc_, e.error);                                               \
	} while (0)

static void fresh(struct gt_v2enc *e, struct mem *m, int ver)
{
	gt_v2enc_free(e);
	m->n = 0;
	gt_v2enc_init(e, ver, 1000000000, mem_write, m);
}

static void test_refused(void)
{
	struct gt_v2enc e;
	struct mem m = { 0 };
	const uint64_t sw[2] = { 5, 1 };

	OK(gt_v2enc_init(&e, 23, 1000000000, mem_write, &m));
	REFUSED(gt_v2enc_go_start(&e, 1, 10, 1), "holds no P");
	fresh(&e, &m, 23);
	OK(gt_v2enc_proc_start(&e, 1, 10, 0));
	REFUSED(gt_v2enc_go_block(&e, 1, 20, 0, 0), "no goroutine running");
	/* sticky: nothing more is written, the first error stays */
	REFUSED(gt_v2enc_go_start(&e, 1, 30, 1), "GoBlock on M 1");
	GT_CHECK(gt_v2enc_finish(&e) == -EINVAL, "finish after an error");
	fresh(&e, &m, 23);
	OK(gt_v2enc_proc_start(&e, 1, 10, 0));
	OK(gt_v2enc_go_start(&e, 1, 20, 1));
	REFUSED(gt_v2enc_go_start(&e, 1, 30, 2), "goroutine 1 runs there");
	fresh(&e, &m, 23);
	OK(gt_v2enc_proc_start(&e, 1, 10, 0));
	REFUSED(gt_v2enc_proc_steal(&e, 2, 20, 0), "not in a syscall");
	fresh(&e, &m, 23);
	OK(gt_v2enc_proc_start(&e, 1, 10, 0));
	OK(gt_v2enc_generation(&e, 100));
	REFUSED(gt_v2enc_go_start(&e, 1, 110, 1), "not runnable"); /* never created */
	fresh(&e, &m, 22);
	REFUSED(gt_v2enc_raw(&e, 1, 10, GT_V2_GO_SWITCH, sw, 2), "GoSwitch");
	fresh(&e, &m, 22);
	REFUSED(gt_v2enc_go_status_stack(&e, 1, 10, 5, GT_V2_G_WAITING, 1), "GoStatusStack");
	fresh(&e, &m, 22);
	OK(gt_v2enc_proc_start(&e, 1, 10, 0));
	REFUSED(gt_v2enc_go_create_blocked(&e, 1, 20, 5, 0, 0), "GoCreateBlocked");
	/* 1.23: created waiting, it runs only once unblocked */
	fresh(&e, &m, 23);
	OK(gt_v2enc_proc_start(&e, 1, 10, 0));
	OK(gt_v2enc_go_create_blocked(&e, 1, 20, 5, 0, 0));
	OK(gt_v2enc_go_unblock(&e, 1, 30, 5, 0));
	OK(gt_v2enc_go_start(&e, 1, 40, 5));
	fresh(&e, &m, 23);
	OK(gt_v2enc_proc_start(&e, 1, 10, 0));
	OK(gt_v2enc_go_create_blocked(&e, 1, 20, 5, 0, 0));
	REFUSED(gt_v2enc_go_start(&e, 1, 30, 5), "not runnable");
	fresh(&e, &m, 23);
	REFUSED(gt_v2enc_go_create_blocked(&e, 1, 10, 5, 0, 0), "holds no P");
	fresh(&e, &m, 23);
	REFUSED(gt_v2enc_raw(&e, 1, 10, GT_V2_GO_START, sw, 2), "its own call");
	gt_v2enc_free(&e);
	GT_CHECK(gt_v2enc_init(&e, 24, 1000000000, mem_write, &m) == -EINVAL &&
		 strstr(e.error, "only 1.22 and 1.23"), "version 1.24: %s", e.error);
	gt_v2enc_free(&e);
	free(m.b);
}

/* ---- random walks ----------------------------------------------------- */

struct walk {
	struct gt_v2enc e;
	uint64_t rng, ts, nextg;
	int64_t skew[5];
	uint64_t st[2];
};

static uint64_t rnd(struct walk *w, uint64_t n)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return w->rng % n;
}

/* A goroutine or P of status want, at random, or GT_V2ENC_NONE. */
static uint64_t pick(struct walk *w, struct gt_idmap *map, int want, int is_p)
{
	uint64_t found[64], n = 0;

	for (size_t i = 0; i < map->cap && n < 64; i++) {
		if (!gt_idmap_full(map, i))
			continue;
		int st = is_p ? ((struct gt_v2enc_p *)gt_idmap_val(map, i))->status
			      : ((struct gt_v2enc_g *)gt_idmap_val(map, i))->status;
		if (st == want)
			found[n++] = gt_idmap_key(map, i)[0];
	}
	return n ? found[rnd(w, n)] : GT_V2ENC_NONE;
}

/* One step of M m (1..4): an action its state allows, at random.  M m's
 * clock runs skew[m] off the others' (sequence numbers order them). */
static int step(struct walk *w, uint64_t m)
{
	struct gt_v2enc *e = &w->e;
	struct gt_v2enc_m *s = gt_v2enc_mstate(e, m);
	struct gt_v2enc_g *g;
	uint64_t ts = (uint64_t)((int64_t)(w->ts += 10) + w->skew[m]), x;
	uint64_t st = w->st[rnd(w, 2)], r = rnd(w, 10);

	if (rnd(w, 20) == 0)
		gt_v2enc_cpu_sample(e, ts, m, s->p, s->g, st);
	if (s->g != GT_V2ENC_NONE && (g = gt_idmap_get(&e->gs, s->g)) &&
	    g->status == GT_V2_G_SYSCALL)
		return gt_v2enc_syscall_end(e, m, ts);
	if (s->p == GT_V2ENC_NONE) {
		/* steal a P from a syscall, or start an idle (or, first
		 * generation, a new) one */
		if (r < 3 && (x = pick(w, &e->ps, GT_V2_P_SYSCALL, 1)) != GT_V2ENC_NONE)
			return gt_v2enc_proc_steal(e, m, ts, x);
		x = pick(w, &e->ps, GT_V2_P_IDLE, 1);
		if (x == GT_V2ENC_NONE && e->gen == 1 && e->ps.count < 4)
			x = e->ps.count;
		return x == GT_V2ENC_NONE ? 0 : gt_v2enc_proc_start(e, m, ts, x);
	}
	if (r == 0 && (x = pick(w, &e->gs, GT_V2_G_WAITING, 0)) != GT_V2ENC_NONE)
		return gt_v2enc_go_unblock(e, m, ts, x, st);
	if (r == 1 && e->gs.count < 40)
		return gt_v2enc_go_create(e, m, ts, w->nextg++, st, st);
	if (s->g == GT_V2ENC_NONE) {
		if (r < 5 && (x = pick(w, &e->gs, GT_V2_G_RUNNABLE, 0)) != GT_V2ENC_NONE)
			return gt_v2enc_go_start(e, m, ts, x);
		return r < 7 ? gt_v2enc_proc_stop(e, m, ts) : 0;
	}
	switch (r) {
	case 2: case 3:
		return gt_v2enc_go_block(e, m, ts, gt_v2enc_string(e, "sync"), st);
	case 4:
		return gt_v2enc_go_stop(e, m, ts, gt_v2enc_string(e, "preempted"), st);
	case 5:
		return gt_v2enc_go_destroy(e, m, ts);
	case 6: case 7:
		return gt_v2enc_syscall_begin(e, m, ts, st);
	}
	return 0;
}

/* Random walks of four Ms over four Ps (creates, blocks, wakeups,
 * syscalls, steals, samples, generations every ~150 steps, clocks up to
 * 40 ns apart), as 1.23 and 1.22 files: every one read by our analysis
 * and by Go's readers. */
static void test_random_walks(void)
{
	struct gt_v2enc_frame f[2] = { { 0x401000, "main.worker", "/src/main.go", 10 },
				       { 0x402000, "runtime.goexit", "/go/proc.go", 1700 } };

	for (uint64_t seed = 1; seed <= 4 && !gt_test_failed_now; seed++) {
		struct walk w = { .rng = seed * 0x9e3779b97f4a7c15ull, .ts = 1000, .nextg = 1 };
		struct mem m = { 0 };
		struct gt_analysis a;
		char why[2048];
		int rc = 0;

		for (int i = 1; i <= 4; i++)
			w.skew[i] = (int64_t)rnd(&w, 41) - 20;
		/* odd seeds as 1.23 files, even as 1.22 (Go 1.22's reader) */
		GT_REQUIRE(gt_v2enc_init(&w.e, seed % 2 ? 23 : 22, 1000000000, mem_write, &m) == 0,
			   "init");
		for (int i = 0; i < 1200 && !rc; i++) {
			if (i % 150 == 149) {
				rc = gt_v2enc_generation(&w.e, w.ts += 10);
				continue;
			}
			if (!w.e.strings.n) { /* a new generation's tables */
				w.st[0] = gt_v2enc_stack(&w.e, f, 2);
				w.st[1] = gt_v2enc_stack(&w.e, f + 1, 1);
			}
			rc = step(&w, 1 + rnd(&w, 4));
		}
		if (!rc)
			rc = gt_v2enc_finish(&w.e);
		GT_CHECK(rc == 0, "seed %llu: %s", (unsigned long long)seed, w.e.error);
		gt_v2enc_free(&w.e);
		if (!rc) {
			both_readers("random walk", &m, &a, why, sizeof(why));
			GT_CHECK(!why[0], "seed %llu: %s", (unsigned long long)seed, why);
			GT_CHECK(a.generations == 9, "seed %llu: %llu generations",
				 (unsigned long long)seed, (unsigned long long)a.generations);
			gt_analysis_free(&a);
		}
		free(m.b);
	}
}

/* ---- release: a generation's bytes are not read after it ------------ */

/* Four generations of several pages each: goroutine 2, created in the
 * first (its name stack's strings there only), preempted again and again
 * on M 2 with a stack of each generation's own (the first's again in the
 * third). */
static void paged_trace(struct mem *m)
{
	struct gt_v2enc e;
	struct gt_v2enc_frame f[2] = { { 0x401000, "main.paged", "/src/paged.go", 10 },
				       { 0x402000, "runtime.goexit", "/go/proc.go", 1700 } };
	uint64_t ts = 1000, st, why;

	memset(m, 0, sizeof(*m));
	OK(gt_v2enc_init(&e, 23, 1000000000, mem_write, m));
	st = gt_v2enc_stack(&e, f, 2);
	OK(gt_v2enc_proc_start(&e, 1, ts, 0));
	OK(gt_v2enc_go_start(&e, 1, ts += 10, 1));
	OK(gt_v2enc_go_create(&e, 1, ts += 10, 2, st, st));
	OK(gt_v2enc_proc_start(&e, 2, ts += 10, 1));
	for (int gen = 0; gen < 4; gen++) {
		if (gen) {
			OK(gt_v2enc_generation(&e, ts += 10));
			st = gt_v2enc_stack(&e, f + gen % 2, 2 - gen % 2);
		}
		why = gt_v2enc_string(&e, "preempted");
		for (int i = 0; i < 2000; i++) {
			OK(gt_v2enc_go_start(&e, 2, ts += 10, 2));
			OK(gt_v2enc_go_stop(&e, 2, ts += 10, why, st));
		}
	}
	OK(gt_v2enc_finish(&e));
	gt_v2enc_free(&e);
}

/* The release callback of the test: the pages before end become
 * unreadable (a read of them kills the test), and the calls are noted. */
struct fence {
	uint8_t *base;
	size_t len, gone, last, calls;
	int backwards;
};

static void fence_release(void *arg, size_t end)
{
	struct fence *f = arg;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), cut = end / page * page;

	f->backwards |= end < f->last || end > f->len;
	f->last = end;
	f->calls++;
	if (cut > f->gone && !mprotect(f->base + f->gone, cut - f->gone, PROT_NONE))
		f->gone = cut;
}

/* "" if a and b name thread 2 and every stack of their aggregates the same. */
static void same_names(const struct gt_analysis *a, const struct gt_analysis *b, char *why,
		       size_t wl)
{
	struct gt_an_frame fa[4], fb[4];
	size_t la, lb, na, nb;
	int64_t tid;
	const char *x = gt_an_thread_name(a, gt_an_thread_of(a, 2), &la, &tid);
	const char *y = gt_an_thread_name(b, gt_an_thread_of(b, 2), &lb, &tid);

	why[0] = 0;
	if (la != lb || memcmp(x, y, la) || la != 10)
		snprintf(why, wl, "G2 named '%.*s', '%.*s' unfenced", (int)la, x, (int)lb, y);
	for (size_t i = 0; i < a->naggs && i < b->naggs && !why[0]; i++) {
		na = gt_an_stack(a, a->aggs[i].stk, fa, 4);
		nb = gt_an_stack(b, b->aggs[i].stk, fb, 4);
		for (size_t k = 0; k < na && na == nb && !why[0]; k++)
			if (fa[k].pc != fb[k].pc || fa[k].fn_len != fb[k].fn_len ||
			    memcmp(fa[k].fn, fb[k].fn, fa[k].fn_len) || fa[k].file_len != fb[k].file_len ||
			    memcmp(fa[k].file, fb[k].file, fa[k].file_len) || fa[k].line != fb[k].line)
				snprintf(why, wl, "stack %llu frame %zu differs",
					 (unsigned long long)a->aggs[i].stk, k);
		if (na != nb || !na)
			snprintf(why, wl, "stack %llu: %zu frames, %zu unfenced",
				 (unsigned long long)a->aggs[i].stk, na, nb);
	}
	if (!why[0] && (a->naggs != b->naggs || a->naggs < 2))
		snprintf(why, wl, "%zu stacks, %zu unfenced", a->naggs, b->naggs);
}

/* The file in pages that become unreadable as each generation is done:
 * read whole, the same names and stacks (copied, never read back from an
 * earlier generation) as a reading told nothing, one release per
 * generation, in order, the last at the file's end. */
static void test_release(void)
{
	struct mem m;
	struct gt_analysis a, plain;
	struct gt_analyze_opts o = { .since_ns = 0, .until_ns = -1, .strict = 1,
				     .release = fence_release };
	struct fence f = { 0 };
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char why[2048];

	paged_trace(&m);
	if (gt_test_failed_now)
		goto out;
	both_readers("paged", &m, &plain, why, sizeof(why));
	GT_REQUIRE(!why[0], "%s", why);
	f.len = m.n;
	f.base = mmap(NULL, (m.n + page - 1) / page * page, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	GT_REQUIRE(f.base != MAP_FAILED, "mmap");
	memcpy(f.base, m.b, m.n);
	o.release_arg = &f;
	GT_CHECK(gt_analyze(&a, f.base, m.n, &o) == 0, "fenced: %s", a.error);
	GT_CHECK(f.calls == 4 && !f.backwards && f.last == m.n && f.gone >= 3 * page,
		 "%zu releases, backwards %d, the last at %zu of %zu, %zu bytes fenced", f.calls,
		 f.backwards, f.last, m.n, f.gone);
	if (!gt_test_failed_now) {
		same_names(&a, &plain, why, sizeof(why));
		GT_CHECK(!why[0], "%s", why);
		GT_CHECK(a.events == plain.events && a.generations == 4, "%llu events, %llu unfenced",
			 (unsigned long long)a.events, (unsigned long long)plain.events);
	}
	gt_analysis_free(&a);
	gt_analysis_free(&plain);
	munmap(f.base, (m.n + page - 1) / page * page);
out:
	free(m.b);
}

int main(void)
{
	GT_RUN(test_sched_go122);
	GT_RUN(test_sched_go123);
	GT_RUN(test_cut_at_generation);
	GT_RUN(test_big);
	GT_RUN(test_refused);
	GT_RUN(test_random_walks);
	GT_RUN(test_release);
	return gt_test_done();
}
