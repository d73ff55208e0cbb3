/* A JIT's perf map (/tmp/perf-PID.map): one "START SIZE name" line per
 * piece of generated code, START and SIZE in hex (an optional 0x), as
 * perf reads it (docs/design.md, symbolization).  The file is its
 * process's, written while it runs: outside input, parsed here without
 * I/O (fuzzed).  A line perf would not read (no name, a range that
 * wraps, a size of 0) is skipped; a name is cut to GT_PERFMAP_NAME_MAX
 * bytes and its control bytes shown as '?'.  Where lines overlap, the
 * later one names the address: a JIT writes a line when it places code,
 * so the last line for an address is the code there now. */
#ifndef GT_SYM_PERFMAP_H
#define GT_SYM_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

#include "table.h"

#define GT_PERFMAP_NAME_MAX 1024
/* The most of a perf map read (a large JVM's is tens of MB). */
#define GT_PERFMAP_READ_MAX (64ull << 20)

struct gt_perfmap_entry {
	uint64_t start, end;
	uint64_t seq;           /* its line's place in the file */
	const char *name;       /* in the map's arena */
};

struct gt_perfmap {
	struct gt_perfmap_entry *v; /* sorted by start, one per start */
	size_t n, cap;
	struct gt_arena names;
	uint64_t lines;         /* lines read: the next line's seq */
};

/* One line (without its newline): 0 with the range and the name (into the
 * line, *name_len bytes), or -EINVAL. */
int gt_perfmap_parse_line(const char *line, size_t len, uint64_t *start, uint64_t *size,
			  const char **name, size_t *name_len);

/* Builds pm (zeroed by the caller, pm->lines set to the seq of its first
 * line) from len bytes of the file: every whole line (a last line without
 * its newline may still be being written, and is left out; *used says
 * where the whole lines end).  0 or -ENOMEM (pm then holds what it read,
 * freeable). */
int gt_perfmap_build(struct gt_perfmap *pm, const char *buf, size_t len, size_t *used);

/* Moves the lines of more (built from the bytes that followed pm's in the
 * file) into pm, later lines winning as above; more is left empty.  0 or
 * -ENOMEM (pm unchanged, more to free). */
int gt_perfmap_merge(struct gt_perfmap *pm, struct gt_perfmap *more);

/* The name of the code at addr, or NULL. */
const char *gt_perfmap_find(const struct gt_perfmap *pm, uint64_t addr);

void gt_perfmap_free(struct gt_perfmap *pm);

#endif
