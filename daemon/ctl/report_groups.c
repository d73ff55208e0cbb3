/* What the report's printers share: thread names, the --thread filter and
 * the per-name groups. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "util/gt_escape.h"

const char *report_name(const struct gt_analysis *a, const struct gt_an_thread *t, char *buf,
			size_t len, int64_t *tid)
{
	size_t n;
	const char *s = gt_an_thread_name(a, t, &n, tid);

	if (n)
		snprintf(buf, len, "%.*s", (int)n, s);
	else
		snprintf(buf, len, "G%llu", (unsigned long long)t->id);
	return buf;
}

const char *report_shown(const struct gt_analysis *a, const struct gt_an_thread *t, char *buf,
			 size_t len, int64_t *tid)
{
	size_t n;
	const char *s = gt_an_thread_name(a, t, &n, tid);

	if (!n)
		return report_name(a, t, buf, len, tid);
	gt_escape(buf, len, s, n);
	return buf;
}

uint64_t report_offcpu_total(const struct gt_an_thread *t)
{
	uint64_t s = 0;

	for (int r = 0; r < GT_BLK_COUNT; r++)
		s += t->offcpu_ns[r];
	return s;
}

int report_named(const struct gt_analysis *a, const struct gt_an_thread *t, const char *want)
{
	char name[160], id[24];
	int64_t tid;

	report_name(a, t, name, sizeof(name), &tid);
	if (!strcmp(name, want))
		return 1;
	/* as the text report shows it, escaped */
	if (!strcmp(report_shown(a, t, name, sizeof(name), &tid), want))
		return 1;
	snprintf(id, sizeof(id), "%llu", (unsigned long long)t->id);
	if (!strcmp(id, want))
		return 1;
	snprintf(id, sizeof(id), "%lld", (long long)tid);
	return tid >= 0 && !strcmp(id, want);
}

int report_selected(const struct gt_analysis *a, const struct gt_an_thread *t,
		    const struct report_opts *o)
{
	if (!t->id || (!t->starts && !t->delay.count && !report_offcpu_total(t) && !t->nsys))
		return 0;
	return !o->thread || report_named(a, t, o->thread);
}

size_t report_stacks_per_reason(const struct report_opts *o)
{
	if (!o->top_given)
		return 3;
	return o->top ? (size_t)o->top : SIZE_MAX;
}

static int by_weight(const void *x, const void *y)
{
	const struct gt_an_stackagg *a = *(const struct gt_an_stackagg *const *)x;
	const struct gt_an_stackagg *b = *(const struct gt_an_stackagg *const *)y;

	return a->weight > b->weight ? -1 : a->weight < b->weight;
}

size_t report_reason_stacks(const struct gt_analysis *a, const struct report_opts *o, int r,
			    const struct gt_an_stackagg **v)
{
	size_t n = 0;

	for (size_t i = 0; i < a->naggs; i++) {
		const struct gt_an_thread *t = gt_an_thread_of(a, a->aggs[i].g);

		if (a->aggs[i].kind == (uint64_t)(GT_AN_KIND_OFFCPU + r) && t &&
		    report_selected(a, t, o))
			v[n++] = &a->aggs[i];
	}
	qsort(v, n, sizeof(*v), by_weight);
	return n;
}

static int add_to(struct report_group *g, const struct gt_an_thread *t)
{
	if (t->delay.count && (!g->delay.count || t->delay.max > g->delay.max))
		g->worst_at_ns = t->worst_at_ns;
	if (gt_hist_merge(&g->delay, &t->delay))
		return -ENOMEM;
	g->threads++;
	for (int r = 0; r < GT_BLK_COUNT; r++)
		g->offcpu_ns[r] += t->offcpu_ns[r];
	g->oncpu_ns += t->oncpu_ns;
	g->migrations += t->migrations;
	for (size_t i = 0; i < t->nsys; i++) {
		g->syscalls += t->sys[i].count;
		g->sys_ns += t->sys[i].total_ns;
	}
	return 0;
}

int report_groups(const struct gt_analysis *a, const struct report_opts *o,
		  struct report_group **out, size_t *n)
{
	struct report_group *v = calloc(a->nthreads + 1, sizeof(*v));
	size_t k = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < a->nthreads; i++) {
		const struct gt_an_thread *t = &a->threads[i];
		char name[160];
		int64_t tid;
		size_t j;

		if (!report_selected(a, t, o))
			continue;
		report_name(a, t, name, sizeof(name), &tid);
		for (j = 0; j < k && strcmp(v[j].name, name); j++)
			;
		if (j == k)
			snprintf(v[k++].name, sizeof(v->name), "%s", name);
		if (add_to(&v[j], t)) {
			report_groups_free(v, k);
			return -ENOMEM;
		}
	}
	*out = v;
	*n = k;
	return 0;
}

void report_groups_free(struct report_group *g, size_t n)
{
	for (size_t i = 0; i < n; i++)
		gt_hist_free(&g[i].delay);
	free(g);
}
