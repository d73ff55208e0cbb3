/* The stacks of a flight recording: the live model resolves each stack
 * through the engine's resolver as the records come (as a recording
 * does), and the segment keeps a copy with its strings; a dump resolves
 * from the copies of the segments it reads (immutable then: the dump cut
 * a new segment for what comes meanwhile), newest first, so it needs neither the BPF
 * stack map nor the symbolizer's view of processes gone since.  Old
 * segments take their stacks with them. */
#include "flight_seg.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static struct gt_flight_frames *copy_frames(const struct gt_frame *fr, int n)
{
	size_t strs = 0, size;
	struct gt_flight_frames *b;
	char *p;

	for (int i = 0; i < n; i++)
		strs += (fr[i].func ? strlen(fr[i].func) + 1 : 0) +
			(fr[i].file ? strlen(fr[i].file) + 1 : 0);
	size = sizeof(*b) + (size_t)n * sizeof(b->f[0]) + strs;
	b = malloc(size);
	if (!b)
		return NULL;
	b->n = n;
	b->size = size;
	p = (char *)&b->f[n];
	for (int i = 0; i < n; i++) {
		b->f[i] = fr[i];
		if (fr[i].func) {
			b->f[i].func = strcpy(p, fr[i].func);
			p += strlen(p) + 1;
		}
		if (fr[i].file) {
			b->f[i].file = strcpy(p, fr[i].file);
			p += strlen(p) + 1;
		}
	}
	return b;
}

static void stack_key(uint64_t k[4], uint32_t tgid, int32_t ustack, int32_t kstack,
		      uint64_t caller)
{
	k[0] = tgid;
	k[1] = (uint32_t)ustack;
	k[2] = (uint32_t)kstack;
	k[3] = caller;
}

static int rec_frames(void *ctx, uint32_t tgid, int32_t ustack, int32_t kstack, uint64_t caller,
		      struct gt_frame *out, int max)
{
	struct gt_flight *f = ctx;
	struct gt_flight_seg *s = f->tail;
	const struct gt_stack_source *src = f->p.stacks;
	uint64_t k[4];
	int n, isnew;

	n = src->frames(src->ctx, tgid, ustack, kstack, caller, out, max);
	if (n <= 0 || !s)
		return n;
	stack_key(k, tgid, ustack, kstack, caller);
	struct gt_flight_frames **slot = gt_idmap_insert(&s->stacks, k, &isnew);
	if (slot && isnew) {
		*slot = copy_frames(out, n);
		if (*slot) {
			s->bytes += (*slot)->size + 48;
			f->held += (*slot)->size + 48;
		} else {
			gt_idmap_remove(&s->stacks, k); /* out of memory: the dump has none */
		}
	}
	return n;
}

static int rec_ra_slot(void *ctx, uint32_t tgid, int32_t ustack)
{
	struct gt_flight *f = ctx;
	const struct gt_stack_source *src = f->p.stacks;
	int r = src->ra_slot ? src->ra_slot(src->ctx, tgid, ustack) : GT_RA_NONE;
	uint64_t k[2] = {tgid, (uint32_t)ustack};
	int isnew;

	if (f->tail) {
		int *v = gt_idmap_insert(&f->tail->ra, k, &isnew);
		if (v) {
			*v = r;
			f->tail->bytes += isnew ? 24 : 0;
			f->held += isnew ? 24 : 0;
		}
	}
	return r;
}

static int replay_frames(void *ctx, uint32_t tgid, int32_t ustack, int32_t kstack,
			 uint64_t caller, struct gt_frame *out, int max)
{
	const struct gt_flight_segs *segs = ctx;
	struct gt_flight_frames *best = NULL;
	uint64_t k[4];

	stack_key(k, tgid, ustack, kstack, caller);
	/* the latest copy: a stack id may be reused once the map is cleared */
	for (int i = segs->n - 1; i >= 0 && !best; i--) {
		struct gt_flight_frames **b = gt_idmap_find(&segs->v[i]->stacks, k);
		if (b)
			best = *b;
	}
	if (!best)
		return 0;
	int n = best->n < max ? best->n : max;
	memcpy(out, best->f, (size_t)n * sizeof(*out));
	return n;
}

static int replay_ra_slot(void *ctx, uint32_t tgid, int32_t ustack)
{
	const struct gt_flight_segs *segs = ctx;
	uint64_t k[2] = {tgid, (uint32_t)ustack};

	for (int i = segs->n - 1; i >= 0; i--) {
		int *v = gt_idmap_find(&segs->v[i]->ra, k);
		if (v)
			return *v;
	}
	return GT_RA_NONE;
}

void gt_flight_stacks_init(struct gt_flight *f)
{
	f->rec.frames = rec_frames;
	f->rec.ra_slot = rec_ra_slot;
	f->rec.ctx = f;
}

void gt_flight_replay_source(const struct gt_flight_segs *segs, struct gt_stack_source *out)
{
	out->frames = replay_frames;
	out->ra_slot = replay_ra_slot;
	out->ctx = (void *)(uintptr_t)segs;
}

static void free_blob(uint64_t key, void *val, void *arg)
{
	(void)key;
	(void)arg;
	free(*(struct gt_flight_frames **)val);
}

void gt_flight_seg_stacks_free(struct gt_flight_seg *s)
{
	gt_idmap_each(&s->stacks, free_blob, NULL);
	gt_idmap_free(&s->stacks);
	gt_idmap_free(&s->ra);
}
