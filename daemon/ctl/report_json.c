/* The report as one JSON object: every selected thread (by id) and every
 * thread-name group, times in nanoseconds from the trace's first event.
 * tests/integration/report_check.py reads it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* A JSON string; control bytes and non-ASCII bytes escaped as \u00XX
 * (names come from the trace: they need not be UTF-8). */
static void jstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

void report_jstr(FILE *f, const char *s)
{
	jstr(f, s);
}

static void jdelay_as(FILE *f, const char *key, const struct gt_hist *h, int64_t worst)
{
	fprintf(f, "\"%s\":{\"count\":%llu,\"total_ns\":%llu,\"avg_ns\":%llu,\"p50_ns\":%llu,"
		   "\"p90_ns\":%llu,\"p99_ns\":%llu,\"max_ns\":%llu,\"worst_at_ns\":%lld}", key,
		(unsigned long long)h->count, (unsigned long long)h->sum,
		(unsigned long long)(h->count ? h->sum / h->count : 0),
		(unsigned long long)gt_hist_pct(h, 50), (unsigned long long)gt_hist_pct(h, 90),
		(unsigned long long)gt_hist_pct(h, 99), (unsigned long long)h->max,
		(long long)(h->count ? worst : 0));
}

/* "sched": run-queue latency (runqlat's), wakeup + preemption delay */
static void jdelay(FILE *f, const struct gt_hist *h, int64_t worst)
{
	fprintf(f, "\"sched\":{\"count\":%llu,\"total_ns\":%llu,\"avg_ns\":%llu,\"p50_ns\":%llu,"
		   "\"p90_ns\":%llu,\"p99_ns\":%llu,\"max_ns\":%llu,\"worst_at_ns\":%lld}",
		(unsigned long long)h->count, (unsigned long long)h->sum,
		(unsigned long long)(h->count ? h->sum / h->count : 0),
		(unsigned long long)gt_hist_pct(h, 50), (unsigned long long)gt_hist_pct(h, 90),
		(unsigned long long)gt_hist_pct(h, 99), (unsigned long long)h->max,
		(long long)(h->count ? worst : 0));
}

static void joffcpu(FILE *f, const uint64_t *ns, const uint64_t *n)
{
	fprintf(f, "\"offcpu_ns\":{");
	for (int r = 0; r < GT_BLK_COUNT; r++)
		fprintf(f, "%s\"%s\":%llu", r ? "," : "", gt_block_reason_names[r],
			(unsigned long long)ns[r]);
	fputc('}', f);
	if (!n)
		return;
	fprintf(f, ",\"offcpu_count\":{");
	for (int r = 0; r < GT_BLK_COUNT; r++)
		fprintf(f, "%s\"%s\":%llu", r ? "," : "", gt_block_reason_names[r],
			(unsigned long long)n[r]);
	fputc('}', f);
}

static void jsys(FILE *f, const struct gt_analysis *a, const struct gt_an_thread *t)
{
	fprintf(f, ",\"syscalls\":[");
	for (size_t i = 0, first = 1; i < t->nsys; i++) {
		const struct gt_an_syscall *s = &t->sys[i];

		if (!s->count && !s->blocked_ns)
			continue;
		fprintf(f, "%s{\"name\":", first ? "" : ",");
		jstr(f, a->names[s->name]);
		fprintf(f, ",\"%s\":%llu,\"total_ns\":%llu,\"min_ns\":%llu,\"avg_ns\":%llu,"
			   "\"max_ns\":%llu,\"blocked_ns\":%llu}", a->sys_calls ? "calls" : "blocks",
			(unsigned long long)s->count, (unsigned long long)s->total_ns,
			(unsigned long long)s->min_ns,
			(unsigned long long)(s->count ? s->total_ns / s->count : 0),
			(unsigned long long)s->max_ns, (unsigned long long)s->blocked_ns);
		first = 0;
	}
	fputc(']', f);
}

static void jwakers(FILE *f, const struct gt_analysis *a, const struct gt_an_thread *t)
{
	char name[160];
	int64_t tid;

	fprintf(f, ",\"wakers\":[");
	for (size_t i = 0; i < t->nwak; i++) {
		const struct gt_an_waker *w = &t->wak[i];
		const struct gt_an_thread *wt = gt_an_thread_of(a, w->g);

		fprintf(f, "%s{\"g\":%llu,\"name\":", i ? "," : "", (unsigned long long)w->g);
		jstr(f, w->g && wt ? report_name(a, wt, name, sizeof(name), &tid) : "interrupt/none");
		fprintf(f, ",\"count\":%llu,\"delay_total_ns\":%llu,\"delay_max_ns\":%llu}",
			(unsigned long long)w->count, (unsigned long long)w->delay_total_ns,
			(unsigned long long)w->delay_max_ns);
	}
	fputc(']', f);
}

static void jthread(FILE *f, const struct gt_analysis *a, const struct gt_an_thread *t)
{
	char name[160];
	int64_t tid;

	fprintf(f, "{\"id\":%llu,\"name\":", (unsigned long long)t->id);
	jstr(f, report_name(a, t, name, sizeof(name), &tid));
	if (tid >= 0)
		fprintf(f, ",\"tid\":%lld,", (long long)tid);
	else
		fprintf(f, ",\"tid\":null,");
	jdelay(f, &t->delay, t->worst_at_ns);
	fputc(',', f);
	jdelay_as(f, "wakeup_delay", &t->wdelay, t->wworst_at_ns);
	fputc(',', f);
	jdelay_as(f, "preempt_delay", &t->pdelay, t->pworst_at_ns);
	fputc(',', f);
	joffcpu(f, t->offcpu_ns, t->offcpu_n);
	fprintf(f, ",\"oncpu_ns\":%llu,\"starts\":%llu,\"migrations\":%llu",
		(unsigned long long)t->oncpu_ns, (unsigned long long)t->starts,
		(unsigned long long)t->migrations);
	jsys(f, a, t);
	jwakers(f, a, t);
	fputc('}', f);
}

/* Go programs' goroutines on their threads, as the text's table (by
 * goroutine id; the text orders them by preemption). */
static void jgoroutines(FILE *f, const struct gt_analysis *a, const struct report_opts *o)
{
	int first = 1;

	fprintf(f, ",\"goroutines\":[");
	for (size_t i = 0; i < a->ngoros; i++) {
		const struct gt_an_goroutine *g = &a->goros[i];
		const struct gt_an_thread *t = gt_an_thread_of(a, g->thread);

		if (!t || !report_selected(a, t, o))
			continue;
		fprintf(f, "%s{\"goid\":%llu,\"thread\":%llu,\"stops\":%llu,\"offcpu_ns\":%llu,"
			   "\"preempts\":%llu,\"preempt_ns\":%llu,\"preempt_max_ns\":%llu}",
			first ? "" : ",", (unsigned long long)g->goid, (unsigned long long)g->thread,
			(unsigned long long)g->stops, (unsigned long long)g->offcpu_ns,
			(unsigned long long)g->preempts, (unsigned long long)g->preempt_ns,
			(unsigned long long)g->preempt_max_ns);
		first = 0;
	}
	fputc(']', f);
}

/* Waits by CFS bandwidth throttling, by cgroup (the text's table). */
static void jthrottled(FILE *f, const struct gt_analysis *a)
{
	fprintf(f, ",\"throttled\":[");
	for (size_t i = 0; i < a->nthrottles; i++) {
		const struct gt_an_throttle *r = &a->throttles[i];

		fprintf(f, "%s{\"cgroup\":", i ? "," : "");
		jstr(f, r->cgroup);
		fprintf(f, ",\"count\":%llu,\"ns\":%llu,\"max_ns\":%llu}",
			(unsigned long long)r->count, (unsigned long long)r->ns,
			(unsigned long long)r->max_ns);
	}
	fputc(']', f);
}

static int jgroups(FILE *f, const struct gt_analysis *a, const struct report_opts *o)
{
	struct report_group *g;
	size_t n;

	if (report_groups(a, o, &g, &n))
		return -ENOMEM;
	fprintf(f, ",\"groups\":[");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s{\"name\":", i ? "," : "");
		jstr(f, g[i].name);
		fprintf(f, ",\"threads\":%llu,", (unsigned long long)g[i].threads);
		jdelay(f, &g[i].delay, g[i].worst_at_ns);
		fputc(',', f);
		joffcpu(f, g[i].offcpu_ns, NULL);
		fprintf(f, ",\"oncpu_ns\":%llu,\"migrations\":%llu,\"syscalls\":%llu,"
			   "\"syscall_ns\":%llu}",
			(unsigned long long)g[i].oncpu_ns, (unsigned long long)g[i].migrations,
			(unsigned long long)g[i].syscalls, (unsigned long long)g[i].sys_ns);
	}
	fputc(']', f);
	report_groups_free(g, n);
	return 0;
}

#define JSON_FRAMES 32 /* frames per stack */

static void jframes(FILE *f, const struct gt_analysis *a, uint64_t stk)
{
	struct gt_an_frame fr[JSON_FRAMES];
	size_t n = gt_an_stack(a, stk, fr, JSON_FRAMES);
	char buf[512];

	fprintf(f, "\"frames\":[");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s{\"func\":", i ? "," : "");
		snprintf(buf, sizeof(buf), "%.*s", (int)fr[i].fn_len, fr[i].fn);
		jstr(f, buf);
		fprintf(f, ",\"file\":");
		snprintf(buf, sizeof(buf), "%.*s", (int)fr[i].file_len, fr[i].file);
		jstr(f, buf);
		fprintf(f, ",\"line\":%llu,\"pc\":%llu}", (unsigned long long)fr[i].line,
			(unsigned long long)fr[i].pc);
	}
	fputc(']', f);
}

/* Per off-CPU reason, the heaviest stacks (as many as the text shows),
 * innermost frame first, each summed over the threads that stopped there
 * ("threads"; g, tid and name: the one that stopped there longest). */
static int jstacks(FILE *f, const struct gt_analysis *a, const struct report_opts *o)
{
	int first = 1;

	fprintf(f, ",\"offcpu_stacks\":[");
	for (int r = 0; r < GT_BLK_COUNT; r++) {
		struct report_sgroup *v;
		size_t n;

		if (report_stack_groups(a, o, r, &v, &n))
			return -ENOMEM;
		for (size_t i = 0; i < n && i < report_stacks_per_reason(o); i++) {
			char name[160];
			int64_t tid;

			report_name(a, gt_an_thread_of(a, v[i].g), name, sizeof(name), &tid);
			fprintf(f, "%s{\"reason\":\"%s\",\"ns\":%llu,\"count\":%llu,\"threads\":%llu,"
				   "\"g\":%llu,\"tid\":", first ? "" : ",", gt_block_reason_names[r],
				(unsigned long long)v[i].weight, (unsigned long long)v[i].count,
				(unsigned long long)v[i].threads, (unsigned long long)v[i].g);
			if (tid >= 0)
				fprintf(f, "%lld", (long long)tid);
			else
				fprintf(f, "null");
			fprintf(f, ",\"name\":");
			jstr(f, name);
			fprintf(f, ",\"ends_in_libc\":%s,", report_ends_in_libc(a, v[i].stk) ? "true" : "false");
			jframes(f, a, v[i].stk);
			fputc('}', f);
			first = 0;
		}
		free(v);
	}
	fputc(']', f);
	return 0;
}

static const char *const view_names[GT_AN_VIEW_COUNT] = { "sched", "sync", "syscall", "net" };

/* The Go viewers' profile totals, all goroutines (gt_analyze_viewers.c);
 * Go 1.19 reads no Go 1.22+ file: null for those. */
static void jviewers(FILE *f, const struct gt_analysis *a)
{
	const struct gt_an_view_totals *v[2] = { &a->go119, &a->go123 };
	const char *name[2] = { "go1.19", "go1.23" };

	fprintf(f, ",\"viewers\":{");
	for (int r = 0; r < 2; r++) {
		fprintf(f, "%s\"%s\":", r ? "," : "", name[r]);
		if (r == 0 && a->version >= 1022) {
			fprintf(f, "null");
			continue;
		}
		fputc('{', f);
		for (int k = 0; k < GT_AN_VIEW_COUNT; k++)
			fprintf(f, "%s\"%s\":{\"ns\":%llu,\"n\":%llu}", k ? "," : "", view_names[k],
				(unsigned long long)v[r]->ns[k], (unsigned long long)v[r]->n[k]);
		fputc('}', f);
	}
	fputc('}', f);
}

/* runqlat's histogram of the selected threads: [{"lo_us","hi_us","count"}] */
static void jrunqlat(FILE *f, const struct gt_analysis *a, const struct report_opts *o)
{
	uint64_t sum[GT_AN_LOG2] = { 0 };
	int last = -1;

	for (size_t i = 0; i < a->nthreads; i++)
		if (report_selected(a, &a->threads[i], o))
			for (int k = 0; k < GT_AN_LOG2; k++)
				sum[k] += a->threads[i].rq_log2[k];
	for (int k = 0; k < GT_AN_LOG2; k++)
		if (sum[k])
			last = k;
	fprintf(f, ",\"runqlat_usecs\":[");
	for (int k = 0; k <= last; k++)
		fprintf(f, "%s{\"lo_us\":%llu,\"hi_us\":%llu,\"count\":%llu}", k ? "," : "",
			k ? 1ull << k : 0ull, (2ull << k) - 1, (unsigned long long)sum[k]);
	fputc(']', f);
}

static void jwait(FILE *f, const struct gt_analysis *a, const struct gt_an_wait *w)
{
	char name[160];
	int64_t tid;

	report_name(a, gt_an_thread_of(a, w->g), name, sizeof(name), &tid);
	fprintf(f, "{\"g\":%llu,\"name\":", (unsigned long long)w->g);
	jstr(f, name);
	fprintf(f, ",\"reason\":\"%s\",\"stop_ns\":%lld,\"start_ns\":%lld,\"wait_ns\":%lld,"
		   "\"woken_ns\":", gt_block_reason_names[w->reason], (long long)w->stop_ns,
		(long long)w->start_ns, (long long)(w->start_ns - w->stop_ns));
	if (w->woken_ns >= 0)
		fprintf(f, "%lld", (long long)w->woken_ns);
	else
		fprintf(f, "null");
	fputc(',', f);
	jframes(f, a, w->stk);
	fputc('}', f);
}

/* The longest single waits of the selected threads (all kept), and the
 * flight dump's triggers with the wait that fired each. */
static void jwaits(FILE *f, const struct gt_analysis *a, const struct report_opts *o)
{
	int first = 1;

	fprintf(f, ",\"longest_waits\":[");
	for (size_t i = 0; i < a->nwaits; i++) {
		const struct gt_an_thread *t = gt_an_thread_of(a, a->waits[i].g);

		if (!t || !report_selected(a, t, o))
			continue;
		if (!first)
			fputc(',', f);
		jwait(f, a, &a->waits[i]);
		first = 0;
	}
	fprintf(f, "],\"triggers\":[");
	for (size_t i = 0; i < a->nmarks; i++) {
		fprintf(f, "%s{\"message\":", i ? "," : "");
		jstr(f, a->marks[i].msg);
		fprintf(f, ",\"at_ns\":%lld,\"g\":%llu,\"wait\":", (long long)a->marks[i].ns,
			(unsigned long long)a->marks[i].g);
		if (a->marks[i].wait.stop_ns >= 0)
			jwait(f, a, &a->marks[i].wait);
		else
			fprintf(f, "null");
		fputc('}', f);
	}
	fputc(']', f);
}

int report_json(const struct gt_analysis *a, const struct report_opts *o, FILE *f)
{
	int first = 1, rc;

	fprintf(f, "{\"file\":");
	jstr(f, o->path);
	fprintf(f, ",\"version\":\"%d.%d\",\"duration_ns\":%lld,\"events\":%llu,\"cpu_samples\":%llu,"
		   "\"anomalies\":%llu,\"futile_wakeups\":%llu,\"since_ns\":%lld,\"until_ns\":",
		a->version / 1000, a->version % 1000, (long long)a->end_ns,
		(unsigned long long)a->events, (unsigned long long)a->samples,
		(unsigned long long)a->anomalies, (unsigned long long)a->futile,
		(long long)o->win.since_ns);
	if (o->win.until_ns >= 0)
		fprintf(f, "%lld", (long long)o->win.until_ns);
	else
		fprintf(f, "null");
	jviewers(f, a);
	fprintf(f, ",\"syscalls_count\":\"%s\"", a->sys_calls ? "calls" : "blocks");
	jrunqlat(f, a, o);
	jwaits(f, a, o);
	fprintf(f, ",\"threads\":[");
	for (size_t i = 0; i < a->nthreads; i++) {
		if (!report_selected(a, &a->threads[i], o))
			continue;
		if (!first)
			fputc(',', f);
		jthread(f, a, &a->threads[i]);
		first = 0;
	}
	fputc(']', f);
	jgoroutines(f, a, o);
	jthrottled(f, a);
	rc = jgroups(f, a, o);
	if (!rc)
		rc = jstacks(f, a, o);
	if (!rc && o->merged)
		rc = report_kernel_json(o->merged, f);
	else if (!rc)
		fprintf(f, ",\"go_kernel\":null");
	if (rc)
		return rc;
	fprintf(f, "}\n");
	return ferror(f) ? -EIO : 0;
}
