/* The analysis's keyed indexes (on gt_idmap) and growable arrays. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gt_analyze_internal.h"

int64_t gt_an_map_get(const struct gt_idmap *m, uint64_t a, uint64_t b, uint64_t c)
{
	const uint64_t key[3] = {a, b, c};
	const uint32_t *v = m->kwords ? gt_idmap_find(m, key) : NULL;

	return v ? (int64_t)*v : -1;
}

int gt_an_map_put(struct gt_idmap *m, uint64_t a, uint64_t b, uint64_t c, uint32_t v)
{
	const uint64_t key[3] = {a, b, c};
	uint32_t *slot;
	int isnew;

	if (!m->kwords)
		gt_idmap_init(m, 3, sizeof(uint32_t));
	slot = gt_idmap_insert(m, key, &isnew);
	if (!slot)
		return -ENOMEM;
	*slot = v;
	return 0;
}

void gt_an_map_free(struct gt_idmap *m)
{
	gt_idmap_free(m);
}
