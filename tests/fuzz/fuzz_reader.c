/* libFuzzer target for the trace reader and checker: any bytes must give a
 * verdict, never a crash, a sanitizer report, a leak or an allocation
 * sized by a length field instead of by the input. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "check/gt_check.h"
#include "wire/gt_reader.h"

static void sink(const struct gt_goroutine_stats *g, void *arg)
{
	uint64_t *sum = arg;

	*sum += g->id + g->starts + g->name_len;
	if (g->name_len)
		*sum += (uint8_t)g->name[g->name_len - 1];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gt_raw_event ev;
	struct gt_check_report rep;
	struct gt_reader r;
	uint64_t sum = 0;

	/* The raw decoder alone, to its end or its first error. */
	if (gt_reader_open(&r, data, size) == 0)
		while (gt_reader_next(&r, &ev) == 1)
			sum += ev.nargs + ev.str_len;
	gt_check_buffer(data, size, &rep);
	gt_check_run(data, size, GT_CHECK_PARSER_ONLY, &rep, NULL, NULL);
	gt_check_run(data, size, GT_CHECK_GO_TOOLS, &rep, sink, &sum);
	/* A verdict always comes with its reason. */
	if (!rep.ok && !rep.error[0])
		abort();
	return sum == 42 ? 0 : 0;
}
