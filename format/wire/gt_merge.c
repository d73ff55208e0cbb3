/* order1007's merge of the Ps' streams (see gt_merge.h). */
#include <errno.h>
#include <stdlib.h>

#include "gt_events.h"
#include "gt_merge.h"

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

/* A head that may go, with the transition it makes. */
struct ent {
	int64_t key;
	uint64_t tie;
	uint32_t src;
	struct trans t;
	struct gt_pev *ev;
};

struct merge {
	const struct gt_merge_cfg *cfg;
	const struct gt_merge_ops *ops;
	void *arg;
	uint8_t *selected;   /* per stream: its head is in the heap */
	int64_t *wnext;      /* per stream: next on the same wait list */
	uint32_t *queue, nqueue;
	struct ent *heap;
	uint32_t nheap;
	uint64_t tie;
};

/* order.go stateTransition. */
static struct trans transition_of(const struct gt_pev *e)
{
	struct trans t = { GT_MERGE_UNORDERED, {0, GT_MERGE_DEAD}, {0, GT_MERGE_DEAD} };

	switch (e->type) {
	case GT_EV_GO_CREATE:
		t = (struct trans){ e->args[0], {0, GT_MERGE_DEAD}, {1, GT_MERGE_RUNNABLE} };
		break;
	case GT_EV_GO_WAITING: case GT_EV_GO_IN_SYSCALL:
		t = (struct trans){ e->g, {1, GT_MERGE_RUNNABLE}, {2, GT_MERGE_WAITING} };
		break;
	case GT_EV_GO_START: case GT_EV_GO_START_LABEL:
		t = (struct trans){ e->g, {e->args[1], GT_MERGE_RUNNABLE},
				    {e->args[1] + 1, GT_MERGE_RUNNING} };
		break;
	case GT_EV_GO_START_LOCAL:
		t = (struct trans){ e->g, {NOSEQ, GT_MERGE_RUNNABLE}, {SEQINC, GT_MERGE_RUNNING} };
		break;
	case GT_EV_GO_BLOCK: case GT_EV_GO_BLOCK_SEND: case GT_EV_GO_BLOCK_RECV:
	case GT_EV_GO_BLOCK_SELECT: case GT_EV_GO_BLOCK_SYNC: case GT_EV_GO_BLOCK_COND:
	case GT_EV_GO_BLOCK_NET: case GT_EV_GO_SLEEP: case GT_EV_GO_SYSBLOCK:
	case GT_EV_GO_BLOCK_GC:
		t = (struct trans){ e->g, {NOSEQ, GT_MERGE_RUNNING}, {NOSEQ, GT_MERGE_WAITING} };
		break;
	case GT_EV_GO_SCHED: case GT_EV_GO_PREEMPT:
		t = (struct trans){ e->g, {NOSEQ, GT_MERGE_RUNNING}, {NOSEQ, GT_MERGE_RUNNABLE} };
		break;
	case GT_EV_GO_UNBLOCK: case GT_EV_GO_SYSEXIT:
		t = (struct trans){ e->args[0], {e->args[1], GT_MERGE_WAITING},
				    {e->args[1] + 1, GT_MERGE_RUNNABLE} };
		break;
	case GT_EV_GO_UNBLOCK_LOCAL: case GT_EV_GO_SYSEXIT_LOCAL:
		t = (struct trans){ e->args[0], {NOSEQ, GT_MERGE_WAITING},
				    {SEQINC, GT_MERGE_RUNNABLE} };
		break;
	case GT_EV_GC_START:
		t = (struct trans){ GT_MERGE_GARBAGE, {e->args[0], GT_MERGE_DEAD},
				    {e->args[0] + 1, GT_MERGE_DEAD} };
		break;
	}
	return t;
}

static int ready(const struct gt_merge_g *cur, const struct gst *init)
{
	return (init->seq == NOSEQ || init->seq == cur->seq) && init->status == cur->status;
}

static int before(const struct ent *a, const struct ent *b)
{
	return a->key < b->key || (a->key == b->key && a->tie < b->tie);
}

static void heap_push(struct merge *m, const struct ent *f)
{
	uint32_t i = m->nheap++;

	while (i > 0 && before(f, &m->heap[(i - 1) / 2])) {
		m->heap[i] = m->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	m->heap[i] = *f;
}

static struct ent heap_pop(struct merge *m)
{
	struct ent top = m->heap[0], last = m->heap[--m->nheap];
	uint32_t i = 0;

	for (;;) {
		uint32_t l = 2 * i + 1, c = i;
		const struct ent *best = &last;

		if (l < m->nheap && before(&m->heap[l], best))
			c = l, best = &m->heap[l];
		if (l + 1 < m->nheap && before(&m->heap[l + 1], best))
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

static void wait_on(struct merge *m, struct gt_merge_g *o, uint32_t s)
{
	m->wnext[s] = o->wait_head;
	o->wait_head = s;
}

/* Looks at stream s's head: into the heap, or onto a wait list. */
static int scan(struct merge *m, uint32_t s)
{
	struct ent f = { .src = s };
	struct gt_merge_g *o;
	int rc;

	if (m->selected[s])
		return 0; /* its head is in the heap already: one a stream */
	rc = m->ops->head(m->arg, s, &f.ev);
	if (rc || !f.ev)
		return rc;
	f.t.g = GT_MERGE_UNORDERED;
	if (!m->cfg->by_seq)
		f.t = transition_of(f.ev);
	if (f.t.g != GT_MERGE_UNORDERED) {
		if (!(o = m->ops->gstate(m->arg, f.t.g)))
			return -ENOMEM;
		if (!ready(o, &f.t.init)) {
			wait_on(m, o, s);
			return 0;
		}
	}
	f.key = m->cfg->by_seq ? f.ev->seq : f.ev->ts;
	f.tie = m->cfg->tie_by_src ? s : m->tie++;
	heap_push(m, &f);
	m->selected[s] = 1;
	return 0;
}

/* "Local" events only serve ordering. */
static void unlocal(struct gt_pev *e)
{
	if (e->type == GT_EV_GO_START_LOCAL)
		e->type = GT_EV_GO_START;
	else if (e->type == GT_EV_GO_UNBLOCK_LOCAL)
		e->type = GT_EV_GO_UNBLOCK;
	else if (e->type == GT_EV_GO_SYSEXIT_LOCAL)
		e->type = GT_EV_GO_SYSEXIT;
}

/* order.go transition: g moves on; the streams waiting on it are looked
 * at again. */
static void advance(struct merge *m, struct gt_merge_g *o, const struct trans *t)
{
	struct gst next = t->next;

	if (next.seq == NOSEQ)
		next.seq = o->seq;
	else if (next.seq == SEQINC)
		next.seq = o->seq + 1;
	o->seq = next.seq;
	o->status = next.status;
	for (int64_t w = o->wait_head; w >= 0; w = m->wnext[w])
		m->queue[m->nqueue++] = (uint32_t)w;
	o->wait_head = -1;
}

/* The first stream with a head left, once none may go. */
static int stuck(struct merge *m, struct gt_merge_stop *stop)
{
	for (uint32_t s = 0; s < m->cfg->nsrc; s++) {
		struct gt_pev *e;
		int rc = m->ops->head(m->arg, s, &e);

		if (rc)
			return rc;
		if (e) {
			*stop = (struct gt_merge_stop){ e, s, 0 };
			return GT_MERGE_STUCK;
		}
	}
	return 0;
}

/* The earliest head's turn: it goes (handed to take), or waits again. */
static int turn(struct merge *m, struct ent *f, uint64_t *merged, struct gt_merge_stop *stop)
{
	struct gt_merge_g *o = NULL;
	int rc;

	m->selected[f->src] = 0;
	if (f->t.g != GT_MERGE_UNORDERED && !(o = m->ops->gstate(m->arg, f->t.g)))
		return -ENOMEM;
	/* ready when it was pushed; an event merged since may have moved
	 * its goroutine on */
	if (o && !ready(o, &f->t.init) && !m->cfg->strict) {
		wait_on(m, o, f->src);
		return 0;
	}
	unlocal(f->ev);
	if (o && !ready(o, &f->t.init)) {
		*stop = (struct gt_merge_stop){ f->ev, f->src, f->t.g };
		return GT_MERGE_BROKEN;
	}
	if (o)
		advance(m, o, &f->t);
	if ((rc = m->ops->take(m->arg, f->src, f->ev)))
		return rc;
	(*merged)++;
	m->queue[m->nqueue++] = f->src;
	return 0;
}

static int run(struct merge *m, uint64_t *merged, struct gt_merge_stop *stop)
{
	int rc = 0;

	for (uint32_t s = 0; s < m->cfg->nsrc; s++)
		m->queue[m->nqueue++] = s;
	while (!rc) {
		uint32_t n = m->nqueue;
		struct ent f;

		/* scan only puts streams on wait lists; turn queues them */
		m->nqueue = 0;
		for (uint32_t i = 0; i < n && !rc; i++)
			rc = scan(m, m->queue[i]);
		if (rc)
			break;
		if (m->nheap == 0)
			return stuck(m, stop);
		f = heap_pop(m);
		rc = turn(m, &f, merged, stop);
	}
	return rc;
}

int gt_merge_run(const struct gt_merge_cfg *cfg, const struct gt_merge_ops *ops, void *arg,
		 uint64_t *merged, struct gt_merge_stop *stop)
{
	struct merge m = { cfg, ops, arg };
	uint32_t n = cfg->nsrc ? cfg->nsrc : 1;
	int rc = -ENOMEM;

	*merged = 0;
	m.selected = calloc(n, 1);
	m.wnext = calloc(n, sizeof(*m.wnext));
	/* A stream is queued at most once per wake-up, and is on at most
	 * one wait list: n entries suffice for both. */
	m.queue = calloc(n, sizeof(*m.queue));
	m.heap = calloc(n, sizeof(*m.heap));
	if (m.selected && m.wnext && m.queue && m.heap)
		rc = run(&m, merged, stop);
	free(m.selected);
	free(m.wnext);
	free(m.queue);
	free(m.heap);
	return rc;
}
