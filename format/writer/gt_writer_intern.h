/* The writer's dictionaries: interned strings and interned stacks, both
 * on the one interner (util/gt_strset.h): an entry's id is its insertion
 * rank (1, 2, ...), so the footer dumps entries in id order without
 * sorting, and memory grows with the number of distinct strings and
 * stacks only, never with the number of events.  A stack is stored as
 * its frames' words, 4 per frame {pc, func id, file id, line}.
 */
#ifndef GT_WRITER_INTERN_H
#define GT_WRITER_INTERN_H

#include <stddef.h>
#include <stdint.h>

#include "util/gt_strset.h"

#define GT_STACK_FRAME_BYTES (4 * sizeof(uint64_t))

/* Strings: s[0..len) with len > 0.  Sets *id (> 0).  0 or -errno. */
static inline int gt_strtab_intern(struct gt_strset *t, const char *s, size_t len,
				   uint64_t *id)
{
	return gt_strset_add(t, s, len, id, NULL);
}

static inline const char *gt_strtab_get(const struct gt_strset *t, uint64_t id, size_t *len)
{
	return gt_strset_get(t, id, len);
}

/* Stacks: nframes > 0 frames of 4 words. */
static inline int gt_stacktab_intern(struct gt_strset *t, const uint64_t *words,
				     uint32_t nframes, uint64_t *id)
{
	return gt_strset_add(t, words, nframes * GT_STACK_FRAME_BYTES, id, NULL);
}

static inline const uint64_t *gt_stacktab_get(const struct gt_strset *t, uint64_t id,
					      uint32_t *nframes)
{
	size_t len = 0;
	const uint64_t *w = gt_strset_get(t, id, &len);

	*nframes = (uint32_t)(len / GT_STACK_FRAME_BYTES);
	return w;
}

/* A stack id whose frames come later; gt_stacktab_define gives them
 * (-EINVAL if id was not reserved, -EALREADY if it has frames already). */
static inline int gt_stacktab_reserve(struct gt_strset *t, uint64_t *id)
{
	return gt_strset_reserve(t, id);
}

static inline int gt_stacktab_define(struct gt_strset *t, uint64_t id, const uint64_t *words,
				     uint32_t nframes)
{
	return gt_strset_define(t, id, words, nframes * GT_STACK_FRAME_BYTES);
}

#endif
