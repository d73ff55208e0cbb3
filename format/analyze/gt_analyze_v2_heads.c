/* The Ms' runs of a v2 generation's events: grouped per M (each M's own
 * order), one merge head per M, and the min-heap (by time, then by the
 * order read) of the heads that may go. */
#include <errno.h>
#include <stdlib.h>

#include "gt_analyze_v2_run.h"

static int head_less(const struct v2run *r, size_t x, size_t y)
{
	const struct v2e *a = &r->ev[r->heads[x].pos], *b = &r->ev[r->heads[y].pos];

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
	const struct v2e *a = x, *b = y;

	if (a->m != b->m)
		return a->m < b->m ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

int gt_an_v2_split(struct v2run *r)
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
		gt_an_v2_heap_push(r, h);
	return 0;
}
