/* The interned stacks of the interposer's allocation samples (see
 * interpose.h): an open-addressing table of (tgid, return addresses). */
#include "interpose.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "interpose/heap_shm.h"
#include "gotraced.h"

#define GT_PCS_CAP 16384 /* distinct stacks kept; more go without a stack */

struct gt_pcs_entry {
	uint32_t tgid;
	uint32_t n;          /* 0 = empty */
	uint64_t pcs[GT_HEAP_SAMPLE_PCS];
};

struct gt_mt_pcs {
	struct gt_pcs_entry *v;  /* GT_PCS_CAP entries; the id is the index */
	uint32_t used;
};

struct gt_mt_pcs *gt_mt_pcs_new(void)
{
	struct gt_mt_pcs *t = calloc(1, sizeof(*t));

	if (t && !(t->v = calloc(GT_PCS_CAP, sizeof(*t->v)))) {
		free(t);
		t = NULL;
	}
	return t;
}

void gt_mt_pcs_free(struct gt_mt_pcs *t)
{
	if (t)
		free(t->v);
	free(t);
}

static uint64_t hash(uint32_t tgid, const uint64_t *pcs, int n)
{
	uint64_t h = 0xcbf29ce484222325ull ^ tgid;

	for (int i = 0; i < n; i++) {
		h ^= pcs[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

int32_t gt_mt_pcs_intern(struct gt_mt_pcs *t, uint32_t tgid, const uint64_t *pcs, int n)
{
	uint32_t i;

	if (n <= 0)
		return -1;
	if (n > GT_HEAP_SAMPLE_PCS)
		n = GT_HEAP_SAMPLE_PCS;
	i = (uint32_t)(hash(tgid, pcs, n) % GT_PCS_CAP);
	for (uint32_t probe = 0; probe < GT_PCS_CAP; probe++, i = (i + 1) % GT_PCS_CAP) {
		struct gt_pcs_entry *e = &t->v[i];

		if (e->n == 0) {
			if (t->used >= GT_PCS_CAP * 3 / 4)
				return -1; /* keep probes short: the rest go stackless */
			e->tgid = tgid;
			e->n = (uint32_t)n;
			memcpy(e->pcs, pcs, (size_t)n * sizeof(*pcs));
			t->used++;
			return (int32_t)(GT_STACK_INTERPOSED | i);
		}
		if (e->tgid == tgid && e->n == (uint32_t)n &&
		    !memcmp(e->pcs, pcs, (size_t)n * sizeof(*pcs)))
			return (int32_t)(GT_STACK_INTERPOSED | i);
	}
	return -1;
}

int gt_mt_pcs_get(const struct gt_mt_pcs *t, int32_t id, uint64_t *ips, int max)
{
	uint32_t i = (uint32_t)id & ~(uint32_t)GT_STACK_INTERPOSED;
	const struct gt_pcs_entry *e;
	int n;

	if (!t || id < 0 || !(id & GT_STACK_INTERPOSED) || i >= GT_PCS_CAP || !t->v[i].n)
		return -ENOENT;
	e = &t->v[i];
	n = (int)e->n < max ? (int)e->n : max;
	memcpy(ips, e->pcs, (size_t)n * sizeof(*ips));
	return n;
}
