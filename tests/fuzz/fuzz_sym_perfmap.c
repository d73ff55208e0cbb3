/* Fuzzes the perf map parser (sym/perfmap.h): a JIT's /tmp/perf-PID.map
 * is its process's file.  The input is parsed whole, and again in two
 * pieces merged (a JIT appending while it is read: the first piece's last
 * partial line is read again with the second); both must name every
 * address alike, and a name must hold no control byte.
 */
// fuzz-links: daemon/sym/perfmap.c daemon/sym/table.c
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sym/perfmap.h"

static void same(const struct gt_perfmap *a, const struct gt_perfmap *b, uint64_t addr)
{
	const char *x = gt_perfmap_find(a, addr), *y = gt_perfmap_find(b, addr);

	if (!x != !y || (x && strcmp(x, y)))
		abort();
	for (; x && *x; x++)
		if ((unsigned char)*x < 0x20 || *x == 0x7f)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact heap copy so ASan catches any read past the end */
	char *buf = malloc(size ? size : 1);
	struct gt_perfmap whole = { 0 }, first = { 0 }, rest = { 0 };
	size_t cut = size ? data[0] % (size + 1) : 0, used, used1;

	memcpy(buf, data, size);
	if (gt_perfmap_build(&whole, buf, size, &used) == 0 &&
	    gt_perfmap_build(&first, buf, cut, &used1) == 0) {
		if (used > size || used1 > cut)
			abort();
		rest.lines = first.lines;
		if (gt_perfmap_build(&rest, buf + used1, size - used1, &used) == 0 &&
		    gt_perfmap_merge(&first, &rest) == 0) {
			for (size_t i = 0; i < whole.n; i++) {
				same(&whole, &first, whole.v[i].start);
				same(&whole, &first, whole.v[i].end - 1);
				same(&whole, &first, whole.v[i].end);
			}
			for (size_t i = 0; i < first.n; i++)
				same(&whole, &first, first.v[i].start);
		}
	}
	gt_perfmap_free(&whole);
	gt_perfmap_free(&first);
	gt_perfmap_free(&rest);
	free(buf);
	return 0;
}
