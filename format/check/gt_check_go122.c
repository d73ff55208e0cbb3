/* Phase 5, Go 1.22+: every v1 file is converted to the 1.22 model
 * (internal/trace/oldtrace.go) and Go 1.23's viewer (cmd/trace) runs its
 * proc and thread generators over the result, each with invariants of its
 * own that no parser checks (gstate.go stop: "startRunningTime != 0",
 * "non-executing goroutine stopped").  This pass replays the conversion
 * over the merged events and tracks, per goroutine and per view, the two
 * facts those invariants read: is it executing on a resource, and is its
 * start time set.  It also refuses a file the conversion leaves empty.
 *
 * What the conversion does that matters here:
 *  - until the first Gomaxprocs ("preInit") GoCreates are dropped; a
 *    GoStart becomes a GoStatus(running); GoWaiting / GoInSyscall are
 *    GoStatus events at any time; GoStatus always comes "from undetermined";
 *  - time is counted from the first event of the merged stream; a goroutine
 *    running or in a syscall "from undetermined" is started at the time of
 *    the first event the conversion emits: 0, read as unset, if that event
 *    carries the stream's first timestamp;
 *  - GoSysCall followed (for its G) by GoSysBlock is a syscall that keeps
 *    its P until that P stops (procgen's inSyscall); any other is 1 ns;
 *  - a GoStatus(syscall) on a P is such a syscall too (procgen), and it
 *    executes on that P's M, or on none if the P has no ProcStart
 *    (threadgen);
 *  - GoSysExit moves to a fake P without an M.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "gt_check_internal.h"

enum gs122 { S_NOTEXIST, S_UNDET, S_RUNNABLE, S_RUNNING, S_WAITING, S_SYSCALL };

/* One goroutine as the two viewer generators see it. */
struct g122 {
	uint8_t state;       /* enum gs122 */
	uint8_t preinit;     /* created before the first Gomaxprocs, no status yet */
	uint8_t proc_exec;   /* procgen: executing != noResource */
	uint8_t proc_unset;  /* procgen: startRunningTime == 0 */
	uint8_t thr_exec;    /* threadgen: executing on a real thread */
	uint8_t thr_unset;
	uint64_t off;        /* event that last started it, for the message */
	/* A GoSysCall whose G has had no event since: blocking if the next
	 * one is GoSysBlock (oldtrace's lookahead), else 1 ns long. */
	uint8_t sys_pending, sys_thread;
	int64_t sys_p;
	uint64_t sys_off;
};

struct p122 {
	uint8_t seen;        /* a ProcStart/ProcStop converted already */
	uint8_t has_m;       /* started: the converter knows its M */
	uint64_t in_syscall; /* procgen inSyscall[p]: goroutine id + 1, or 0 */
};

struct gt_conv {
	struct gt_ctx *c;
	struct gt_idmap gs, ps;
	uint64_t npending;   /* goroutines with sys_pending set */
	int64_t min_ts;
	int preinit;
	uint64_t npreinit;   /* goroutines created in preInit, no status yet */
	int emitted;         /* events the conversion kept so far */
	int start_unset;     /* the first kept event is at time 0 */
	int ev_unset;        /* the event being converted is at time 0 */
};

static int is_exec(int s) { return s == S_RUNNING || s == S_SYSCALL; }

static struct g122 *g_of(struct gt_conv *v, uint64_t id)
{
	int isnew;
	struct g122 *g = gt_idmap_put(&v->gs, id, &isnew);

	if (g && isnew) {
		g->state = S_NOTEXIST;
		g->proc_unset = g->thr_unset = 1;
	}
	return g;
}

static struct p122 *p_of(struct gt_conv *v, int64_t p)
{
	int isnew;

	return gt_idmap_put(&v->ps, (uint64_t)p, &isnew);
}

static int viewer_panic(struct gt_conv *v, const struct gt_pev *e, uint64_t id, const char *view,
			const char *why)
{
	return gt_ctx_fail(v->c, e->type, e->off,
			   "goroutine %llu stops in Go 1.23's %s view while %s: its viewer panics (gstate.go stop)",
			   (unsigned long long)id, view, why);
}

/* gState.stop in one view. */
static int stop(struct gt_conv *v, const struct gt_pev *e, uint64_t id, uint8_t *exec,
		uint8_t *unset, const char *view)
{
	if (*unset)
		return viewer_panic(v, e, id, view,
				    "its start time reads as unset (0: started at the trace's first timestamp, or not started since it last stopped)");
	if (!*exec)
		return viewer_panic(v, e, id, view,
				    "executing nowhere (a syscall from the start on a P with no ProcStart before it, so no thread)");
	*exec = 0;
	*unset = 1;
	return 0;
}

/* The transition from -> to of goroutine id by event e on P p, through
 * procgen then threadgen (their GoroutineTransition). */
static int transition(struct gt_conv *v, const struct gt_pev *e, uint64_t id, int from, int to,
		      int64_t p, int thread_ok)
{
	struct g122 *g = g_of(v, id);
	struct p122 *pp;
	int start_unset = from == S_UNDET ? v->start_unset : v->ev_unset;
	int rc;

	if (!g)
		return -ENOMEM;
	g->state = (uint8_t)to;
	if (from == to)
		return 0;
	/* procgen */
	if (from == S_RUNNING && !is_exec(to) &&
	    (rc = stop(v, e, id, &g->proc_exec, &g->proc_unset, "proc")))
		return rc;
	if (!is_exec(from) && to == S_RUNNING) {
		g->proc_exec = 1;
		g->proc_unset = (uint8_t)start_unset;
		g->off = e->off;
	}
	if (to == S_SYSCALL && p >= 0) {
		if (!g->proc_exec) {
			g->proc_exec = 1;
			g->proc_unset = (uint8_t)start_unset;
		}
		if (!(pp = p_of(v, p)))
			return -ENOMEM;
		pp->in_syscall = id + 1;
	}
	if (from == S_SYSCALL && p >= 0 && (pp = gt_idmap_get(&v->ps, (uint64_t)p)) && pp->in_syscall)
		pp->in_syscall = 0; /* a syscall that did not block */
	/* threadgen */
	if (is_exec(from) && !is_exec(to) &&
	    (rc = stop(v, e, id, &g->thr_exec, &g->thr_unset, "thread")))
		return rc;
	if (!is_exec(from) && is_exec(to)) {
		g->thr_exec = (uint8_t)thread_ok;
		g->thr_unset = (uint8_t)start_unset;
	}
	if (to == S_SYSCALL && !g->thr_exec) {
		g->thr_exec = (uint8_t)thread_ok;
		g->thr_unset = (uint8_t)start_unset;
	}
	return 0;
}

/* ProcStart / ProcStop as converted (ProcStatus the first time a P shows)
 * and procgen's ProcTransition: a stopping P stops its blocked syscall. */
static int proc_event(struct gt_conv *v, const struct gt_pev *e)
{
	struct p122 *pp = p_of(v, e->p);
	int seen;

	if (!pp)
		return -ENOMEM;
	seen = pp->seen;
	pp->seen = 1;
	if (e->type == GT_EV_PROC_START) {
		pp->has_m = 1;
		return 0;
	}
	pp->has_m = 0;
	if (seen && pp->in_syscall) {
		uint64_t id = pp->in_syscall - 1;
		struct g122 *g = g_of(v, id);

		pp->in_syscall = 0;
		if (!g)
			return -ENOMEM;
		return stop(v, e, id, &g->proc_exec, &g->proc_unset, "proc");
	}
	return 0;
}

static int thread_of(struct gt_conv *v, int64_t p)
{
	struct p122 *pp = gt_idmap_get(&v->ps, (uint64_t)p);

	return pp && pp->has_m;
}

/* Notes a kept event: the first one fixes the viewer's start time. */
static void kept(struct gt_conv *v, const struct gt_pev *e)
{
	v->ev_unset = !v->emitted && e->ts == v->min_ts;
	if (!v->emitted)
		v->start_unset = v->ev_unset;
	v->emitted++;
}

static void end_preinit(uint64_t id, void *val, void *arg)
{
	struct g122 *g = val;

	(void)id;
	(void)arg;
	if (g->preinit) {
		g->preinit = 0;
		g->state = S_RUNNABLE;
	}
}

static int gomaxprocs(struct gt_conv *v, const struct gt_pev *e)
{
	if (!v->preinit) {
		kept(v, e);
		return 0;
	}
	v->preinit = 0;
	/* Goroutines created with no status become runnable here, by
	 * GoStatus events at the Gomaxprocs' time that the conversion keeps. */
	if (v->npreinit)
		kept(v, e);
	gt_idmap_each(&v->gs, end_preinit, NULL);
	return 0;
}

static int go_create(struct gt_conv *v, const struct gt_pev *e)
{
	struct g122 *g = g_of(v, e->args[0]);

	if (!g)
		return -ENOMEM;
	if (v->preinit) {
		v->npreinit += !g->preinit;
		g->preinit = 1;
		g->state = S_UNDET;
		return 0;
	}
	kept(v, e);
	return transition(v, e, e->args[0], S_NOTEXIST, S_RUNNABLE, e->p, thread_of(v, e->p));
}

/* GoStart, GoWaiting, GoInSyscall as GoStatus (from undetermined). */
static int go_status(struct gt_conv *v, const struct gt_pev *e, uint64_t id, int to)
{
	struct g122 *g = g_of(v, id);

	if (!g)
		return -ENOMEM;
	v->npreinit -= g->preinit;
	g->preinit = 0;
	kept(v, e);
	return transition(v, e, id, S_UNDET, to, e->p, thread_of(v, e->p));
}

/* GoSysCall: into the syscall now; out of it at once (below) unless the
 * G's next event is GoSysBlock. */
static int go_syscall(struct gt_conv *v, const struct gt_pev *e)
{
	struct g122 *g;
	int rc;

	kept(v, e);
	rc = transition(v, e, e->g, S_RUNNING, S_SYSCALL, e->p, thread_of(v, e->p));
	if (rc)
		return rc;
	if (!(g = g_of(v, e->g)))
		return -ENOMEM;
	g->sys_pending = 1;
	g->sys_thread = (uint8_t)thread_of(v, e->p);
	g->sys_p = e->p;
	g->sys_off = e->off;
	v->npending++;
	return 0;
}

/* The pending GoSysCall of g ends: it did not block unless next is its
 * GoSysBlock (next NULL: the trace ended). */
static int settle_syscall(struct gt_conv *v, uint64_t id, struct g122 *g,
			  const struct gt_pev *next)
{
	struct gt_pev e = {0};
	struct p122 *pp;
	uint64_t other = 0;
	int rc;

	g->sys_pending = 0;
	v->npending--;
	if (next && next->type == GT_EV_GO_SYSBLOCK)
		return 0;
	e.type = GT_EV_GO_SYSCALL;
	e.off = g->sys_off;
	e.p = g->sys_p;
	/* Done at once, this would have cleared only its own mark on the P:
	 * keep one another goroutine's status event put there since. */
	pp = g->sys_p >= 0 ? gt_idmap_get(&v->ps, (uint64_t)g->sys_p) : NULL;
	if (pp && pp->in_syscall != id + 1)
		other = pp->in_syscall;
	rc = transition(v, &e, id, S_SYSCALL, S_RUNNING, g->sys_p, g->sys_thread);
	if (pp && other)
		pp->in_syscall = other;
	return rc;
}

static int convert(struct gt_conv *v, const struct gt_pev *e)
{
	int to = S_WAITING;

	if (v->npending) {
		struct g122 *g = gt_idmap_get(&v->gs, e->g);
		int rc;

		if (g && g->sys_pending && (rc = settle_syscall(v, e->g, g, e)))
			return rc;
	}
	switch (e->type) {
	case GT_EV_GOMAXPROCS:
		return gomaxprocs(v, e);
	case GT_EV_GO_CREATE:
		return go_create(v, e);
	case GT_EV_GO_SYSBLOCK:
		return 0; /* dropped: GoSysCall's lookahead made the syscall blocking */
	case GT_EV_PROC_START: case GT_EV_PROC_STOP:
		kept(v, e);
		return proc_event(v, e);
	case GT_EV_GO_START: case GT_EV_GO_START_LOCAL:
		if (v->preinit)
			return go_status(v, e, e->args[0], S_RUNNING);
		/* fall through */
	case GT_EV_GO_START_LABEL:
		kept(v, e);
		return transition(v, e, e->args[0], S_RUNNABLE, S_RUNNING, e->p, thread_of(v, e->p));
	case GT_EV_GO_WAITING:
		return go_status(v, e, e->args[0], S_WAITING);
	case GT_EV_GO_IN_SYSCALL:
		return go_status(v, e, e->args[0], S_SYSCALL);
	case GT_EV_GO_SYSCALL:
		return go_syscall(v, e);
	case GT_EV_GO_SYSEXIT: case GT_EV_GO_SYSEXIT_LOCAL:
		kept(v, e);
		return transition(v, e, e->g, S_SYSCALL, S_RUNNABLE, GT_SYSCALL_P, 0);
	case GT_EV_GO_UNBLOCK: case GT_EV_GO_UNBLOCK_LOCAL:
		kept(v, e);
		return transition(v, e, e->args[0], S_WAITING, S_RUNNABLE, e->p, thread_of(v, e->p));
	case GT_EV_GO_END: case GT_EV_GO_SCHED: case GT_EV_GO_PREEMPT:
	case GT_EV_GO_STOP: case GT_EV_GO_SLEEP: case GT_EV_GO_BLOCK:
	case GT_EV_GO_BLOCK_SEND: case GT_EV_GO_BLOCK_RECV: case GT_EV_GO_BLOCK_SELECT:
	case GT_EV_GO_BLOCK_SYNC: case GT_EV_GO_BLOCK_COND: case GT_EV_GO_BLOCK_NET:
	case GT_EV_GO_BLOCK_GC:
		if (e->type == GT_EV_GO_END)
			to = S_NOTEXIST;
		else if (e->type == GT_EV_GO_SCHED || e->type == GT_EV_GO_PREEMPT)
			to = S_RUNNABLE;
		kept(v, e);
		return transition(v, e, e->g, S_RUNNING, to, e->p, thread_of(v, e->p));
	default:
		kept(v, e);
		return 0;
	}
}

struct finish_arg {
	struct gt_conv *v;
	int rc;
};

/* gState.finish: whatever still executes is stopped at the end. */
static void finish_one(uint64_t id, void *val, void *arg)
{
	struct g122 *g = val;
	struct finish_arg *a = arg;
	struct gt_pev e = {0};

	if (a->rc)
		return;
	e.type = GT_EV_GO_START;
	e.off = g->off;
	if (g->proc_exec)
		a->rc = stop(a->v, &e, id, &g->proc_exec, &g->proc_unset, "proc");
	if (!a->rc && g->thr_exec)
		a->rc = stop(a->v, &e, id, &g->thr_exec, &g->thr_unset, "thread");
}

static void settle_one(uint64_t id, void *val, void *arg)
{
	struct g122 *g = val;
	struct finish_arg *a = arg;

	if (!a->rc && g->sys_pending)
		a->rc = settle_syscall(a->v, id, g, NULL);
}

/* The end: pending syscalls end, the file must keep an event, and
 * whatever still executes is stopped. */
static int finish(struct gt_conv *v)
{
	struct finish_arg fa = {v, 0};

	gt_idmap_each(&v->gs, settle_one, &fa);
	if (fa.rc)
		return fa.rc;
	if (!v->emitted)
		return gt_ctx_fail(v->c, -1, v->c->len,
				   "no event left once Go 1.22+ drops the snapshot's GoCreates and Gomaxprocs (Go 1.23's viewer: \"failed to parse any useful part of the trace\")");
	gt_idmap_each(&v->gs, finish_one, &fa);
	return fa.rc;
}

int gt_go122_open(struct gt_ctx *c, int64_t min_ts, struct gt_conv **out)
{
	struct gt_conv *v = calloc(1, sizeof(*v));

	*out = NULL;
	if (!v)
		return -ENOMEM;
	v->c = c;
	v->preinit = 1;
	v->min_ts = min_ts;
	if (gt_idmap_init(&v->gs, 1, sizeof(struct g122)) < 0 ||
	    gt_idmap_init(&v->ps, 1, sizeof(struct p122)) < 0) {
		gt_idmap_free(&v->gs);
		gt_idmap_free(&v->ps);
		free(v);
		return -ENOMEM;
	}
	*out = v;
	return 0;
}

int gt_go122_event(struct gt_conv *v, const struct gt_pev *e)
{
	return convert(v, e);
}

int gt_go122_close(struct gt_conv *v, int run)
{
	int rc = run ? finish(v) : 0;

	gt_idmap_free(&v->gs);
	gt_idmap_free(&v->ps);
	free(v);
	return rc;
}

int gt_check_go122(struct gt_ctx *c)
{
	struct gt_conv *v;
	int rc;

	if (!gt_ctx_viewer_rules(c) || c->version < 1011 || c->norder == 0)
		return 0;
	rc = gt_go122_open(c, c->ev[c->order[0]].ts, &v);
	for (uint32_t i = 0; !rc && i < c->norder; i++)
		rc = convert(v, &c->ev[c->order[i]]);
	if (v) {
		int rc2 = gt_go122_close(v, !rc);

		if (!rc)
			rc = rc2;
	}
	return rc;
}
