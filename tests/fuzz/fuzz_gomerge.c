/* libFuzzer target for `gotracectl merge` and `report`'s reading of a
 * merged file: any two inputs (a runtime's v2 trace, a kernel recording)
 * give a merged file or a reason, never a crash, a sanitizer report or a
 * leak; a merged file is read back.  The input is a 4-byte little-endian
 * length of the runtime's part, that part, then the kernel's.  Seeds: a
 * Go server's idle trace with a recording of it, and one beside a hog
 * (preemptions with the culprit's stack, syscall blocks logged on the M
 * the goroutine ran on next) (tests/fuzz/seeds/gomerge). */
#include <stdlib.h>
#include <string.h>

#include "gomerge/gt_gomerge.h"

struct buf {
	uint8_t *p;
	size_t n, cap;
};

static int append(void *ctx, const void *p, size_t n)
{
	struct buf *b = ctx;

	if (b->n + n > b->cap) {
		size_t cap = (b->n + n) * 2;
		uint8_t *q = realloc(b->p, cap);

		if (!q)
			return -12;
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gt_gm_result *res = malloc(sizeof(*res));
	struct gt_gm_report rep;
	struct buf out = { 0 };
	char err[256];
	uint32_t rl;

	if (size < 4 || !res) {
		free(res);
		return 0;
	}
	memcpy(&rl, data, 4);
	if (rl > size - 4)
		rl = (uint32_t)(size - 4);
	if (gt_gomerge(data + 4, rl, data + 4 + rl, size - 4 - rl, append, &out, res)) {
		if (!res->error[0])
			abort(); /* a refusal always says why */
	} else if (gt_gm_report_read(out.p, out.n, NULL, NULL, &rep, err, sizeof(err)) == 0) {
		gt_gm_report_free(&rep);
	}
	free(out.p);
	free(res);
	return 0;
}
