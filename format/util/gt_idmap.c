/* See gt_idmap.h. */
#include "gt_idmap.h"

#include <stdlib.h>
#include <string.h>

#include "gt_hash.h"

#define EMPTY 0
#define FULL 1
#define DELETED 2

static inline unsigned words(const struct gt_idmap *m)
{
	return m->kwords ? m->kwords : 1;
}

static inline uint64_t hash_key(const uint64_t *key, unsigned n)
{
	uint64_t h = key[0];

	for (unsigned i = 1; i < n; i++)
		h = gt_hash_mix(h) ^ key[i];
	return gt_hash_mix(h);
}

static inline int same(const uint64_t *a, const uint64_t *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

int gt_idmap_init(struct gt_idmap *m, unsigned kwords, size_t vsize)
{
	memset(m, 0, sizeof(*m));
	m->kwords = kwords ? kwords : 1;
	m->vsize = (uint32_t)vsize;
	return 0;
}

void gt_idmap_free(struct gt_idmap *m)
{
	unsigned kw = m->kwords;
	uint32_t vsize = m->vsize;

	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
	m->kwords = kw;
	m->vsize = vsize;
}

/* Whether slot i holds key (n words); single-word keys compare inline. */
static inline int holds(const struct gt_idmap *m, size_t i, const uint64_t *key, unsigned n)
{
	if (n == 1)
		return m->keys[i] == key[0];
	return same(m->keys + i * n, key, n);
}

/* The slot holding key, or (when absent) -1 with *at the slot where it
 * goes: the first deleted slot on its probe, else the empty one. */
static inline long probe(const struct gt_idmap *m, const uint64_t *key, size_t *at)
{
	unsigned n = words(m);
	size_t mask = m->cap - 1, i = (size_t)hash_key(key, n) & mask;
	size_t first_deleted = SIZE_MAX;

	for (; m->used[i] != EMPTY; i = (i + 1) & mask) {
		if (m->used[i] == FULL) {
			if (holds(m, i, key, n))
				return (long)i;
		} else if (first_deleted == SIZE_MAX) {
			first_deleted = i;
		}
	}
	*at = first_deleted != SIZE_MAX ? first_deleted : i;
	return -1;
}

/* The hot path (single-word keys, most lookups and most insertions of a
 * key already there): the slot of key, or -1. */
static inline long find1(const struct gt_idmap *m, uint64_t key)
{
	size_t mask = m->cap - 1, i = (size_t)gt_hash_mix(key) & mask;

	for (; m->used[i] != EMPTY; i = (i + 1) & mask)
		if (m->keys[i] == key && m->used[i] == FULL)
			return (long)i;
	return -1;
}

void *gt_idmap_find(const struct gt_idmap *m, const uint64_t *key)
{
	size_t at;
	long i;

	if (!m->count)
		return NULL;
	i = m->kwords <= 1 ? find1(m, key[0]) : probe(m, key, &at);
	return i < 0 ? NULL : gt_idmap_val(m, (size_t)i);
}

/* A table of cap slots holding m's entries (cap: a power of two). */
static int rehash(struct gt_idmap *m, size_t cap)
{
	struct gt_idmap n = *m;
	unsigned kw = words(m);

	n.keys = malloc(cap * kw * sizeof(uint64_t));
	n.vals = m->vsize ? malloc(cap * m->vsize) : NULL;
	n.used = calloc(cap, 1);
	if (!n.keys || !n.used || (m->vsize && !n.vals)) {
		free(n.keys);
		free(n.vals);
		free(n.used);
		return -1;
	}
	n.cap = cap;
	n.count = n.deleted = 0;
	for (size_t i = 0; i < m->cap; i++) {
		size_t at = 0;

		if (m->used[i] != FULL)
			continue;
		probe(&n, m->keys + i * kw, &at);
		n.used[at] = FULL;
		memcpy(n.keys + at * kw, m->keys + i * kw, kw * sizeof(uint64_t));
		if (m->vsize)
			memcpy(n.vals + at * m->vsize, m->vals + i * m->vsize, m->vsize);
		n.count++;
	}
	free(m->keys);
	free(m->vals);
	free(m->used);
	*m = n;
	return 0;
}

static __attribute__((noinline)) void *insert(struct gt_idmap *m, const uint64_t *key,
					      int *isnew)
{
	unsigned kw = words(m);
	size_t at = 0;
	long i;

	if ((m->count + m->deleted + 1) * 4 > m->cap * 3) {
		/* mostly deleted slots: the same size cleans them */
		size_t cap = m->cap ? m->cap : 16;

		while ((m->count + 1) * 2 > cap)
			cap *= 2;
		if (rehash(m, cap) < 0)
			return NULL;
	}
	i = probe(m, key, &at);
	if (i >= 0) {
		*isnew = 0;
		return gt_idmap_val(m, (size_t)i);
	}
	if (m->used[at] == DELETED)
		m->deleted--;
	m->used[at] = FULL;
	memcpy(m->keys + at * kw, key, kw * sizeof(uint64_t));
	if (m->vsize)
		memset(m->vals + at * m->vsize, 0, m->vsize);
	m->count++;
	*isnew = 1;
	return gt_idmap_val(m, at);
}

void *gt_idmap_insert(struct gt_idmap *m, const uint64_t *key, int *isnew)
{
	long i;

	if (m->kwords <= 1 && m->count && (i = find1(m, key[0])) >= 0) {
		*isnew = 0;
		return gt_idmap_val(m, (size_t)i);
	}
	return insert(m, key, isnew);
}

int gt_idmap_remove(struct gt_idmap *m, const uint64_t *key)
{
	size_t at = 0;
	long i;

	if (!m->count)
		return 0;
	i = probe(m, key, &at);
	if (i < 0)
		return 0;
	m->used[i] = DELETED;
	m->count--;
	m->deleted++;
	return 1;
}

void gt_idmap_each(const struct gt_idmap *m, void (*fn)(uint64_t key, void *val, void *arg),
		   void *arg)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->used[i] == FULL)
			fn(gt_idmap_key(m, i)[0], gt_idmap_val(m, i), arg);
}
