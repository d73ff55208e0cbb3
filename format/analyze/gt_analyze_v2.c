/* The analysis of a Go 1.22+ (v2) trace: each generation is read whole
 * (its batches' events, at most a generation's worth of memory), sorted by
 * time, and every state transition is handed to the analysis as the legacy
 * event that means the same (docs/format.md, "Go 1.22+ native format (v2)"):
 *
 *   GoCreate -> GoCreate            GoStart -> GoStart (P: its M's)
 *   GoDestroy -> GoEnd              GoUnblock -> GoUnblock (waker: the M's G)
 *   GoStop "runtime.Gosched" -> GoSched, any other reason -> GoPreempt
 *   GoBlock by reason, as Go 1.23's oldtrace.go maps the other way:
 *     "chan send" GoBlockSend, "chan receive" GoBlockRecv, "select"
 *     GoBlockSelect, "sync" GoBlockSync, "sync.(*Cond).Wait" GoBlockCond,
 *     "network" GoBlockNet, "sleep" GoSleep, "forever" GoStop, "GC mark
 *     assist wait for work" GoBlockGC, any other (system goroutine wait,
 *     GC waits, unspecified) GoBlock
 *   GoSyscallBegin -> GoSysCall; GoSyscallEnd ends the call there;
 *   ProcSteal of an M in a syscall -> GoSysBlock of its G;
 *   GoSyscallEndBlocked -> (GoSysBlock if no steal was seen) GoSysExit
 *   GoStatus of the first generation -> what a legacy runtime wrote at
 *     trace start: GoCreate without stacks, GoWaiting / GoInSyscall /
 *     GoStart by status, then Gomaxprocs; in later generations a status
 *     restates what is known (a mismatch is an anomaly).
 *
 * Order: each M's events in its own order; among the Ms' next events the
 * earliest that may go, as Go's order.go admits them: a GoStart when its
 * goroutine is runnable with the sequence number before its own, a
 * GoUnblock or GoSwitch when it is waiting at that number; a ProcStart
 * when its P is idle at the sequence number before its own and its M
 * holds none, a ProcSteal when its P is in a syscall at the number before
 * its own, a GoSyscallEndBlocked once its M's P has left the
 * syscall (stolen or stopped); any other event at once.  A GoSyscallBegin
 * must carry its P's next number (rule "P sequence", as Go fails at once).
 * When nothing may go the earliest waiting event goes anyway (rule "P
 * sequence" if it waits on a P, else "ordering": an anomaly, an error for
 * inspect).  The figures cannot change for it: each
 * interval runs between its two events' own timestamps; the order only
 * decides which transitions pair up, and the goroutine sequence numbers
 * pair them as Go does.
 *
 * Stacks and strings are per generation in v2: a stack is given one id
 * for the whole file by its PCs (the same stack in every generation is one
 * id), and keeps the generation whose strings name its frames. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gt_analyze_internal.h"
#include "v2/gt_v2.h"
#include "wire/gt_events.h"

struct v2e {
	uint64_t ts, idx, m;
	uint64_t args[5];
	uint8_t type;
};

struct mstate {
	uint64_t g;
	int64_t p;
};

/* A P as order.go sees it: status, and its sequence number (gen: the
 * generation ordinal that numbered it; a ProcStatus restarts it at 0). */
struct pstate {
	uint8_t status; /* GT_V2_P_*, 0: never stated */
	uint32_t gen;
	uint64_t seq;
};

struct gstate {
	uint8_t status; /* GT_V2_G_*, 0: unknown (dead or never seen) */
	uint8_t sysblocked;
	uint32_t gen;   /* generation (ordinal) of seq */
	uint64_t seq;   /* its sequence number in that generation */
};

/* An M's run of the generation's events (r->ev[pos..end)), a merge head. */
struct mhead {
	size_t pos, end;
	int64_t next_wait;  /* the next head waiting on the same goroutine */
	int waiting;
};

struct run {
	struct gt_analysis *a;
	struct gt_v2_file f;
	struct gt_v2_batch *batches;
	size_t nbatches, capbatches;
	struct v2e *ev;
	size_t nev, capev;
	struct gt_idmap ms, gs;     /* M -> mstate, G -> gstate */
	struct gt_idmap ps;         /* P -> pstate */
	struct gt_idmap lstk;       /* this generation's stack id -> global */
	struct gt_idmap content;    /* (pc hash, pc hash, n) -> global id */
	struct mhead *heads;        /* per M, then the heap of ready ones */
	size_t nheads, capheads;
	size_t *heap;               /* indexes into heads: those that may go */
	size_t nheap, capheap, nwaiting;
	struct gt_idmap waits;      /* G, or PKEY(P), -> first head waiting on
				     * it (+1) */
	int disorder;               /* nothing could go: time order for the
				     * rest of the generation */
	uint64_t gen;               /* current generation's number */
	uint32_t genidx;            /* its ordinal, from 1 */
	uint64_t nextstk;
	int started;                /* the first generation was done */
};

static int fail(struct run *r, const char *rule, const char *fmt, unsigned long long x)
{
	char what[160];

	snprintf(what, sizeof(what), fmt, x);
	snprintf(r->a->error, sizeof(r->a->error), "generation %llu: %s (rule: %s)",
		 (unsigned long long)r->gen, what, rule);
	return -EINVAL;
}

/* An event that breaks a state rule of Go's reader: counted, or with
 * opts.strict the error. */
static int anomaly(struct run *r, const char *rule, const char *fmt, unsigned long long x)
{
	if (r->a->priv->opts.strict)
		return fail(r, rule, fmt, x);
	r->a->anomalies++;
	return 0;
}

/* anomaly() with a message made already. */
static int anomaly_msg(struct run *r, const char *rule, const char *msg)
{
	if (!r->a->priv->opts.strict) {
		r->a->anomalies++;
		return 0;
	}
	snprintf(r->a->error, sizeof(r->a->error), "generation %llu: %s (rule: %s)",
		 (unsigned long long)r->gen, msg, rule);
	return -EINVAL;
}

/* ---- tables -------------------------------------------------------------- */

static int on_string(struct run *r, const struct gt_v2_ev *e)
{
	struct gt_an_priv *pv = r->a->priv;

	if (gt_an_map_get(&pv->strings, e->args[0], r->genidx, 0) >= 0)
		return fail(r, "tables", "string id %llu given twice", e->args[0]);
	if (gt_an_grow(&pv->strs, &pv->capstrs, pv->nstrs + 1, sizeof(*pv->strs)) ||
	    gt_an_map_put(&pv->strings, e->args[0], r->genidx, 0, (uint32_t)pv->nstrs))
		return -ENOMEM;
	pv->strs[pv->nstrs++] = (struct gt_an_str){ (uint64_t)(e->data - pv->data),
						    (uint32_t)e->data_len };
	r->a->strings++;
	return 0;
}

static int on_stack(struct run *r, const struct gt_v2_ev *e, const struct gt_v2_batch *b)
{
	struct gt_an_priv *pv = r->a->priv;
	uint64_t fr[GT_V2_MAX_FRAMES][4], h1 = 1469598103934665603ull, h2 = 7, key[3];
	size_t n = gt_v2_frames(e, fr, GT_V2_MAX_FRAMES);
	uint64_t *gid;
	int isnew;

	if (e->args[0] == 0 || n == 0)
		return 0; /* Go keeps no entry for id 0 or no frames */
	if (gt_an_map_get(&r->lstk, e->args[0], 0, 0) >= 0)
		return fail(r, "tables", "stack id %llu given twice", e->args[0]);
	r->a->stacks++;
	for (size_t k = 0; k < n; k++) {
		h1 = (h1 ^ fr[k][0]) * 1099511628211ull;
		h2 = h2 * 31 + (fr[k][0] ^ (fr[k][0] >> 29)) * 0x9e3779b97f4a7c15ull;
	}
	key[0] = h1, key[1] = h2, key[2] = n;
	gid = gt_idmap_insert(&r->content, key, &isnew);
	if (!gid)
		return -ENOMEM;
	if (isnew) {
		*gid = ++r->nextstk;
		if (gt_an_grow(&pv->stks, &pv->capstks, pv->nstks + 1, sizeof(*pv->stks)) ||
		    gt_an_map_put(&pv->stacks, *gid, 0, 0, (uint32_t)pv->nstks))
			return -ENOMEM;
		pv->stks[pv->nstks++] = (struct gt_an_stk){ e->off, -1, b->end, r->genidx };
	}
	if ((uint32_t)*gid != *gid)
		return -ENOMEM;
	return gt_an_map_put(&r->lstk, e->args[0], 0, 0, (uint32_t)*gid) ? -ENOMEM : 0;
}

/* The global id of this generation's stack id (0: none or unknown). */
static uint64_t gstk(struct run *r, uint64_t id)
{
	int64_t g = id ? gt_an_map_get(&r->lstk, id, 0, 0) : -1;

	return g < 0 ? 0 : (uint64_t)g;
}

/* ---- a generation's batches ---------------------------------------------- */

static int decode_batch(struct run *r, const struct gt_v2_batch *b)
{
	struct gt_v2_cursor c;
	struct gt_v2_ev e;
	int rc;

	gt_v2_cursor_init(&c, &r->f, b);
	while ((rc = gt_v2_next_event(&c, &e, r->a->error, sizeof(r->a->error))) == 1) {
		switch (e.type) {
		case GT_V2_STRING:
			rc = on_string(r, &e);
			break;
		case GT_V2_STACK:
			rc = on_stack(r, &e, b);
			break;
		case GT_V2_FREQUENCY:
			if (e.args[0] == 0 || (int64_t)e.args[0] < 0)
				return fail(r, "frequency", "frequency %llu is not one", e.args[0]);
			if (r->a->freq && r->a->freq != e.args[0])
				return fail(r, "frequency", "frequency changed to %llu", e.args[0]);
			r->a->freq = e.args[0];
			rc = 0;
			break;
		case GT_V2_STRINGS: case GT_V2_STACKS: case GT_V2_CPU_SAMPLES:
			rc = 0;
			break;
		default:
			rc = 0;
			if (gt_an_grow(&r->ev, &r->capev, r->nev + 1, sizeof(*r->ev)))
				return -ENOMEM;
			r->ev[r->nev] = (struct v2e){ e.ts, r->nev, b->m, { 0 }, e.type };
			memcpy(r->ev[r->nev].args, e.args + (gt_v2_descs[e.type].timed ? 1 : 0),
			       sizeof(r->ev[r->nev].args));
			r->nev++;
		}
		if (rc)
			return rc;
	}
	return rc;
}

/* ---- state ---------------------------------------------------------------- */

static struct mstate *mst(struct run *r, uint64_t m)
{
	int isnew;
	struct mstate *s = gt_idmap_insert(&r->ms, &m, &isnew);

	if (s && isnew)
		s->p = -1;
	return s;
}

/* The wait key of a P (a goroutine's is its id: a clash only wakes a
 * head to look again). */
#define PKEY(p) ((uint64_t)(p) | (1ull << 63))

static struct pstate *pst(struct run *r, uint64_t p)
{
	int isnew;

	return gt_idmap_insert(&r->ps, &p, &isnew);
}

static struct gstate *gst(struct run *r, uint64_t g)
{
	int isnew;

	return gt_idmap_insert(&r->gs, &g, &isnew);
}

static int set_seq(struct run *r, uint64_t g, uint64_t seq);
static void wake(struct run *r, uint64_t g);
static int syscall_p(struct run *r, const struct v2e *e, struct mstate *ms);

static int emit(struct run *r, int type, uint64_t g, int64_t p, uint64_t a0, uint64_t a1,
		uint64_t stk, uint64_t ts)
{
	int rc;

	struct gt_pev e = { .ts = (int64_t)ts, .g = g, .args = { a0, a1, 0 }, .stk = stk,
			    .p = p, .type = (uint8_t)type };
	int64_t ns = gt_an_ns(r->a, (int64_t)ts);

	/* Generations overlap in time (an M flushes a generation's batch
	 * after another M began the next one): time going back across a
	 * boundary is the format, not an anomaly.  Go's reader then moves
	 * such events to the previous event's time + 1 ns; here they keep
	 * their own (the analysis counts a negative interval as 0). */
	rc = gt_an_event(r->a, &e, ns);
	/* at trace start (GoStatus running) the status's own time counts */
	if (!rc && type == GT_EV_GO_START && r->started)
		rc = gt_an_viewers_started(r->a, g, ns);
	return rc;
}

static int block_type(struct run *r, uint64_t sid)
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

static int stop_type(struct run *r, uint64_t sid)
{
	size_t len;
	const char *s = gt_an_string_v2(r->a, sid, r->genidx, &len);

	return s && len == 15 && !memcmp(s, "runtime.Gosched", 15) ? GT_EV_GO_SCHED
								 : GT_EV_GO_PREEMPT;
}

/* A goroutine the trace states (GoStatus) that the analysis has not seen:
 * what a legacy runtime wrote for it.  create: at trace start (GoCreate
 * first, before Gomaxprocs, with name_stk: a GoStatusStack's stack, which
 * names the goroutine as Go 1.23 does). */
static int introduce(struct run *r, uint64_t g, uint64_t status, uint64_t m, uint64_t ts,
		     int create, uint64_t name_stk)
{
	struct gstate *s;
	struct mstate *ms;
	int rc = 0;

	if (create)
		rc = emit(r, GT_EV_GO_CREATE, 0, -1, g, name_stk, 0, ts);
	if (!rc && status == GT_V2_G_WAITING)
		rc = emit(r, GT_EV_GO_WAITING, g, -1, g, 0, 0, ts);
	if (!rc && status == GT_V2_G_SYSCALL)
		rc = emit(r, GT_EV_GO_IN_SYSCALL, g, -1, g, 0, 0, ts);
	if (!rc && (status == GT_V2_G_RUNNING || status == GT_V2_G_SYSCALL)) {
		if (!(ms = mst(r, m)))
			return -ENOMEM;
		ms->g = g;
		if (status == GT_V2_G_RUNNING)
			rc = emit(r, GT_EV_GO_START, g, ms->p, g, 0, 0, ts);
	}
	if (rc)
		return rc;
	if (!(s = gst(r, g)))
		return -ENOMEM;
	s->status = (uint8_t)status;
	return 0;
}

static int on_status(struct run *r, const struct v2e *e)
{
	uint64_t g = e->args[0], m = e->args[1], st = e->args[2];
	struct gstate *s;
	struct mstate *ms;
	int rc;

	if (st < GT_V2_G_RUNNABLE || st > GT_V2_G_WAITING)
		return fail(r, "statuses", "goroutine status %llu is not one", st);
	if (e->type == GT_V2_GO_STATUS_STACK && e->args[3]) {
		rc = gt_an_viewers_status(r->a, g, (int)st, gt_an_ns(r->a, (int64_t)e->ts));
		if (rc)
			return rc;
	}
	if (st == GT_V2_G_RUNNING &&
	    (rc = gt_an_viewers_started(r->a, g, gt_an_ns(r->a, (int64_t)e->ts))))
		return rc;
	if ((rc = set_seq(r, g, 0)))
		return rc;
	if (!(s = gst(r, g)))
		return -ENOMEM;
	if (!s->status)
		return introduce(r, g, st, m, e->ts, 0, 0);
	if (s->status != st &&
	    (rc = anomaly(r, "statuses", "GoStatus of goroutine %llu restates another status", g)))
		return rc;
	if (st == GT_V2_G_RUNNING || st == GT_V2_G_SYSCALL) {
		if (!(ms = mst(r, m)))
			return -ENOMEM;
		ms->g = g;
	}
	return 0;
}

/* The first generation: the goroutines it states, as a legacy runtime
 * announced them at trace start, then Gomaxprocs. */
static int start(struct run *r)
{
	uint64_t t0 = r->ev[0].ts, procs = 0;

	for (size_t i = 1; i < r->nev; i++)
		if (r->ev[i].ts < t0)
			t0 = r->ev[i].ts;
	struct mstate *ms;
	int rc;

	r->a->priv->min_ts = (int64_t)t0;
	r->a->priv->has_min = 1;
	for (size_t i = 0; i < r->nev; i++) {
		const struct v2e *e = &r->ev[i];

		if (e->type == GT_V2_PROCS_CHANGE && !procs)
			procs = e->args[0];
		if (e->type == GT_V2_PROC_STATUS &&
		    (e->args[1] == GT_V2_P_RUNNING || e->args[1] == GT_V2_P_SYSCALL)) {
			if (!(ms = mst(r, e->m)))
				return -ENOMEM;
			ms->p = (int64_t)e->args[0];
		}
	}
	for (size_t i = 0; i < r->nev; i++) {
		const struct v2e *e = &r->ev[i];
		struct gstate *s;

		if (e->type != GT_V2_GO_STATUS && e->type != GT_V2_GO_STATUS_STACK)
			continue;
		if (!(s = gst(r, e->args[0])))
			return -ENOMEM;
		if (s->status)
			continue;
		rc = introduce(r, e->args[0], e->args[2], e->args[1], t0, 1,
			       e->type == GT_V2_GO_STATUS_STACK ? gstk(r, e->args[3]) : 0);
		if (!rc)
			rc = set_seq(r, e->args[0], 0);
		if (rc)
			return rc;
	}
	r->started = 1;
	return emit(r, GT_EV_GOMAXPROCS, 0, -1, procs, 0, 0, t0);
}

/* ---- the events ------------------------------------------------------------ */

/* g's sequence number is seq in this generation (GoStatus, GoCreate: 0;
 * GoStart, GoUnblock, GoSwitch: theirs). */
static int set_seq(struct run *r, uint64_t g, uint64_t seq)
{
	struct gstate *s = gst(r, g);

	if (!s)
		return -ENOMEM;
	s->gen = r->genidx;
	s->seq = seq;
	wake(r, g);
	return 0;
}

static void heap_push(struct run *r, size_t h);

/* g changed: the heads waiting on it may go now. */
static void wake(struct run *r, uint64_t g)
{
	uint64_t *first = gt_idmap_find(&r->waits, &g);
	int64_t h;

	if (!first || !*first)
		return;
	for (h = (int64_t)*first - 1; h >= 0; h = r->heads[h].next_wait) {
		r->heads[h].waiting = 0;
		r->nwaiting--;
		heap_push(r, (size_t)h);
	}
	*first = 0;
}

static int set_status(struct run *r, uint64_t g, int st)
{
	struct gstate *s = gst(r, g);

	if (!s)
		return -ENOMEM;
	wake(r, g);
	s->status = (uint8_t)st;
	if (st == GT_V2_G_SYSCALL)
		s->sysblocked = 0;
	return 0;
}

static int sys_block(struct run *r, uint64_t g, int64_t p, uint64_t ts)
{
	struct gstate *s = gst(r, g);

	if (!s)
		return -ENOMEM;
	if (s->status != GT_V2_G_SYSCALL || s->sysblocked)
		return 0;
	s->sysblocked = 1;
	return emit(r, GT_EV_GO_SYSBLOCK, g, p, 0, 0, 0, ts);
}

/* A goroutine event needs its M's goroutine (Go: "must have a goroutine"):
 * 0 it has one, 1 skip the event, < 0 the error. */
static int need_g(struct run *r, const struct v2e *e, uint64_t g)
{
	int rc;

	if (g)
		return 0;
	rc = anomaly(r, "statuses", "an event that needs a goroutine (type %llu) on an M running none",
		     e->type);
	return rc ? rc : 1;
}

static int on_go(struct run *r, const struct v2e *e, struct mstate *ms)
{
	uint64_t cur = ms->g, ts = e->ts;
	int64_t p = ms->p;
	int rc;

	switch (e->type) {
	case GT_V2_GO_CREATE: case GT_V2_GO_CREATE_BLOCKED:
		rc = emit(r, GT_EV_GO_CREATE, cur, p, e->args[0], gstk(r, e->args[1]),
			  gstk(r, e->args[2]), ts);
		if (!rc && e->type == GT_V2_GO_CREATE_BLOCKED)
			rc = emit(r, GT_EV_GO_WAITING, e->args[0], p, e->args[0], 0, 0, ts);
		if (!rc)
			rc = set_seq(r, e->args[0], 0);
		return rc ? rc : set_status(r, e->args[0], e->type == GT_V2_GO_CREATE ?
					    GT_V2_G_RUNNABLE : GT_V2_G_WAITING);
	case GT_V2_GO_CREATE_SYSCALL:
		ms->g = e->args[0];
		rc = emit(r, GT_EV_GO_CREATE, 0, p, e->args[0], 0, 0, ts);
		if (!rc)
			rc = emit(r, GT_EV_GO_IN_SYSCALL, e->args[0], p, e->args[0], 0, 0, ts);
		if (!rc)
			rc = set_seq(r, e->args[0], 0);
		return rc ? rc : set_status(r, e->args[0], GT_V2_G_SYSCALL);
	case GT_V2_GO_START: {
		struct gstate *s = gst(r, e->args[0]);

		if (!s)
			return -ENOMEM;
		if (s->status != GT_V2_G_RUNNABLE &&
		    (rc = anomaly(r, "statuses", "GoStart of goroutine %llu, not runnable", e->args[0])))
			return rc;
		ms->g = e->args[0];
		rc = emit(r, GT_EV_GO_START, e->args[0], p, e->args[0], e->args[1], 0, ts);
		if (!rc)
			rc = set_seq(r, e->args[0], e->args[1]);
		return rc ? rc : set_status(r, e->args[0], GT_V2_G_RUNNING);
	}
	case GT_V2_GO_UNBLOCK: {
		struct gstate *s = gst(r, e->args[0]);

		if (!s)
			return -ENOMEM;
		if (s->status != GT_V2_G_WAITING &&
		    (rc = anomaly(r, "statuses", "GoUnblock of goroutine %llu, not waiting", e->args[0])))
			return rc;
	}
		rc = emit(r, GT_EV_GO_UNBLOCK, cur, p, e->args[0], e->args[1], gstk(r, e->args[2]), ts);
		if (!rc)
			rc = set_seq(r, e->args[0], e->args[1]);
		return rc ? rc : set_status(r, e->args[0], GT_V2_G_RUNNABLE);
	case GT_V2_GO_SWITCH: case GT_V2_GO_SWITCH_DESTROY:
		if ((rc = need_g(r, e, cur)))
			return rc < 0 ? rc : 0;
		rc = emit(r, e->type == GT_V2_GO_SWITCH ? GT_EV_GO_BLOCK : GT_EV_GO_END, cur, p, 0,
			  0, 0, ts);
		if (!rc)
			rc = set_status(r, cur, e->type == GT_V2_GO_SWITCH ? GT_V2_G_WAITING : 0);
		if (!rc)
			rc = emit(r, GT_EV_GO_UNBLOCK, cur, p, e->args[0], 0, 0, ts);
		if (!rc)
			rc = emit(r, GT_EV_GO_START, e->args[0], p, e->args[0], 0, 0, ts);
		if (!rc)
			rc = set_seq(r, e->args[0], e->args[1]);
		ms->g = e->args[0];
		return rc ? rc : set_status(r, e->args[0], GT_V2_G_RUNNING);
	}
	/* the rest are about the M's goroutine; others (GC, heap, user
	 * annotations) change no goroutine's state */
	switch (e->type) {
	case GT_V2_GO_DESTROY: case GT_V2_GO_DESTROY_SYSCALL: case GT_V2_GO_STOP:
	case GT_V2_GO_BLOCK: case GT_V2_GO_SYSCALL_BEGIN: case GT_V2_GO_SYSCALL_END:
	case GT_V2_GO_SYSCALL_END_BLOCKED:
		break;
	default:
		return 0;
	}
	if ((rc = need_g(r, e, cur)))
		return rc < 0 ? rc : 0;
	switch (e->type) {
	case GT_V2_GO_DESTROY: case GT_V2_GO_DESTROY_SYSCALL:
		ms->g = 0;
		if (e->type == GT_V2_GO_DESTROY_SYSCALL && (rc = syscall_p(r, e, ms)))
			return rc;
		rc = emit(r, GT_EV_GO_END, cur, p, 0, 0, 0, ts);
		return rc ? rc : set_status(r, cur, 0);
	case GT_V2_GO_STOP:
		ms->g = 0;
		rc = emit(r, stop_type(r, e->args[0]), cur, p, 0, 0, gstk(r, e->args[1]), ts);
		return rc ? rc : set_status(r, cur, GT_V2_G_RUNNABLE);
	case GT_V2_GO_BLOCK:
		ms->g = 0;
		rc = emit(r, block_type(r, e->args[0]), cur, p, 0, 0, gstk(r, e->args[1]), ts);
		return rc ? rc : set_status(r, cur, GT_V2_G_WAITING);
	case GT_V2_GO_SYSCALL_BEGIN:
		if ((rc = syscall_p(r, e, ms)))
			return rc;
		rc = emit(r, GT_EV_GO_SYSCALL, cur, p, 0, 0, gstk(r, e->args[1]), ts);
		return rc ? rc : set_status(r, cur, GT_V2_G_SYSCALL);
	case GT_V2_GO_SYSCALL_END: {
		struct gt_an_thread *t = gt_an_thread_get(r->a, cur);
		int64_t ns = gt_an_ns(r->a, (int64_t)ts);

		if ((rc = syscall_p(r, e, ms)))
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
	case GT_V2_GO_SYSCALL_END_BLOCKED:
		ms->g = 0;
		rc = sys_block(r, cur, p, ts);
		if (!rc)
			rc = emit(r, GT_EV_GO_SYSEXIT, cur, p, cur, 0, 0, ts);
		return rc ? rc : set_status(r, cur, GT_V2_G_RUNNABLE);
	}
	return 0;
}

/* P p changed (status, sequence number, M): the heads waiting on it look
 * again. */
static void p_changed(struct run *r, uint64_t p)
{
	wake(r, PKEY(p));
}

static const char *p_status_name(int st)
{
	static const char *names[] = { "not stated", "running", "idle", "in a syscall",
				       "in an abandoned syscall" };

	return st >= 0 && st <= GT_V2_P_SYSCALL_ABANDONED ? names[st] : "?";
}

/* ProcStatus: the P's status (a syscall stays one when restated as
 * abandoned, as in Go), its sequence number from 0. */
static int on_proc_status(struct run *r, const struct v2e *e, struct mstate *ms)
{
	uint64_t p = e->args[0], st = e->args[1];
	struct pstate *ps = pst(r, p);
	int rc;

	if (!ps)
		return -ENOMEM;
	if (st < GT_V2_P_RUNNING || st > GT_V2_P_SYSCALL_ABANDONED)
		return fail(r, "statuses", "proc status %llu is not one", st);
	if (st == GT_V2_P_SYSCALL_ABANDONED &&
	    (ps->status == GT_V2_P_SYSCALL || ps->status == GT_V2_P_SYSCALL_ABANDONED))
		st = ps->status;
	if (ps->status && ps->status != st &&
	    (rc = anomaly(r, "statuses", "ProcStatus of P %llu restates another status", p)))
		return rc;
	ps->status = (uint8_t)st;
	ps->gen = r->genidx;
	ps->seq = 0;
	if (st == GT_V2_P_RUNNING || st == GT_V2_P_SYSCALL)
		ms->p = (int64_t)p;
	p_changed(r, p);
	return 0;
}

/* ProcSteal (it went: its P was in a syscall at the number before). */
static int on_proc_steal(struct run *r, const struct v2e *e, struct mstate *ms)
{
	uint64_t p = e->args[0], victim = e->args[2];
	struct pstate *ps = pst(r, p);
	struct mstate *vm;
	int old, rc;

	if (!ps)
		return -ENOMEM;
	old = ps->status;
	ps->status = GT_V2_P_IDLE;
	ps->gen = r->genidx;
	ps->seq = e->args[1];
	p_changed(r, p);
	if (old == GT_V2_P_SYSCALL_ABANDONED)
		return 0; /* Go: its M is not known any more */
	if (!(vm = victim == e->m ? ms : mst(r, victim)))
		return -ENOMEM;
	if (vm->p != (int64_t)p &&
	    (rc = anomaly(r, "statuses", "ProcSteal of P %llu from an M that does not hold it", p)))
		return rc;
	if (vm->p == (int64_t)p)
		vm->p = -1;
	return vm->g ? sys_block(r, vm->g, (int64_t)p, e->ts) : 0;
}

static int on_proc(struct run *r, const struct v2e *e, struct mstate *ms)
{
	struct pstate *ps;
	int rc;

	switch (e->type) {
	case GT_V2_PROCS_CHANGE:
		return emit(r, GT_EV_GOMAXPROCS, 0, ms->p, e->args[0], 0, 0, e->ts);
	case GT_V2_PROC_START:
		if (!(ps = pst(r, e->args[0])))
			return -ENOMEM;
		ps->status = GT_V2_P_RUNNING;
		ps->gen = r->genidx;
		ps->seq = e->args[1];
		ms->p = (int64_t)e->args[0];
		p_changed(r, e->args[0]);
		return emit(r, GT_EV_PROC_START, 0, ms->p, e->m, 0, 0, e->ts);
	case GT_V2_PROC_STOP:
		if (ms->p < 0)
			return anomaly(r, "statuses", "ProcStop on M %llu, which holds no P", e->m);
		rc = emit(r, GT_EV_PROC_STOP, 0, ms->p, 0, 0, 0, e->ts);
		if ((ps = pst(r, (uint64_t)ms->p)))
			ps->status = GT_V2_P_IDLE;
		p_changed(r, (uint64_t)ms->p);
		ms->p = -1;
		return rc;
	case GT_V2_PROC_STATUS:
		return on_proc_status(r, e, ms);
	case GT_V2_PROC_STEAL:
		return on_proc_steal(r, e, ms);
	}
	return 0;
}

/* GoSyscallBegin and GoSyscallEnd move the M's P into and out of the
 * syscall; the begin carries the P's next sequence number (order.go fails
 * at once when it does not: "can't make sequence").  GoDestroySyscall
 * leaves the M's P abandoned in its syscall (Go 1.23's order.go). */
static int syscall_p(struct run *r, const struct v2e *e, struct mstate *ms)
{
	uint64_t p = (uint64_t)ms->p;
	struct pstate *ps = ms->p < 0 ? NULL : gt_idmap_find(&r->ps, &p);
	char msg[160];
	int rc;

	if (e->type == GT_V2_GO_DESTROY_SYSCALL) {
		/* Go 1.23: the thread lets its P go (its id may be reused) */
		if (ps) {
			ps->status = GT_V2_P_SYSCALL_ABANDONED;
			ms->p = -1;
			p_changed(r, p);
		}
		return 0;
	}
	if (!ps || !ps->status)
		return anomaly(r, "statuses", "a syscall event on M %llu, which holds no stated P",
			       e->m);
	if (e->type == GT_V2_GO_SYSCALL_END) {
		ps->status = GT_V2_P_RUNNING;
		p_changed(r, p);
		return 0;
	}
	if (!r->disorder && (ps->gen != r->genidx || e->args[0] != ps->seq + 1)) {
		snprintf(msg, sizeof(msg), "GoSyscallBegin on P %llu with sequence number %llu: "
			 "the P is at %llu%s", (unsigned long long)p,
			 (unsigned long long)e->args[0], (unsigned long long)ps->seq,
			 ps->gen != r->genidx ? " of an earlier generation" : "");
		if ((rc = anomaly_msg(r, "P sequence", msg)))
			return rc;
	}
	ps->status = GT_V2_P_SYSCALL;
	ps->gen = r->genidx;
	ps->seq = e->args[0];
	p_changed(r, p);
	return 0;
}

static int on_sample(struct run *r, const struct v2e *e)
{
	/* CPUSample [time, m, p, g, stack] (time is args[0] here: untimed) */
	struct gt_pev s = { .ts = (int64_t)e->args[0], .p = (int64_t)e->args[2],
			    .g = e->args[3], .stk = gstk(r, e->args[4]), .type = GT_EV_CPU_SAMPLE };

	r->a->events--; /* gt_an_sample counts it */
	return gt_an_sample(r->a, &s);
}

/* order.go's readiness, for the events whose goroutine or P orders them
 * across Ms: a GoStart waits until its goroutine is runnable with the
 * sequence number before its own, a GoUnblock or GoSwitch until it is
 * waiting with that number (a GoStatus or GoCreate of this generation
 * gives 0); a ProcStart
 * until its M holds no P and its P is idle at the number before its own, a
 * ProcSteal until its P is in a syscall at that number (a ProcStatus of
 * this generation gives 0), a GoSyscallEndBlocked until its M's P has left
 * the syscall.  *key: what a head that may not go waits on.  Every other
 * event waits only for its M's previous one. */
static int ready(struct run *r, const struct v2e *e, uint64_t *key)
{
	const struct mstate *ms;
	const struct gstate *s;
	const struct pstate *ps;
	uint64_t p;

	if (r->disorder)
		return 1;
	*key = e->args[0];
	switch (e->type) {
	case GT_V2_GO_START: case GT_V2_GO_UNBLOCK: case GT_V2_GO_SWITCH:
	case GT_V2_GO_SWITCH_DESTROY:
		s = gt_idmap_find(&r->gs, &e->args[0]);
		if (!s || s->gen != r->genidx || e->args[1] != s->seq + 1)
			return 0;
		return s->status == (e->type == GT_V2_GO_START ? GT_V2_G_RUNNABLE : GT_V2_G_WAITING);
	case GT_V2_PROC_START: case GT_V2_PROC_STEAL:
		ms = gt_idmap_find(&r->ms, &e->m);
		if (e->type == GT_V2_PROC_START && ms && ms->p >= 0) {
			*key = PKEY(ms->p);
			return 0;
		}
		*key = PKEY(e->args[0]);
		ps = gt_idmap_find(&r->ps, &e->args[0]);
		if (!ps || ps->gen != r->genidx || e->args[1] != ps->seq + 1)
			return 0;
		if (e->type == GT_V2_PROC_START)
			return ps->status == GT_V2_P_IDLE;
		return ps->status == GT_V2_P_SYSCALL || ps->status == GT_V2_P_SYSCALL_ABANDONED;
	case GT_V2_GO_SYSCALL_END_BLOCKED:
		ms = gt_idmap_find(&r->ms, &e->m);
		if (!ms || ms->p < 0)
			return 1;
		p = (uint64_t)ms->p;
		*key = PKEY(p);
		ps = gt_idmap_find(&r->ps, &p);
		return !ps || ps->status != GT_V2_P_SYSCALL;
	}
	return 1;
}

/* Why a P event that waits cannot go (the generation is stuck on it). */
static void p_stuck(struct run *r, const struct v2e *e, char *msg, size_t len)
{
	const struct mstate *ms = gt_idmap_find(&r->ms, &e->m);
	uint64_t p = e->type == GT_V2_GO_SYSCALL_END_BLOCKED ? (uint64_t)ms->p : e->args[0];
	const struct pstate *ps = gt_idmap_find(&r->ps, &p);
	int st = ps ? ps->status : 0;

	if (e->type == GT_V2_PROC_START && ms && ms->p >= 0) {
		snprintf(msg, len, "ProcStart of P %llu on M %llu, which holds P %lld",
			 (unsigned long long)p, (unsigned long long)e->m, (long long)ms->p);
		return;
	}
	if (e->type == GT_V2_GO_SYSCALL_END_BLOCKED) {
		snprintf(msg, len, "GoSyscallEndBlocked on M %llu: its P %llu never leaves the "
			 "syscall", (unsigned long long)e->m, (unsigned long long)p);
		return;
	}
	if (ps && st && ps->gen != r->genidx) {
		snprintf(msg, len, "%s of P %llu with sequence number %llu: the P has no status "
			 "in this generation", gt_v2_name(e->type), (unsigned long long)p,
			 (unsigned long long)e->args[1]);
		return;
	}
	snprintf(msg, len, "%s of P %llu with sequence number %llu: the P is %s at %llu",
		 gt_v2_name(e->type), (unsigned long long)p, (unsigned long long)e->args[1],
		 p_status_name(st), ps ? (unsigned long long)ps->seq : 0ull);
}

static int head_less(const struct run *r, size_t x, size_t y)
{
	const struct v2e *a = &r->ev[r->heads[x].pos], *b = &r->ev[r->heads[y].pos];

	return a->ts != b->ts ? a->ts < b->ts : a->idx < b->idx;
}

static void heap_push(struct run *r, size_t h)
{
	size_t i = r->nheap++;

	r->heap[i] = h;
	while (i && head_less(r, r->heap[i], r->heap[(i - 1) / 2])) {
		size_t p = (i - 1) / 2, t = r->heap[p];

		r->heap[p] = r->heap[i];
		r->heap[i] = t;
		i = p;
	}
}

static size_t heap_pop(struct run *r)
{
	size_t top = r->heap[0], i = 0;

	r->heap[0] = r->heap[--r->nheap];
	for (;;) {
		size_t l = 2 * i + 1, m = i, t;

		if (l < r->nheap && head_less(r, r->heap[l], r->heap[m]))
			m = l;
		if (l + 1 < r->nheap && head_less(r, r->heap[l + 1], r->heap[m]))
			m = l + 1;
		if (m == i)
			return top;
		t = r->heap[m];
		r->heap[m] = r->heap[i];
		r->heap[i] = t;
		i = m;
	}
}

static int by_m(const void *x, const void *y)
{
	const struct v2e *a = x, *b = y;

	if (a->m != b->m)
		return a->m < b->m ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* The generation's events grouped per M (each M's own order), one head
 * per M. */
static int split(struct run *r)
{
	qsort(r->ev, r->nev, sizeof(*r->ev), by_m);
	r->nheads = 0;
	for (size_t i = 0; i < r->nev; i++) {
		if (i && r->ev[i].m == r->ev[i - 1].m) {
			r->heads[r->nheads - 1].end = i + 1;
			continue;
		}
		if (gt_an_grow(&r->heads, &r->capheads, r->nheads + 1, sizeof(*r->heads)))
			return -ENOMEM;
		r->heads[r->nheads++] = (struct mhead){ i, i + 1, -1, 0 };
	}
	if (gt_an_grow(&r->heap, &r->capheap, r->nheads, sizeof(*r->heap)))
		return -ENOMEM;
	r->nheap = r->nwaiting = 0;
	r->disorder = 0;
	gt_idmap_free(&r->waits);
	gt_idmap_init(&r->waits, 1, sizeof(uint64_t));
	for (size_t h = 0; h < r->nheads; h++)
		heap_push(r, h);
	return 0;
}

static int process(struct run *r, const struct v2e *e)
{
	struct mstate *ms;

	r->a->events++;
	if (e->type == GT_V2_CPU_SAMPLE)
		return on_sample(r, e);
	if (e->type == GT_V2_GO_STATUS || e->type == GT_V2_GO_STATUS_STACK)
		return on_status(r, e);
	if (!(ms = mst(r, e->m)))
		return -ENOMEM;
	if (e->type >= GT_V2_PROCS_CHANGE && e->type <= GT_V2_PROC_STATUS)
		return on_proc(r, e, ms);
	return on_go(r, e, ms);
}

/* Head h waits on key (a goroutine, or PKEY of a P). */
static int wait_on(struct run *r, size_t h, uint64_t key)
{
	int isnew;
	uint64_t *first = gt_idmap_insert(&r->waits, &key, &isnew);

	if (!first)
		return -ENOMEM;
	r->heads[h].next_wait = (int64_t)*first - 1;
	*first = h + 1;
	r->heads[h].waiting = 1;
	r->nwaiting++;
	return 0;
}

/* Nothing may go: the rule broken, named by the earliest waiting event
 * (a P's: "P sequence"; a goroutine's: "ordering"). */
static int stuck(struct run *r)
{
	const struct v2e *first = NULL;
	char msg[200];

	for (size_t h = 0; h < r->nheads; h++) {
		const struct v2e *e = &r->ev[r->heads[h].pos];

		if (r->heads[h].waiting && (!first || e->ts < first->ts))
			first = e;
	}
	if (first && (first->type == GT_V2_PROC_START || first->type == GT_V2_PROC_STEAL ||
		      first->type == GT_V2_GO_SYSCALL_END_BLOCKED)) {
		p_stuck(r, first, msg, sizeof(msg));
		return anomaly_msg(r, "P sequence", msg);
	}
	return anomaly(r, "ordering", "no event can go next (%llu waiting)", r->nwaiting);
}

/* The next head in order: the earliest that may go, the others waiting on
 * their goroutine or P (woken when it changes).  If none may go (the
 * file's sequence numbers cannot be met) a rule is broken (stuck()), and
 * the rest of the generation goes in time order. */
static int next_head(struct run *r, size_t *out)
{
	uint64_t key;
	int rc;

	for (;;) {
		while (r->nheap) {
			size_t h = heap_pop(r);

			if (ready(r, &r->ev[r->heads[h].pos], &key)) {
				*out = h;
				return 0;
			}
			if ((rc = wait_on(r, h, key)))
				return rc;
		}
		if ((rc = stuck(r)))
			return rc;
		r->disorder = 1;
		for (size_t h = 0; h < r->nheads; h++)
			if (r->heads[h].waiting) {
				r->heads[h].waiting = 0;
				heap_push(r, h);
			}
		r->nwaiting = 0;
		gt_idmap_free(&r->waits);
		gt_idmap_init(&r->waits, 1, sizeof(uint64_t));
	}
}

static int generation(struct run *r)
{
	int rc;

	for (size_t i = 0; i < r->nbatches; i++)
		if ((rc = decode_batch(r, &r->batches[i])))
			return rc;
	if (!r->a->freq)
		return fail(r, "frequency", "no Frequency event (%llu seen)", 0);
	r->a->priv->ns_per_tick = 1e9 / (double)r->a->freq;
	if (!r->nev)
		return 0;
	if ((rc = split(r)))
		return rc;
	if (!r->started && (rc = start(r)))
		return rc;
	while (r->nheap || r->nwaiting) {
		size_t h;

		if ((rc = next_head(r, &h)))
			return rc;
		if ((rc = process(r, &r->ev[r->heads[h].pos])))
			return rc;
		if (++r->heads[h].pos < r->heads[h].end)
			heap_push(r, h);
	}
	return 0;
}

/* Reads the batches of one generation; the next one's first batch is kept
 * in *next.  1 (a generation read), 0 (end), < 0. */
static int read_gen(struct run *r, struct gt_v2_batch *next, int *have_next)
{
	struct gt_v2_batch b;
	int rc;

	r->nbatches = 0;
	r->nev = 0;
	gt_an_map_free(&r->lstk);
	if (!*have_next)
		return 0;
	if (r->genidx && next->gen <= r->gen) {
		r->gen = next->gen;
		return fail(r, "generations", "generation number %llu after a later one", next->gen);
	}
	r->gen = next->gen;
	r->genidx++;
	r->a->generations++;
	b = *next;
	*have_next = 0;
	do {
		if (b.gen != r->gen) {
			*next = b;
			*have_next = 1;
			break;
		}
		if (gt_an_grow(&r->batches, &r->capbatches, r->nbatches + 1, sizeof(b)))
			return -ENOMEM;
		r->batches[r->nbatches++] = b;
	} while ((rc = gt_v2_next_batch(&r->f, &b)) == 1);
	if (!*have_next && rc < 0) {
		snprintf(r->a->error, sizeof(r->a->error), "%s", r->f.error);
		return -EINVAL;
	}
	return 1;
}

int gt_an_v2(struct gt_analysis *a)
{
	struct run r = { .a = a };
	struct gt_v2_batch next;
	int have, rc;

	gt_idmap_init(&r.ms, 1, sizeof(struct mstate));
	gt_idmap_init(&r.gs, 1, sizeof(struct gstate));
	gt_idmap_init(&r.ps, 1, sizeof(struct pstate));
	gt_idmap_init(&r.content, 3, sizeof(uint64_t));
	gt_idmap_init(&r.waits, 1, sizeof(uint64_t));
	a->priv->v2 = 1;
	if (gt_v2_open(&r.f, a->priv->data, a->priv->len)) {
		snprintf(a->error, sizeof(a->error), "%s", r.f.error);
		rc = -EINVAL;
		goto out;
	}
	a->version = 1000 + r.f.version; /* 1022, 1023 */
	rc = gt_v2_next_batch(&r.f, &next);
	if (rc < 0) {
		snprintf(a->error, sizeof(a->error), "%s", r.f.error);
		goto out;
	}
	have = rc;
	while ((rc = read_gen(&r, &next, &have)) == 1)
		if ((rc = generation(&r)))
			break;
	if (!rc && !r.started) {
		snprintf(a->error, sizeof(a->error), "trace is empty (no events)");
		rc = -EINVAL;
	}
out:
	free(r.batches);
	free(r.ev);
	free(r.heads);
	free(r.heap);
	gt_idmap_free(&r.waits);
	gt_idmap_free(&r.ms);
	gt_idmap_free(&r.gs);
	gt_idmap_free(&r.ps);
	gt_idmap_free(&r.content);
	gt_an_map_free(&r.lstk);
	return rc;
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
	struct gt_v2_file f = { .data = pv->data, .len = pv->len };
	struct gt_v2_batch b = { .off = s->off, .end = s->end, .kind = GT_V2_K_STACKS };
	struct gt_v2_cursor c;
	struct gt_v2_ev e;
	uint64_t fr[GT_V2_MAX_FRAMES][4];
	char err[8];
	size_t n;

	gt_v2_cursor_init(&c, &f, &b);
	if (gt_v2_next_event(&c, &e, err, sizeof(err)) != 1 || e.type != GT_V2_STACK)
		return 0;
	n = gt_v2_frames(&e, fr, max < GT_V2_MAX_FRAMES ? max : GT_V2_MAX_FRAMES);
	for (size_t k = 0; k < n; k++) {
		struct gt_an_frame *o = &out[k];

		memset(o, 0, sizeof(*o));
		o->pc = fr[k][0];
		o->fn = gt_an_string_v2(a, fr[k][1], s->gen, &o->fn_len);
		o->file = gt_an_string_v2(a, fr[k][2], s->gen, &o->file_len);
		o->line = fr[k][3];
		if (!o->fn)
			o->fn = "", o->fn_len = 0;
		if (!o->file)
			o->file = "", o->file_len = 0;
	}
	return n;
}
