/* The pprof labels of Go goroutines for the translator (a
 * gt_golabels_source): read from /proc/PID/mem by sym/golabels.h and
 * cached by (process, map address, hash seed, count). */
#ifndef GT_ENGINE_GOLABELS_H
#define GT_ENGINE_GOLABELS_H

#include <stddef.h>
#include <stdint.h>

#include "translate/translate.h"

#define GT_GOLABELS_CACHE 256 /* direct-mapped: a collision rereads */
#define GT_GOLABELS_TEXT  256 /* the text kept of one map (cut to fit) */

struct gt_golabels_entry {
	uint32_t tgid, hash0, count; /* tgid 0 = empty */
	uint64_t map;
	int len;                     /* < 0: could not be read (not asked again) */
	char text[GT_GOLABELS_TEXT];
};

struct gt_golabels {
	struct gt_golabels_entry *cache; /* on first use */
	struct gt_golabels_source src;
	uint64_t reads, failed;          /* maps read, and of them failed */
};

/* The source to hand a translator (its ctx is gl).  On the event loop:
 * a map not cached yet is read there (sym/golabels.h). */
const struct gt_golabels_source *gt_golabels_source(struct gt_golabels *gl);
/* Process tgid is gone, or exec'd: its maps are not its any more. */
void gt_golabels_forget(struct gt_golabels *gl, uint32_t tgid);
void gt_golabels_free(struct gt_golabels *gl);

#endif
