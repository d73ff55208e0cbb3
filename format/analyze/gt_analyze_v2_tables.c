/* Strings and stacks of a v2 file.  They are per generation in v2: a
 * string id names a string of its generation, and only the generation
 * being read keeps its strings; a stack is given one id for the whole
 * file by its PCs (the same stack in every generation is one id), and once
 * its generation's strings are read its frames are copied, their function
 * and file names interned, so that nothing is read from an earlier
 * generation's bytes again.  Also the lookups the printers use. */
#include <errno.h>
#include <string.h>

#include "gt_analyze_v2_run.h"

int gt_an_v2_on_string(struct v2run *r, const struct gt_v2_ev *e)
{
	struct gt_an_priv *pv = r->a->priv;

	/* id 0 means "none" and is always in Go's table: giving it is a
	 * duplicate there */
	if (e->args[0] == 0 || gt_an_map_get(&pv->strings, e->args[0], r->genidx, 0) >= 0)
		return gt_an_v2_fail(r, "tables", "string id %llu given twice", e->args[0]);
	if (gt_grow(&pv->strs, &pv->capstrs, pv->nstrs + 1, sizeof(*pv->strs)) ||
	    gt_an_map_put(&pv->strings, e->args[0], r->genidx, 0, (uint32_t)pv->nstrs))
		return -ENOMEM;
	pv->strs[pv->nstrs++] = (struct gt_an_str){ (uint64_t)(e->data - pv->data),
						    (uint32_t)e->data_len };
	r->a->strings++;
	return 0;
}

/* The content key of n frames: two hashes of their PCs, and n. */
static void stack_key(uint64_t fr[][4], size_t n, uint64_t key[3])
{
	uint64_t h1 = 1469598103934665603ull, h2 = 7;

	for (size_t k = 0; k < n; k++) {
		h1 = (h1 ^ fr[k][0]) * 1099511628211ull;
		h2 = h2 * 31 + (fr[k][0] ^ (fr[k][0] >> 29)) * 0x9e3779b97f4a7c15ull;
	}
	key[0] = h1, key[1] = h2, key[2] = n;
}

/* Each PC's first frame in this generation, the one whose string ids Go
 * checks (a later frame of the same PC is not read). */
static int first_frames(struct v2run *r, uint64_t fr[][4], size_t n)
{
	for (size_t k = 0; k < n; k++) {
		int isnew;
		uint64_t *ids = gt_idmap_insert(&r->pcs, &fr[k][0], &isnew);

		if (!ids)
			return -ENOMEM;
		if (isnew)
			ids[0] = fr[k][1], ids[1] = fr[k][2];
	}
	return 0;
}

/* String id of this generation: 0 (none) or one its tables hold. */
static int have_string(struct v2run *r, uint64_t id)
{
	return !id || gt_an_map_get(&r->a->priv->strings, id, r->genidx, 0) >= 0;
}

int gt_an_v2_check_frames(struct v2run *r)
{
	for (size_t i = 0; i < r->pcs.cap; i++) {
		const uint64_t *ids;

		if (!gt_idmap_full(&r->pcs, i))
			continue;
		ids = gt_idmap_val(&r->pcs, i);
		for (int k = 0; k < 2; k++)
			if (!have_string(r, ids[k]))
				return gt_an_v2_fail(r, "tables",
						     k ? "a frame's file string id %llu is in no "
							 "String of its generation"
						       : "a frame's function string id %llu is in no "
							 "String of its generation",
						     ids[k]);
	}
	gt_idmap_free(&r->pcs);
	gt_idmap_init(&r->pcs, 1, 2 * sizeof(uint64_t));
	return 0;
}

/* Which arguments are stack ids and string ids, per type, numbered as in
 * go122/event.go's StackIDs and StringIDs (the time is argument 0 there,
 * left out of struct v2e's args: argument i is args[i - 1]); 0 none. */
static const uint8_t id_args[GT_V2_NTYPES][2][2] = {
	[GT_V2_PROCS_CHANGE] = { { 2 } },
	[GT_V2_GO_CREATE] = { { 3, 2 } },
	[GT_V2_GO_CREATE_BLOCKED] = { { 3, 2 } },
	[GT_V2_GO_STOP] = { { 2 }, { 1 } },
	[GT_V2_GO_BLOCK] = { { 2 }, { 1 } },
	[GT_V2_GO_UNBLOCK] = { { 3 } },
	[GT_V2_GO_SYSCALL_BEGIN] = { { 2 } },
	[GT_V2_STW_BEGIN] = { { 2 }, { 1 } },
	[GT_V2_GC_BEGIN] = { { 2 } },
	[GT_V2_GC_SWEEP_BEGIN] = { { 1 } },
	[GT_V2_GC_MARK_ASSIST_BEGIN] = { { 1 } },
	[GT_V2_GO_LABEL] = { { 0 }, { 1 } },
	[GT_V2_USER_TASK_BEGIN] = { { 4 }, { 3 } },
	[GT_V2_USER_TASK_END] = { { 2 } },
	[GT_V2_USER_REGION_BEGIN] = { { 3 }, { 2 } },
	[GT_V2_USER_REGION_END] = { { 3 }, { 2 } },
	[GT_V2_USER_LOG] = { { 4 }, { 2, 3 } },
	[GT_V2_GO_STATUS_STACK] = { { 4 } },
};

int gt_an_v2_check_ids(struct v2run *r, const struct v2e *e)
{
	const uint8_t(*ids)[2] = id_args[e->type];

	for (int k = 0; k < 2; k++) {
		uint64_t stk = ids[0][k] ? e->args[ids[0][k] - 1] : 0;
		uint64_t str = ids[1][k] ? e->args[ids[1][k] - 1] : 0;

		if (stk && gt_an_map_get(&r->lstk, stk, 0, 0) < 0)
			return gt_an_v2_fail(r, "tables", "stack id %llu is in no Stack of its generation",
					     stk);
		if (!have_string(r, str))
			return gt_an_v2_fail(r, "tables",
					     "string id %llu is in no String of its generation", str);
	}
	return 0;
}

int gt_an_v2_on_stack(struct v2run *r, const struct gt_v2_ev *e, const struct gt_v2_batch *b)
{
	struct gt_an_priv *pv = r->a->priv;
	uint64_t fr[GT_V2_MAX_FRAMES][4], key[3];
	size_t n = gt_v2_frames(e, fr, GT_V2_MAX_FRAMES);
	uint64_t *gid;
	int isnew;

	/* id 0 means "none" and is always in Go's table: a duplicate */
	if (e->args[0] == 0 || gt_an_map_get(&r->lstk, e->args[0], 0, 0) >= 0)
		return gt_an_v2_fail(r, "tables", "stack id %llu given twice", e->args[0]);
	if (first_frames(r, fr, n))
		return -ENOMEM;
	if (n == 0) /* an id Go knows, of no frames: no stack here */
		return gt_an_map_put(&r->lstk, e->args[0], 0, 0, 0) ? -ENOMEM : 0;
	r->a->stacks++;
	stack_key(fr, n, key);
	gid = gt_idmap_insert(&r->content, key, &isnew);
	if (!gid)
		return -ENOMEM;
	if (isnew) {
		*gid = ++r->nextstk;
		if (gt_grow(&pv->stks, &pv->capstks, pv->nstks + 1, sizeof(*pv->stks)) ||
		    gt_an_map_put(&pv->stacks, *gid, 0, 0, (uint32_t)pv->nstks))
			return -ENOMEM;
		pv->stks[pv->nstks++] = (struct gt_an_stk){ e->off, -1, b->end, r->genidx };
	}
	if ((uint32_t)*gid != *gid)
		return -ENOMEM;
	return gt_an_map_put(&r->lstk, e->args[0], 0, 0, (uint32_t)*gid) ? -ENOMEM : 0;
}

void gt_an_v2_new_tables(struct v2run *r)
{
	struct gt_an_priv *pv = r->a->priv;

	gt_an_map_free(&r->lstk);
	gt_an_map_free(&pv->strings);
	pv->nstrs = 0;
}

/* The name id (in priv->fnames) of this generation's string sid, 0 for
 * none or an empty one; -ENOMEM. */
static int name_id(struct v2run *r, uint64_t sid, uint64_t *id)
{
	size_t len;
	const char *s = gt_an_string_v2(r->a, sid, r->genidx, &len);

	*id = 0;
	if (!s || !len)
		return 0;
	return gt_strset_add(&r->a->priv->fnames, s, len, id, NULL) ? -ENOMEM : 0;
}

/* Copies the frames of stack s (first seen in this generation). */
static int name_stack(struct v2run *r, struct gt_an_stk *s)
{
	struct gt_an_priv *pv = r->a->priv;
	struct gt_v2_batch b = { .off = s->off, .end = s->end, .kind = GT_V2_K_STACKS };
	struct gt_v2_cursor c;
	struct gt_v2_ev e;
	uint64_t fr[GT_V2_MAX_FRAMES][4];
	size_t n;
	char err[8];

	gt_v2_cursor_init(&c, &r->f, &b);
	if (gt_v2_next_event(&c, &e, err, sizeof(err)) != 1 || e.type != GT_V2_STACK)
		return 0; /* read once already: cannot happen */
	n = gt_v2_frames(&e, fr, GT_V2_MAX_FRAMES);
	if (gt_grow(&pv->frames, &pv->capframes, pv->nframes + n, sizeof(*pv->frames)))
		return -ENOMEM;
	s->fr = (uint32_t)pv->nframes;
	s->nfr = (uint32_t)n;
	for (size_t k = 0; k < n; k++) {
		struct gt_an_fr *o = &pv->frames[pv->nframes++];

		o->pc = fr[k][0];
		o->line = fr[k][3];
		if (name_id(r, fr[k][1], &o->fn) || name_id(r, fr[k][2], &o->file))
			return -ENOMEM;
	}
	return 0;
}

int gt_an_v2_name_stacks(struct v2run *r)
{
	struct gt_an_priv *pv = r->a->priv;
	int rc;

	for (; pv->named < pv->nstks; pv->named++)
		if ((rc = name_stack(r, &pv->stks[pv->named])))
			return rc;
	return 0;
}

uint64_t gt_an_v2_stk(struct v2run *r, uint64_t id)
{
	int64_t g = id ? gt_an_map_get(&r->lstk, id, 0, 0) : -1;

	return g < 0 ? 0 : (uint64_t)g;
}

/* ---- lookups for the printers ----------------------------------------------- */

const char *gt_an_string_v2(const struct gt_analysis *a, uint64_t id, uint32_t gen, size_t *len)
{
	int64_t i = gt_an_map_get(&a->priv->strings, id, gen, 0);

	if (i < 0)
		return NULL;
	*len = a->priv->strs[i].len;
	return (const char *)a->priv->data + a->priv->strs[i].off;
}

size_t gt_an_stack_v2(const struct gt_analysis *a, int64_t i, struct gt_an_frame *out, size_t max)
{
	const struct gt_an_priv *pv = a->priv;
	const struct gt_an_stk *s = &pv->stks[i];
	size_t n = (size_t)i < pv->named ? s->nfr : 0;

	if (n > max)
		n = max;
	for (size_t k = 0; k < n; k++) {
		const struct gt_an_fr *f = &pv->frames[s->fr + k];
		struct gt_an_frame *o = &out[k];

		memset(o, 0, sizeof(*o));
		o->pc = f->pc;
		o->line = f->line;
		o->fn = f->fn ? gt_strset_get(&pv->fnames, f->fn, &o->fn_len) : NULL;
		o->file = f->file ? gt_strset_get(&pv->fnames, f->file, &o->file_len) : NULL;
		if (!o->fn)
			o->fn = "", o->fn_len = 0;
		if (!o->file)
			o->file = "", o->file_len = 0;
	}
	return n;
}
