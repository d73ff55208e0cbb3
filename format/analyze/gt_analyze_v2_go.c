/* Goroutine transitions of a v2 file, each handed to the analysis as the
 * legacy event that means the same (the table in gt_analyze_v2.c), with
 * the goroutine's state and sequence number kept as Go's order.go keeps
 * them.  Each handler reads the M's goroutine (cur) and P (p) as they
 * were when the event came. */
#include <errno.h>
#include <string.h>

#include "gt_analyze_v2_run.h"
#include "wire/gt_events.h"

int gt_an_v2_set_seq(struct v2run *r, uint64_t g, uint64_t seq)
{
	struct gstate *s = gst(r, g);

	if (!s)
		return -ENOMEM;
	s->gen = r->genidx;
	s->seq = seq;
	gt_an_v2_wake(r, g);
	return 0;
}

static int set_status(struct v2run *r, uint64_t g, int st)
{
	struct gstate *s = gst(r, g);

	if (!s)
		return -ENOMEM;
	gt_an_v2_wake(r, g);
	s->status = (uint8_t)st;
	if (st == GT_V2_G_SYSCALL)
		s->sysblocked = 0;
	return 0;
}

int gt_an_v2_sys_block(struct v2run *r, uint64_t g, int64_t p, uint64_t ts)
{
	struct gstate *s = gst(r, g);

	if (!s)
		return -ENOMEM;
	if (s->status != GT_V2_G_SYSCALL || s->sysblocked)
		return 0;
	s->sysblocked = 1;
	return gt_an_v2_emit(r, GT_EV_GO_SYSBLOCK, g, p, 0, 0, 0, ts);
}

/* A goroutine event needs its M's goroutine (Go: "must have a goroutine"):
 * 0 it has one, 1 skip the event, < 0 the error. */
static int need_g(struct v2run *r, const struct v2e *e, uint64_t g)
{
	int rc;

	if (g)
		return 0;
	rc = gt_an_v2_anomaly(r, "statuses",
			      "an event that needs a goroutine (type %llu) on an M running none",
			      e->type);
	return rc ? rc : 1;
}

static int block_type(struct v2run *r, uint64_t sid)
{
	static const struct { const char *s; int t; } map[] = {
		{ "chan send", GT_EV_GO_BLOCK_SEND }, { "chan receive", GT_EV_GO_BLOCK_RECV },
		{ "select", GT_EV_GO_BLOCK_SELECT }, { "sync", GT_EV_GO_BLOCK_SYNC },
		{ "sync.(*Cond).Wait", GT_EV_GO_BLOCK_COND }, { "network", GT_EV_GO_BLOCK_NET },
		{ "sleep", GT_EV_GO_SLEEP }, { "forever", GT_EV_GO_STOP },
		{ "GC mark assist wait for work", GT_EV_GO_BLOCK_GC },
	};
	size_t len;
	const char *s = gt_an_string_v2(r->a, sid, r->genidx, &len);

	for (size_t i = 0; s && i < sizeof(map) / sizeof(map[0]); i++)
		if (strlen(map[i].s) == len && !memcmp(map[i].s, s, len))
			return map[i].t;
	return GT_EV_GO_BLOCK;
}

static int stop_type(struct v2run *r, uint64_t sid)
{
	size_t len;
	const char *s = gt_an_string_v2(r->a, sid, r->genidx, &len);

	return s && len == 15 && !memcmp(s, "runtime.Gosched", 15) ? GT_EV_GO_SCHED
								 : GT_EV_GO_PREEMPT;
}

/* GoCreate, GoCreateBlocked: a new goroutine, runnable or waiting. */
static int go_create(struct v2run *r, const struct v2e *e, struct mstate *ms)
{
	uint64_t g = e->args[0];
	int rc;

	rc = gt_an_v2_emit(r, GT_EV_GO_CREATE, ms->g, ms->p, g, gt_an_v2_stk(r, e->args[1]),
			   gt_an_v2_stk(r, e->args[2]), e->ts);
	if (!rc && e->type == GT_V2_GO_CREATE_BLOCKED)
		rc = gt_an_v2_emit(r, GT_EV_GO_WAITING, g, ms->p, g, 0, 0, e->ts);
	if (!rc)
		rc = gt_an_v2_set_seq(r, g, 0);
	return rc ? rc : set_status(r, g, e->type == GT_V2_GO_CREATE ? GT_V2_G_RUNNABLE
								       : GT_V2_G_WAITING);
}

/* GoCreateSyscall: a new goroutine, the M's, in a syscall. */
static int go_create_syscall(struct v2run *r, const struct v2e *e, struct mstate *ms)
{
	uint64_t g = e->args[0];
	int rc;

	ms->g = g;
	rc = gt_an_v2_emit(r, GT_EV_GO_CREATE, 0, ms->p, g, 0, 0, e->ts);
	if (!rc)
		rc = gt_an_v2_emit(r, GT_EV_GO_IN_SYSCALL, g, ms->p, g, 0, 0, e->ts);
	if (!rc)
		rc = gt_an_v2_set_seq(r, g, 0);
	return rc ? rc : set_status(r, g, GT_V2_G_SYSCALL);
}

static int go_start(struct v2run *r, const struct v2e *e, struct mstate *ms)
{
	uint64_t g = e->args[0];
	struct gstate *s = gst(r, g);
	int rc;

	if (!s)
		return -ENOMEM;
	if (s->status != GT_V2_G_RUNNABLE &&
	    (rc = gt_an_v2_anomaly(r, "statuses", "GoStart of goroutine %llu, not runnable", g)))
		return rc;
	ms->g = g;
	rc = gt_an_v2_emit(r, GT_EV_GO_START, g, ms->p, g, e->args[1], 0, e->ts);
	if (!rc)
		rc = gt_an_v2_set_seq(r, g, e->args[1]);
	return rc ? rc : set_status(r, g, GT_V2_G_RUNNING);
}

static int go_unblock(struct v2run *r, const struct v2e *e, struct mstate *ms)
{
	uint64_t g = e->args[0];
	struct gstate *s = gst(r, g);
	int rc;

	if (!s)
		return -ENOMEM;
	if (s->status != GT_V2_G_WAITING &&
	    (rc = gt_an_v2_anomaly(r, "statuses", "GoUnblock of goroutine %llu, not waiting", g)))
		return rc;
	rc = gt_an_v2_emit(r, GT_EV_GO_UNBLOCK, ms->g, ms->p, g, e->args[1],
			   gt_an_v2_stk(r, e->args[2]), e->ts);
	if (!rc)
		rc = gt_an_v2_set_seq(r, g, e->args[1]);
	return rc ? rc : set_status(r, g, GT_V2_G_RUNNABLE);
}

/* GoSwitch, GoSwitchDestroy: the M's goroutine blocks (or ends) and hands
 * the M to another, which it unblocks and starts. */
static int go_switch(struct v2run *r, const struct v2e *e, struct mstate *ms)
{
	uint64_t cur = ms->g, g = e->args[0], ts = e->ts;
	int64_t p = ms->p;
	int sw = e->type == GT_V2_GO_SWITCH, rc;

	if ((rc = need_g(r, e, cur)))
		return rc < 0 ? rc : 0;
	rc = gt_an_v2_emit(r, sw ? GT_EV_GO_BLOCK : GT_EV_GO_END, cur, p, 0, 0, 0, ts);
	if (!rc)
		rc = set_status(r, cur, sw ? GT_V2_G_WAITING : 0);
	if (!rc)
		rc = gt_an_v2_emit(r, GT_EV_GO_UNBLOCK, cur, p, g, 0, 0, ts);
	if (!rc)
		rc = gt_an_v2_emit(r, GT_EV_GO_START, g, p, g, 0, 0, ts);
	if (!rc)
		rc = gt_an_v2_set_seq(r, g, e->args[1]);
	ms->g = g;
	return rc ? rc : set_status(r, g, GT_V2_G_RUNNING);
}

/* GoDestroy, GoDestroySyscall: the M's goroutine ends (leaving its P
 * abandoned in the syscall for the latter). */
static int go_destroy(struct v2run *r, const struct v2e *e, struct mstate *ms)
{
	uint64_t cur = ms->g;
	int64_t p = ms->p;
	int rc;

	ms->g = 0;
	if (e->type == GT_V2_GO_DESTROY_SYSCALL && (rc = gt_an_v2_syscall_p(r, e, ms)))
		return rc;
	rc = gt_an_v2_emit(r, GT_EV_GO_END, cur, p, 0, 0, 0, e->ts);
	return rc ? rc : set_status(r, cur, 0);
}

static int go_syscall_end(struct v2run *r, const struct v2e *e, struct mstate *ms)
{
	uint64_t cur = ms->g;
	struct gt_an_thread *t = gt_an_thread_get(r->a, cur);
	int64_t ns = gt_an_ns(r->a, (int64_t)e->ts);
	int rc;

	if ((rc = gt_an_v2_syscall_p(r, e, ms)))
		return rc;
	if (!t)
		return -ENOMEM;
	/* an end at its begin's very time is a v1 GoSysCall written as
	 * v2 (record --go-version 1.22+, docs/format.md "Recording
	 * v2"): the call stays open, as after a GoSysCall, so that the
	 * block right after it is that syscall blocking */
	if (!(t->sys_open && t->sys_ns == ns))
		rc = gt_an_syscall_end(r->a, cur, ns);
	return rc ? rc : set_status(r, cur, GT_V2_G_RUNNING);
}

/* The events about the M's goroutine (it must have one). */
static int go_own(struct v2run *r, const struct v2e *e, struct mstate *ms)
{
	uint64_t cur = ms->g, ts = e->ts;
	int64_t p = ms->p;
	int rc;

	if ((rc = need_g(r, e, cur)))
		return rc < 0 ? rc : 0;
	switch (e->type) {
	case GT_V2_GO_DESTROY: case GT_V2_GO_DESTROY_SYSCALL:
		return go_destroy(r, e, ms);
	case GT_V2_GO_STOP:
		ms->g = 0;
		rc = gt_an_v2_emit(r, stop_type(r, e->args[0]), cur, p, 0, 0,
				   gt_an_v2_stk(r, e->args[1]), ts);
		return rc ? rc : set_status(r, cur, GT_V2_G_RUNNABLE);
	case GT_V2_GO_BLOCK:
		ms->g = 0;
		rc = gt_an_v2_emit(r, block_type(r, e->args[0]), cur, p, 0, 0,
				   gt_an_v2_stk(r, e->args[1]), ts);
		return rc ? rc : set_status(r, cur, GT_V2_G_WAITING);
	case GT_V2_GO_SYSCALL_BEGIN:
		if ((rc = gt_an_v2_syscall_p(r, e, ms)))
			return rc;
		rc = gt_an_v2_emit(r, GT_EV_GO_SYSCALL, cur, p, 0, 0, gt_an_v2_stk(r, e->args[1]),
				   ts);
		return rc ? rc : set_status(r, cur, GT_V2_G_SYSCALL);
	case GT_V2_GO_SYSCALL_END:
		return go_syscall_end(r, e, ms);
	case GT_V2_GO_SYSCALL_END_BLOCKED:
		ms->g = 0;
		rc = gt_an_v2_sys_block(r, cur, p, ts);
		if (!rc)
			rc = gt_an_v2_emit(r, GT_EV_GO_SYSEXIT, cur, p, cur, 0, 0, ts);
		return rc ? rc : set_status(r, cur, GT_V2_G_RUNNABLE);
	}
	return 0;
}

int gt_an_v2_on_go(struct v2run *r, const struct v2e *e, struct mstate *ms)
{
	switch (e->type) {
	case GT_V2_GO_CREATE: case GT_V2_GO_CREATE_BLOCKED:
		return go_create(r, e, ms);
	case GT_V2_GO_CREATE_SYSCALL:
		return go_create_syscall(r, e, ms);
	case GT_V2_GO_START:
		return go_start(r, e, ms);
	case GT_V2_GO_UNBLOCK:
		return go_unblock(r, e, ms);
	case GT_V2_GO_SWITCH: case GT_V2_GO_SWITCH_DESTROY:
		return go_switch(r, e, ms);
	case GT_V2_GO_DESTROY: case GT_V2_GO_DESTROY_SYSCALL: case GT_V2_GO_STOP:
	case GT_V2_GO_BLOCK: case GT_V2_GO_SYSCALL_BEGIN: case GT_V2_GO_SYSCALL_END:
	case GT_V2_GO_SYSCALL_END_BLOCKED:
		return go_own(r, e, ms);
	}
	/* others (GC, heap, user annotations) change no goroutine's state */
	return 0;
}
