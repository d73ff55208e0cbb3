/* Reading one BPF ring buffer directly through mmap, the way libbpf's
 * ringbuf.c does, so records can be copied out one at a time and the
 * consumer position published once per batch. */
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

int gt_ring_map(struct gt_ring *r, int fd, size_t size, char *err, size_t errlen)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->mask = size - 1;
	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		snprintf(err, errlen, "mmap of ring consumer page: %s", strerror(errno));
		return -errno;
	}
	r->consumer = p;
	/* the data area follows the producer page.  Mapped once, not twice
	 * back to back as libbpf does: the kernel maps every page of the
	 * ring at mmap time, so the second view counted the whole ring again
	 * in our RSS (16 MiB a CPU by default); the rare record that wraps
	 * around the end is copied whole instead (gt_ring_bytes) */
	r->prod_len = page + size;
	p = mmap(NULL, r->prod_len, PROT_READ, MAP_SHARED, fd, page);
	if (p == MAP_FAILED) {
		int e = -errno;

		snprintf(err, errlen, "mmap of ring data (%zu bytes): %s", size, strerror(errno));
		munmap(r->consumer, page);
		r->consumer = NULL;
		return e;
	}
	r->producer = p;
	r->data = (uint8_t *)p + page;
	return 0;
}

void gt_ring_unmap(struct gt_ring *r)
{
	long page = sysconf(_SC_PAGESIZE);

	if (r->producer)
		munmap(r->producer, r->prod_len);
	if (r->consumer)
		munmap(r->consumer, page);
	r->producer = r->consumer = NULL;
	free(r->wrap);
	r->wrap = NULL;
	r->wrap_cap = 0;
}

const uint8_t *gt_ring_bytes(const uint8_t *data, uint64_t mask, uint64_t off, size_t n,
			     uint8_t **buf, size_t *cap)
{
	size_t size = (size_t)mask + 1, first;

	off &= mask;
	if (off + n <= size)
		return data + off;
	if (*cap < n) {
		uint8_t *b = realloc(*buf, n);

		if (!b)
			return NULL;
		*buf = b;
		*cap = n;
	}
	first = size - off;
	memcpy(*buf, data + off, first);
	memcpy(*buf + first, data, n - first);
	return *buf;
}

static inline uint32_t round_len(uint32_t len)
{
	len &= ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
	return (len + BPF_RINGBUF_HDR_SZ + 7) & ~7u;
}

/* A user stack copy: unwound by the callback now, its id remembered for
 * the records that follow. */
static void ring_copy(struct gt_capture *c, struct gt_ring *r, const void *rec, uint32_t n)
{
	struct gt_kev_ustack u;
	int32_t id = -1;

	memcpy(&u, rec, sizeof(u));
	if (u.size > n - sizeof(u)) {
		c->bad_records++;
		return;
	}
	if (c->ustack_cb)
		id = c->ustack_cb(c->ustack_ctx, &u, (const uint8_t *)rec + sizeof(u));
	r->copies[r->ncopies % GT_RING_COPIES].bpf_id = (int32_t)u.id;
	r->copies[r->ncopies % GT_RING_COPIES].id = id;
	r->ncopies++;
}

/* The id a copy's BPF id stands for (-1: a copy not read, or lost). */
static int32_t copy_id(const struct gt_ring *r, int32_t bpf_id)
{
	if (bpf_id < 0 || !(bpf_id & (GT_STACK_DWARF | GT_STACK_PY)))
		return bpf_id;
	for (unsigned i = 0; i < GT_RING_COPIES && i < r->ncopies; i++)
		if (r->copies[i].bpf_id == bpf_id)
			return r->copies[i].id;
	return -1;
}

/* A CPython thread's frames: given the callback now with the native
 * stack's id, its id remembered for the records that follow (bpf_id
 * GT_STACK_PY | seq; the native id alone without a callback). */
static void ring_py(struct gt_capture *c, struct gt_ring *r, const void *rec, uint32_t n)
{
	struct gt_kev_pystack p;
	size_t head = sizeof(p) - sizeof(p.f);
	int32_t native;

	memset(&p, 0, sizeof(p));
	memcpy(&p, rec, n < sizeof(p) ? n : sizeof(p));
	if (n < head || p.n > GT_PY_FRAMES || n < head + p.n * sizeof(p.f[0])) {
		c->bad_records++;
		return;
	}
	native = copy_id(r, p.native);
	r->copies[r->ncopies % GT_RING_COPIES].bpf_id = (int32_t)p.id;
	r->copies[r->ncopies % GT_RING_COPIES].id = c->py_cb ? c->py_cb(c->py_ctx, &p, native) : native;
	r->ncopies++;
}

/* A goroutine's labels: their read posted now, and the records from this
 * one on held back if the callback asks it (gt_capture_hold). */
static void ring_goid(struct gt_capture *c, const struct gt_kev_goid *e)
{
	if (e->labels && c->goid_cb && c->goid_cb(c->goid_ctx, e) &&
	    (!c->hold_ts || e->hdr.ts < c->hold_ts))
		c->hold_ts = e->hdr.ts ? e->hdr.ts : 1;
}

/* The records that carry a user stack id name copies by their BPF ids. */
static void copy_ids(const struct gt_ring *r, union gt_kev_any *ev)
{
	if (!r->ncopies)
		return;
	switch (ev->hdr.type) {
	case GT_KEV_SWITCH: ev->sw.prev_ustack = copy_id(r, ev->sw.prev_ustack); break;
	case GT_KEV_WAKEUP: ev->wk.waker_ustack = copy_id(r, ev->wk.waker_ustack); break;
	case GT_KEV_FORK: ev->fork.parent_ustack = copy_id(r, ev->fork.parent_ustack); break;
	case GT_KEV_SYS_ENTER: ev->se.ustack = copy_id(r, ev->se.ustack); break;
	}
}

int gt_ring_drain(struct gt_capture *c, int q, unsigned budget)
{
	struct gt_ring *r = &c->rings[q];
	unsigned long cons = __atomic_load_n(r->consumer, __ATOMIC_ACQUIRE);
	unsigned long prod = __atomic_load_n(r->producer, __ATOMIC_ACQUIRE);
	int drained = 1;

	while (cons < prod) {
		/* the 8-byte header never wraps: 8-aligned in a ring of pages */
		uint32_t *hdr = (uint32_t *)(r->data + (cons & r->mask));
		uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
		uint32_t n = len & ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
		const uint8_t *rec = NULL;
		struct gt_slot *s;

		if (len & BPF_RINGBUF_BUSY_BIT)
			break; /* reserved, not yet committed: next time */
		if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
			rec = gt_ring_bytes(r->data, r->mask, cons + BPF_RINGBUF_HDR_SZ, n, &r->wrap,
					    &r->wrap_cap);
			if (!rec)
				c->bad_records++; /* no memory for a wrapped copy: lost */
		}
		if (rec && n >= sizeof(struct gt_kev_ustack) &&
		    ((const struct gt_kev_hdr *)rec)->type == GT_KEV_USTACK) {
			ring_copy(c, r, rec, n);
		} else if (rec && n >= sizeof(struct gt_kev_hdr) &&
			   ((const struct gt_kev_hdr *)rec)->type == GT_KEV_PYSTACK) {
			ring_py(c, r, rec, n);
		} else if (rec) {
			if (n < sizeof(struct gt_kev_hdr) || n > sizeof(s->ev)) {
				c->bad_records++;
			} else {
				s = budget ? gt_ring_merge_slot(&c->m, q) : NULL;
				if (!s) {
					drained = 0;
					break;
				}
				memcpy(&s->ev, rec, n);
				s->len = n;
				copy_ids(r, &s->ev);
				if (s->ev.hdr.type == GT_KEV_EXEC && c->exec_cb)
					c->exec_cb(c->ustack_ctx, s->ev.hdr.tgid, s->ev.hdr.ts);
				if (s->ev.hdr.type == GT_KEV_GOID && n >= sizeof(struct gt_kev_goid))
					ring_goid(c, &s->ev.goid);
				if (s->ev.hdr.ts > r->newest_ts)
					r->newest_ts = s->ev.hdr.ts;
				gt_ring_merge_push(&c->m, q, s);
				budget--;
			}
		}
		cons += round_len(len);
	}
	__atomic_store_n(r->consumer, cons, __ATOMIC_RELEASE);
	return drained;
}
