/* The report as text tables, each sorted by what hurts most. */
#include <errno.h>
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

static int print_delay(const struct gt_analysis *a, const struct report_opts *o, FILE *f)
{
	struct table t;

	if (table_open(&t, a, o, k_delay, f,
		       "\nScheduling delay (woken or preempted -> running: perf sched timehist's "
		       "sch delay, sched_waking -> sched_switch), worst first:\n"))
		return -ENOMEM;
	fprintf(f, "  %-8s %-24s %8s %9s %9s %9s %9s %9s %11s\n", "G", "THREAD", "COUNT", "AVG",
		"P50", "P90", "P99", "MAX", "WORST AT");
	for (size_t i = 0; i < t.n; i++) {
		fprintf(f, "  %-8llu %-24.24s", (unsigned long long)t.v[i]->id, row_name(&t, a, i));
		delay_cols(f, &t.v[i]->delay, t.v[i]->worst_at_ns);
	}
	free(t.v);
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
	fprintf(f, "\nBy thread name (all threads of one name together), worst delay first:\n");
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

/* Per reason, the stacks that blocked the selected threads longest. */
static int print_top_stacks(const struct gt_analysis *a, const struct report_opts *o, FILE *f)
{
	const struct gt_an_stackagg **v = calloc(a->naggs + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	fprintf(f, "\nTop off-CPU stacks per reason (the stack of the stopping event):\n");
	for (int r = 0; r < GT_BLK_COUNT; r++) {
		size_t n = report_reason_stacks(a, o, r, v);

		if (!n)
			continue;
		fprintf(f, "  %s:\n", gt_block_reason_names[r]);
		for (size_t i = 0; i < n && i < report_stacks_per_reason(o); i++) {
			char name[160];
			int64_t tid;

			fprintf(f, "    %s in %llu stops of G%llu %s\n", dur(v[i]->weight),
				(unsigned long long)v[i]->count, (unsigned long long)v[i]->g,
				report_shown(a, gt_an_thread_of(a, v[i]->g), name, sizeof(name), &tid));
			print_stack(a, v[i]->stk, f);
		}
	}
	free(v);
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
	/* what COUNT can say: the file has GoSysCall events, no syscall exits */
	fprintf(f, "  (COUNT: with record --syscalls=all, calls: one GoSysCall at each entry, and a "
		   "call that blocks again stays one; by default (--syscalls=blocking) only the "
		   "blocks are seen: a call that blocks N times counts N, and calls that never "
		   "block cannot be counted)\n");
	fprintf(f, "  %-8s %-24s %-16s %8s %10s %9s %9s %9s %10s\n", "G", "THREAD", "SYSCALL",
		"COUNT", "TOTAL", "MIN", "AVG", "MAX", "BLOCKED");
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
	fprintf(f, "  %-10s %-8s %-24s %8s %10s %8s %10s %10s\n", "GOROUTINE", "G", "THREAD",
		"STOPS", "OFF-CPU", "PREEMPTS", "PREEMPTED", "MAX");
	for (size_t k = 0; k < a->ngoros && (!o->top || shown < (size_t)o->top); k++) {
		const struct gt_an_goroutine *g = &a->goros[ix[k]];
		const struct gt_an_thread *t = gt_an_thread_of(a, g->thread);

		if (!t || !report_selected(a, t, o))
			continue;
		fprintf(f, "  %-10llu %-8llu %-24.24s %8llu %10s %8llu %10s %10s\n",
			(unsigned long long)g->goid, (unsigned long long)g->thread,
			report_shown(a, t, name, sizeof(name), &tid), (unsigned long long)g->stops,
			dur(g->offcpu_ns), (unsigned long long)g->preempts, dur(g->preempt_ns),
			dur(g->preempt_max_ns));
		shown++;
	}
	free(ix);
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

int report_text(const struct gt_analysis *a, const struct report_opts *o, FILE *f)
{
	int (*const parts[])(const struct gt_analysis *, const struct report_opts *, FILE *) = {
		print_delay, print_groups, print_offcpu, print_top_stacks, print_oncpu,
		print_sys, print_wakers, print_goroutines, print_viewers,
	};

	print_head(a, o, f);
	for (size_t i = 0; i < sizeof(parts) / sizeof(*parts); i++) {
		int rc = parts[i](a, o, f);

		if (rc)
			return rc;
	}
	return ferror(f) ? -EIO : 0;
}
