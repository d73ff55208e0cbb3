/* The order a v2 generation's events go in: each M's events in its own
 * order; among the Ms' next events the earliest that may go, as Go's
 * order.go admits them: a GoStart when its goroutine is runnable with the
 * sequence number before its own, a GoUnblock or GoSwitch when it is
 * waiting at that number; a ProcStart when its P is idle at the sequence
 * number before its own and its M holds none, a ProcSteal when its P is in
 * a syscall at the number before its own, a GoSyscallEndBlocked once its
 * M's P has left the syscall (stolen or stopped); any other event at once.
 * A GoSyscallBegin must carry its P's next number (rule "P sequence", as
 * Go fails at once: gt_analyze_v2_proc.c).  When nothing may go the
 * earliest waiting event goes anyway (rule "P sequence" if it waits on a
 * P, else "ordering": an anomaly, an error for inspect).  The figures
 * cannot change for it: each interval runs between its two events' own
 * timestamps; the order only decides which transitions pair up, and the
 * goroutine sequence numbers pair them as Go does. */
#include <errno.h>

#include "gt_analyze_v2_run.h"

void gt_an_v2_wake(struct v2run *r, uint64_t key)
{
	uint64_t *first = gt_idmap_find(&r->waits, &key);
	int64_t h;

	if (!first || !*first)
		return;
	for (h = (int64_t)*first - 1; h >= 0; h = r->heads[h].next_wait) {
		r->heads[h].waiting = 0;
		r->nwaiting--;
		gt_an_v2_heap_push(r, (size_t)h);
	}
	*first = 0;
}

/* A GoStart, GoUnblock or GoSwitch: its goroutine at the number before
 * its own, runnable (GoStart) or waiting. */
static int g_ready(struct v2run *r, const struct v2e *e)
{
	const struct gstate *s = gt_idmap_find(&r->gs, &e->args[0]);

	if (!s || s->gen != r->genidx || e->args[1] != s->seq + 1)
		return 0;
	return s->status == (e->type == GT_V2_GO_START ? GT_V2_G_RUNNABLE : GT_V2_G_WAITING);
}

/* A ProcStart (its M holds no P, its P idle) or ProcSteal (its P in a
 * syscall), the P at the number before its own. */
static int p_ready(struct v2run *r, const struct v2e *e, uint64_t *key)
{
	const struct mstate *ms = gt_idmap_find(&r->ms, &e->m);
	const struct pstate *ps;

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
}

/* A GoSyscallEndBlocked: its M's P out of the syscall. */
static int sysend_ready(struct v2run *r, const struct v2e *e, uint64_t *key)
{
	const struct mstate *ms = gt_idmap_find(&r->ms, &e->m);
	const struct pstate *ps;
	uint64_t p;

	if (!ms || ms->p < 0)
		return 1;
	p = (uint64_t)ms->p;
	*key = PKEY(p);
	ps = gt_idmap_find(&r->ps, &p);
	return !ps || ps->status != GT_V2_P_SYSCALL;
}

/* order.go's readiness, for the events whose goroutine or P orders them
 * across Ms (a GoStatus or GoCreate of this generation gives a goroutine
 * the number 0, a ProcStatus a P).  *key: what a head that may not go
 * waits on.  Every other event waits only for its M's previous one. */
static int ready(struct v2run *r, const struct v2e *e, uint64_t *key)
{
	if (r->disorder)
		return 1;
	*key = e->args[0];
	switch (e->type) {
	case GT_V2_GO_START: case GT_V2_GO_UNBLOCK: case GT_V2_GO_SWITCH:
	case GT_V2_GO_SWITCH_DESTROY:
		return g_ready(r, e);
	case GT_V2_PROC_START: case GT_V2_PROC_STEAL:
		return p_ready(r, e, key);
	case GT_V2_GO_SYSCALL_END_BLOCKED:
		return sysend_ready(r, e, key);
	case GT_V2_GC_ACTIVE: case GT_V2_GC_BEGIN: case GT_V2_GC_END:
		*key = GCKEY; /* the GC's sequence number before its own */
		return !gt_an_v2_gc_waits(r, e);
	}
	return 1;
}

/* Head h waits on key (a goroutine, or PKEY of a P). */
static int wait_on(struct v2run *r, size_t h, uint64_t key)
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
static int stuck(struct v2run *r)
{
	const struct v2e *first = NULL;
	char msg[200];

	for (size_t h = 0; h < r->nheads; h++) {
		const struct v2e *e = &r->heads[h].ev;

		if (r->heads[h].waiting && (!first || e->ts < first->ts))
			first = e;
	}
	if (first && (first->type == GT_V2_PROC_START || first->type == GT_V2_PROC_STEAL ||
		      first->type == GT_V2_GO_SYSCALL_END_BLOCKED)) {
		gt_an_v2_p_stuck(r, first, msg, sizeof(msg));
		return gt_an_v2_anomaly_msg(r, "P sequence", msg);
	}
	return gt_an_v2_anomaly(r, "ordering", "no event can go next (%llu waiting)",
				r->nwaiting);
}

/* Every waiting head back in the heap, none waiting any more. */
static void release_all(struct v2run *r)
{
	for (size_t h = 0; h < r->nheads; h++)
		if (r->heads[h].waiting) {
			r->heads[h].waiting = 0;
			gt_an_v2_heap_push(r, h);
		}
	r->nwaiting = 0;
	gt_idmap_free(&r->waits);
	gt_idmap_init(&r->waits, 1, sizeof(uint64_t));
}

/* The next head in order: the earliest that may go, the others waiting on
 * their goroutine or P (woken when it changes).  If none may go (the
 * file's sequence numbers cannot be met) a rule is broken (stuck()), and
 * the rest of the generation goes in time order. */
int gt_an_v2_next_head(struct v2run *r, size_t *out)
{
	uint64_t key;
	int rc;

	for (;;) {
		while (r->nheap) {
			size_t h = gt_an_v2_heap_pop(r);

			if (ready(r, &r->heads[h].ev, &key)) {
				*out = h;
				return 0;
			}
			if ((rc = wait_on(r, h, key)))
				return rc;
		}
		if ((rc = stuck(r)))
			return rc;
		r->disorder = 1;
		release_all(r);
	}
}
