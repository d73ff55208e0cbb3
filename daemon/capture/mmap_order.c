/* Putting the perf records of all CPUs in timestamp order.  A process
 * migrates: its exec's COMM record may be in CPU 1's ring and the mmaps
 * that follow in CPU 0's, and a ring read first must not win (the exec
 * would then erase the mappings made after it).
 *
 * The rings are read one after the other, so a drain could see a record
 * of one task without the earlier one on another CPU, if that one was
 * written after its ring was read.  Taking the time T0 before reading any
 * ring settles it: a record stamped up to T0 was written before T0, and so
 * was every earlier record of the same task; those are released now, in
 * order, and the rest waits for the next drain. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A record that keeps a timestamp in the future (garbage) waits at most
 * this many drains. */
#define MAX_ROUNDS 4

int gt_mmaps_keep(struct gt_capture *c, const void *rec, size_t len, uint64_t ts)
{
	struct gt_mmaps *m = &c->mm;
	struct gt_mmap_held_rec *h;

	if (m->nheld == m->capheld) {
		size_t cap = m->capheld ? m->capheld * 2 : 64;
		struct gt_mmap_held_rec *v = realloc(m->held, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		m->held = v;
		m->capheld = cap;
	}
	h = &m->held[m->nheld];
	h->rec = malloc(len);
	if (!h->rec)
		return -ENOMEM;
	memcpy(h->rec, rec, len);
	h->len = (uint32_t)len;
	h->ts = ts;
	h->seq = m->seq++;
	h->rounds = 0;
	m->nheld++;
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct gt_mmap_held_rec *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void gt_mmaps_release(struct gt_capture *c, uint64_t upto)
{
	struct gt_mmaps *m = &c->mm;
	size_t i, k = 0;

	if (!m->nheld)
		return;
	qsort(m->held, m->nheld, sizeof(*m->held), by_time);
	for (i = 0; i < m->nheld; i++) {
		struct gt_mmap_held_rec *h = &m->held[i];
		struct gt_mmap_rec r;

		if (h->ts > upto && ++h->rounds < MAX_ROUNDS) {
			m->held[k++] = *h; /* sorted: the rest is later still */
			continue;
		}
		if (m->cb && gt_mmap_record_parse(h->rec, h->len, &r) == 0)
			m->cb(m->ctx, &r);
		free(h->rec);
	}
	m->nheld = k;
}

void gt_mmaps_forget(struct gt_capture *c)
{
	struct gt_mmaps *m = &c->mm;

	for (size_t i = 0; i < m->nheld; i++)
		free(m->held[i].rec);
	free(m->held);
	m->held = NULL;
	m->nheld = m->capheld = 0;
}
