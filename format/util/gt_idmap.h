/* The project's one hash map (format/util/: see gt_hash.h): keys of one to
 * four 64-bit words (goroutine, P, string and stack ids, pids, addresses,
 * tuples of them), values of a fixed size stored inline.  Open addressing,
 * linear probing, load at most 3/4, doubling: its size follows the number
 * of keys.  Deleted slots are marked, so deleting while iterating is safe
 * (the table never moves during a delete).
 *
 * A zeroed struct is an empty set of single-word keys (no values); use
 * gt_idmap_init for values or wider keys.  Value pointers stay valid until
 * the next insertion. */
#ifndef GT_UTIL_IDMAP_H
#define GT_UTIL_IDMAP_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#define GT_IDMAP_MAX_WORDS 4

struct gt_idmap {
	uint64_t *keys;      /* cap * kwords */
	unsigned char *vals; /* cap * vsize */
	unsigned char *used; /* per slot: 0 empty, 1 full, 2 deleted */
	size_t cap;          /* 0 or a power of two */
	size_t count;        /* full slots */
	size_t deleted;      /* deleted slots */
	uint32_t kwords;     /* 0 means 1 */
	uint32_t vsize;
};

/* An empty map of keys of kwords words and values of vsize bytes.  0: it
 * cannot fail (the table is allocated at the first insertion). */
int gt_idmap_init(struct gt_idmap *m, unsigned kwords, size_t vsize);
void gt_idmap_free(struct gt_idmap *m);

/* The value of key (kwords words), or NULL.  For a set (vsize 0) any
 * non-NULL pointer means present. */
void *gt_idmap_find(const struct gt_idmap *m, const uint64_t *key);
/* The value of key, added zeroed if absent (*isnew 1); NULL on ENOMEM. */
void *gt_idmap_insert(struct gt_idmap *m, const uint64_t *key, int *isnew);
/* 1 removed, 0 absent. */
int gt_idmap_remove(struct gt_idmap *m, const uint64_t *key);

/* Single-word keys. */
static inline void *gt_idmap_get(const struct gt_idmap *m, uint64_t key)
{
	return gt_idmap_find(m, &key);
}
static inline void *gt_idmap_put(struct gt_idmap *m, uint64_t key, int *isnew)
{
	return gt_idmap_insert(m, &key, isnew);
}
static inline int gt_idmap_del(struct gt_idmap *m, uint64_t key)
{
	return gt_idmap_remove(m, &key);
}

/* Sets (and maps whose value is filled later): 1 added, 0 present,
 * -ENOMEM; whether key is present. */
static inline int gt_idmap_add(struct gt_idmap *m, uint64_t key)
{
	int isnew;

	return gt_idmap_insert(m, &key, &isnew) ? isnew : -ENOMEM;
}
static inline int gt_idmap_has(const struct gt_idmap *m, uint64_t key)
{
	return gt_idmap_find(m, &key) != NULL;
}

/* Iteration: for (size_t i = 0; i < m->cap; i++) if (gt_idmap_full(m, i)) ...
 * gt_idmap_key(m, i)[0..kwords), gt_idmap_val(m, i). */
static inline int gt_idmap_full(const struct gt_idmap *m, size_t i)
{
	return m->used[i] == 1;
}
static inline const uint64_t *gt_idmap_key(const struct gt_idmap *m, size_t i)
{
	return m->keys + i * (m->kwords ? m->kwords : 1);
}
static inline void *gt_idmap_val(const struct gt_idmap *m, size_t i)
{
	return m->vsize ? (void *)(m->vals + i * m->vsize) : (void *)(m->used + i);
}

/* The key of slot i if full, else 0 (for keys never 0, such as pids). */
static inline uint64_t gt_idmap_slot(const struct gt_idmap *m, size_t i)
{
	return m->used[i] == 1 ? gt_idmap_key(m, i)[0] : 0;
}

/* Calls fn on every key (its first word) and value. */
void gt_idmap_each(const struct gt_idmap *m, void (*fn)(uint64_t key, void *val, void *arg),
		   void *arg);

#endif
