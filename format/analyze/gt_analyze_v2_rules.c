/* The rules Go's order.go holds each v2 event to besides its order: what
 * its M must have (a thread, a P, a goroutine, or none: validateCtx), the
 * state of the goroutine or P it acts on, the ranges in flight (STW and
 * mark assists per goroutine, sweeps per P), the GC's sequence and the
 * user tasks.  Go refuses a file that breaks one; here it is an anomaly
 * for report and an error for inspect (rules "context", "statuses",
 * "ranges", "GC sequence").  The ranges and the GC's state are kept here
 * only. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gt_analyze_v2_run.h"

enum { MAY, MUST, MUST_NOT };

/* (thread, P, goroutine) each type requires of its M; types not named
 * are not checked (GoUnblock, statuses, Active events: Go checks none). */
static const uint8_t reqs[GT_V2_NTYPES][3] = {
	[GT_V2_PROCS_CHANGE] = { MUST, MUST, MUST },
	[GT_V2_PROC_START] = { MUST, MAY, MAY }, /* a P held: it waits */
	[GT_V2_PROC_STOP] = { MUST, MUST, MAY },
	[GT_V2_PROC_STEAL] = { MUST, MAY, MAY },
	[GT_V2_GO_CREATE] = { MUST, MUST, MAY },
	[GT_V2_GO_CREATE_BLOCKED] = { MUST, MUST, MAY },
	[GT_V2_GO_CREATE_SYSCALL] = { MUST, MAY, MUST_NOT },
	[GT_V2_GO_START] = { MUST, MUST, MUST_NOT },
	[GT_V2_GO_DESTROY] = { MUST, MUST, MUST },
	[GT_V2_GO_DESTROY_SYSCALL] = { MUST, MAY, MUST },
	[GT_V2_GO_STOP] = { MUST, MUST, MUST },
	[GT_V2_GO_BLOCK] = { MUST, MUST, MUST },
	[GT_V2_GO_SYSCALL_BEGIN] = { MUST, MUST, MUST },
	[GT_V2_GO_SYSCALL_END] = { MUST, MUST, MUST },
	[GT_V2_GO_SYSCALL_END_BLOCKED] = { MUST, MAY, MUST },
	[GT_V2_STW_BEGIN] = { MUST, MUST, MUST },
	[GT_V2_STW_END] = { MUST, MUST, MUST },
	[GT_V2_GC_SWEEP_BEGIN] = { MUST, MUST, MAY },
	[GT_V2_GC_SWEEP_END] = { MUST, MUST, MAY },
	[GT_V2_GC_MARK_ASSIST_BEGIN] = { MUST, MUST, MUST },
	[GT_V2_GC_MARK_ASSIST_END] = { MUST, MUST, MUST },
	[GT_V2_HEAP_ALLOC] = { MUST, MUST, MAY },
	[GT_V2_HEAP_GOAL] = { MUST, MUST, MAY },
	[GT_V2_GO_LABEL] = { MUST, MUST, MUST },
	[GT_V2_USER_TASK_BEGIN] = { MUST, MUST, MUST },
	[GT_V2_USER_TASK_END] = { MUST, MUST, MUST },
	[GT_V2_USER_REGION_BEGIN] = { MUST, MUST, MUST },
	[GT_V2_USER_REGION_END] = { MUST, MUST, MUST },
	[GT_V2_USER_LOG] = { MUST, MUST, MUST },
	[GT_V2_GO_SWITCH] = { MUST, MUST, MUST },
	[GT_V2_GO_SWITCH_DESTROY] = { MUST, MUST, MUST },
};

static const uint8_t user_go[3] = { MUST, MUST, MUST };

static int broken(struct v2run *r, const char *rule, const struct v2e *e, const char *what)
{
	char msg[200];

	snprintf(msg, sizeof(msg), "%s on M %llu: %s", gt_v2_name(e->type),
		 (unsigned long long)e->m, what);
	return gt_an_v2_anomaly_msg(r, rule, msg);
}

/* validateCtx: the M (none for a batch of no M), its P and goroutine. */
static int context(struct v2run *r, const struct v2e *e, const uint8_t q[3], int64_t p, uint64_t g)
{
	int thread = e->m != UINT64_MAX;

	if (q[0] == MUST && !thread)
		return broken(r, "context", e, "needs a thread");
	if (q[1] == MUST && p < 0)
		return broken(r, "context", e, "needs a P, the M holds none");
	if (q[2] == MUST && !g)
		return broken(r, "context", e, "needs a goroutine, the M runs none");
	if (q[2] == MUST_NOT && g)
		return broken(r, "context", e, "needs no goroutine, the M runs one");
	return 0;
}

/* The goroutine's status if order.go has its state, else 0 (the first
 * generation's goroutines are introduced at its start here, to Go only
 * by their GoStatus). */
static int g_status(const struct v2run *r, uint64_t g)
{
	const struct gstate *s = gt_idmap_find(&r->gs, &g);

	return s && s->known ? s->status : 0;
}

static int set_known(struct v2run *r, uint64_t g, int known)
{
	int isnew;
	struct gstate *s = gt_idmap_insert(&r->gs, &g, &isnew);

	if (!s)
		return -ENOMEM;
	s->known = (uint8_t)known;
	return 0;
}

static int p_status(const struct v2run *r, int64_t p)
{
	uint64_t k = (uint64_t)p;
	const struct pstate *s = p < 0 ? NULL : gt_idmap_find(&r->ps, &k);

	return s ? s->status : 0;
}

/* A range of begin type t on resource res (G, or PKEY of a P): begin
 * (desc + 1 kept), active (first generation: begun; later: must be in
 * flight), end. */
static int range_begin(struct v2run *r, const struct v2e *e, uint64_t res, int t, uint64_t desc)
{
	uint64_t key[2] = { res, (uint64_t)t };
	int isnew;
	uint64_t *v = gt_idmap_insert(&r->ranges, key, &isnew);

	if (!v)
		return -ENOMEM;
	if (!isnew)
		return broken(r, "ranges", e, "a range of its kind is in flight already");
	*v = desc + 1;
	return 0;
}

static int range_active(struct v2run *r, const struct v2e *e, uint64_t res, int t)
{
	uint64_t key[2] = { res, (uint64_t)t };

	if (r->genidx == 1)
		return range_begin(r, e, res, t, 0);
	return gt_idmap_find(&r->ranges, key) ? 0
	       : broken(r, "ranges", e, "no range of its kind is in flight");
}

static int range_end(struct v2run *r, const struct v2e *e, uint64_t res, int t)
{
	uint64_t key[2] = { res, (uint64_t)t };

	return gt_idmap_remove(&r->ranges, key) ? 0
	       : broken(r, "ranges", e, "no range of its kind is in flight");
}

/* A goroutine's user regions: a stack of (task, name); an end must match
 * the innermost begin by task and name's bytes (the string ids are per
 * generation), unless none is open. */
static int region(struct v2run *r, const struct v2e *e, uint64_t g)
{
	uint64_t dk[2] = { g, UINT64_MAX }, key[2] = { g, 0 };
	uint64_t *depth, *top;
	size_t len = 0;
	const char *name = gt_an_string_v2(r->a, e->args[1], r->genidx, &len);
	const uint8_t *data = r->a->priv->data;
	uint64_t off = name ? (uint64_t)((const uint8_t *)name - data) : 0;
	int isnew;

	if (!(depth = gt_idmap_insert(&r->regions, dk, &isnew)))
		return -ENOMEM;
	if (e->type == GT_V2_USER_REGION_BEGIN) {
		key[1] = ++*depth;
		if (!(top = gt_idmap_insert(&r->regions, key, &isnew)))
			return -ENOMEM;
		top[0] = e->args[0], top[1] = off, top[2] = len;
		return 0;
	}
	if (!*depth)
		return 0;
	key[1] = *depth;
	top = gt_idmap_find(&r->regions, key);
	if (top && (top[0] != e->args[0] || top[2] != len ||
		    (len && memcmp(data + top[1], data + off, len))))
		return broken(r, "ranges", e, "a region end that is not the innermost begin's");
	gt_idmap_remove(&r->regions, key);
	if ((depth = gt_idmap_find(&r->regions, dk)))
		--*depth;
	return 0;
}

/* A goroutine's ranges and regions end with it (Go forgets its state). */
static void g_gone(struct v2run *r, uint64_t g)
{
	uint64_t k1[2] = { g, GT_V2_STW_BEGIN }, k2[2] = { g, GT_V2_GC_MARK_ASSIST_BEGIN };
	uint64_t dk[2] = { g, UINT64_MAX };
	uint64_t *depth = gt_idmap_find(&r->regions, dk);

	gt_idmap_remove(&r->ranges, k1);
	gt_idmap_remove(&r->ranges, k2);
	for (uint64_t d = depth ? *depth : 0; d > 0; d--) {
		uint64_t key[2] = { g, d };

		gt_idmap_remove(&r->regions, key);
	}
	gt_idmap_remove(&r->regions, dk);
}

int gt_an_v2_gc_waits(const struct v2run *r, const struct v2e *e)
{
	switch (e->type) {
	case GT_V2_GC_ACTIVE:
		return r->genidx != 1 && e->args[0] != r->gcseq + 1;
	case GT_V2_GC_BEGIN:
		return r->gcstate != 0 && e->args[0] != r->gcseq + 1;
	case GT_V2_GC_END:
		return e->args[0] != r->gcseq + 1;
	}
	return 0;
}

/* GCActive, GCBegin, GCEnd (their number is the next, or the order let
 * them go out of it: a rule broken already). */
static int gc(struct v2run *r, const struct v2e *e, int64_t p, uint64_t g)
{
	int st = r->gcstate, first = e->type == GT_V2_GC_ACTIVE ? r->genidx == 1 : st == 0;

	if (e->type == GT_V2_GC_ACTIVE && r->genidx == 1 && st != 0)
		return broken(r, "GC sequence", e, "GCActive after another GC event");
	r->gcseq = e->args[0];
	r->gcstate = e->type == GT_V2_GC_END ? 2 : 1;
	gt_an_v2_wake(r, GCKEY);
	if (first && e->type != GT_V2_GC_END)
		return 0;
	if (e->type == GT_V2_GC_ACTIVE && st != 1)
		return broken(r, "GC sequence", e, "GCActive while no GC runs");
	if (e->type == GT_V2_GC_BEGIN && st == 1)
		return broken(r, "GC sequence", e, "GCBegin while a GC runs");
	if (e->type == GT_V2_GC_END && st != 1)
		return broken(r, "GC sequence", e, "GCEnd while no GC runs");
	return context(r, e, user_go, p, g);
}

/* GoStatus of a goroutine in a syscall: on an M (its stating one, which
 * runs it after the first generation, or another that runs it if it was
 * seen). */
static int syscall_status(struct v2run *r, const struct v2e *e, uint64_t g)
{
	uint64_t mid = e->args[1], gid = e->args[0];
	struct mstate *o;
	int seen;

	if (mid == UINT64_MAX)
		return broken(r, "statuses", e, "a goroutine in a syscall on no M");
	if (mid == e->m)
		return r->genidx > 1 && g != gid
		       ? broken(r, "statuses", e, "its M runs another goroutine") : 0;
	/* an M order.go has no state for gets one, running gid */
	o = gt_idmap_find(&r->ms, &mid);
	seen = o && (o->pre & M_SEEN);
	if (o)
		o->pre |= M_SEEN;
	return seen && ((o->pre & PRE_G) ? 0 : o->g) != gid
	       ? broken(r, "statuses", e, "the M it names runs another goroutine") : 0;
}

/* The state the event's goroutine or P must be in. */
static int states(struct v2run *r, const struct v2e *e, int64_t p, uint64_t g)
{
	switch (e->type) {
	case GT_V2_GO_DESTROY: case GT_V2_GO_STOP: case GT_V2_GO_BLOCK:
	case GT_V2_GO_SWITCH: case GT_V2_GO_SWITCH_DESTROY:
		return g_status(r, g) == GT_V2_G_RUNNING ? 0
		       : broken(r, "statuses", e, "its goroutine is not running");
	case GT_V2_GO_SYSCALL_BEGIN:
		if (g_status(r, g) != GT_V2_G_RUNNING)
			return broken(r, "statuses", e, "its goroutine is not running");
		return p_status(r, p) ? 0 : broken(r, "statuses", e, "its P was never stated");
	case GT_V2_GO_SYSCALL_END:
		if (g_status(r, g) != GT_V2_G_SYSCALL)
			return broken(r, "statuses", e, "its goroutine is not in a syscall");
		return p_status(r, p) == GT_V2_P_SYSCALL ? 0
		       : broken(r, "statuses", e, "its P is not in a syscall");
	case GT_V2_GO_SYSCALL_END_BLOCKED:
		return g_status(r, g) == GT_V2_G_SYSCALL ? 0
		       : broken(r, "statuses", e, "its goroutine is not in a syscall");
	case GT_V2_GO_DESTROY_SYSCALL:
		if (g_status(r, g) != GT_V2_G_SYSCALL)
			return broken(r, "statuses", e, "its goroutine is not in a syscall");
		return p < 0 || p_status(r, p) == GT_V2_P_SYSCALL ? 0
		       : broken(r, "statuses", e, "its P is not in a syscall");
	case GT_V2_PROC_STOP:
		return p_status(r, p) == GT_V2_P_RUNNING || p_status(r, p) == GT_V2_P_SYSCALL ? 0
		       : broken(r, "statuses", e, "its P is neither running nor in a syscall");
	case GT_V2_GO_CREATE: case GT_V2_GO_CREATE_BLOCKED:
		if (g && g_status(r, g) && g_status(r, g) != GT_V2_G_RUNNING)
			return broken(r, "statuses", e, "its goroutine is not running");
		/* fall through */
	case GT_V2_GO_CREATE_SYSCALL:
		return g_status(r, e->args[0]) ? broken(r, "statuses", e, "the goroutine exists")
					       : 0;
	case GT_V2_GO_STATUS: case GT_V2_GO_STATUS_STACK:
		if (r->genidx > 1 && !g_status(r, e->args[0]))
			return broken(r, "statuses", e, "a goroutine first stated after the first "
					"generation");
		return e->args[2] == GT_V2_G_SYSCALL ? syscall_status(r, e, g) : 0;
	}
	return 0;
}

/* STW and mark assists per goroutine, sweeps per P, user tasks. */
static int ranges(struct v2run *r, const struct v2e *e, int64_t p, uint64_t g)
{
	uint64_t pk = PKEY(p);
	uint64_t task[2] = { e->args[0], 1ull << 62 };
	int isnew;

	switch (e->type) {
	case GT_V2_STW_BEGIN: case GT_V2_GC_MARK_ASSIST_BEGIN:
		if (!g_status(r, g))
			return broken(r, "ranges", e, "its goroutine has no state");
		return range_begin(r, e, g, e->type, e->type == GT_V2_STW_BEGIN ? e->args[0] : 0);
	case GT_V2_STW_END: case GT_V2_GC_MARK_ASSIST_END:
		if (!g_status(r, g))
			return broken(r, "ranges", e, "its goroutine has no state");
		return range_end(r, e, g, e->type == GT_V2_STW_END ? GT_V2_STW_BEGIN
								     : GT_V2_GC_MARK_ASSIST_BEGIN);
	case GT_V2_GC_MARK_ASSIST_ACTIVE:
		if (!g_status(r, e->args[0]))
			return broken(r, "ranges", e, "its goroutine has no state");
		return range_active(r, e, e->args[0], GT_V2_GC_MARK_ASSIST_BEGIN);
	case GT_V2_GC_SWEEP_BEGIN:
		return range_begin(r, e, pk, GT_V2_GC_SWEEP_BEGIN, 0);
	case GT_V2_GC_SWEEP_END:
		return range_end(r, e, pk, GT_V2_GC_SWEEP_BEGIN);
	case GT_V2_GC_SWEEP_ACTIVE:
		if (!p_status(r, (int64_t)e->args[0]))
			return broken(r, "ranges", e, "its P was never stated");
		return range_active(r, e, PKEY(e->args[0]), GT_V2_GC_SWEEP_BEGIN);
	case GT_V2_USER_TASK_BEGIN:
		if (!gt_idmap_insert(&r->ranges, task, &isnew))
			return -ENOMEM;
		return isnew ? 0 : broken(r, "ranges", e, "a task of its id is in flight");
	case GT_V2_USER_TASK_END:
		gt_idmap_remove(&r->ranges, task);
		return 0;
	case GT_V2_USER_REGION_BEGIN: case GT_V2_USER_REGION_END:
		if (!g_status(r, g))
			return broken(r, "ranges", e, "its goroutine has no state");
		return region(r, e, g);
	}
	return 0;
}

int gt_an_v2_rules(struct v2run *r, const struct v2e *e, const struct mstate *ms)
{
	int64_t p = !ms || e->m == UINT64_MAX || (ms->pre & PRE_P) ? -1 : ms->p;
	uint64_t g = !ms || e->m == UINT64_MAX || (ms->pre & PRE_G) ? 0 : ms->g;
	int rc;

	if (g == UINT64_MAX) /* Go's NoGoroutine, -1: an M bound to it has none */
		g = 0;

	if (e->type == GT_V2_GC_ACTIVE || e->type == GT_V2_GC_BEGIN || e->type == GT_V2_GC_END)
		return gc(r, e, p, g);
	if ((rc = context(r, e, reqs[e->type], p, g)) || (rc = states(r, e, p, g)) ||
	    (rc = ranges(r, e, p, g)))
		return rc;
	switch (e->type) {
	case GT_V2_GO_DESTROY: case GT_V2_GO_SWITCH_DESTROY: case GT_V2_GO_DESTROY_SYSCALL:
		g_gone(r, g);
		return set_known(r, g, 0);
	case GT_V2_GO_STATUS: case GT_V2_GO_STATUS_STACK: case GT_V2_GO_CREATE:
	case GT_V2_GO_CREATE_BLOCKED: case GT_V2_GO_CREATE_SYSCALL:
		return set_known(r, e->args[0], 1);
	}
	return 0;
}
