/* The heap record of --heap interpose once memtrack has handed it over
 * (gt_memtrack_take_record), and the table of its samples' stacks: both
 * belong to their taker, who reads them on its own thread.  See memtrack.h. */
#include "internal.h"

#include <errno.h>

struct gt_mt_interpose *gt_memtrack_take_record(struct gt_memtrack *m, int bit)
{
	struct gt_mt_interpose *ip;

	if (!m || bit < 0 || bit >= GT_MAX_SESSIONS || !m->s[bit].active)
		return NULL;
	ip = m->s[bit].ip;
	m->s[bit].ip = NULL; /* from now on memtrack never reads it */
	return ip;
}

void gt_memtrack_record_close(struct gt_mt_interpose *rec)
{
	gt_mt_interpose_close(rec);
}

int gt_memtrack_record_poll(struct gt_mt_interpose *rec, struct gt_mt_pcs *stacks, int bit,
			    uint64_t ts, gt_memtrack_emit_fn fn, void *ctx)
{
	return rec ? gt_mt_interpose_poll(rec, stacks, bit, ts, fn, ctx) : 0;
}

int gt_memtrack_record_samples(struct gt_mt_interpose *rec, struct gt_mt_pcs *stacks, int bit,
			       gt_memtrack_emit_fn fn, void *ctx)
{
	return rec ? gt_mt_interpose_samples(rec, stacks, bit, fn, ctx) : 0;
}

void gt_memtrack_record_mode(struct gt_mt_interpose *rec, pid_t pid, enum gt_heap_mode mode)
{
	/* a process memtrack does not account (gone, or not the session's)
	 * keeps what it had */
	if (rec && (mode == GT_HEAP_INTERPOSE || mode == GT_HEAP_RSS))
		gt_mt_interpose_exclude(rec, pid, mode == GT_HEAP_RSS);
}

struct gt_mt_pcs *gt_memtrack_stacks_new(void)
{
	return gt_mt_pcs_new();
}

void gt_memtrack_stacks_free(struct gt_mt_pcs *stacks)
{
	gt_mt_pcs_free(stacks);
}

int gt_memtrack_stacks_get(const struct gt_mt_pcs *stacks, int32_t id, uint64_t *ips, int max)
{
	return stacks ? gt_mt_pcs_get(stacks, id, ips, max) : -ENOENT;
}
