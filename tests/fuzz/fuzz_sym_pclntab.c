/* Fuzzes the Go pclntab decoder on arbitrary bytes: header validation,
 * the magic scan, and lookups at pcs around the table's own entries and
 * at pcs taken from the input.  Returned strings must lie in the input.
 */
// fuzz-links: daemon/sym/pclntab.c
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sym/pclntab.h"

static void check_result(const struct gt_pcln *t, const struct gt_pcln_result *r)
{
	const char *lo = (const char *)t->data, *hi = lo + t->size;

	if (!r->func || r->func < lo || r->func >= hi ||
	    (r->file && (r->file < lo || r->file >= hi)))
		abort();
	if (strnlen(r->func, (size_t)(hi - r->func)) == (size_t)(hi - r->func))
		abort(); /* not terminated inside the data */
}

static void probe(const struct gt_pcln *t, uint64_t pc)
{
	struct gt_pcln_result r;

	if (gt_pcln_lookup(t, pc, &r) == 0)
		check_result(t, &r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1); /* exact size for ASan */
	struct gt_pcln t;
	uint64_t pc = 0;
	long off;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (size >= 8)
		memcpy(&pc, copy + size - 8, 8);
	if (gt_pcln_open(&t, copy, size, 0x401000) == 0) {
		probe(&t, pc);
		for (uint64_t d = 0; d < 64; d += 3)
			probe(&t, 0x401000 + d);
		probe(&t, 0);
		probe(&t, UINT64_MAX);
	}
	off = gt_pcln_find(copy, size);
	if (off >= 0 && (size_t)off >= size)
		abort();
	free(copy);
	return 0;
}
