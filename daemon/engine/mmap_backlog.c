/* A FIFO of the capture's held records (no copy: the capture made the one
 * there is, and hands it over); a pid's are found by a scan (a few
 * thousand at most, once per newly followed process), only when the
 * count of records per pid says it has some: every exec on the machine
 * asks, and a full backlog's scan was a tenth of a flight recorder's
 * time on a machine running builds. */
#include "mmap_backlog.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MASK (GT_MMAP_BACKLOG_RECORDS - 1)

static void drop(struct gt_mmap_backlog *b, uint32_t i)
{
	struct gt_mmap_held **slot = &b->ring[i & MASK];

	if (*slot) {
		uint32_t *n = gt_idmap_get(&b->pids, (*slot)->r.pid);

		if (n && !--*n)
			gt_idmap_del(&b->pids, (*slot)->r.pid);
		b->bytes -= gt_mmap_held_size(*slot);
		free(*slot);
		*slot = NULL;
	}
}

static void pop_oldest(struct gt_mmap_backlog *b)
{
	if (b->ring[b->head & MASK])
		b->dropped++;
	drop(b, b->head);
	b->head++;
	b->count--;
}

int gt_mmap_backlog_push(struct gt_mmap_backlog *b, struct gt_mmap_held *h)
{
	size_t size = gt_mmap_held_size(h);

	if (size > GT_MMAP_BACKLOG_BYTES) {
		free(h);
		return -EINVAL;
	}
	if (!b->ring && !(b->ring = calloc(GT_MMAP_BACKLOG_RECORDS, sizeof(*b->ring)))) {
		free(h);
		return -ENOMEM;
	}
	if (!b->pids.vsize)
		gt_idmap_init(&b->pids, 1, sizeof(uint32_t));
	while (b->count && (b->count == GT_MMAP_BACKLOG_RECORDS ||
			    b->bytes + size > GT_MMAP_BACKLOG_BYTES))
		pop_oldest(b);
	int isnew;
	uint32_t *n = gt_idmap_put(&b->pids, h->r.pid, &isnew);

	if (!n) { /* not counted, so never found: not kept */
		free(h);
		return -ENOMEM;
	}
	++*n;
	b->ring[(b->head + b->count) & MASK] = h;
	b->count++;
	b->bytes += size;
	return 0;
}

void gt_mmap_backlog_exec(struct gt_mmap_backlog *b, uint32_t pid)
{
	if (!gt_idmap_has(&b->pids, pid))
		return;
	for (uint32_t i = 0; i < b->count; i++) {
		struct gt_mmap_held *h = b->ring ? b->ring[(b->head + i) & MASK] : NULL;

		if (h && h->r.pid == pid)
			drop(b, b->head + i);
	}
}

int gt_mmap_backlog_take(struct gt_mmap_backlog *b, uint32_t pid,
			 void (*fn)(void *ctx, const struct gt_mmap_rec *r), void *ctx)
{
	int n = 0;

	if (!gt_idmap_has(&b->pids, pid))
		return 0;
	for (uint32_t i = 0; i < b->count; i++) {
		struct gt_mmap_held *h = b->ring ? b->ring[(b->head + i) & MASK] : NULL;

		if (h && h->r.pid == pid) {
			fn(ctx, &h->r);
			drop(b, b->head + i);
			n++;
		}
	}
	/* the oldest slots may be empty now: give them back */
	while (b->count && !b->ring[b->head & MASK]) {
		b->head++;
		b->count--;
	}
	return n;
}

void gt_mmap_backlog_free(struct gt_mmap_backlog *b)
{
	while (b->ring && b->count)
		pop_oldest(b);
	free(b->ring);
	gt_idmap_free(&b->pids);
	memset(b, 0, sizeof(*b));
}
