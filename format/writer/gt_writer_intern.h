/* The writer's dictionaries: interned strings and interned stacks.
 *
 * Both are open-addressing hash tables over an append-only arena, so an
 * entry's id is its insertion rank (1, 2, ...) and the footer dumps entries
 * in id order without sorting.  Memory grows with the number of distinct
 * strings and stacks only, never with the number of events.
 */
#ifndef GT_WRITER_INTERN_H
#define GT_WRITER_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct gt_intern_ent {
	uint64_t hash;
	size_t off;     /* into the arena: bytes (strings) or words (stacks) */
	uint32_t len;   /* bytes (strings) or frames (stacks); 0 = reserved,
			   not defined yet */
	uint32_t flags; /* GT_INTERN_RESERVED */
};

/* The entry was reserved (gt_stacktab_reserve): it is not in the hash
 * slots, so interning equal contents never returns its id. */
#define GT_INTERN_RESERVED 1u

struct gt_intern_tab {
	uint32_t *slots;             /* entry index + 1; 0 = empty */
	size_t mask;                 /* slot count - 1 (a power of two) */
	struct gt_intern_ent *ents;  /* ents[id - 1] */
	size_t n, cap;
	void *arena;
	size_t used, size;           /* in arena units (bytes or words) */
};

/* Strings: s[0..len) with len > 0, stored NUL-terminated.  Sets *id (> 0).
 * 0 or -ENOMEM. */
int gt_strtab_intern(struct gt_intern_tab *t, const char *s, size_t len, uint64_t *id);
const char *gt_strtab_get(const struct gt_intern_tab *t, uint64_t id, size_t *len);

/* Stacks: nframes frames of 4 words {pc, func id, file id, line}. */
int gt_stacktab_intern(struct gt_intern_tab *t, const uint64_t *words, uint32_t nframes,
		       uint64_t *id);
const uint64_t *gt_stacktab_get(const struct gt_intern_tab *t, uint64_t id, uint32_t *nframes);

/* Takes the next id for a stack whose frames come later (an entry of 0
 * frames outside the hash slots).  0 or -ENOMEM/-EINVAL. */
int gt_stacktab_reserve(struct gt_intern_tab *t, uint64_t *id);

/* Gives reserved id its frames (nframes > 0).  -EINVAL if id was not
 * reserved, -EALREADY if it has frames already, -ENOMEM. */
int gt_stacktab_define(struct gt_intern_tab *t, uint64_t id, const uint64_t *words,
		       uint32_t nframes);

void gt_intern_tab_free(struct gt_intern_tab *t);

#endif
