/* Pass 2 of the analysis: one cursor per P walks that P's batches in file
 * order, and the merge takes, among the cursors' head events whose
 * goroutine is in the state the event needs (Go 1.19's order1007: sequence
 * numbers and states), the earliest; 1.5 traces merge by sequence number
 * (order1005).  Only the heads are decoded, so memory is per P, not per
 * event.  Each P's head is looked at again after every merged event:
 * O(events * Ps), which the Ps of one machine keep small. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gt_analyze_internal.h"
#include "gt_events.h"

#define UNORDERED UINT64_MAX
#define GARBAGE (UINT64_MAX - 1)
#define NOSEQ UINT64_MAX
#define SEQINC (UINT64_MAX - 1)

struct gst {
	uint64_t seq;
	int status;
};

struct trans {
	uint64_t g;
	struct gst init, next;
};

/* parseEvents' per-type fixups of the goroutine an event belongs to. */
static void fix_g(struct gt_an_proc *pr, struct gt_an_ev *e)
{
	switch (e->type) {
	case GT_EV_GO_START: case GT_EV_GO_START_LOCAL: case GT_EV_GO_START_LABEL:
		pr->last_g = e->args[0];
		e->g = pr->last_g;
		break;
	case GT_EV_GC_STW_START: case GT_EV_GC_START: case GT_EV_GC_DONE: case GT_EV_GC_STW_DONE:
		e->g = 0;
		break;
	case GT_EV_GO_END: case GT_EV_GO_STOP: case GT_EV_GO_SCHED:
	case GT_EV_GO_PREEMPT: case GT_EV_GO_SLEEP: case GT_EV_GO_BLOCK:
	case GT_EV_GO_BLOCK_SEND: case GT_EV_GO_BLOCK_RECV:
	case GT_EV_GO_BLOCK_SELECT: case GT_EV_GO_BLOCK_SYNC:
	case GT_EV_GO_BLOCK_COND: case GT_EV_GO_BLOCK_NET:
	case GT_EV_GO_SYSBLOCK: case GT_EV_GO_BLOCK_GC:
		pr->last_g = 0;
		break;
	case GT_EV_GO_SYSEXIT: case GT_EV_GO_WAITING: case GT_EV_GO_IN_SYSCALL:
		e->g = e->args[0];
		break;
	}
}

/* Decodes the record at the cursor into e; returns the record's type. */
static int decode(struct gt_analysis *a, struct gt_an_proc *pr, struct gt_an_ev *e)
{
	struct gt_an_priv *pv = a->priv;
	struct gt_reader r = pv->rd;
	const struct gt_raw_event *raw = pv->raw;
	size_t base = a->version < 1007 ? 2 : 1, n;
	int rc;

	r.pos = pr->pos;
	rc = gt_reader_next(&r, pv->raw);
	if (rc <= 0)
		return rc < 0 ? -EINVAL : -1; /* pass 1 read it all: only the end */
	pr->pos = raw->end;
	if (raw->type <= GT_EV_STACK || raw->type == GT_EV_STRING ||
	    raw->type == GT_EV_TIMER_GOROUTINE)
		return raw->type;
	memset(e, 0, sizeof(*e));
	e->type = raw->type;
	if (base == 2)
		pr->last_seq += (int64_t)raw->args[0];
	pr->last_ts += (int64_t)raw->args[base - 1];
	e->ts = pr->last_ts;
	e->seq = pr->last_seq;
	e->p = pr->p;
	e->g = pr->last_g;
	n = raw->nargs;
	if (gt_event_descs[raw->type].has_stack && n > base)
		e->stk = raw->args[--n];
	for (size_t i = base; i < n && i - base < 3; i++)
		e->args[i - base] = raw->args[i];
	if (e->type == GT_EV_CPU_SAMPLE) {
		e->ts = (int64_t)e->args[0];
		e->p = (int64_t)e->args[1];
		e->g = e->args[2];
	}
	fix_g(pr, e);
	return raw->type;
}

/* Brings the next event of P pr to its head (samples go straight to the
 * analysis).  0, or -errno. */
static int fill(struct gt_analysis *a, struct gt_an_proc *pr)
{
	while (!pr->has_head && !pr->done) {
		int t = decode(a, pr, &pr->head);

		if (t == -EINVAL)
			return -EINVAL;
		if (t == GT_EV_BATCH || t < 0) {
			/* this run of the P's records ends; go to its next one */
			const struct gt_an_seg *s;

			pr->seg = a->priv->segs[pr->seg].next;
			if (pr->seg == UINT32_MAX) {
				pr->done = 1;
				break;
			}
			s = &a->priv->segs[pr->seg];
			pr->pos = s->off;
			pr->last_ts = s->base_ts;
			pr->last_seq = s->base_seq;
		} else if (t == GT_EV_CPU_SAMPLE) {
			int rc = gt_an_sample(a, &pr->head);

			if (rc)
				return rc;
		} else if (t > GT_EV_STACK && t != GT_EV_STRING && t != GT_EV_TIMER_GOROUTINE) {
			pr->has_head = 1;
		}
	}
	return 0;
}

/* order.go stateTransition. */
static struct trans transition_of(const struct gt_an_ev *e)
{
	struct trans t = { UNORDERED, {0, GT_AN_DEAD}, {0, GT_AN_DEAD} };

	switch (e->type) {
	case GT_EV_GO_CREATE:
		t = (struct trans){ e->args[0], {0, GT_AN_DEAD}, {1, GT_AN_RUNNABLE} };
		break;
	case GT_EV_GO_WAITING: case GT_EV_GO_IN_SYSCALL:
		t = (struct trans){ e->g, {1, GT_AN_RUNNABLE}, {2, GT_AN_WAITING} };
		break;
	case GT_EV_GO_START: case GT_EV_GO_START_LABEL:
		t = (struct trans){ e->g, {e->args[1], GT_AN_RUNNABLE},
				    {e->args[1] + 1, GT_AN_RUNNING} };
		break;
	case GT_EV_GO_START_LOCAL:
		t = (struct trans){ e->g, {NOSEQ, GT_AN_RUNNABLE}, {SEQINC, GT_AN_RUNNING} };
		break;
	case GT_EV_GO_BLOCK: case GT_EV_GO_BLOCK_SEND: case GT_EV_GO_BLOCK_RECV:
	case GT_EV_GO_BLOCK_SELECT: case GT_EV_GO_BLOCK_SYNC: case GT_EV_GO_BLOCK_COND:
	case GT_EV_GO_BLOCK_NET: case GT_EV_GO_SLEEP: case GT_EV_GO_SYSBLOCK:
	case GT_EV_GO_BLOCK_GC:
		t = (struct trans){ e->g, {NOSEQ, GT_AN_RUNNING}, {NOSEQ, GT_AN_WAITING} };
		break;
	case GT_EV_GO_SCHED: case GT_EV_GO_PREEMPT:
		t = (struct trans){ e->g, {NOSEQ, GT_AN_RUNNING}, {NOSEQ, GT_AN_RUNNABLE} };
		break;
	case GT_EV_GO_UNBLOCK: case GT_EV_GO_SYSEXIT:
		t = (struct trans){ e->args[0], {e->args[1], GT_AN_WAITING},
				    {e->args[1] + 1, GT_AN_RUNNABLE} };
		break;
	case GT_EV_GO_UNBLOCK_LOCAL: case GT_EV_GO_SYSEXIT_LOCAL:
		t = (struct trans){ e->args[0], {NOSEQ, GT_AN_WAITING}, {SEQINC, GT_AN_RUNNABLE} };
		break;
	case GT_EV_GC_START:
		t = (struct trans){ GARBAGE, {e->args[0], GT_AN_DEAD},
				    {e->args[0] + 1, GT_AN_DEAD} };
		break;
	}
	return t;
}

struct mstate {
	struct gst gc; /* the GARBAGE pseudo-goroutine of GCStart */
};

/* The ordering state of g; NULL if memory ran out. */
static struct gst *gst_of(struct gt_analysis *a, struct mstate *m, uint64_t g, struct gst *tmp)
{
	struct gt_an_thread *t;

	if (g == GARBAGE)
		return &m->gc;
	t = gt_an_thread_get(a, g);
	if (!t)
		return NULL;
	*tmp = (struct gst){ t->ord_seq, t->ord_status };
	return tmp;
}

static int ready(const struct gst *cur, const struct trans *t)
{
	return (t->init.seq == NOSEQ || t->init.seq == cur->seq) && t->init.status == cur->status;
}

/* 1 if the head of pr may go next (under 1.5: always). */
static int head_ready(struct gt_analysis *a, struct mstate *m, const struct gt_an_proc *pr,
		      int *err)
{
	struct trans t;
	struct gst tmp, *cur;

	if (a->version < 1007)
		return 1;
	t = transition_of(&pr->head);
	if (t.g == UNORDERED)
		return 1;
	cur = gst_of(a, m, t.g, &tmp);
	if (!cur) {
		*err = -ENOMEM;
		return 0;
	}
	return ready(cur, &t);
}

static int earlier(const struct gt_analysis *a, const struct gt_an_ev *x, const struct gt_an_ev *y)
{
	return a->version < 1007 ? x->seq < y->seq : x->ts < y->ts;
}

/* order.go transition, and "Local" events become plain ones. */
static int apply(struct gt_analysis *a, struct mstate *m, struct gt_an_ev *e)
{
	struct trans t = transition_of(e);
	struct gt_an_thread *th;
	struct gst next = t.next;

	if (a->version >= 1007 && t.g != UNORDERED) {
		uint64_t cur = m->gc.seq;

		th = t.g == GARBAGE ? NULL : gt_an_thread_get(a, t.g);
		if (t.g != GARBAGE && !th)
			return -ENOMEM;
		if (th)
			cur = th->ord_seq;
		if (next.seq == NOSEQ)
			next.seq = cur;
		else if (next.seq == SEQINC)
			next.seq = cur + 1;
		if (th) {
			th->ord_seq = next.seq;
			th->ord_status = next.status;
		} else {
			m->gc = next;
		}
	}
	if (e->type == GT_EV_GO_START_LOCAL)
		e->type = GT_EV_GO_START;
	else if (e->type == GT_EV_GO_UNBLOCK_LOCAL)
		e->type = GT_EV_GO_UNBLOCK;
	else if (e->type == GT_EV_GO_SYSEXIT_LOCAL)
		e->type = GT_EV_GO_SYSEXIT;
	if (a->version >= 1007 && e->type == GT_EV_GO_SYSEXIT && e->args[2])
		e->ts = (int64_t)e->args[2];
	return 0;
}

/* The P whose head goes next, -1 when all are done, -2 when heads remain
 * but none may go (no consistent order). */
static int pick(struct gt_analysis *a, struct mstate *m, int *err)
{
	struct gt_an_priv *pv = a->priv;
	int best = -1, left = 0;

	for (size_t i = 0; i < pv->nprocs; i++) {
		struct gt_an_proc *pr = &pv->procs[i];

		*err = fill(a, pr);
		if (*err)
			return -1;
		if (!pr->has_head)
			continue;
		left = 1;
		if (best >= 0 && !earlier(a, &pr->head, &pv->procs[best].head))
			continue;
		if (head_ready(a, m, pr, err))
			best = (int)i;
		if (*err)
			return -1;
	}
	return best < 0 && left ? -2 : best;
}

int gt_an_merge(struct gt_analysis *a)
{
	struct gt_an_priv *pv = a->priv;
	struct mstate m = {0};
	int64_t last = INT64_MIN;
	int err = 0, i, rc;

	for (size_t k = 0; k < pv->nprocs; k++) {
		struct gt_an_proc *pr = &pv->procs[k];

		pr->seg = pr->first;
		pr->pos = pv->segs[pr->first].off;
		pr->last_ts = pv->segs[pr->first].base_ts;
		pr->last_seq = pv->segs[pr->first].base_seq;
	}
	while ((i = pick(a, &m, &err)) >= 0) {
		struct gt_an_ev e = pv->procs[i].head;
		int64_t ns;

		pv->procs[i].has_head = 0;
		rc = apply(a, &m, &e);
		if (rc)
			return rc;
		ns = gt_an_ns(a, e.ts);
		if (ns < last && e.type != GT_EV_GO_SYSEXIT)
			a->anomalies++; /* Go: "time stamps out of order" */
		last = ns > last ? ns : last;
		a->events++;
		rc = gt_an_event(a, &e, ns);
		if (rc)
			return rc;
	}
	if (err)
		return err;
	if (i == -2) {
		snprintf(a->error, sizeof(a->error),
			 "no consistent ordering of events possible (sequence numbers or states across Ps do not fit)");
		return -EINVAL;
	}
	return 0;
}
