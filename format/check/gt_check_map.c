/* A small open-addressing hash map keyed by 64-bit ids (goroutines, Ps,
 * strings, stacks).  Grows by doubling, so its size follows the input. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gt_check_internal.h"

static size_t slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

static int alloc_table(struct gt_map *m, size_t cap)
{
	m->keys = calloc(cap, sizeof(*m->keys));
	m->used = calloc(cap, 1);
	m->vals = calloc(cap, m->vsize);
	if (!m->keys || !m->used || !m->vals) {
		free(m->keys);
		free(m->used);
		free(m->vals);
		return -ENOMEM;
	}
	m->cap = cap;
	m->count = 0;
	return 0;
}

int gt_map_init(struct gt_map *m, size_t vsize)
{
	memset(m, 0, sizeof(*m));
	m->vsize = vsize ? vsize : 1;
	return alloc_table(m, 16);
}

void gt_map_free(struct gt_map *m)
{
	free(m->keys);
	free(m->used);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

void *gt_map_get(const struct gt_map *m, uint64_t key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = slot_of(key, m->cap); m->used[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			return m->vals + i * m->vsize;
	return NULL;
}

static int grow(struct gt_map *m)
{
	struct gt_map old = *m;

	if (alloc_table(m, old.cap * 2) < 0) {
		*m = old;
		return -ENOMEM;
	}
	for (size_t i = 0; i < old.cap; i++) {
		int isnew;
		void *v;

		if (!old.used[i])
			continue;
		v = gt_map_put(m, old.keys[i], &isnew);
		memcpy(v, old.vals + i * old.vsize, old.vsize);
	}
	free(old.keys);
	free(old.used);
	free(old.vals);
	return 0;
}

void *gt_map_put(struct gt_map *m, uint64_t key, int *isnew)
{
	size_t i;

	if ((m->count + 1) * 4 > m->cap * 3 && grow(m) < 0)
		return NULL;
	for (i = slot_of(key, m->cap); m->used[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			*isnew = 0;
			return m->vals + i * m->vsize;
		}
	}
	m->used[i] = 1;
	m->keys[i] = key;
	m->count++;
	*isnew = 1;
	return m->vals + i * m->vsize;
}

void gt_map_each(const struct gt_map *m, void (*fn)(uint64_t key, void *val, void *arg),
		 void *arg)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->used[i])
			fn(m->keys[i], m->vals + i * m->vsize, arg);
}
