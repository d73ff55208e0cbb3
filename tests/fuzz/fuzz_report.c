/* libFuzzer target for `gotracectl report`: the streaming analysis and
 * every printer (text, JSON, folded) over any bytes must give a report or a
 * reason, never a crash, a sanitizer report or a leak.  Seeds: small
 * recordings of our own (tests/fuzz/seeds/report).
 * It links the report's printers, not its command-line front end. */
// fuzz-links: daemon/ctl/report_*.c daemon/ctl/trace_map.c
#include <stdio.h>
#include <stdlib.h>

#include "ctl/report.h"
#include "analyze/gt_analyze.h"
#include "fuzz_devnull.h"

static void print_all(const struct gt_analysis *a, struct report_opts *o)
{
	FILE *f = fuzz_devnull();

	o->path = "fuzz";
	report_text(a, o, f);
	report_json(a, o, f);
	gt_an_fold(a, GT_AN_KIND_CPU, NULL, NULL, f);
	gt_an_fold(a, -1, NULL, NULL, f);
	gt_an_fold(a, GT_AN_KIND_OFFCPU + GT_BLK_SYSCALL, NULL, NULL, f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "read", "write", "futex", "newfstatat" };
	struct report_opts o = { .top = 3, .win = { 0, -1, names, 4 } };
	struct gt_analysis a;
	int rc;

	rc = gt_analyze(&a, data, size, &o.win);
	/* a refusal always says why */
	if (rc && !a.error[0])
		abort();
	if (!rc)
		print_all(&a, &o);
	gt_analysis_free(&a);
	/* and again through a window, with every row */
	o.top = 0;
	o.win.since_ns = 1000;
	o.win.until_ns = 1000000;
	if (gt_analyze(&a, data, size, &o.win) == 0)
		print_all(&a, &o);
	gt_analysis_free(&a);
	return 0;
}
