/* HeapAlloc and HeapGoal of a session: the sum over its processes.
 *
 * Go's trace has one heap counter; a session may hold many processes
 * (a server's master and workers, a cgroup).  Writing each process's own
 * value made the counter jump from one process's heap to another's, so the
 * translator keeps the last value of every process and writes the total;
 * a process that exits leaves it. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>

/* Counters need a P but no G: the CPU's own, or P 0. */
static int counter_p(const struct gt_translator *t, int cpu)
{
	return cpu >= 0 && cpu < t->ncpus ? cpu : 0;
}

static struct gt_heap_share *share_of(struct gt_translator *t, uint32_t tgid, bool add)
{
	struct gt_heap_shares *h = &t->heap;

	for (size_t i = 0; i < h->n; i++)
		if (h->v[i].tgid == tgid)
			return &h->v[i];
	if (!add)
		return NULL;
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 16;
		struct gt_heap_share *v = realloc(h->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		h->v = v;
		h->cap = cap;
	}
	h->v[h->n] = (struct gt_heap_share){ .tgid = tgid };
	return &h->v[h->n++];
}

static void write_total(struct gt_translator *t, int cpu)
{
	uint64_t a[1] = { t->heap.total };

	gt_tr_emit(t, counter_p(t, cpu), GT_EV_HEAP_ALLOC, a, 1);
}

static void set_share(struct gt_translator *t, uint32_t tgid, uint64_t bytes, int cpu)
{
	struct gt_heap_share *s = share_of(t, tgid, true);

	if (!s) {
		t->err = t->err ? t->err : -ENOMEM;
		return;
	}
	t->heap.total += bytes - s->bytes; /* unsigned: wraps back correctly */
	s->bytes = bytes;
	write_total(t, cpu);
}

void gt_tr_on_heap(struct gt_translator *t, const struct gt_kev_heap *e)
{
	set_share(t, e->hdr.tgid, e->live_bytes, e->hdr.cpu);
	if (e->limit_bytes && e->limit_bytes != t->heap_goal) {
		uint64_t a[1] = { e->limit_bytes };

		t->heap_goal = e->limit_bytes;
		gt_tr_emit(t, counter_p(t, e->hdr.cpu), GT_EV_HEAP_GOAL, a, 1);
	}
}

void gt_tr_on_rss(struct gt_translator *t, const struct gt_kev_rss *e)
{
	set_share(t, e->hdr.tgid, e->rss_bytes, e->hdr.cpu);
}

void gt_tr_heap_process_gone(struct gt_translator *t, uint32_t tgid, int cpu)
{
	struct gt_heap_share *s = share_of(t, tgid, false);

	if (!s)
		return;
	t->heap.total -= s->bytes;
	*s = t->heap.v[--t->heap.n];
	write_total(t, cpu);
}

void gt_tr_heap_free(struct gt_translator *t)
{
	free(t->heap.v);
	t->heap = (struct gt_heap_shares){ 0 };
}
