/* The Ms' runs of a v2 generation's events: grouped per M (each M's own
 * order), one merge head per M reading its batches one event at a time,
 * and the min-heap (by time, then by the order read) of the heads that
 * may go. */
#include <errno.h>
#include <stdlib.h>

#include "gt_analyze_v2_run.h"

static int head_less(const struct v2run *r, size_t x, size_t y)
{
	const struct v2e *a = &r->heads[x].ev, *b = &r->heads[y].ev;

	return a->ts != b->ts ? a->ts < b->ts : a->idx < b->idx;
}

void gt_an_v2_heap_push(struct v2run *r, size_t h)
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

size_t gt_an_v2_heap_pop(struct v2run *r)
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
	const struct mbatch *a = x, *b = y;

	if (a->m != b->m)
		return a->m < b->m ? -1 : 1;
	return a->bi < b->bi ? -1 : a->bi > b->bi;
}

int gt_an_v2_head_next(struct v2run *r, size_t h)
{
	struct mhead *hd = &r->heads[h];
	int rc;

	for (;;) {
		rc = gt_an_v2_next_kept(r, &hd->c, r->order[hd->pos].bi, &hd->k, &hd->ev);
		if (rc)
			return rc;
		if (++hd->pos >= hd->end)
			return 0;
		gt_v2_cursor_init(&hd->c, &r->f, &r->batches[r->order[hd->pos].bi]);
		hd->k = 0;
	}
}

/* The batches that hold state events (or CPU samples), by M. */
static int order_batches(struct v2run *r)
{
	r->norder = 0;
	for (size_t i = 0; i < r->nbatches; i++) {
		int kind = r->batches[i].kind;

		if (kind != GT_V2_K_EVENTS && kind != GT_V2_K_SAMPLES)
			continue;
		if (gt_grow(&r->order, &r->caporder, r->norder + 1, sizeof(*r->order)))
			return -ENOMEM;
		r->order[r->norder++] = (struct mbatch){ r->batches[i].m, i };
	}
	qsort(r->order, r->norder, sizeof(*r->order), by_m);
	return 0;
}

int gt_an_v2_split(struct v2run *r)
{
	int rc;

	if ((rc = order_batches(r)))
		return rc;
	r->nheads = 0;
	for (size_t i = 0; i < r->norder; i++) {
		if (i && r->order[i].m == r->order[i - 1].m) {
			r->heads[r->nheads - 1].end = i + 1;
			continue;
		}
		if (gt_grow(&r->heads, &r->capheads, r->nheads + 1, sizeof(*r->heads)))
			return -ENOMEM;
		r->heads[r->nheads++] = (struct mhead){ .pos = i, .end = i + 1, .next_wait = -1 };
	}
	if (gt_grow(&r->heap, &r->capheap, r->nheads, sizeof(*r->heap)))
		return -ENOMEM;
	r->nheap = r->nwaiting = 0;
	r->disorder = 0;
	gt_idmap_free(&r->waits);
	gt_idmap_init(&r->waits, 1, sizeof(uint64_t));
	for (size_t h = 0; h < r->nheads; h++) {
		struct mhead *hd = &r->heads[h];

		gt_v2_cursor_init(&hd->c, &r->f, &r->batches[r->order[hd->pos].bi]);
		if ((rc = gt_an_v2_head_next(r, h)) < 0)
			return rc;
		if (rc)
			gt_an_v2_heap_push(r, h);
	}
	return 0;
}
