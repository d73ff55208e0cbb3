/* report on a merged file (gotracectl merge, record --go-trace): per
 * goroutine, the time it ran by the runtime's events and, inside that,
 * the time the kernel had its thread off the CPU, by cause and culprit
 * (format/gomerge/gt_gomerge.h, gt_gm_report_read). */
#include <errno.h>
#include <stdio.h>
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

static void rows_of(const struct gt_gm_report *k, uint64_t g, FILE *out)
{
	char shown[GT_ESCAPE_SIZE(192)];
	size_t n = 0;

	for (size_t i = 0; i < k->nrows && n < ROWS_PER_G; i++) {
		const struct gt_gm_row *r = &k->rows[i];

		if (r->g != g)
			continue;
		gt_escape(shown, sizeof(shown), r->what, strlen(r->what));
		fprintf(out, "    %-52s %8llu %12.3f\n", shown, (unsigned long long)r->n, r->ns / 1e6);
		n++;
	}
}

int report_kernel(struct trace_map *m, const struct report_opts *o, FILE *out)
{
	struct gt_gm_report k;
	char err[256];
	size_t top = o->top > 0 ? (size_t)o->top : SIZE_MAX; /* --top 0: all, as every table */
	uint64_t run = 0, ker = 0;

	if (gt_gm_report_read(m->data, m->len, m->len ? release : NULL, m, &k, err, sizeof(err)))
		return 0; /* the analysis read it: nothing more to say */
	if (!k.nrows) {
		gt_gm_report_free(&k);
		return 0;
	}
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
		rows_of(&k, g->g, out);
	}
	gt_gm_report_free(&k);
	return ferror(out) ? -EIO : 0;
}
