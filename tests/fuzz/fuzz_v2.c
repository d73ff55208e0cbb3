/* libFuzzer target for the Go 1.22+ (v2) decoder and the analysis over it:
 * any bytes behind a v2 header must give events or a reason, never a crash,
 * a sanitizer report, a leak or an allocation sized by a length field.
 * The decoder alone walks every batch, event and frame; then the analysis
 * runs leniently (report) and strictly (inspect) and the report's printers
 * print the result.  Seeds: Go's own v2 test traces written back to binary
 * (tests/lib/v2raw.py) and small traces of Go 1.23 programs
 * (tests/fuzz/seeds/v2). */
// fuzz-links: daemon/ctl/report_*.c daemon/ctl/trace_map.c
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/gt_analyze.h"
#include "ctl/report.h"
#include "v2/gt_v2.h"
#include "fuzz_devnull.h"

/* The decoder alone: every batch, event and frame, to the end or an error
 * that says why. */
static uint64_t walk(const uint8_t *data, size_t size)
{
	static uint64_t fr[GT_V2_MAX_FRAMES][4];
	struct gt_v2_file f;
	struct gt_v2_batch b;
	struct gt_v2_cursor c;
	struct gt_v2_ev e;
	char err[256];
	uint64_t sum = 0;
	int rc;

	if (gt_v2_open(&f, data, size))
		return 0;
	while ((rc = gt_v2_next_batch(&f, &b)) == 1) {
		gt_v2_cursor_init(&c, &f, &b);
		err[0] = 0;
		while ((rc = gt_v2_next_event(&c, &e, err, sizeof(err))) == 1) {
			sum += e.type + e.ts + e.data_len;
			if (e.type == GT_V2_STRING && e.data_len)
				sum += e.data[e.data_len - 1];
			if (e.type == GT_V2_STACK) {
				size_t n = gt_v2_frames(&e, fr, GT_V2_MAX_FRAMES);

				if (n != e.data_len)
					abort(); /* checked frames must decode again */
				for (size_t k = 0; k < n; k++)
					sum += fr[k][0] + fr[k][3];
			}
		}
		if (rc < 0 && !err[0])
			abort(); /* an error always says why */
	}
	if (rc < 0 && !f.error[0])
		abort();
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report_opts o = { .top = 3, .win = { 0, -1, NULL, 0, 0 } };
	struct gt_analysis a;
	FILE *out = fuzz_devnull();
	int rc;

	fprintf(out, "%llu", (unsigned long long)walk(data, size));
	for (int strict = 0; strict < 2; strict++) {
		o.win.strict = strict;
		rc = gt_analyze(&a, data, size, &o.win);
		if (rc && !a.error[0])
			abort();
		if (!rc) {
			o.path = "fuzz";
			report_text(&a, &o, out);
			report_json(&a, &o, out);
			gt_an_fold(&a, -1, NULL, NULL, out);
		}
		gt_analysis_free(&a);
	}
	return 0;
}
