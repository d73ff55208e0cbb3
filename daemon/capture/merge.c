/* The k-way merge of the per-CPU rings: events copied out of ring i wait
 * in queue i, in timestamp order, and leave in global (ts, arrival) order
 * once the watermark says no ring can still hold an older one.  The perf
 * records of every CPU (mmap_events.c) are one more queue, the last: its
 * slots point at the held records, which are variable-sized.
 *
 * A queue per ring rather than one heap over every event: the buffered
 * events (a few thousand at a 2 ms lag) are then read and written
 * sequentially, and choosing the next one compares queue heads only.  At
 * a few million events per second the heap's scattered slots and sift-downs
 * were most of the consumer's time. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "testing.h"

#define MIN_QUEUE 4096 /* slots per ring, whatever the number of CPUs */

int gt_ring_merge_init(struct gt_ring_merge *m, int nrings, uint32_t nslots)
{
	uint32_t cap = MIN_QUEUE;
	int nq = nrings + 1;

	memset(m, 0, sizeof(*m));
	while (cap * 2 <= nslots / (uint32_t)nrings) /* the rings share nslots */
		cap *= 2;
	m->q = calloc(nq, sizeof(*m->q));
	if (!m->q)
		return -ENOMEM;
	m->nq = nq;
	m->mq = nrings;
	for (int i = 0; i < nq; i++) {
		/* mapped, not malloc'd: a light load touches only the first
		 * pages, and gt_ring_merge_release gives pages back */
		void *v = mmap(NULL, cap * sizeof(struct gt_slot), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (v == MAP_FAILED) {
			gt_ring_merge_free(m);
			return -ENOMEM;
		}
		m->q[i].slots = v;
		m->q[i].cap = cap;
	}
	return 0;
}

static inline struct gt_slot *at(struct gt_fifo *f, uint32_t i)
{
	return &f->slots[i & (f->cap - 1)];
}

/* A queue that is never empty (under a steady load the records newer
 * than the lag stay) walked its head over every slot, so every page of
 * the queue became resident: 32 768 slots of 168 bytes a ring, 9.8 of 16
 * MiB resident after 20 s of nginx under wrk.  Once the head is far from
 * the start and what is left is a few records (at most an eighth of what
 * went since the start: copying them costs little beside delivering
 * those), they go back to the start; the pages beyond are touched again
 * only by a queue that fills that far. */
#define COMPACT_FROM 1024

static void compact(struct gt_fifo *f)
{
	uint32_t n = f->tail - f->head, h = f->head & (f->cap - 1);

	if (h < COMPACT_FROM || n > h / 8 || h + n > f->cap)
		return;
	if (n) /* no overlap: n <= h / 8 */
		memcpy(f->slots, &f->slots[h], n * sizeof(*f->slots));
	f->head = 0;
	f->tail = n;
}

/* The held record a perf slot points at, copied in and out as bytes: the
 * slot is a union of event structs, and struct gt_mmap_kev is not one. */
static struct gt_mmap_held *held_get(const struct gt_slot *s)
{
	struct gt_mmap_held *h;

	memcpy(&h, (const char *)&s->ev + offsetof(struct gt_mmap_kev, h), sizeof(h));
	return h;
}

static void held_set(struct gt_slot *s, struct gt_mmap_held *h)
{
	memcpy((char *)&s->ev + offsetof(struct gt_mmap_kev, h), &h, sizeof(h));
}

void gt_ring_merge_free(struct gt_ring_merge *m)
{
	if (m->q && m->q[m->mq].slots) { /* perf records never delivered */
		struct gt_fifo *f = &m->q[m->mq];

		for (uint32_t i = f->head; i != f->tail; i++)
			free(held_get(at(f, i)));
	}
	for (int i = 0; m->q && i < m->nq; i++)
		if (m->q[i].slots)
			munmap(m->q[i].slots, m->q[i].cap * sizeof(struct gt_slot));
	free(m->q);
	memset(m, 0, sizeof(*m));
}

/* A queue that empties starts again at its first slot (see
 * gt_ring_merge_deliver), but one that never quite empties while a session
 * records walks all of its slots (6 MiB a CPU on 2 CPUs): that many pages
 * would stay resident for the life of the daemon.  The capture gives them
 * back once detached and drained. */
void gt_ring_merge_release(struct gt_ring_merge *m)
{
	if (!m->touched || m->nbuf)
		return;
	for (int i = 0; i < m->nq; i++)
		(void)madvise(m->q[i].slots, m->q[i].cap * sizeof(struct gt_slot),
			      MADV_DONTNEED); /* our own mapping: cannot fail */
	m->touched = 0;
}

struct gt_slot *gt_ring_merge_slot(struct gt_ring_merge *m, int q)
{
	struct gt_fifo *f = &m->q[q];

	return f->tail - f->head == f->cap ? NULL : at(f, f->tail);
}

static inline int before(const struct gt_slot *a, const struct gt_slot *b)
{
	return a->ev.hdr.ts < b->ev.hdr.ts || (a->ev.hdr.ts == b->ev.hdr.ts && a->seq < b->seq);
}

void gt_ring_merge_push(struct gt_ring_merge *m, int q, struct gt_slot *s)
{
	struct gt_fifo *f = &m->q[q];
	uint32_t i = f->tail++;

	s->seq = m->seq++;
	m->nbuf++;
	m->touched = 1;
	/* a record older than the one before it: rare in a BPF ring (nested
	 * programs), common in the perf queue (the rings of several CPUs, read
	 * one after the other, a few records each); move it back among the
	 * undelivered ones */
	while (i != f->head && s->ev.hdr.ts < at(f, i - 1)->ev.hdr.ts) {
		struct gt_slot tmp = *at(f, i - 1);

		*at(f, i - 1) = *s;
		*s = tmp;
		s = at(f, --i);
	}
}

int gt_ring_merge_push_mmap(struct gt_ring_merge *m, struct gt_mmap_held *h)
{
	struct gt_slot *s = gt_ring_merge_slot(m, m->mq);

	if (!s)
		return -ENOSPC;
	memset(&s->ev.hdr, 0, sizeof(s->ev.hdr));
	s->ev.hdr.ts = h->r.ts;
	held_set(s, h);
	s->len = sizeof(struct gt_mmap_kev);
	gt_ring_merge_push(m, m->mq, s);
	return 0;
}

/* A perf record goes to its callback, which owns it from then on; it is
 * not an event (the count delivered and c->st.events are the rings'
 * records only).  Returns 0: the callback cannot stop the delivery. */
static int give_mmap(struct gt_capture *c, struct gt_slot *s)
{
	struct gt_mmap_held *h = held_get(s);

	if (c->mm.cb)
		c->mm.cb(c->mm.ctx, h);
	else
		free(h);
	return 0;
}

/* The queue whose head comes first (-1 if all are empty), and the head
 * of the runner-up in *second (NULL if none). */
static int first_queue(struct gt_ring_merge *m, const struct gt_slot **second)
{
	const struct gt_slot *best = NULL;
	int b = -1;

	*second = NULL;
	for (int i = 0; i < m->nq; i++) {
		struct gt_fifo *f = &m->q[i];
		const struct gt_slot *h;

		if (f->head == f->tail)
			continue;
		h = at(f, f->head);
		if (!best || before(h, best)) {
			*second = best;
			best = h;
			b = i;
		} else if (!*second || before(h, *second)) {
			*second = h;
		}
	}
	return b;
}

int gt_ring_merge_deliver(struct gt_capture *c, uint64_t upto, gt_capture_cb cb,
		     void *ctx, int *stopped)
{
	struct gt_ring_merge *m = &c->m;
	const struct gt_slot *second;
	int n = 0, q;

	*stopped = 0;
	if (m->nbuf > c->st.max_buffered)
		c->st.max_buffered = m->nbuf;
	while ((q = first_queue(m, &second)) >= 0) {
		struct gt_fifo *f = &m->q[q];
		int perf = q == m->mq;

		/* deliver from this queue while it stays ahead of the others */
		do {
			struct gt_slot *s = at(f, f->head);
			int rc;

			if (s->ev.hdr.ts > upto)
				return n;
			if (s->ev.hdr.ts < m->last_ts)
				c->st.out_of_order++; /* came after a newer one was delivered */
			else
				m->last_ts = s->ev.hdr.ts;
			rc = perf ? give_mmap(c, s) : cb(ctx, &s->ev.hdr, s->len);
			n += !perf;
			c->st.events += !perf;
			f->head++;
			m->nbuf--;
			if (f->head == f->tail) /* empty: the first pages again */
				f->head = f->tail = 0;
			else
				compact(f);
			if (rc) {
				*stopped = rc;
				return n;
			}
		} while (f->head != f->tail && (!second || before(at(f, f->head), second)));
	}
	return n;
}

size_t gt_capture_merge_resident(const struct gt_capture *c)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = 0;

	for (int i = 0; i < c->m.nq; i++) {
		size_t pages = (c->m.q[i].cap * sizeof(struct gt_slot) + page - 1) / page;
		unsigned char *vec = malloc(pages);

		if (!vec || mincore(c->m.q[i].slots, pages * page, vec)) {
			free(vec);
			return SIZE_MAX; /* unknown: never "none" */
		}
		for (size_t p = 0; p < pages; p++)
			n += vec[p] & 1;
		free(vec);
	}
	return n;
}
