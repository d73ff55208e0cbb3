/* GoStatus in a v2 file: in the first generation what a legacy runtime
 * wrote at trace start (GoCreate without stacks, GoWaiting / GoInSyscall /
 * GoStart by status, then Gomaxprocs); in later ones a restatement of what
 * is known (a mismatch is an anomaly), or a goroutine first seen. */
#include <errno.h>

#include "gt_analyze_v2_run.h"
#include "wire/gt_events.h"

/* A goroutine the trace states (GoStatus) that the analysis has not seen:
 * what a legacy runtime wrote for it.  create: at trace start (GoCreate
 * first, before Gomaxprocs, with name_stk: a GoStatusStack's stack, which
 * names the goroutine as Go 1.23 does). */
static int introduce(struct v2run *r, uint64_t g, uint64_t status, uint64_t m, uint64_t ts,
		     int create, uint64_t name_stk)
{
	struct gstate *s;
	struct mstate *ms;
	int rc = 0;

	if (create)
		rc = gt_an_v2_emit(r, GT_EV_GO_CREATE, 0, -1, g, name_stk, 0, ts);
	if (!rc && status == GT_V2_G_WAITING)
		rc = gt_an_v2_emit(r, GT_EV_GO_WAITING, g, -1, g, 0, 0, ts);
	if (!rc && status == GT_V2_G_SYSCALL)
		rc = gt_an_v2_emit(r, GT_EV_GO_IN_SYSCALL, g, -1, g, 0, 0, ts);
	if (!rc && (status == GT_V2_G_RUNNING || status == GT_V2_G_SYSCALL)) {
		if (!(ms = mst(r, m)))
			return -ENOMEM;
		ms->g = g;
		if (create)
			ms->pre |= PRE_G;
		if (status == GT_V2_G_RUNNING)
			rc = gt_an_v2_emit(r, GT_EV_GO_START, g, ms->p, g, 0, 0, ts);
	}
	if (rc)
		return rc;
	if (!(s = gst(r, g)))
		return -ENOMEM;
	s->status = (uint8_t)status;
	return 0;
}

/* What the Go 1.23 viewers note of a status: a GoStatusStack with a stack
 * (a transition they track), a goroutine running. */
static int status_viewers(struct v2run *r, const struct v2e *e, uint64_t g, uint64_t st)
{
	int rc;

	if (e->type == GT_V2_GO_STATUS_STACK && e->args[3]) {
		rc = gt_an_viewers_status(r->a, g, (int)st, gt_an_ns(r->a, (int64_t)e->ts));
		if (rc)
			return rc;
	}
	if (st == GT_V2_G_RUNNING)
		return gt_an_viewers_started(r->a, g, gt_an_ns(r->a, (int64_t)e->ts));
	return 0;
}

int gt_an_v2_on_status(struct v2run *r, const struct v2e *e)
{
	uint64_t g = e->args[0], m = e->args[1], st = e->args[2];
	struct gstate *s;
	struct mstate *ms;
	int rc;

	if (st < GT_V2_G_RUNNABLE || st > GT_V2_G_WAITING)
		return gt_an_v2_fail(r, "statuses", "goroutine status %llu is not one", st);
	if ((rc = status_viewers(r, e, g, st)))
		return rc;
	if ((rc = gt_an_v2_set_seq(r, g, 0)))
		return rc;
	if (!(s = gst(r, g)))
		return -ENOMEM;
	/* a running goroutine is the stating M's (order.go), one in a
	 * syscall the M it names */
	if (st == GT_V2_G_RUNNING)
		m = e->m;
	if (!s->status)
		return introduce(r, g, st, m, e->ts, 0, 0);
	if (s->status != st &&
	    (rc = gt_an_v2_anomaly(r, "statuses",
				   "GoStatus of goroutine %llu restates another status", g)))
		return rc;
	if (st == GT_V2_G_RUNNING || st == GT_V2_G_SYSCALL) {
		if (!(ms = mst(r, m)))
			return -ENOMEM;
		ms->g = g;
		ms->pre &= (uint8_t)~PRE_G;
	}
	return 0;
}

/* The first generation's earliest time (*t0), and the Ps it states held
 * (ProcStatus running or in a syscall) to their Ms; *procs: its first
 * ProcsChange (0: none). */
static int start_procs(struct v2run *r, uint64_t *t0, uint64_t *procs)
{
	struct v2scan sc = { 0 };
	struct v2e e;
	struct mstate *ms;
	int rc, first = 1;

	*procs = 0;
	while ((rc = gt_an_v2_scan(r, &sc, &e)) == 1) {
		if (first || e.ts < *t0)
			*t0 = e.ts;
		first = 0;
		if (e.type == GT_V2_PROCS_CHANGE && !*procs)
			*procs = e.args[0];
		if (e.type == GT_V2_PROC_STATUS &&
		    (e.args[1] == GT_V2_P_RUNNING || e.args[1] == GT_V2_P_SYSCALL)) {
			if (!(ms = mst(r, e.m)))
				return -ENOMEM;
			ms->p = (int64_t)e.args[0];
			ms->pre |= PRE_P;
		}
	}
	return rc;
}

/* Each goroutine the first generation states, introduced at t0. */
static int start_goroutines(struct v2run *r, uint64_t t0)
{
	struct v2scan sc = { 0 };
	struct v2e e;
	int rc;

	while ((rc = gt_an_v2_scan(r, &sc, &e)) == 1) {
		struct gstate *s;

		if (e.type != GT_V2_GO_STATUS && e.type != GT_V2_GO_STATUS_STACK)
			continue;
		if (!(s = gst(r, e.args[0])))
			return -ENOMEM;
		if (s->status)
			continue;
		rc = introduce(r, e.args[0], e.args[2],
			       e.args[2] == GT_V2_G_RUNNING ? e.m : e.args[1], t0, 1,
			       e.type == GT_V2_GO_STATUS_STACK ? gt_an_v2_stk(r, e.args[3]) : 0);
		if (!rc)
			rc = gt_an_v2_set_seq(r, e.args[0], 0);
		if (rc)
			return rc;
	}
	return rc;
}

/* The first generation: the goroutines it states, as a legacy runtime
 * announced them at trace start, then Gomaxprocs. */
int gt_an_v2_start(struct v2run *r)
{
	uint64_t t0 = 0, procs;
	int rc;

	if ((rc = start_procs(r, &t0, &procs)))
		return rc;
	r->a->priv->min_ts = (int64_t)t0;
	r->a->priv->has_min = 1;
	if ((rc = start_goroutines(r, t0)))
		return rc;
	r->started = 1;
	return gt_an_v2_emit(r, GT_EV_GOMAXPROCS, 0, -1, procs, 0, 0, t0);
}
