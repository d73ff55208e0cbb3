/* report on a merged file (gotracectl merge, record --go-trace): per
 * goroutine, the time it ran by the runtime's events and, inside that,
 * the time the kernel had its thread off the CPU, by cause and culprit
 * (format/gomerge/gt_gomerge.h, gt_gm_report_read). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "trace_map.h"
#include "gomerge/gt_gomerge.h"
#include "util/gt_escape.h"

#define ROWS_PER_G 5

/* trace_map_release for the reader's two passes over the file, which the
 * analysis read before: an end before what was let go starts a pass. */
static void release(void *arg, size_t end)
{
	struct trace_map *m = arg;

	if (end < m->gone)
		m->gone = 0;
	trace_map_release(m, end);
}

static void rows_of(const struct gt_gm_row *rows, size_t nrows, uint64_t g, FILE *out)
{
	char shown[GT_ESCAPE_SIZE(192)];
	size_t n = 0;

	for (size_t i = 0; i < nrows && n < ROWS_PER_G; i++) {
		const struct gt_gm_row *r = &rows[i];

		if (r->g != g)
			continue;
		gt_escape(shown, sizeof(shown), r->what, strlen(r->what));
		fprintf(out, "    %-52s %8llu %12.3f\n", shown, (unsigned long long)r->n, r->ns / 1e6);
		if (r->stack[0]) {
			gt_escape(shown, sizeof(shown), r->stack, strlen(r->stack));
			fprintf(out, "      its stack %s\n", shown);
		}
		n++;
	}
}

/* The merge's regions of m, or 1: none (not a merged file). */
static int read_merged(struct trace_map *m, struct gt_gm_report *k)
{
	char err[256];

	if (gt_gm_report_read(m->data, m->len, m->len ? release : NULL, m, k, err, sizeof(err)))
		return 1; /* the analysis read it: nothing more to say */
	if (!k->nrows) {
		gt_gm_report_free(k);
		return 1;
	}
	return 0;
}

/* The same per thread (M): what `perf sched timehist` can be held to.
 * mrows is grouped by M: each group [i, *end). */
static size_t group_end(const struct gt_gm_report *k, size_t i)
{
	size_t j = i;

	while (j < k->nmrows && k->mrows[j].g == k->mrows[i].g)
		j++;
	return j;
}

static void print_threads(const struct gt_gm_report *k, size_t top, FILE *out)
{
	size_t shown = 0;

	fprintf(out, "\n  by thread (the runtime's M: its tid), inside its goroutines:\n");
	for (size_t i = 0, j; i < k->nmrows && shown < top; i = j, shown++) {
		j = group_end(k, i);
		fprintf(out, "  M%llu\n", (unsigned long long)k->mrows[i].g);
		rows_of(k->mrows + i, j - i, k->mrows[i].g, out);
	}
}

int report_kernel(struct trace_map *m, const struct report_opts *o, FILE *out)
{
	struct gt_gm_report k;
	size_t top = o->top > 0 ? (size_t)o->top : SIZE_MAX; /* --top 0: all, as every table */
	uint64_t run = 0, ker = 0;

	if (read_merged(m, &k))
		return 0;
	for (size_t i = 0; i < k.ngs; i++) {
		run += k.gs[i].running_ns;
		ker += k.gs[i].kernel_ns;
	}
	fprintf(out, "\nThe kernel inside the runtime's goroutines (gotracectl merge): %.3f ms of the %.3f ms these %zu goroutines ran by the runtime's events their threads were off the CPU\n",
		ker / 1e6, run / 1e6, k.ngs);
	fprintf(out, "  %-12s %14s %14s %6s\n", "GOROUTINE", "RUNNING ms", "OFF-CPU ms", "SHARE");
	fprintf(out, "    %-52s %8s %12s\n", "cause and culprit", "COUNT", "TOTAL ms");
	for (size_t i = 0; i < k.ngs && i < top; i++) {
		const struct gt_gm_goroutine *g = &k.gs[i];

		fprintf(out, "  G%-11llu %14.3f %14.3f %5.1f%%\n", (unsigned long long)g->g,
			g->running_ns / 1e6, g->kernel_ns / 1e6,
			g->running_ns ? 100.0 * g->kernel_ns / g->running_ns : 0.0);
		rows_of(k.rows, k.nrows, g->g, out);
	}
	print_threads(&k, top, out);
	gt_gm_report_free(&k);
	return ferror(out) ? -EIO : 0;
}

/* By goroutine (or M), each one's heaviest first. */
static int by_who(const void *a, const void *b)
{
	const struct gt_gm_row *x = a, *y = b;

	if (x->g != y->g)
		return x->g < y->g ? -1 : 1;
	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

/* The first row of who in rows sorted by_who (n if none). */
static size_t first_of(const struct gt_gm_row *rows, size_t n, uint64_t who)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rows[mid].g < who)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void jrows(const struct gt_gm_row *rows, size_t n, uint64_t who, FILE *out)
{
	int first = 1;

	fputc('[', out);
	for (size_t i = 0; i < n; i++) {
		if (rows[i].g != who)
			continue;
		fprintf(out, "%s{\"what\":", first ? "" : ",");
		report_jstr(out, rows[i].what);
		fprintf(out, ",\"count\":%llu,\"ns\":%llu,\"culprit_stack\":", (unsigned long long)rows[i].n,
			(unsigned long long)rows[i].ns);
		if (rows[i].stack[0])
			report_jstr(out, rows[i].stack);
		else
			fputs("null", out);
		fputc('}', out);
		first = 0;
	}
	fputc(']', out);
}

int report_kernel_json(struct trace_map *m, FILE *out)
{
	struct gt_gm_report k;

	if (read_merged(m, &k)) {
		fprintf(out, ",\"go_kernel\":null");
		return 0;
	}
	/* every goroutine's rows, not the text's top ones: grouped by
	 * goroutine (a scan of all rows per goroutine is quadratic) */
	if (k.nrows)
		qsort(k.rows, k.nrows, sizeof(*k.rows), by_who);
	fprintf(out, ",\"go_kernel\":{\"goroutines\":[");
	for (size_t i = 0; i < k.ngs; i++) {
		size_t at = first_of(k.rows, k.nrows, k.gs[i].g), end = at;

		while (end < k.nrows && k.rows[end].g == k.gs[i].g)
			end++;
		fprintf(out, "%s{\"goid\":%llu,\"running_ns\":%llu,\"kernel_ns\":%llu,\"causes\":",
			i ? "," : "", (unsigned long long)k.gs[i].g,
			(unsigned long long)k.gs[i].running_ns, (unsigned long long)k.gs[i].kernel_ns);
		jrows(k.rows + at, end - at, k.gs[i].g, out);
		fputc('}', out);
	}
	fprintf(out, "],\"threads\":[");
	for (size_t i = 0, j; i < k.nmrows; i = j) {
		j = group_end(&k, i);
		fprintf(out, "%s{\"tid\":%llu,\"causes\":", i ? "," : "",
			(unsigned long long)k.mrows[i].g);
		jrows(k.mrows + i, j - i, k.mrows[i].g, out);
		fputc('}', out);
	}
	fprintf(out, "]}");
	gt_gm_report_free(&k);
	return ferror(out) ? -EIO : 0;
}
