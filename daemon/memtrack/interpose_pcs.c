/* The interned stacks of the interposer's allocation samples (see
 * interpose.h): (tgid, return addresses) in the one interner. */
#include "interpose.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "interpose/heap_shm.h"
#include "gotraced.h"
#include "util/gt_strset.h"

#define GT_PCS_CAP 16384 /* distinct stacks kept; more go without a stack */

/* Each stack is interned as one blob, the tgid's word then the return
 * addresses; its id is its rank in the set. */
struct gt_mt_pcs {
	struct gt_strset set;
};

struct gt_mt_pcs *gt_mt_pcs_new(void)
{
	return calloc(1, sizeof(struct gt_mt_pcs));
}

void gt_mt_pcs_free(struct gt_mt_pcs *t)
{
	if (t)
		gt_strset_free(&t->set);
	free(t);
}

int32_t gt_mt_pcs_intern(struct gt_mt_pcs *t, uint32_t tgid, const uint64_t *pcs, int n)
{
	uint64_t blob[1 + GT_HEAP_SAMPLE_PCS], id;
	size_t len;

	if (n <= 0)
		return -1;
	if (n > GT_HEAP_SAMPLE_PCS)
		n = GT_HEAP_SAMPLE_PCS;
	blob[0] = tgid;
	memcpy(blob + 1, pcs, (size_t)n * sizeof(*pcs));
	/* the table is bounded: past it, new stacks go stackless */
	len = (size_t)(n + 1) * sizeof(*blob);
	if (t->set.n >= GT_PCS_CAP)
		id = gt_strset_find(&t->set, blob, len);
	else if (gt_strset_add(&t->set, blob, len, &id, NULL))
		id = 0;
	if (!id)
		return -1;
	return (int32_t)(GT_STACK_INTERPOSED | (uint32_t)id);
}

int gt_mt_pcs_get(const struct gt_mt_pcs *t, int32_t id, uint64_t *ips, int max)
{
	const uint64_t *blob;
	size_t len;
	int n;

	if (!t || id < 0 || !(id & GT_STACK_INTERPOSED))
		return -ENOENT;
	blob = gt_strset_get(&t->set, (uint32_t)id & ~(uint32_t)GT_STACK_INTERPOSED, &len);
	if (!blob)
		return -ENOENT;
	n = (int)(len / sizeof(*blob)) - 1;
	if (n > max)
		n = max;
	memcpy(ips, blob + 1, (size_t)n * sizeof(*ips));
	return n;
}
