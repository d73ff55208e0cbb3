/* The k-way merge of the per-CPU rings: events copied out of every ring go
 * into one pool of fixed slots (allocated once) indexed by a min-heap on
 * (ts, arrival).  Events leave in timestamp order once the watermark says
 * no ring can still hold an older one. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "capture_internal.h"

int gt_merge_init(struct gt_merge *m, uint32_t nslots)
{
	memset(m, 0, sizeof(*m));
	m->slots = calloc(nslots, sizeof(*m->slots));
	m->free = calloc(nslots, sizeof(*m->free));
	m->heap = calloc(nslots, sizeof(*m->heap));
	if (!m->slots || !m->free || !m->heap) {
		gt_merge_free(m);
		return -ENOMEM;
	}
	m->nslots = nslots;
	/* hand out low slots first so a light load touches few pages */
	for (uint32_t i = 0; i < nslots; i++)
		m->free[i] = nslots - 1 - i;
	m->nfree = nslots;
	return 0;
}

void gt_merge_free(struct gt_merge *m)
{
	free(m->slots);
	free(m->free);
	free(m->heap);
	memset(m, 0, sizeof(*m));
}

struct gt_slot *gt_merge_slot(struct gt_merge *m)
{
	if (!m->nfree)
		return NULL;
	return &m->slots[m->free[m->nfree - 1]];
}

static inline int before(const struct gt_heap_ent *a, const struct gt_heap_ent *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->seq < b->seq);
}

void gt_merge_push(struct gt_merge *m, struct gt_slot *s)
{
	struct gt_heap_ent e = { s->ev.hdr.ts, m->seq++, m->free[--m->nfree] };
	uint32_t i = m->nheap++;

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;

		if (!before(&e, &m->heap[parent]))
			break;
		m->heap[i] = m->heap[parent];
		i = parent;
	}
	m->heap[i] = e;
}

static void pop(struct gt_merge *m)
{
	struct gt_heap_ent last = m->heap[--m->nheap];
	uint32_t i = 0, n = m->nheap;

	m->free[m->nfree++] = m->heap[0].slot;
	if (!n)
		return;
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, k = l;

		if (l >= n)
			break;
		if (r < n && before(&m->heap[r], &m->heap[l]))
			k = r;
		if (!before(&m->heap[k], &last))
			break;
		m->heap[i] = m->heap[k];
		i = k;
	}
	m->heap[i] = last;
}

int gt_merge_deliver(struct gt_capture *c, uint64_t upto, gt_capture_cb cb,
		     void *ctx, int *stopped)
{
	struct gt_merge *m = &c->m;
	int n = 0;

	*stopped = 0;
	if (m->nheap > c->st.max_buffered)
		c->st.max_buffered = m->nheap;
	while (m->nheap && m->heap[0].ts <= upto) {
		struct gt_slot *s = &m->slots[m->heap[0].slot];
		int rc;

		if (s->ev.hdr.ts < m->last_ts)
			c->st.out_of_order++; /* came after a newer one was delivered */
		else
			m->last_ts = s->ev.hdr.ts;
		rc = cb(ctx, &s->ev.hdr, s->len);
		pop(m);
		n++;
		c->st.events++;
		if (rc) {
			*stopped = rc;
			break;
		}
	}
	return n;
}
