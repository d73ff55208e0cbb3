/* Unit tests of the Go 1.22+ (v2) decoder and of the analysis over it, on
 * tiny hand-made files whose every figure is known: the decoder's events
 * and frames, the transitions mapped onto report's figures (delays, off-CPU
 * by reason, wakers, names, syscalls), one stack id across generations,
 * the order of sequence numbers over timestamps (a goroutine's and a P's),
 * and each rule that refuses a file, named (the P sequence numbers' too,
 * held to Go 1.23's own reader, which refuses the same files). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/gt_analyze.h"
#include "gt_test.h"
#include "v2/gt_v2.h"
#include "wire/gt_varint.h"

struct buf {
	uint8_t b[4096];
	size_t n;
	size_t batch_size_at, batch_start; /* the open batch */
};

static void put(struct buf *w, uint64_t v)
{
	w->n += gt_uvarint_put(w->b + w->n, v);
}

static void ev(struct buf *w, int type, int nargs, const uint64_t *args)
{
	w->b[w->n++] = (uint8_t)type;
	for (int i = 0; i < nargs; i++)
		put(w, args[i]);
}

#define EV(w, type, ...)                                                              \
	do {                                                                          \
		const uint64_t a_[] = { __VA_ARGS__ };                                \
		ev(w, type, (int)(sizeof(a_) / sizeof(a_[0])), a_);                   \
	} while (0)

/* A batch of generation gen on M m; its size is written at batch_end
 * (a 2-byte varint, so it can be patched). */
static void batch(struct buf *w, uint64_t gen, uint64_t m, uint64_t time)
{
	w->b[w->n++] = GT_V2_EVENT_BATCH;
	put(w, gen);
	put(w, m);
	put(w, time);
	w->batch_size_at = w->n;
	w->n += 2;
	w->batch_start = w->n;
}

static void batch_end(struct buf *w)
{
	size_t size = w->n - w->batch_start;

	w->b[w->batch_size_at] = (uint8_t)(0x80 | (size & 0x7f));
	w->b[w->batch_size_at + 1] = (uint8_t)(size >> 7);
}

static void string(struct buf *w, uint64_t id, const char *s)
{
	EV(w, GT_V2_STRING, id);
	put(w, strlen(s));
	memcpy(w->b + w->n, s, strlen(s));
	w->n += strlen(s);
}

/* One generation's tables: frequency 1e9 (ticks are ns), strings, the
 * stack [0x1000 main.worker main.go:10] under id sid. */
static void tables(struct buf *w, uint64_t gen, uint64_t sid)
{
	batch(w, gen, UINT64_MAX, 0);
	EV(w, GT_V2_FREQUENCY, 1000000000);
	batch_end(w);
	batch(w, gen, UINT64_MAX, 0);
	w->b[w->n++] = GT_V2_STRINGS;
	string(w, 1, "chan receive");
	string(w, 2, "main.worker");
	string(w, 3, "main.go");
	string(w, 4, "runtime.Gosched");
	batch_end(w);
	batch(w, gen, UINT64_MAX, 0);
	w->b[w->n++] = GT_V2_STACKS;
	EV(w, GT_V2_STACK, sid, 1, 0x1000, 2, 3, 10);
	batch_end(w);
}

/* A Go 1.23 file begun: generation 1's tables, then M 1's batch at time
 * 100 with p0 running and g1 running on it. */
static void begin_file(struct buf *w)
{
	memset(w, 0, sizeof(*w));
	memcpy(w->b, "go 1.23 trace\0\0\0", 16);
	w->n = 16;
	tables(w, 1, 1);
	batch(w, 1, 1, 100);
	EV(w, GT_V2_PROC_STATUS, 0, 0, GT_V2_P_RUNNING);
	EV(w, GT_V2_GO_STATUS, 0, 1, 1, GT_V2_G_RUNNING);
}

/* Generation 1 (M 1, times in ns from 100):
 *   100 g1 running on p0 (statuses)     110 g1 creates g2
 *   130 g1 blocks "chan receive"        140 g2 starts     (delay 30)
 *   190 g2 unblocks g1                  200 g2 Gosched
 *   205 g1 starts (delay 15, 75 off-CPU) 210 g1 ends
 *   220 g2 starts (delay 20)
 * Generation 2: g2 restated running, a syscall 300 -> 340 that did not
 * block, then g2 ends at 400. */
static size_t known(struct buf *w)
{
	begin_file(w);
	EV(w, GT_V2_GO_CREATE, 10, 2, 1, 1);
	EV(w, GT_V2_GO_BLOCK, 20, 1, 1);
	EV(w, GT_V2_GO_START, 10, 2, 1);
	EV(w, GT_V2_GO_UNBLOCK, 50, 1, 1, 1);
	EV(w, GT_V2_GO_STOP, 10, 4, 1);
	EV(w, GT_V2_GO_START, 5, 1, 2);
	EV(w, GT_V2_GO_DESTROY, 5);
	EV(w, GT_V2_GO_START, 10, 2, 2);
	batch_end(w);
	tables(w, 2, 7); /* the same stack under another id */
	batch(w, 2, 1, 290);
	EV(w, GT_V2_PROC_STATUS, 0, 0, GT_V2_P_RUNNING);
	EV(w, GT_V2_GO_STATUS, 0, 2, 1, GT_V2_G_RUNNING);
	EV(w, GT_V2_GO_SYSCALL_BEGIN, 10, 1, 7);
	EV(w, GT_V2_GO_SYSCALL_END, 40);
	EV(w, GT_V2_GO_DESTROY, 60);
	batch_end(w);
	return w->n;
}

static void test_decoder_events(void)
{
	static struct buf w;
	size_t n = known(&w);
	struct gt_v2_file f;
	struct gt_v2_batch b;
	struct gt_v2_cursor c;
	struct gt_v2_ev e;
	uint64_t fr[4][4];
	char err[128];
	int batches = 0, events = 0, stacks = 0, rc;

	GT_REQUIRE(gt_v2_open(&f, w.b, n) == 0 && f.version == 23, "%s", f.error);
	while ((rc = gt_v2_next_batch(&f, &b)) == 1) {
		batches++;
		gt_v2_cursor_init(&c, &f, &b);
		while ((rc = gt_v2_next_event(&c, &e, err, sizeof(err))) == 1) {
			events++;
			if (e.type == GT_V2_STACK) {
				stacks++;
				GT_CHECK(gt_v2_frames(&e, fr, 4) == 1 && fr[0][0] == 0x1000 &&
					 fr[0][3] == 10, "frame");
			}
			if (e.type == GT_V2_GO_UNBLOCK)
				GT_CHECK(e.ts == 190 && e.args[1] == 1, "GoUnblock at %llu",
					 (unsigned long long)e.ts);
		}
		GT_CHECK(rc == 0, "%s", err);
	}
	GT_CHECK(rc == 0, "%s", f.error);
	GT_CHECK(batches == 8 && stacks == 2 && events == 31, "%d batches, %d stacks, %d events",
		 batches, stacks, events);
}

static void test_analysis_figures(void)
{
	static struct buf w;
	size_t n = known(&w), len;
	struct gt_analysis a;
	const struct gt_an_thread *g1, *g2;
	int64_t tid;

	GT_REQUIRE(gt_analyze(&a, w.b, n, NULL) == 0, "%s", a.error);
	GT_CHECK(a.version == 1023 && a.generations == 2 && a.anomalies == 0, "v%d gens %llu",
		 a.version, (unsigned long long)a.generations);
	g1 = gt_an_thread_of(&a, 1);
	g2 = gt_an_thread_of(&a, 2);
	GT_REQUIRE(g1 && g2, "threads");
	/* g1: 0 at trace start (running), then 190 -> 205 */
	GT_CHECK(g1->delay.count == 2 && g1->delay.sum == 15, "g1 delays %llu sum %llu",
		 (unsigned long long)g1->delay.count, (unsigned long long)g1->delay.sum);
	GT_CHECK(g1->offcpu_ns[GT_BLK_SYNC] == 75 && g1->offcpu_n[GT_BLK_SYNC] == 1,
		 "g1 off-CPU sync %llu", (unsigned long long)g1->offcpu_ns[GT_BLK_SYNC]);
	GT_CHECK(g1->nwak == 1 && g1->wak[0].g == 2 && g1->wak[0].delay_total_ns == 15,
		 "g1 waker");
	/* g2: 110 -> 140 and 200 -> 220; its Gosched is a "sched" stop */
	GT_CHECK(g2->delay.count == 2 && g2->delay.sum == 50, "g2 delays %llu sum %llu",
		 (unsigned long long)g2->delay.count, (unsigned long long)g2->delay.sum);
	GT_CHECK(g2->offcpu_ns[GT_BLK_SCHED] == 20, "g2 sched %llu",
		 (unsigned long long)g2->offcpu_ns[GT_BLK_SCHED]);
	GT_CHECK(g2->nsys == 1 && g2->sys[0].count == 1 && g2->sys[0].total_ns == 40,
		 "g2 syscall: %zu entries", g2->nsys);
	const char *name = gt_an_thread_name(&a, g2, &len, &tid);
	GT_CHECK(len == 11 && !memcmp(name, "main.worker", 11), "g2 name %.*s", (int)len, name);
	/* one stack for both generations' ids */
	GT_CHECK(a.stacks == 2, "stacks read %llu", (unsigned long long)a.stacks);
	for (size_t i = 0; i < a.naggs; i++)
		GT_CHECK(a.aggs[i].stk == 1, "aggregate on stack %llu",
			 (unsigned long long)a.aggs[i].stk);
	gt_analysis_free(&a);
}

/* What inspect --json lists of a v2 file under v1's keys: the legacy
 * events its transitions read as (its "counts") and which goroutines ended
 * (docs/format.md "inspect --json"). */
static void test_analysis_v1_counts(void)
{
	static struct buf w;
	size_t n = known(&w);
	struct gt_analysis a;
	const struct gt_an_thread *g1, *g2;

	GT_REQUIRE(gt_analyze(&a, w.b, n, NULL) == 0, "%s", a.error);
	GT_CHECK(a.v1_counts[GT_EV_GO_BLOCK_RECV] == 1 && a.v1_counts[GT_EV_GO_SCHED] == 1 &&
			 a.v1_counts[GT_EV_GO_SYSCALL] == 1 && a.v1_counts[GT_EV_GO_END] == 2 &&
			 a.v1_counts[GT_EV_GO_CREATE] >= 1 && a.v1_counts[GT_EV_GO_UNBLOCK] == 1,
		 "recv %llu sched %llu syscall %llu end %llu create %llu unblock %llu",
		 (unsigned long long)a.v1_counts[GT_EV_GO_BLOCK_RECV],
		 (unsigned long long)a.v1_counts[GT_EV_GO_SCHED],
		 (unsigned long long)a.v1_counts[GT_EV_GO_SYSCALL],
		 (unsigned long long)a.v1_counts[GT_EV_GO_END],
		 (unsigned long long)a.v1_counts[GT_EV_GO_CREATE],
		 (unsigned long long)a.v1_counts[GT_EV_GO_UNBLOCK]);
	GT_CHECK(a.v1_counts[GT_EV_GO_SLEEP] == 0 && a.v1_counts[GT_EV_GO_BLOCK] == 0,
		 "a chan receive counted as another block");
	g1 = gt_an_thread_of(&a, 1);
	g2 = gt_an_thread_of(&a, 2);
	GT_REQUIRE(g1 && g2, "threads");
	GT_CHECK(g1->ended && g2->ended, "ended: g1 %d g2 %d", g1->ended, g2->ended);
	gt_analysis_free(&a);
}

/* The analysis of w[0..n) (strict or not) fails naming rule. */
static void refused(const char *what, const uint8_t *b, size_t n, int strict, const char *rule)
{
	struct gt_analyze_opts o = { 0, -1, NULL, 0, strict };
	struct gt_analysis a;
	int rc = gt_analyze(&a, b, n, &o);

	GT_CHECK(rc == -EINVAL && strstr(a.error, rule), "%s: rc %d, error '%s', want %s", what,
		 rc, a.error, rule);
	gt_analysis_free(&a);
}

static void test_rules(void)
{
	static struct buf w, x;
	size_t n = known(&w);

	refused("cut", w.b, n - 3, 0, "(rule: batch size)");
	x = w;
	x.b[16] = 77; /* the first batch byte */
	refused("not a batch", x.b, n, 0, "(rule: batch header)");
	x = w;
	x.b[x.n - 1] = 200; /* the last event's type (GoDestroy's delta is 60: 1 byte) */
	x.b[x.n - 2] = 200;
	refused("unknown type", x.b, n, 0, "(rule: known event types)");
	/* a GoStart of a goroutine never stated can never go: strictly the
	 * rule "ordering"; leniently it goes last, counted twice (no order,
	 * and a start of a goroutine that is not runnable) */
	known(&x);
	x.n = 16;
	tables(&x, 1, 1);
	batch(&x, 1, 1, 100);
	EV(&x, GT_V2_PROC_STATUS, 0, 0, GT_V2_P_RUNNING);
	EV(&x, GT_V2_GO_START, 10, 9, 1);
	batch_end(&x);
	refused("ordering", x.b, x.n, 1, "(rule: ordering)");
	{
		struct gt_analysis a;

		GT_CHECK(gt_analyze(&a, x.b, x.n, NULL) == 0 && a.anomalies == 2,
			 "lenient: an anomaly counted (%llu)", (unsigned long long)a.anomalies);
		gt_analysis_free(&a);
	}
	/* generations going back */
	known(&x);
	x.n = 16;
	tables(&x, 2, 1);
	batch(&x, 2, 1, 100);
	EV(&x, GT_V2_PROC_STATUS, 0, 0, GT_V2_P_RUNNING);
	batch_end(&x);
	tables(&x, 1, 1);
	refused("generations", x.b, x.n, 0, "(rule: generations)");
	/* a string given twice in one generation */
	known(&x);
	x.n = 16;
	tables(&x, 1, 1);
	batch(&x, 1, UINT64_MAX, 0);
	x.b[x.n++] = GT_V2_STRINGS;
	string(&x, 1, "again");
	batch_end(&x);
	refused("tables", x.b, x.n, 0, "(rule: tables)");
}

/* M 2 writes g2's GoStart at 150, before M 1's GoUnblock of g2 at 160
 * (clocks of two CPUs): the sequence number puts the start after it. */
static void test_seq_over_time(void)
{
	static struct buf w;
	struct gt_analysis a;
	const struct gt_an_thread *g2;

	memset(&w, 0, sizeof(w));
	memcpy(w.b, "go 1.23 trace\0\0\0", 16);
	w.n = 16;
	tables(&w, 1, 1);
	batch(&w, 1, 1, 100);
	EV(&w, GT_V2_PROC_STATUS, 0, 0, GT_V2_P_RUNNING);
	EV(&w, GT_V2_GO_STATUS, 0, 1, 1, GT_V2_G_RUNNING);
	EV(&w, GT_V2_GO_STATUS, 0, 2, UINT64_MAX, GT_V2_G_WAITING);
	EV(&w, GT_V2_GO_UNBLOCK, 60, 2, 1, 1);
	batch_end(&w);
	batch(&w, 1, 2, 100);
	EV(&w, GT_V2_PROC_STATUS, 0, 1, GT_V2_P_RUNNING);
	EV(&w, GT_V2_GO_START, 50, 2, 2);
	batch_end(&w);
	GT_REQUIRE(gt_analyze(&a, w.b, w.n, NULL) == 0, "%s", a.error);
	g2 = gt_an_thread_of(&a, 2);
	GT_CHECK(a.anomalies == 0, "%llu anomalies", (unsigned long long)a.anomalies);
	GT_CHECK(g2 && g2->starts == 1 && g2->nwak == 1 && g2->wak[0].g == 1,
		 "g2 started once, woken by g1");
	gt_analysis_free(&a);
}

/* Go's readers on b (tests/lib/gocheck.sh): 0 accepted. */
static int go_accepts(const uint8_t *b, size_t n, char *why, size_t wl)
{
	char path[] = "/tmp/gt-v2seq-XXXXXX";
	int fd = mkstemp(path), rc = -1;

	if (fd >= 0 && write(fd, b, n) == (ssize_t)n)
		rc = gt_test_gocheck(path, why, wl);
	if (fd >= 0)
		close(fd);
	unlink(path);
	return rc;
}

/* M 1 runs g1 on p0 and enters a syscall at 110 (p_seq begin); M 2 steals
 * p0 (p_seq steal) at 105 by its clock, starts it and runs g1 there once
 * M 1 left the syscall blocked (150).  The steal must wait for the syscall
 * it takes the P from, the end for the steal.  Generation 2 (restate: p0's
 * ProcStatus given or not) has M 2 start p0 again at p_seq 1. */
static size_t steal_trace(struct buf *w, uint64_t begin, uint64_t steal, int restate)
{
	begin_file(w);
	EV(w, GT_V2_GO_SYSCALL_BEGIN, 10, begin, 1);
	EV(w, GT_V2_GO_SYSCALL_END_BLOCKED, 40);
	batch_end(w);
	batch(w, 1, 2, 100);
	EV(w, GT_V2_PROC_STEAL, 5, 0, steal, 1);
	EV(w, GT_V2_PROC_START, 20, 0, steal + 1);
	EV(w, GT_V2_GO_START, 40, 1, 1);
	EV(w, GT_V2_GO_STOP, 10, 4, 1);
	EV(w, GT_V2_PROC_STOP, 10);
	batch_end(w);
	tables(w, 2, 1);
	batch(w, 2, 2, 300);
	if (restate)
		EV(w, GT_V2_PROC_STATUS, 0, 0, GT_V2_P_IDLE);
	EV(w, GT_V2_GO_STATUS, 0, 1, UINT64_MAX, GT_V2_G_RUNNABLE);
	EV(w, GT_V2_PROC_START, 10, 0, 1);
	EV(w, GT_V2_GO_START, 10, 1, 1);
	batch_end(w);
	return w->n;
}

static void test_p_seq(void)
{
	static struct buf w;
	struct gt_analysis a;
	char why[1024];
	size_t n;

	/* good: the steal goes after the syscall begin, whatever the clocks */
	n = steal_trace(&w, 1, 2, 1);
	GT_REQUIRE(gt_analyze(&a, w.b, n, &(struct gt_analyze_opts){ 0, -1, NULL, 0, 1 }) == 0,
		   "valid: %s", a.error);
	gt_analysis_free(&a);
	GT_CHECK(go_accepts(w.b, n, why, sizeof(why)) == 0, "Go refused the good one: %s", why);
	/* a steal at a number its P never reaches */
	n = steal_trace(&w, 1, 5, 1);
	refused("steal", w.b, n, 1,
		"ProcSteal of P 0 with sequence number 5: the P is in a syscall at 1 "
		"(rule: P sequence)");
	GT_CHECK(go_accepts(w.b, n, why, sizeof(why)) != 0, "Go accepted a steal at 5");
	/* a syscall begin that skips a number: Go fails at once */
	n = steal_trace(&w, 2, 3, 1);
	refused("syscall begin", w.b, n, 1,
		"GoSyscallBegin on P 0 with sequence number 2: the P is at 0 (rule: P sequence)");
	GT_CHECK(go_accepts(w.b, n, why, sizeof(why)) != 0, "Go accepted a begin at 2");
	/* leniently: counted, and the file read to its end */
	GT_CHECK(gt_analyze(&a, w.b, n, NULL) == 0 && a.anomalies >= 1,
		 "lenient: %llu anomalies (%s)", (unsigned long long)a.anomalies, a.error);
	gt_analysis_free(&a);
	/* a P started in a generation that never stated it */
	n = steal_trace(&w, 1, 2, 0);
	refused("no status", w.b, n, 1,
		"ProcStart of P 0 with sequence number 1: the P has no status in this generation "
		"(rule: P sequence)");
	GT_CHECK(go_accepts(w.b, n, why, sizeof(why)) != 0, "Go accepted an unstated P");
}

/* g1 on p0 blocks in generation 1 (reason: string rs; stack stk, whose
 * frame names function fn); generation gen2 follows, with or without its
 * Frequency batch; marker2: its strings batch has its marker twice. */
static size_t ids_trace(struct buf *w, uint64_t stk, uint64_t rs, uint64_t fn, uint64_t gen2,
			int freq2, int marker2)
{
	memset(w, 0, sizeof(*w));
	memcpy(w->b, "go 1.23 trace\0\0\0", 16);
	w->n = 16;
	for (uint64_t gen = 1; gen <= 2; gen++) {
		uint64_t g = gen == 1 ? 1 : gen2;

		if (gen == 1 || freq2) {
			batch(w, g, UINT64_MAX, 0);
			EV(w, GT_V2_FREQUENCY, 1000000000);
			batch_end(w);
		}
		batch(w, g, UINT64_MAX, 0);
		w->b[w->n++] = GT_V2_STRINGS;
		string(w, 1, "chan receive");
		if (gen == 2 && marker2)
			w->b[w->n++] = GT_V2_STRINGS;
		string(w, 2, "main.worker");
		string(w, 3, "main.go");
		batch_end(w);
		batch(w, g, UINT64_MAX, 0);
		w->b[w->n++] = GT_V2_STACKS;
		EV(w, GT_V2_STACK, 1, 1, 0x1000, gen == 1 ? fn : 2, 3, 10);
		batch_end(w);
		batch(w, g, 1, 100 * gen);
		EV(w, GT_V2_PROC_STATUS, 0, 0, GT_V2_P_RUNNING);
		if (gen == 1) {
			EV(w, GT_V2_GO_STATUS, 0, 1, 1, GT_V2_G_RUNNING);
			EV(w, GT_V2_GO_BLOCK, 10, rs, stk);
		} else {
			EV(w, GT_V2_GO_STATUS, 0, 1, UINT64_MAX, GT_V2_G_WAITING);
		}
		batch_end(w);
	}
	return w->n;
}

/* Every stack, string and frame id in its generation's tables, one
 * Frequency batch per generation, generations numbered one after the
 * other, a table batch's marker once: as Go 1.23's reader, which refuses
 * each of these files. */
static void test_table_ids(void)
{
	static struct buf w;
	static const struct {
		uint64_t stk, rs, fn, gen2;
		int freq2, marker2;
		const char *err;
	} bad[] = {
		{ 9, 1, 2, 2, 1, 0, "stack id 9 is in no Stack of its generation (rule: tables)" },
		{ 1, 9, 2, 2, 1, 0, "string id 9 is in no String of its generation (rule: tables)" },
		{ 1, 1, 99, 2, 1, 0, "function string id 99 is in no String of its generation" },
		{ 1, 1, 2, 3, 1, 0, "(rule: generations)" },
		{ 1, 1, 2, 2, 0, 0, "0 Frequency batches, not one (rule: frequency)" },
		{ 1, 1, 2, 2, 1, 1, "Strings at offset" },
	};
	struct gt_analysis a;
	char why[1024];
	size_t n = ids_trace(&w, 1, 1, 2, 2, 1, 0);

	GT_REQUIRE(gt_analyze(&a, w.b, n, &(struct gt_analyze_opts){ 0, -1, NULL, 0, 1 }) == 0,
		   "valid: %s", a.error);
	gt_analysis_free(&a);
	GT_CHECK(go_accepts(w.b, n, why, sizeof(why)) == 0, "Go refused the good one: %s", why);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = ids_trace(&w, bad[i].stk, bad[i].rs, bad[i].fn, bad[i].gen2, bad[i].freq2,
			      bad[i].marker2);
		refused(bad[i].err, w.b, n, 0, bad[i].err);
		GT_CHECK(go_accepts(w.b, n, why, sizeof(why)) != 0, "Go accepted: %s", bad[i].err);
	}
}

int main(void)
{
	GT_RUN(test_table_ids);
	GT_RUN(test_p_seq);
	GT_RUN(test_seq_over_time);
	GT_RUN(test_decoder_events);
	GT_RUN(test_analysis_figures);
	GT_RUN(test_analysis_v1_counts);
	GT_RUN(test_rules);
	return gt_test_done();
}
