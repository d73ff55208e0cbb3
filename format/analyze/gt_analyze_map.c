/* The id maps and growable arrays of the analysis. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gt_analyze_internal.h"

static uint64_t hash3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull;

	h ^= (b + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
	h ^= (c + 0x85ebca77c2b2ae63ull) * 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

static struct gt_an_slot *find(const struct gt_an_map *m, uint64_t a, uint64_t b, uint64_t c)
{
	size_t i = hash3(a, b, c) & (m->cap - 1);

	for (;; i = (i + 1) & (m->cap - 1)) {
		struct gt_an_slot *s = &m->slots[i];

		if (!s->used || (s->k[0] == a && s->k[1] == b && s->k[2] == c))
			return s;
	}
}

int64_t gt_an_map_get(const struct gt_an_map *m, uint64_t a, uint64_t b, uint64_t c)
{
	const struct gt_an_slot *s;

	if (!m->cap)
		return -1;
	s = find(m, a, b, c);
	return s->used ? (int64_t)s->v : -1;
}

static int rehash(struct gt_an_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	struct gt_an_map n = { calloc(cap, sizeof(struct gt_an_slot)), cap, 0 };

	if (!n.slots)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		const struct gt_an_slot *s = &m->slots[i];

		if (s->used)
			*find(&n, s->k[0], s->k[1], s->k[2]) = *s;
	}
	n.count = m->count;
	free(m->slots);
	*m = n;
	return 0;
}

int gt_an_map_put(struct gt_an_map *m, uint64_t a, uint64_t b, uint64_t c, uint32_t v)
{
	struct gt_an_slot *s;

	/* keep the load under 1/2 */
	if ((m->count + 1) * 2 > m->cap && rehash(m))
		return -ENOMEM;
	s = find(m, a, b, c);
	if (!s->used) {
		s->used = 1;
		s->k[0] = a;
		s->k[1] = b;
		s->k[2] = c;
		m->count++;
	}
	s->v = v;
	return 0;
}

void gt_an_map_free(struct gt_an_map *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

int gt_an_grow(void *v, size_t *cap, size_t n, size_t sz)
{
	void **pv = v;
	size_t ncap;
	void *nv;

	if (n <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	while (ncap < n)
		ncap *= 2;
	nv = realloc(*pv, ncap * sz);
	if (!nv)
		return -ENOMEM;
	memset((char *)nv + *cap * sz, 0, (ncap - *cap) * sz);
	*pv = nv;
	*cap = ncap;
	return 0;
}
