/* See dwarf_stacks.h. */
#include "dwarf_stacks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "common/clock.h"
#include "sym/unwind.h"
#include "util/gt_grow.h"
#include "util/gt_idmap.h"

struct stack {
	size_t off;   /* in ips */
	uint32_t n;
};

struct gt_dwarf_stacks {
	struct gt_unwinder *uw;
	struct gt_idmap ids;      /* {tgid, hash of the frames} -> index + 1 */
	struct stack *stacks;
	size_t nstacks, capstacks;
	uint64_t *ips;
	size_t nips, capips;
	uint64_t unwound, unwind_ns;
};

/* FNV-1a over the frames' bytes. */
static uint64_t frames_hash(const uint64_t *ips, int n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (int i = 0; i < n; i++)
		for (int b = 0; b < 64; b += 8) {
			h ^= (ips[i] >> b) & 0xff;
			h *= 0x100000001b3ull;
		}
	return h;
}

/* The id of a process's stack, added if new; -1 without memory.  Two
 * stacks with one 64-bit hash would share an id: the frames are compared,
 * and a collision is a stack lost, not a stack confused. */
static int32_t intern(struct gt_dwarf_stacks *d, uint32_t tgid, const uint64_t *ips, int n)
{
	const uint64_t key[2] = {(uint64_t)tgid << 32 | (uint32_t)n, frames_hash(ips, n)};
	uint32_t *v;
	int isnew;

	v = gt_idmap_insert(&d->ids, key, &isnew);
	if (!v)
		return -1;
	if (!isnew) {
		const struct stack *s = &d->stacks[*v - 1];

		return memcmp(d->ips + s->off, ips, (size_t)n * sizeof(*ips)) ? -1
			: (int32_t)(GT_STACK_DWARF | (*v - 1));
	}
	if (d->nstacks >= GT_STACK_DWARF_SEQ ||
	    gt_grow(&d->stacks, &d->capstacks, d->nstacks + 1, sizeof(*d->stacks)) ||
	    gt_grow(&d->ips, &d->capips, d->nips + (size_t)n, sizeof(*d->ips))) {
		gt_idmap_remove(&d->ids, key);
		return -1;
	}
	memcpy(d->ips + d->nips, ips, (size_t)n * sizeof(*ips));
	d->stacks[d->nstacks] = (struct stack){.off = d->nips, .n = (uint32_t)n};
	d->nips += (size_t)n;
	*v = (uint32_t)++d->nstacks;
	return (int32_t)(GT_STACK_DWARF | (d->nstacks - 1));
}

static int32_t on_copy(void *ctx, const struct gt_kev_ustack *u, const uint8_t *stack)
{
	struct gt_dwarf_stacks *d = ctx;
	uint64_t ips[GT_STACK_DEPTH], t0 = gt_now_ns();
	struct gt_unwind_in in = {
		.tgid = (pid_t)u->hdr.tgid, .tid = (pid_t)u->hdr.tid,
		.ip = u->ip, .sp = u->sp, .regs = (const uint64_t *)u->regs, .stack = stack, .size = u->size,
	};
	int n = gt_unwind(d->uw, &in, ips, GT_STACK_DEPTH);

	d->unwound++;
	d->unwind_ns += gt_now_ns() - t0;
	return n > 0 ? intern(d, u->hdr.tgid, ips, n) : -1;
}

/* An exec read from a ring: the unwinding session opened before it (of
 * the old image) goes, in order with the copies of the same ring. */
static void on_exec(void *ctx, uint32_t tgid, uint64_t ts)
{
	gt_dwarf_stacks_forget(ctx, (pid_t)tgid, ts);
}

struct gt_dwarf_stacks *gt_dwarf_stacks_new(struct gt_capture *c)
{
	struct gt_dwarf_stacks *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->uw = gt_unwinder_new();
	if (!d->uw) {
		free(d);
		return NULL;
	}
	gt_idmap_init(&d->ids, 2, sizeof(uint32_t));
	gt_capture_set_ustack_cb(c, on_copy, on_exec, d);
	return d;
}

void gt_dwarf_stacks_free(struct gt_dwarf_stacks *d)
{
	if (!d)
		return;
	gt_unwinder_free(d->uw);
	gt_idmap_free(&d->ids);
	free(d->stacks);
	free(d->ips);
	free(d);
}

int gt_dwarf_stacks_get(const struct gt_dwarf_stacks *d, int32_t id, uint64_t *ips, int max)
{
	uint32_t i = (uint32_t)id & GT_STACK_DWARF_SEQ;
	int n;

	if (!d || id < 0 || !(id & GT_STACK_DWARF) || i >= d->nstacks)
		return -ENOENT;
	n = (int)d->stacks[i].n < max ? (int)d->stacks[i].n : max;
	memcpy(ips, d->ips + d->stacks[i].off, (size_t)n * sizeof(*ips));
	return n;
}

void gt_dwarf_stacks_forget(struct gt_dwarf_stacks *d, pid_t tgid, uint64_t exec_ns)
{
	if (d)
		gt_unwinder_forget(d->uw, tgid, exec_ns);
}

void gt_dwarf_stacks_cost(const struct gt_dwarf_stacks *d, uint64_t *stacks, uint64_t *ns)
{
	*stacks = d ? d->unwound : 0;
	*ns = d ? d->unwind_ns : 0;
}
