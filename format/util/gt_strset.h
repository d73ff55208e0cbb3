/* The project's one interner (format/util/: see gt_hash.h): a set of
 * byte strings (names, paths, a stack's frame words), one stable copy of
 * each, numbered by insertion rank (1, 2, ...) so a dump in id order needs
 * no sort.  Open addressing over the entries, load at most 3/4; copies
 * live in chunks that never move (pointers stay valid until
 * gt_strset_free), each followed by a NUL and 8-byte aligned.  Memory
 * grows with the distinct strings only.
 *
 * An id may be reserved before its bytes are known (gt_strset_reserve):
 * such an entry is never found by its contents. */
#ifndef GT_UTIL_STRSET_H
#define GT_UTIL_STRSET_H

#include <stddef.h>
#include <stdint.h>

#define GT_STRSET_RESERVED 1u

struct gt_strset_ent {
	uint64_t hash;
	const void *data;
	uint32_t len;   /* bytes; 0 = reserved, not defined yet */
	uint32_t flags; /* GT_STRSET_RESERVED */
};

struct gt_strset_chunk;

/* A zeroed struct is an empty set. */
struct gt_strset {
	uint32_t *slots;             /* entry index + 1; 0 = empty */
	size_t mask;                 /* slot count - 1 */
	struct gt_strset_ent *ents;  /* ents[id - 1] */
	size_t n, cap;
	struct gt_strset_chunk *chunks;
};

/* Interns p[0..len), len > 0: *id and *copy (either may be NULL) are its
 * id and stable copy.  0, -EINVAL (empty, too many) or -ENOMEM. */
int gt_strset_add(struct gt_strset *s, const void *p, size_t len, uint64_t *id,
		  const void **copy);
/* The id of p[0..len) if interned, else 0 (nothing added). */
uint64_t gt_strset_find(const struct gt_strset *s, const void *p, size_t len);
/* The copy of id and its length, or NULL (unknown, or reserved and not
 * defined yet). */
const void *gt_strset_get(const struct gt_strset *s, uint64_t id, size_t *len);
/* Takes the next id for contents given later.  0, -EINVAL or -ENOMEM. */
int gt_strset_reserve(struct gt_strset *s, uint64_t *id);
/* Gives reserved id its contents (len > 0): -EINVAL if id was not
 * reserved, -EALREADY if defined already, -ENOMEM. */
int gt_strset_define(struct gt_strset *s, uint64_t id, const void *p, size_t len);
void gt_strset_free(struct gt_strset *s);

#endif
