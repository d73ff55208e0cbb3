/* Reading one BPF ring buffer directly through mmap, the way libbpf's
 * ringbuf.c does, so records can be copied out one at a time and the
 * consumer position published once per batch. */
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
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
	/* the data area follows the producer page, mapped twice so a record
	 * that wraps around the end reads contiguously */
	r->prod_len = page + 2 * size;
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
}

static inline uint32_t round_len(uint32_t len)
{
	len &= ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
	return (len + BPF_RINGBUF_HDR_SZ + 7) & ~7u;
}

int gt_ring_drain(struct gt_capture *c, int q, unsigned budget)
{
	struct gt_ring *r = &c->rings[q];
	unsigned long cons = __atomic_load_n(r->consumer, __ATOMIC_ACQUIRE);
	unsigned long prod = __atomic_load_n(r->producer, __ATOMIC_ACQUIRE);
	int drained = 1;

	while (cons < prod) {
		uint32_t *hdr = (uint32_t *)(r->data + (cons & r->mask));
		uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
		uint32_t n = len & ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
		struct gt_slot *s;

		if (len & BPF_RINGBUF_BUSY_BIT)
			break; /* reserved, not yet committed: next time */
		if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
			if (n < sizeof(struct gt_kev_hdr) || n > sizeof(s->ev)) {
				c->bad_records++;
			} else {
				s = budget ? gt_ring_merge_slot(&c->m, q) : NULL;
				if (!s) {
					drained = 0;
					break;
				}
				memcpy(&s->ev, hdr + 2, n);
				s->len = n;
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
