/* Fuzzes the perf record parser (capture/mmap_record.c): the input is a
 * stream of records as a ring holds them, each cut at its header's size
 * (or at the input's end); every one is parsed from an exact heap copy,
 * and what comes back must lie inside it and make sense; the held copy
 * the capture queues must equal it once the ring's bytes are gone.
 */
// fuzz-links: daemon/capture/mmap_record.c
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capture/mmap_record.h"

static void check_held(const struct gt_mmap_rec *r)
{
	struct gt_mmap_held *h = gt_mmap_record_hold(r);

	if (!h)
		return;
	if (h->r.path != h->path || h->r.path_len != r->path_len || h->r.ts != r->ts ||
	    memcmp(h->path, r->path, r->path_len))
		abort();
	free(h);
}

static void check(const uint8_t *rec, size_t len)
{
	struct gt_mmap_rec r;
	/* An exact heap copy so ASan catches any read past the record. */
	uint8_t *copy = malloc(len ? len : 1);

	if (!copy)
		return;
	memcpy(copy, rec, len);
	if (gt_mmap_record_parse(copy, len, &r) == 0) {
		const char *p = r.path, *base = (const char *)copy;

		if (r.path_len && (p < base || p + r.path_len > base + len))
			abort();
		if (r.kind == GT_MMAP_MAP && r.end <= r.start)
			abort();
		if (r.kind < GT_MMAP_MAP || r.kind > GT_MMAP_LOST)
			abort();
		check_held(&r);
	}
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	while (size) {
		size_t len = size;

		if (size >= 8) {
			size_t want = (size_t)data[6] | (size_t)data[7] << 8;

			if (want >= 8 && want < size)
				len = want;
		}
		check(data, len);
		data += len;
		size -= len;
	}
	return 0;
}
