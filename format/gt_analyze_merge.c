/* Pass 2 of the analysis: one cursor per P walks that P's batches in file
 * order, and the merge takes, among the cursors' head events whose
 * goroutine is in the state the event needs (Go 1.19's order1007: sequence
 * numbers and states), the earliest; 1.5 traces merge by sequence number
 * (order1005).  Only the heads are decoded, so memory is per P, not per
 * event.  Heads that may go wait in a heap by time; a head whose goroutine
 * is not yet in the state it needs waits on that goroutine's list and is
 * looked at again only when that goroutine moves: O(events * log Ps). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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
		pr->last_seq = (int64_t)((uint64_t)pr->last_seq + raw->args[0]); /* wraps, as Go's */
	pr->last_ts = (int64_t)((uint64_t)pr->last_ts + raw->args[base - 1]);
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
	struct gst gc;     /* the GARBAGE pseudo-goroutine of GCStart */
	int32_t gc_wait;   /* Ps whose head waits on it */
	uint32_t *heap;    /* Ps whose head may go, earliest first */
	size_t nheap;
};

static int ready(const struct gst *cur, const struct trans *t)
{
	return (t->init.seq == NOSEQ || t->init.seq == cur->seq) && t->init.status == cur->status;
}

/* 1 if the head's order depends on a goroutine's state (t says which). */
static int ordered(const struct gt_analysis *a, const struct gt_an_ev *e, struct trans *t)
{
	*t = transition_of(e);
	return a->version >= 1007 && t->g != UNORDERED;
}

/* The ordering state of g and the head of its wait list (valid until the
 * next thread is created); -ENOMEM. */
static int gstate(struct gt_analysis *a, struct mstate *m, uint64_t g, struct gst *cur,
		  int32_t **wait)
{
	struct gt_an_thread *t;

	if (g == GARBAGE) {
		*cur = m->gc;
		*wait = &m->gc_wait;
		return 0;
	}
	t = gt_an_thread_get(a, g);
	if (!t)
		return -ENOMEM;
	*cur = (struct gst){ t->ord_seq, t->ord_status };
	*wait = &t->wait_head;
	return 0;
}

static int earlier(const struct gt_analysis *a, uint32_t i, uint32_t j)
{
	const struct gt_an_ev *x = &a->priv->procs[i].head, *y = &a->priv->procs[j].head;
	int64_t kx = a->version < 1007 ? x->seq : x->ts, ky = a->version < 1007 ? y->seq : y->ts;

	return kx < ky || (kx == ky && i < j);
}

static void heap_push(struct gt_analysis *a, struct mstate *m, uint32_t p)
{
	size_t i = m->nheap++;

	while (i > 0 && earlier(a, p, m->heap[(i - 1) / 2])) {
		m->heap[i] = m->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	m->heap[i] = p;
}

static uint32_t heap_pop(struct gt_analysis *a, struct mstate *m)
{
	uint32_t top = m->heap[0], last = m->heap[--m->nheap];
	size_t i = 0;

	for (;;) {
		size_t l = 2 * i + 1, c = i;
		uint32_t best = last;

		if (l < m->nheap && earlier(a, m->heap[l], best))
			c = l, best = m->heap[l];
		if (l + 1 < m->nheap && earlier(a, m->heap[l + 1], best))
			c = l + 1;
		if (c == i)
			break;
		m->heap[i] = m->heap[c];
		i = c;
	}
	if (m->nheap)
		m->heap[i] = last;
	return top;
}

/* P p's head into the heap, or onto the wait list of its goroutine. */
static int place(struct gt_analysis *a, struct mstate *m, uint32_t p)
{
	struct gt_an_proc *pr = &a->priv->procs[p];
	struct trans t;
	struct gst cur;
	int32_t *wait;

	if (!pr->has_head)
		return 0;
	if (ordered(a, &pr->head, &t)) {
		if (gstate(a, m, t.g, &cur, &wait))
			return -ENOMEM;
		if (!ready(&cur, &t)) {
			pr->wnext = *wait;
			*wait = (int32_t)p;
			return 0;
		}
	}
	heap_push(a, m, p);
	return 0;
}

/* g moved: the Ps waiting on it are looked at again. */
static int wake(struct gt_analysis *a, struct mstate *m, uint64_t g)
{
	struct gst cur;
	int32_t *wait, w;

	if (gstate(a, m, g, &cur, &wait))
		return -ENOMEM;
	w = *wait;
	*wait = -1;
	while (w >= 0) {
		int32_t next = a->priv->procs[w].wnext;

		if (place(a, m, (uint32_t)w))
			return -ENOMEM;
		w = next;
	}
	return 0;
}

/* order.go transition, and "Local" events become plain ones. */
static int apply(struct gt_analysis *a, struct mstate *m, struct gt_an_ev *e)
{
	struct trans t;
	struct gst cur, next;
	int32_t *wait;

	if (ordered(a, e, &t)) {
		if (gstate(a, m, t.g, &cur, &wait))
			return -ENOMEM;
		next = t.next;
		if (next.seq == NOSEQ)
			next.seq = cur.seq;
		else if (next.seq == SEQINC)
			next.seq = cur.seq + 1;
		if (t.g == GARBAGE) {
			m->gc = next;
		} else {
			struct gt_an_thread *th = gt_an_thread_get(a, t.g);

			th->ord_seq = next.seq;
			th->ord_status = next.status;
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

/* Takes the head of P p: orders it, hands it on, refills P p. */
static int take(struct gt_analysis *a, struct mstate *m, uint32_t p, int64_t *last)
{
	struct gt_an_proc *pr = &a->priv->procs[p];
	struct gt_an_ev e = pr->head;
	struct trans t;
	int moved = ordered(a, &e, &t), rc;
	int64_t ns;

	pr->has_head = 0;
	rc = apply(a, m, &e);
	if (rc)
		return rc;
	ns = gt_an_ns(a, e.ts);
	if (ns < *last && e.type != GT_EV_GO_SYSEXIT)
		a->anomalies++; /* Go: "time stamps out of order" */
	if (ns > *last)
		*last = ns;
	a->events++;
	rc = gt_an_event(a, &e, ns);
	if (!rc)
		rc = fill(a, &a->priv->procs[p]);
	if (!rc)
		rc = place(a, m, p);
	if (!rc && moved)
		rc = wake(a, m, t.g);
	return rc;
}

static int run(struct gt_analysis *a, struct mstate *m)
{
	struct gt_an_priv *pv = a->priv;
	int64_t last = INT64_MIN;
	int rc;

	for (uint32_t k = 0; k < pv->nprocs; k++) {
		struct gt_an_proc *pr = &pv->procs[k];

		pr->seg = pr->first;
		pr->pos = pv->segs[pr->first].off;
		pr->last_ts = pv->segs[pr->first].base_ts;
		pr->last_seq = pv->segs[pr->first].base_seq;
		rc = fill(a, pr);
		if (!rc)
			rc = place(a, m, k);
		if (rc)
			return rc;
	}
	while (m->nheap) {
		uint32_t p = heap_pop(a, m);
		struct trans t;
		struct gst cur;
		int32_t *wait;

		/* ready when it was pushed; an event merged since may have
		 * moved its goroutine on: then it waits again */
		if (ordered(a, &pv->procs[p].head, &t)) {
			if (gstate(a, m, t.g, &cur, &wait))
				return -ENOMEM;
			if (!ready(&cur, &t)) {
				pv->procs[p].wnext = *wait;
				*wait = (int32_t)p;
				continue;
			}
		}
		rc = take(a, m, p, &last);
		if (rc)
			return rc;
	}
	for (uint32_t k = 0; k < pv->nprocs; k++)
		if (pv->procs[k].has_head) {
			snprintf(a->error, sizeof(a->error),
				 "no consistent ordering of events possible (sequence numbers or states across Ps do not fit; first stuck: %s of g %llu on p %lld)",
				 gt_event_descs[pv->procs[k].head.type].name,
				 (unsigned long long)pv->procs[k].head.g, (long long)pv->procs[k].p);
			return -EINVAL;
		}
	return 0;
}

int gt_an_merge(struct gt_analysis *a)
{
	struct mstate m = { .gc_wait = -1 };
	int rc;

	m.heap = calloc(a->priv->nprocs + 1, sizeof(*m.heap));
	if (!m.heap)
		return -ENOMEM;
	rc = run(a, &m);
	free(m.heap);
	return rc;
}
