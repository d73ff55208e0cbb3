/* The report as text tables, each sorted by what hurts most. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "util/gt_escape.h"

#define NFR 6 /* frames shown per top stack */

/* ns as "12.3us", "4.56ms", "1.234s", in a ring of 8 static buffers: at
 * most 8 dur() calls in one printf. */
static const char *dur(uint64_t ns)
{
	static char ring[8][24];
	static int k;
	char *b = ring[k++ & 7];

	if (ns < 1000)
		snprintf(b, 24, "%lluns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(b, 24, "%.1fus", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(b, 24, "%.2fms", ns / 1e6);
	else
		snprintf(b, 24, "%.3fs", ns / 1e9);
	return b;
}

typedef uint64_t (*keyfn)(const struct gt_an_thread *t);

static int by_key(const void *x, const void *y, void *arg)
{
	const struct gt_an_thread *a = *(const struct gt_an_thread *const *)x;
	const struct gt_an_thread *b = *(const struct gt_an_thread *const *)y;
	keyfn k = *(const keyfn *)arg;
	uint64_t ka = k(a), kb = k(b);

	if (ka != kb)
		return ka > kb ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static uint64_t k_delay(const struct gt_an_thread *t) { return t->delay.max; }
static uint64_t k_wdelay(const struct gt_an_thread *t) { return t->wdelay.max; }
static uint64_t k_pdelay(const struct gt_an_thread *t) { return t->pdelay.max; }
static uint64_t k_oncpu(const struct gt_an_thread *t) { return t->oncpu_ns; }

static uint64_t k_sys(const struct gt_an_thread *t)
{
	uint64_t s = 0;

	for (size_t i = 0; i < t->nsys; i++)
		s += t->sys[i].total_ns;
	return s;
}

static uint64_t k_wake(const struct gt_an_thread *t)
{
	uint64_t s = 0;

	for (size_t i = 0; i < t->nwak; i++)
		s += t->wak[i].delay_total_ns;
	return s;
}

/* The selected threads with a non-zero key, sorted; *n of them. */
static const struct gt_an_thread **sorted(const struct gt_analysis *a, const struct report_opts *o,
					  keyfn k, size_t *n)
{
	const struct gt_an_thread **v = calloc(a->nthreads + 1, sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < a->nthreads; i++)
		if (report_selected(a, &a->threads[i], o) && k(&a->threads[i]))
			v[(*n)++] = &a->threads[i];
	qsort_r(v, *n, sizeof(*v), by_key, &k);
	if (o->top && *n > (size_t)o->top)
		*n = (size_t)o->top;
	return v;
}

/* A table of threads: the rows sorted() gives, and room for a row's
 * name (row_name).  free(t->v) when done. */
struct table {
	const struct gt_an_thread **v;
	size_t n;
	char name[160];
	int64_t tid;
};

/* Sorts the rows of a table by k and prints its title; -ENOMEM. */
static int table_open(struct table *t, const struct gt_analysis *a, const struct report_opts *o,
		      keyfn k, FILE *f, const char *title)
{
	t->v = sorted(a, o, k, &t->n);
	if (!t->v)
		return -ENOMEM;
	fputs(title, f);
	return 0;
}

static const char *row_name(struct table *t, const struct gt_analysis *a, size_t i)
{
	return report_shown(a, t->v[i], t->name, sizeof(t->name), &t->tid);
}

static void delay_cols(FILE *f, const struct gt_hist *h, int64_t worst)
{
	fprintf(f, " %8llu %9s %9s %9s %9s %9s %10.6fs\n", (unsigned long long)h->count,
		dur(h->count ? h->sum / h->count : 0), dur(gt_hist_pct(h, 50)),
		dur(gt_hist_pct(h, 90)), dur(gt_hist_pct(h, 99)), dur(h->max), worst / 1e9);
}

/* One delay table: which histogram of each thread, under which title. */
struct delay_kind {
	keyfn key;
	const char *title;
	size_t hist_off, worst_off;
};

static const struct delay_kind delay_kinds[] = {
	{ k_wdelay,
	  "\nWakeup delay (woken -> running: perf sched timehist's \"sch delay\", sched_waking -> "
	  "sched_switch in), worst first:\n",
	  offsetof(struct gt_an_thread, wdelay), offsetof(struct gt_an_thread, wworst_at_ns) },
	{ k_pdelay,
	  "\nPreemption delay (preempted or yielded, still runnable, or woken by a wakeup that "
	  "raced the switch-out -> running: in timehist's \"wait time\", not its sch delay), "
	  "worst first:\n",
	  offsetof(struct gt_an_thread, pdelay), offsetof(struct gt_an_thread, pworst_at_ns) },
	{ k_delay,
	  "\nRun-queue latency (runqlat's: wakeup delay + preemption delay), worst first:\n",
	  offsetof(struct gt_an_thread, delay), offsetof(struct gt_an_thread, worst_at_ns) },
};

static int print_delay_kind(const struct gt_analysis *a, const struct report_opts *o, FILE *f,
			    const struct delay_kind *k)
{
	struct table t;

	if (table_open(&t, a, o, k->key, f, k->title))
		return -ENOMEM;
	fprintf(f, "  %-8s %-24s %8s %9s %9s %9s %9s %9s %11s\n", "G", "THREAD", "COUNT", "AVG",
		"P50", "P90", "P99", "MAX", "WORST AT");
	for (size_t i = 0; i < t.n; i++) {
		const char *base = (const char *)t.v[i];

		fprintf(f, "  %-8llu %-24.24s", (unsigned long long)t.v[i]->id, row_name(&t, a, i));
		delay_cols(f, (const struct gt_hist *)(base + k->hist_off),
			   *(const int64_t *)(base + k->worst_off));
	}
	if (!t.n)
		fprintf(f, "  (none)\n");
	free(t.v);
	return 0;
}

/* runqlat's histogram of every selected thread's run-queue latency. */
static void print_runqlat(const struct gt_analysis *a, const struct report_opts *o, FILE *f)
{
	uint64_t sum[GT_AN_LOG2] = { 0 }, max = 0;
	int last = -1;

	for (size_t i = 0; i < a->nthreads; i++)
		if (report_selected(a, &a->threads[i], o))
			for (int k = 0; k < GT_AN_LOG2; k++)
				sum[k] += a->threads[i].rq_log2[k];
	for (int k = 0; k < GT_AN_LOG2; k++) {
		if (sum[k])
			last = k;
		if (sum[k] > max)
			max = sum[k];
	}
	fprintf(f, "\nRun-queue latency histogram, threads shown (as runqlat prints it):\n");
	fprintf(f, "  %24s : %-10s distribution\n", "usecs", "count");
	for (int k = 0; k <= last; k++) {
		unsigned long long lo = k ? 1ull << k : 0, hi = (2ull << k) - 1;
		char bar[41];
		int w = max ? (int)(sum[k] * 40 / max) : 0;

		memset(bar, '*', (size_t)w);
		memset(bar + w, ' ', (size_t)(40 - w));
		bar[40] = 0;
		fprintf(f, "  %10llu -> %-10llu : %-10llu |%s|\n", lo, hi,
			(unsigned long long)sum[k], bar);
	}
}

static int print_delay(const struct gt_analysis *a, const struct report_opts *o, FILE *f)
{
	for (size_t i = 0; i < sizeof(delay_kinds) / sizeof(*delay_kinds); i++)
		if (print_delay_kind(a, o, f, &delay_kinds[i]))
			return -ENOMEM;
	print_runqlat(a, o, f);
	return 0;
}

static int by_gmax(const void *x, const void *y)
{
	const struct report_group *a = x, *b = y;

	return a->delay.max > b->delay.max ? -1 : a->delay.max < b->delay.max;
}

static int print_groups(const struct gt_analysis *a, const struct report_opts *o, FILE *f)
{
	struct report_group *g;
	char name[GT_ESCAPE_SIZE(sizeof(g->name))];
	size_t n;

	if (report_groups(a, o, &g, &n))
		return -ENOMEM;
	qsort(g, n, sizeof(*g), by_gmax);
	fprintf(f, "\nBy thread name (all threads of one name together), worst run-queue "
		   "latency first:\n");
	fprintf(f, "  %-24s %7s %8s %9s %9s %9s %9s %9s %11s %10s %10s\n", "THREAD NAME", "THREADS",
		"COUNT", "AVG", "P50", "P90", "P99", "MAX", "WORST AT", "ON-CPU", "OFF-CPU");
	for (size_t i = 0; i < n && (!o->top || i < (size_t)o->top); i++) {
		uint64_t off = 0;
		const struct report_group *r = &g[i];

		for (int k = 0; k < GT_BLK_COUNT; k++)
			off += r->offcpu_ns[k];
		fprintf(f, "  %-24.24s %7llu", gt_esc(name, sizeof(name), r->name),
			(unsigned long long)r->threads);
		fprintf(f, " %8llu %9s %9s %9s %9s %9s %10.6fs %10s %10s\n",
			(unsigned long long)r->delay.count,
			dur(r->delay.count ? r->delay.sum / r->delay.count : 0),
			dur(gt_hist_pct(&r->delay, 50)), dur(gt_hist_pct(&r->delay, 90)),
			dur(gt_hist_pct(&r->delay, 99)), dur(r->delay.max), r->worst_at_ns / 1e9,
			dur(r->oncpu_ns), dur(off));
	}
	report_groups_free(g, n);
	return 0;
}

static int print_offcpu(const struct gt_analysis *a, const struct report_opts *o, FILE *f)
{
	struct table t;

	if (table_open(&t, a, o, report_offcpu_total, f,
		       "\nOff-CPU time by reason (stop -> next start, as offcputime counts: the "
		       "wait and the scheduling delay after it), most first:\n"))
		return -ENOMEM;
	fprintf(f, "  %-8s %-24s %9s", "G", "THREAD", "TOTAL");
	for (int r = 0; r < GT_BLK_COUNT; r++)
		fprintf(f, " %9s", gt_block_reason_names[r]);
	fputc('\n', f);
	for (size_t i = 0; i < t.n; i++) {
		fprintf(f, "  %-8llu %-24.24s %9s", (unsigned long long)t.v[i]->id,
			row_name(&t, a, i), dur(report_offcpu_total(t.v[i])));
		for (int r = 0; r < GT_BLK_COUNT; r++)
			fprintf(f, " %9s", t.v[i]->offcpu_ns[r] ? dur(t.v[i]->offcpu_ns[r]) : "-");
		fputc('\n', f);
	}
	free(t.v);
	return 0;
}

static void print_stack(const struct gt_analysis *a, uint64_t stk, FILE *f)
{
	struct gt_an_frame fr[NFR];
	size_t n = gt_an_stack(a, stk, fr, NFR);

	if (!n)
		fprintf(f, "        (no stack)\n");
	for (size_t i = 0; i < n; i++) {
		/* names and files are the traced binaries' (or a perf map's) text */
		if (fr[i].fn_len) {
			fputs("        ", f);
			gt_escape_fput(f, fr[i].fn, fr[i].fn_len);
		} else {
			fprintf(f, "        0x%llx", (unsigned long long)fr[i].pc);
		}
		if (fr[i].file_len && fr[i].file[0] != '[') {
			fputs("  ", f);
			gt_escape_fput(f, fr[i].file, fr[i].file_len);
			fprintf(f, ":%llu", (unsigned long long)fr[i].line);
		}
		fputc('\n', f);
	}
}

/* Per reason, the stacks that blocked the selected threads longest, one
 * row per stack however many threads stopped there. */
static int print_top_stacks(const struct gt_analysis *a, const struct report_opts *o, FILE *f)
{
	int libc = 0;

	fprintf(f, "\nTop off-CPU stacks per reason (the stack of the stopping event, summed "
		   "over the threads that stopped there):\n");
	for (int r = 0; r < GT_BLK_COUNT; r++) {
		struct report_sgroup *g;
		size_t n;

		if (report_stack_groups(a, o, r, &g, &n))
			return -ENOMEM;
		if (n)
			fprintf(f, "  %s:\n", gt_block_reason_names[r]);
		for (size_t i = 0; i < n && i < report_stacks_per_reason(o); i++) {
			char name[160];
			int64_t tid;

			if (g[i].threads > 1)
				fprintf(f, "    %s in %llu stops of %llu threads (most: G%llu %s)\n",
					dur(g[i].weight), (unsigned long long)g[i].count,
					(unsigned long long)g[i].threads, (unsigned long long)g[i].g,
					report_shown(a, gt_an_thread_of(a, g[i].g), name, sizeof(name), &tid));
			else
				fprintf(f, "    %s in %llu stops of G%llu %s\n", dur(g[i].weight),
					(unsigned long long)g[i].count, (unsigned long long)g[i].g,
					report_shown(a, gt_an_thread_of(a, g[i].g), name, sizeof(name), &tid));
			print_stack(a, g[i].stk, f);
			libc |= report_ends_in_libc(a, g[i].stk);
		}
		free(g);
	}
	if (libc)
		fprintf(f, "  note: a stack above ends in libc: its callers were lost where code "
			   "without frame pointers was walked; record --call-graph=dwarf brings "
			   "them back\n");
	return 0;
}

/* The longest single off-CPU waits of the selected threads, each with the
 * stack it stopped in. */
static int print_waits(const struct gt_analysis *a, const struct report_opts *o, FILE *f)
{
	/* 5 unless --top says: each row is a stack */
	size_t shown = 0, most = !o->top_given ? 5 : o->top ? (size_t)o->top : GT_AN_WAITS;

	fprintf(f, "\nLongest single waits (stop -> running again = asleep until the wakeup + "
		   "the run-queue after it), longest first:\n");
	fprintf(f, "  %10s %10s %10s %-8s %-8s %-24s %11s\n", "WAIT", "ASLEEP", "RUN-QUEUE",
		"REASON", "G", "THREAD", "STOPPED AT");
	for (size_t i = 0; i < a->nwaits && shown < most; i++) {
		const struct gt_an_wait *w = &a->waits[i];
		const struct gt_an_thread *t = gt_an_thread_of(a, w->g);
		char name[160];
		int64_t tid;

		int queued = w->reason == GT_BLK_PREEMPT || w->reason == GT_BLK_SCHED;

		if (!t || !report_selected(a, t, o))
			continue;
		/* preempted or yielded: runnable, in the run-queue, throughout */
		fprintf(f, "  %10s %10s %10s %-8s %-8llu %-24.24s %10.6fs\n",
			dur((uint64_t)(w->start_ns - w->stop_ns)),
			w->woken_ns >= 0 ? dur((uint64_t)(w->woken_ns - w->stop_ns)) : queued ? "0" : "-",
			w->woken_ns >= 0 ? dur((uint64_t)(w->start_ns - w->woken_ns)) :
			queued ? dur((uint64_t)(w->start_ns - w->stop_ns)) : "-",
			gt_block_reason_names[w->reason], (unsigned long long)w->g,
			report_shown(a, t, name, sizeof(name), &tid), w->stop_ns / 1e9);
		print_stack(a, w->stk, f);
		shown++;
	}
	if (!shown)
		fprintf(f, "  (none)\n");
	return 0;
}

static int print_oncpu(const struct gt_analysis *a, const struct report_opts *o, FILE *f)
{
	struct table t;

	if (table_open(&t, a, o, k_oncpu, f,
		       "\nOn-CPU time and migrations (a start on another P = CPU than the last):\n"))
		return -ENOMEM;
	fprintf(f, "  %-8s %-24s %10s %8s %10s\n", "G", "THREAD", "ON-CPU", "STARTS", "MIGRATIONS");
	for (size_t i = 0; i < t.n; i++)
		fprintf(f, "  %-8llu %-24.24s %10s %8llu %10llu\n", (unsigned long long)t.v[i]->id,
			row_name(&t, a, i), dur(t.v[i]->oncpu_ns),
			(unsigned long long)t.v[i]->starts, (unsigned long long)t.v[i]->migrations);
	free(t.v);
	return 0;
}

/* Rows of one thread's table in the order cmp gives (sorting indices:
 * the rows stay where the analysis keeps them). */
struct order_ctx {
	const char *base;
	size_t size;
	int (*cmp)(const void *, const void *);
};

static int by_index(const void *x, const void *y, void *arg)
{
	const struct order_ctx *c = arg;

	return c->cmp(c->base + *(const size_t *)x * c->size, c->base + *(const size_t *)y * c->size);
}

static size_t *order(size_t n, const void *base, size_t size, int (*cmp)(const void *, const void *))
{
	struct order_ctx c = { base, size, cmp };
	size_t *ix = malloc((n + 1) * sizeof(*ix));

	if (!ix)
		return NULL;
	for (size_t i = 0; i < n; i++)
		ix[i] = i;
	qsort_r(ix, n, sizeof(*ix), by_index, &c);
	return ix;
}

static int by_sys_total(const void *x, const void *y)
{
	const struct gt_an_syscall *a = x, *b = y;

	return a->total_ns > b->total_ns ? -1 : a->total_ns < b->total_ns;
}

static int by_wake_count(const void *x, const void *y)
{
	const struct gt_an_waker *a = x, *b = y;

	return a->count > b->count ? -1 : a->count < b->count;
}

static int print_sys(const struct gt_analysis *a, const struct report_opts *o, FILE *f)
{
	struct table t;
	char sname[80]; /* a name the file gave: escaped, shown cut to 16 */

	if (table_open(&t, a, o, k_sys, f,
		       "\nSyscalls (entry -> the thread's next event, or, if it blocked, -> its "
		       "start after the last wakeup), most time first:\n"))
		return -ENOMEM;
	/* what the file can count: it has GoSysCall events, no syscall exits */
	if (a->sys_calls)
		fprintf(f, "  (CALLS: one GoSysCall at each entry (a Go runtime's trace, or record "
			   "--syscalls=all); a call that blocks again stays one)\n");
	else
		fprintf(f, "  (BLOCKS, not calls: recorded with --syscalls=blocking (the default), "
			   "a GoSysCall is written only where a call blocks: a call that blocks N "
			   "times counts N, calls that never block are not seen; record "
			   "--syscalls=all counts calls)\n");
	fprintf(f, "  %-8s %-24s %-16s %8s %10s %9s %9s %9s %10s\n", "G", "THREAD", "SYSCALL",
		a->sys_calls ? "CALLS" : "BLOCKS", "TOTAL", "MIN", "AVG", "MAX", "BLOCKED");
	for (size_t i = 0; i < t.n; i++) {
		size_t *ix = order(t.v[i]->nsys, t.v[i]->sys, sizeof(*t.v[i]->sys), by_sys_total);

		if (!ix) {
			free(t.v);
			return -ENOMEM;
		}
		row_name(&t, a, i);
		for (size_t k = 0; k < t.v[i]->nsys && (!o->top || k < (size_t)o->top); k++) {
			const struct gt_an_syscall *s = &t.v[i]->sys[ix[k]];

			if (!s->count)
				continue;
			fprintf(f, "  %-8llu %-24.24s %-16.16s %8llu %10s %9s %9s %9s %10s\n",
				(unsigned long long)t.v[i]->id, t.name,
				gt_esc(sname, sizeof(sname), a->names[s->name]),
				(unsigned long long)s->count, dur(s->total_ns), dur(s->min_ns),
				dur(s->total_ns / s->count), dur(s->max_ns), dur(s->blocked_ns));
		}
		free(ix);
	}
	free(t.v);
	return 0;
}

static int print_wakers(const struct gt_analysis *a, const struct report_opts *o, FILE *f)
{
	struct table t;
	char wname[200], wbuf[160];

	if (table_open(&t, a, o, k_wake, f,
		       "\nWakers (who woke the thread, GoUnblock; delay = wakeup -> running):\n"))
		return -ENOMEM;
	fprintf(f, "  %-8s %-24s %-28s %8s %9s %9s\n", "G", "THREAD", "WOKEN BY", "COUNT",
		"AVG DELAY", "MAX DELAY");
	for (size_t i = 0; i < t.n; i++) {
		size_t *ix = order(t.v[i]->nwak, t.v[i]->wak, sizeof(*t.v[i]->wak), by_wake_count);

		if (!ix) {
			free(t.v);
			return -ENOMEM;
		}
		row_name(&t, a, i);
		for (size_t k = 0; k < t.v[i]->nwak && (!o->top || k < (size_t)o->top); k++) {
			const struct gt_an_waker *w = &t.v[i]->wak[ix[k]];
			const struct gt_an_thread *wt = gt_an_thread_of(a, w->g);

			if (!w->g || !wt)
				snprintf(wname, sizeof(wname), "interrupt/none");
			else
				snprintf(wname, sizeof(wname), "G%llu %s", (unsigned long long)w->g,
					 report_shown(a, wt, wbuf, sizeof(wbuf), &t.tid));
			fprintf(f, "  %-8llu %-24.24s %-28.28s %8llu %9s %9s\n",
				(unsigned long long)t.v[i]->id, t.name, wname, (unsigned long long)w->count,
				dur(w->delay_total_ns / w->count), dur(w->delay_max_ns));
		}
		free(ix);
	}
	free(t.v);
	return 0;
}

static int by_preempt(const void *x, const void *y)
{
	const struct gt_an_goroutine *a = x, *b = y;

	if (a->preempt_ns != b->preempt_ns)
		return a->preempt_ns > b->preempt_ns ? -1 : 1;
	return a->offcpu_ns > b->offcpu_ns ? -1 : a->offcpu_ns < b->offcpu_ns;
}

/* Go programs' goroutines (a file with UserLogs "goroutine N", written at
 * each switch-out of a Go thread: docs/mapping.md "Goroutines of Go
 * programs"); nothing for any other file. */
static int print_goroutines(const struct gt_analysis *a, const struct report_opts *o, FILE *f)
{
	size_t *ix, shown = 0;
	char name[160];
	int64_t tid;

	if (!a->ngoros)
		return 0;
	if (!(ix = order(a->ngoros, a->goros, sizeof(*a->goros), by_preempt)))
		return -ENOMEM;
	fprintf(f, "\nGo goroutines on their threads (the goroutine a Go thread ran when the kernel "
		   "switched it out; off-CPU = that stop -> the thread's next start), most "
		   "preempted first:\n");
	fprintf(f, "  %-10s %-8s %-24s %8s %10s %8s %10s %10s  %s\n", "GOROUTINE", "G", "THREAD",
		"STOPS", "OFF-CPU", "PREEMPTS", "PREEMPTED", "MAX", "LABELS");
	/* LABELS: pprof labels of its last stop that had any */
	for (size_t k = 0; k < a->ngoros && (!o->top || shown < (size_t)o->top); k++) {
		const struct gt_an_goroutine *g = &a->goros[ix[k]];
		const struct gt_an_thread *t = gt_an_thread_of(a, g->thread);
		char labels[GT_ESCAPE_SIZE(sizeof(g->labels))]; /* the file's text */

		if (!t || !report_selected(a, t, o))
			continue;
		gt_escape(labels, sizeof(labels), g->labels, strlen(g->labels));
		fprintf(f, "  %-10llu %-8llu %-24.24s %8llu %10s %8llu %10s %10s%s%s\n",
			(unsigned long long)g->goid, (unsigned long long)g->thread,
			report_shown(a, t, name, sizeof(name), &tid), (unsigned long long)g->stops,
			dur(g->offcpu_ns), (unsigned long long)g->preempts, dur(g->preempt_ns),
			dur(g->preempt_max_ns), labels[0] ? "  " : "", labels);
		shown++;
	}
	free(ix);
	return 0;
}

/* Waits by CFS bandwidth throttling (UserLogs "throttled" before a
 * GoPreempt, docs/mapping.md "CFS bandwidth throttling"), by cgroup, all
 * threads; nothing for a file without them. */
static int print_throttled(const struct gt_analysis *a, const struct report_opts *o, FILE *f)
{
	(void)o;
	if (!a->nthrottles)
		return 0;
	fprintf(f, "\nThrottled by a cgroup's CPU quota (CFS bandwidth: switched out runnable, the "
		   "quota spent; the wait to the thread's next start; not preemptions):\n");
	fprintf(f, "  %-48s %8s %10s %10s\n", "CGROUP", "COUNT", "TOTAL", "MAX");
	for (size_t i = 0; i < a->nthrottles; i++) {
		const struct gt_an_throttle *r = &a->throttles[i];
		char name[GT_ESCAPE_SIZE(sizeof(r->cgroup))];

		gt_escape(name, sizeof(name), r->cgroup, strlen(r->cgroup));
		fprintf(f, "  %-48s %8llu %10s %10s\n", name, (unsigned long long)r->count,
			dur(r->ns), dur(r->max_ns));
	}
	return 0;
}

/* What the Go viewers' profile pages total, and how each reader counts
 * (docs/mapping.md#profiles): the figures a user meets there, here. */
static int print_viewers(const struct gt_analysis *a, const struct report_opts *o, FILE *f)
{
	static const char *const what[GT_AN_VIEW_COUNT][2] = {
		{ "sched", "wakeup -> start (1.23: -> next stop, run included)" },
		{ "sync", "chan/select/sync block -> wakeup" },
		{ "syscall", "GoSysCall -> GoSysExit (1.23: -> next stop)" },
		{ "net", "network block -> wakeup" },
	};

	(void)o;
	fprintf(f, "\nGo viewers' profiles (go tool trace -pprof=TYPE), each reader's own definition:\n");
	fprintf(f, "  %-8s %12s %12s   %s\n", "PROFILE", "GO 1.19", "GO 1.23", "FROM -> TO");
	for (int k = 0; k < GT_AN_VIEW_COUNT; k++) {
		/* Go 1.19 reads no Go 1.22+ file */
		fprintf(f, "  %-8s %12s", what[k][0],
			a->version >= 1022 ? "-" : dur(a->go119.ns[k]));
		fprintf(f, " %12s   %s\n", dur(a->go123.ns[k]), what[k][1]);
	}
	return 0;
}

static void print_head(const struct gt_analysis *a, const struct report_opts *o, FILE *f)
{
	char path[GT_ESCAPE_SIZE(4096)];

	fprintf(f, "%s: go %d.%d trace, %.6fs, %llu events (%llu CPU samples), %zu goroutines\n",
		gt_esc(path, sizeof(path), o->path), a->version / 1000, a->version % 1000, a->end_ns / 1e9,
		(unsigned long long)a->events, (unsigned long long)a->samples, a->nthreads);
	if (o->win.since_ns || o->win.until_ns >= 0)
		fprintf(f, "window: %.6fs to %.6fs after the first event\n", o->win.since_ns / 1e9,
			(o->win.until_ns >= 0 ? o->win.until_ns : a->end_ns) / 1e9);
	if (a->anomalies && a->version >= 1022)
		fprintf(f, "warning: %llu events break a state rule of Go's reader (`gotracectl inspect` names the first)\n",
			(unsigned long long)a->anomalies);
	else if (a->anomalies)
		fprintf(f, "warning: %llu events out of time order (Go's reader rejects this file)\n",
			(unsigned long long)a->anomalies);
	if (a->futile)
		fprintf(f, "note: %llu futile wakeups kept (go tool trace drops them)\n",
			(unsigned long long)a->futile);
}

/* A flight dump's trigger (its UserLog, docs/format.md): what fired, on
 * which thread, at what trace time, and the wait that fired it. */
static void print_triggers(const struct gt_analysis *a, const struct report_opts *o, FILE *f)
{
	char msg[GT_ESCAPE_SIZE(sizeof(a->marks[0].msg))];

	(void)o;
	for (size_t i = 0; i < a->nmarks; i++) {
		const struct gt_an_mark *m = &a->marks[i];
		const struct gt_an_wait *w = &m->wait;
		const struct gt_an_thread *t = gt_an_thread_of(a, m->g);
		char name[160];
		int64_t tid;

		fprintf(f, "TRIGGER: %s\n", gt_esc(msg, sizeof(msg), m->msg));
		fprintf(f, "  at trace time %.6fs (%.6fs before the trace's end), on G%llu %s\n",
			m->ns / 1e9, (a->end_ns - m->ns) / 1e9, (unsigned long long)m->g,
			t ? report_shown(a, t, name, sizeof(name), &tid) : "?");
		if (w->stop_ns >= 0 && w->start_ns <= m->ns) {
			fprintf(f, "  its wait: %s off-CPU (%s) from %.6fs to %.6fs",
				dur((uint64_t)(w->start_ns - w->stop_ns)),
				gt_block_reason_names[w->reason], w->stop_ns / 1e9, w->start_ns / 1e9);
			if (w->woken_ns >= 0)
				fprintf(f, ": asleep %s, then %s in the run-queue",
					dur((uint64_t)(w->woken_ns - w->stop_ns)),
					dur((uint64_t)(w->start_ns - w->woken_ns)));
			fprintf(f, "; stopped in:\n");
			print_stack(a, w->stk, f);
		}
		fprintf(f, "  the tables below cover the dump: %.6fs before the trigger to %.6fs "
			   "after it%s\n", m->ns / 1e9, (a->end_ns - m->ns) / 1e9,
			o->win.since_ns || o->win.until_ns >= 0 ? " (or the window asked for)" : "");
	}
}

int report_text(const struct gt_analysis *a, const struct report_opts *o, FILE *f)
{
	int (*const parts[])(const struct gt_analysis *, const struct report_opts *, FILE *) = {
		print_delay, print_groups, print_waits, print_offcpu, print_top_stacks, print_oncpu,
		print_sys, print_wakers, print_goroutines, print_throttled, print_viewers,
	};

	print_head(a, o, f);
	print_triggers(a, o, f);
	for (size_t i = 0; i < sizeof(parts) / sizeof(*parts); i++) {
		int rc = parts[i](a, o, f);

		if (rc)
			return rc;
	}
	return ferror(f) ? -EIO : 0;
}
