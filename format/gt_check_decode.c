/* Phase 1 of the check, as Go 1.19's readTrace + parseEvents: decode every
 * record, keep the string and stack dictionaries, turn the rest into
 * events with absolute timestamps and the P and G they ran on, grouped by
 * P.  Plus the DESIGN.md rules that can be seen on one record. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gt_check_internal.h"

/* DESIGN.md limits (stricter than Go 1.19, which allows 1000 frames). */
#define GT_STACK_MAX_FRAMES 128
#define GT_STACK_MAX_BYTES 2048

size_t gt_check_arg_num(int ver, const struct gt_raw_event *raw)
{
	const struct gt_event_desc *d = &gt_event_descs[raw->type];
	size_t n = (size_t)d->nargs + (size_t)d->has_stack;

	if (raw->type == GT_EV_STACK)
		return raw->nargs;
	if (raw->type == GT_EV_BATCH || raw->type == GT_EV_FREQUENCY ||
	    raw->type == GT_EV_TIMER_GOROUTINE)
		return ver < 1007 ? n + 1 : n; /* an unused value before 1.7 */
	n++; /* timestamp */
	if (ver < 1007)
		n++; /* sequence */
	switch (raw->type) {
	case GT_EV_GC_SWEEP_DONE:
		if (ver < 1009)
			n -= 2;
		break;
	case GT_EV_GC_START: case GT_EV_GO_START: case GT_EV_GO_UNBLOCK:
		if (ver < 1007)
			n--;
		break;
	case GT_EV_GC_STW_START:
		if (ver < 1010)
			n--;
		break;
	}
	return n;
}

static struct gt_batch *batch_for(struct gt_ctx *c, int64_t p, uint32_t *idx)
{
	uint32_t *slot;
	int isnew;

	slot = gt_map_put(&c->batch_of, (uint64_t)p, &isnew);
	if (!slot)
		return NULL;
	if (isnew) {
		if (c->nbatches == c->capbatches) {
			uint32_t cap = c->capbatches ? c->capbatches * 2 : 16;
			struct gt_batch *b = realloc(c->batches, cap * sizeof(*b));

			if (!b)
				return NULL;
			c->batches = b;
			c->capbatches = cap;
		}
		*slot = c->nbatches++;
		memset(&c->batches[*slot], 0, sizeof(c->batches[0]));
		c->batches[*slot].p = p;
		c->batches[*slot].seg_first = c->batches[*slot].seg_last = UINT32_MAX;
	}
	*idx = *slot;
	return &c->batches[*slot];
}

/* Streaming: notes that a run of batch bi's records starts at off. */
static int seg_add(struct gt_ctx *c, uint32_t bi, uint64_t off, int64_t base_ts)
{
	struct gt_batch *b = &c->batches[bi];
	struct gt_seg *sg;

	if (c->nsegs == c->capsegs) {
		uint32_t cap = c->capsegs ? c->capsegs * 2 : 64;

		if (cap < c->capsegs || !(sg = realloc(c->segs, (size_t)cap * sizeof(*sg))))
			return -ENOMEM;
		c->segs = sg;
		c->capsegs = cap;
	}
	sg = &c->segs[c->nsegs];
	sg->off = off;
	sg->base_ts = base_ts;
	sg->next = UINT32_MAX;
	if (b->seg_last == UINT32_MAX)
		b->seg_first = c->nsegs;
	else
		c->segs[b->seg_last].next = c->nsegs;
	b->seg_last = c->nsegs++;
	return 0;
}

static struct gt_cev *new_event(struct gt_ctx *c)
{
	if (c->nev == c->capev) {
		/* Real traces take about 4 bytes an event: one allocation
		 * sized from the input usually suffices. */
		uint32_t cap = c->capev ? c->capev * 2 : (uint32_t)(c->len / 4 < 1u << 30 ? c->len / 4 + 64 : 1u << 30);

		if (!c->capev && c->stream)
			cap = 1024; /* only the samples: never sized from the input */
		struct gt_cev *e;

		if (cap < c->capev)
			return NULL;
		e = realloc(c->ev, (size_t)cap * sizeof(*e));
		if (!e)
			return NULL;
		c->ev = e;
		c->capev = cap;
	}
	memset(&c->ev[c->nev], 0, sizeof(c->ev[0]));
	return &c->ev[c->nev++];
}


static int on_string(struct gt_ctx *c, const struct gt_raw_event *raw)
{
	struct gt_string *s;
	int isnew;

	if (gt_ctx_design_rules(c) && !c->seen_batch)
		return gt_ctx_fail(c, raw->type, raw->off,
				   "string id %llu before the first batch (Go 1.23+ rejects it; strings belong in the footer)",
				   (unsigned long long)raw->args[0]);
	s = gt_map_put(&c->strings, raw->args[0], &isnew);
	if (!s)
		return -ENOMEM;
	if (!isnew)
		return gt_ctx_fail(c, raw->type, raw->off, "duplicate string id %llu",
				   (unsigned long long)raw->args[0]);
	s->off = (uint64_t)(raw->str - c->data);
	s->len = (uint32_t)raw->str_len;
	c->rep->strings++;
	return 0;
}

static int on_stack(struct gt_ctx *c, const struct gt_raw_event *raw)
{
	uint64_t size, want;
	struct gt_stack *s;
	int isnew;

	if (raw->nargs < 2)
		return gt_ctx_fail(c, raw->type, raw->off, "wrong number of arguments: want at least 2, got %zu",
				   raw->nargs);
	size = raw->args[1];
	if (size > 1000)
		return gt_ctx_fail(c, raw->type, raw->off, "bad number of frames: %llu (Go reads at most 1000)",
				   (unsigned long long)size);
	want = c->version < 1007 ? 2 + size : 2 + 4 * size;
	if (raw->nargs != want)
		return gt_ctx_fail(c, raw->type, raw->off, "wrong number of arguments: want %llu for %llu frames, got %zu",
				   (unsigned long long)want, (unsigned long long)size, raw->nargs);
	/* oldtrace readRawEvent: a length-prefixed record over 2048 bytes. */
	if (gt_ctx_viewer_rules(c) && c->version >= 1011 &&
	    raw->end - raw->off > GT_STACK_MAX_BYTES + 3)
		return gt_ctx_fail(c, raw->type, raw->off,
				   "stack id %llu record is %llu bytes: Go 1.22+ refuses records of more than 2048 bytes (limit: under 2048)",
				   (unsigned long long)raw->args[0],
				   (unsigned long long)(raw->end - raw->off));
	if (gt_ctx_design_rules(c)) {
		if (!c->seen_batch)
			return gt_ctx_fail(c, raw->type, raw->off,
					   "stack id %llu before the first batch (Go 1.23+ rejects it; stacks belong in the footer)",
					   (unsigned long long)raw->args[0]);
		if (size > GT_STACK_MAX_FRAMES)
			return gt_ctx_fail(c, raw->type, raw->off, "stack id %llu has %llu frames (limit %d)",
					   (unsigned long long)raw->args[0], (unsigned long long)size,
					   GT_STACK_MAX_FRAMES);
		if (raw->end - raw->off >= GT_STACK_MAX_BYTES)
			return gt_ctx_fail(c, raw->type, raw->off, "stack id %llu record is %llu bytes (limit: under %d)",
					   (unsigned long long)raw->args[0],
					   (unsigned long long)(raw->end - raw->off), GT_STACK_MAX_BYTES);
	}
	c->rep->stacks++;
	if (raw->args[0] == 0 || size == 0)
		return 0; /* Go keeps no entry for these */
	s = gt_map_put(&c->stacks, raw->args[0], &isnew);
	if (!s)
		return -ENOMEM;
	s->off = raw->off;
	s->nframes = (uint32_t)size;
	s->top_pc = raw->args[2];
	if (c->version >= 1007) {
		s->top_fn = raw->args[3];
		s->top_file = raw->args[4];
		s->top_line = raw->args[5];
	} else {
		s->top_fn = s->top_file = s->top_line = 0;
	}
	return 0;
}

static int on_batch(struct gt_ctx *c, struct gt_decode_state *st,
		    const struct gt_raw_event *raw)
{
	struct gt_batch *b = &c->batches[st->cur];

	b->last_g = st->last_g;
	st->last_p = (int64_t)raw->args[0];
	b = batch_for(c, st->last_p, &st->cur);
	if (!b)
		return -ENOMEM;
	st->last_g = b->last_g;
	st->skew_off = 0;
	if (c->version < 1007) {
		st->last_seq = (int64_t)raw->args[1];
		st->last_ts = (int64_t)raw->args[2];
	} else {
		st->last_ts = (int64_t)raw->args[1];
	}
	if (gt_ctx_design_rules(c) && b->has_ts && st->last_ts < b->last_ts)
		return gt_ctx_fail(c, raw->type, raw->off,
				   "time goes backwards on p %lld: batch starts at %lld, the p's previous event or batch was at %lld",
				   (long long)st->last_p, (long long)st->last_ts, (long long)b->last_ts);
	b->last_ts = st->last_ts;
	b->has_ts = 1;
	c->seen_batch = 1;
	return c->stream ? seg_add(c, st->cur, raw->end, st->last_ts) : 0;
}

/* The per-type fixups of parseEvents' default case. */
void gt_check_fix_event(struct gt_decode_state *st, struct gt_cev *e)
{
	switch (e->type) {
	case GT_EV_GO_START: case GT_EV_GO_START_LOCAL: case GT_EV_GO_START_LABEL:
		st->last_g = e->args[0];
		e->g = st->last_g;
		break;
	case GT_EV_GC_START: case GT_EV_GC_DONE: case GT_EV_GC_STW_START: case GT_EV_GC_STW_DONE:
		e->g = 0;
		break;
	case GT_EV_GO_END: case GT_EV_GO_STOP: case GT_EV_GO_SCHED:
	case GT_EV_GO_PREEMPT: case GT_EV_GO_SLEEP: case GT_EV_GO_BLOCK:
	case GT_EV_GO_BLOCK_SEND: case GT_EV_GO_BLOCK_RECV:
	case GT_EV_GO_BLOCK_SELECT: case GT_EV_GO_BLOCK_SYNC:
	case GT_EV_GO_BLOCK_COND: case GT_EV_GO_BLOCK_NET:
	case GT_EV_GO_SYSBLOCK: case GT_EV_GO_BLOCK_GC:
		st->last_g = 0;
		break;
	case GT_EV_GO_SYSEXIT: case GT_EV_GO_WAITING: case GT_EV_GO_IN_SYSCALL:
		e->g = e->args[0];
		break;
	case GT_EV_CPU_SAMPLE:
		e->ts = (int64_t)e->args[0];
		e->p = (int64_t)e->args[1];
		e->g = e->args[2];
		e->args[0] = 0;
		break;
	}
}

void gt_check_fill_event(const struct gt_ctx *c, struct gt_decode_state *st,
			 const struct gt_raw_event *raw, size_t narg, struct gt_cev *e)
{
	int has_stack = gt_event_descs[raw->type].has_stack;
	size_t argoff = 1;

	memset(e, 0, sizeof(*e));
	e->off = raw->off;
	e->type = raw->type;
	e->p = st->last_p;
	e->g = st->last_g;
	e->wnext = UINT32_MAX;
	if (c->version < 1007) {
		e->seq = (int64_t)((uint64_t)st->last_seq + raw->args[0]);
		e->ts = (int64_t)((uint64_t)st->last_ts + raw->args[1]);
		argoff = 2;
	} else {
		e->ts = (int64_t)((uint64_t)st->last_ts + raw->args[0]);
	}
	for (size_t i = argoff; i < narg; i++) {
		if (i == narg - 1 && has_stack)
			e->stk = raw->args[i];
		else
			e->args[i - argoff] = raw->args[i];
	}
}

/* Where the event goes: a new entry of c->ev, or (streaming, not a
 * sample) a scratch one that is only checked. */
static struct gt_cev *event_slot(struct gt_ctx *c, const struct gt_raw_event *raw,
				 struct gt_cev *scratch)
{
	c->nall++;
	if (c->stream && raw->type != GT_EV_CPU_SAMPLE)
		return scratch;
	return new_event(c);
}

static int on_event(struct gt_ctx *c, struct gt_decode_state *st,
		    const struct gt_raw_event *raw, size_t narg)
{
	struct gt_cev scratch, *e = event_slot(c, raw, &scratch);
	struct gt_batch *b;
	uint32_t bi;

	if (!e)
		return -ENOMEM;
	gt_check_fill_event(c, st, raw, narg, e);
	st->last_seq = e->seq;
	/* Go 1.19 adds a CPUSample's delta to the P's clock, Go 1.22+ skips
	 * it (oldtrace loadBatch): the batch's later events disagree. */
	if (raw->type == GT_EV_CPU_SAMPLE && raw->args[0])
		st->skew_off = raw->off;
	else if (raw->type != GT_EV_CPU_SAMPLE && st->skew_off && gt_ctx_viewer_rules(c))
		return gt_ctx_fail(c, e->type, e->off,
				   "after a CPUSample with a time delta (offset %llu) in its batch: Go 1.22+ skips a sample's delta and puts this event earlier than Go 1.19 does (time stamps out of order)",
				   (unsigned long long)st->skew_off);
	if (gt_ctx_design_rules(c) && e->ts < st->last_ts)
		return gt_ctx_fail(c, e->type, e->off, "time goes backwards on p %lld: %lld after %lld (the delta overflows)",
				   (long long)st->last_p, (long long)e->ts, (long long)st->last_ts);
	st->last_ts = e->ts;
	if (e->type == GT_EV_GC_STW_START && c->version < 1021 && e->args[0] > 1)
		return gt_ctx_fail(c, e->type, e->off,
				   "unknown STW kind %llu (0 or 1 before Go 1.21)",
				   (unsigned long long)e->args[0]);
	gt_check_fix_event(st, e);
	if (e->type == GT_EV_CPU_SAMPLE) {
		b = batch_for(c, GT_PROFILE_P, &bi);
		if (!b)
			return -ENOMEM;
		e->pidx = bi;
	} else {
		b = &c->batches[st->cur];
		e->pidx = st->cur;
		b->last_ts = e->ts;
		b->has_ts = 1;
	}
	b->n++;
	return 0;
}

static int on_record(struct gt_ctx *c, struct gt_decode_state *st,
		     const struct gt_raw_event *raw)
{
	size_t narg;
	int isnew;

	c->rep->count_by_type[raw->type]++;
	if (raw->type == GT_EV_STRING)
		return on_string(c, raw);
	narg = gt_check_arg_num(c->version, raw);
	if (raw->nargs != narg)
		return gt_ctx_fail(c, raw->type, raw->off, "wrong number of arguments: want %zu, got %zu",
				   narg, raw->nargs);
	switch (raw->type) {
	case GT_EV_BATCH:
		return on_batch(c, st, raw);
	case GT_EV_FREQUENCY:
		c->ticks_per_sec = (int64_t)raw->args[0];
		if (c->ticks_per_sec <= 0)
			return gt_ctx_fail(c, raw->type, raw->off,
					   "time stamps out of order: frequency %lld ticks/s is not positive",
					   (long long)c->ticks_per_sec);
		c->rep->freq = raw->args[0];
		return 0;
	case GT_EV_TIMER_GOROUTINE:
		return gt_map_put(&c->timer_gs, raw->args[0], &isnew) ? 0 : -ENOMEM;
	case GT_EV_STACK:
		return on_stack(c, raw);
	}
	return on_event(c, st, raw, narg);
}

/* Groups the event indices by batch (stable), as Go's batches map.  When
 * streaming only the samples are in c->ev: the Ps keep their counts. */
static int group_by_batch(struct gt_ctx *c)
{
	uint32_t pos = 0;

	c->order = malloc(((size_t)c->nev + 1) * sizeof(*c->order));
	if (!c->order)
		return -ENOMEM;
	for (uint32_t b = 0; b < c->nbatches; b++) {
		if (c->stream && c->batches[b].p != GT_PROFILE_P)
			continue;
		c->batches[b].first = pos;
		pos += c->batches[b].n;
		c->batches[b].n = 0;
	}
	for (uint32_t i = 0; i < c->nev; i++) {
		struct gt_batch *b = &c->batches[c->ev[i].pidx];

		c->order[b->first + b->n++] = i;
	}
	c->norder = c->nev;
	for (uint32_t b = 0; b < c->nbatches; b++)
		if (c->batches[b].n && c->batches[b].p != GT_PROFILE_P)
			c->rep->procs++;
	return 0;
}

int gt_check_decode(struct gt_ctx *c)
{
	struct gt_decode_state st = {0};
	struct gt_reader r;
	int rc;

	if (gt_reader_open(&r, c->data, c->len) < 0)
		return gt_ctx_fail(c, -1, r.error_offset, "%s", r.error);
	c->version = r.version;
	c->rep->version = r.version;
	/* Before any Batch, Go files events under P 0. */
	if (!batch_for(c, 0, &st.cur))
		return -ENOMEM;
	if (c->stream && seg_add(c, st.cur, r.pos, 0) < 0)
		return -ENOMEM;
	while ((rc = gt_reader_next(&r, c->raw)) == 1) {
		gt_check_release(c, c->raw->end - c->raw->off);
		rc = on_record(c, &st, c->raw);
		if (rc)
			return rc;
	}
	if (rc < 0)
		return gt_ctx_fail(c, -1, r.error_offset, "%s", r.error);
	if (c->nall == 0)
		return gt_ctx_fail(c, -1, c->len, "trace is empty (no events)");
	if (c->ticks_per_sec == 0)
		return gt_ctx_fail(c, -1, c->len, "no Frequency event (the footer must give ticks per second)");
	/* Go 1.23+ takes the first Gomaxprocs as the end of the initial
	 * snapshot and drops earlier scheduling without one. */
	if (gt_ctx_design_rules(c) && c->rep->count_by_type[GT_EV_GOMAXPROCS] == 0)
		return gt_ctx_fail(c, GT_EV_GOMAXPROCS, c->len,
				   "no Gomaxprocs event (DESIGN.md: one right after the initial snapshot)");
	return group_by_batch(c);
}
