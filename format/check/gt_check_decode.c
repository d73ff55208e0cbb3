/* Phase 1 of the check, as Go 1.19's readTrace + parseEvents: decode every
 * record, keep the string and stack dictionaries, turn the rest into
 * events with absolute timestamps and the P and G they ran on, grouped by
 * P.  Plus the docs/format.md rules that can be seen on one record. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gt_check_internal.h"

/* docs/format.md limits (stricter than Go 1.19, which allows 1000 frames). */
#define GT_STACK_MAX_FRAMES 128
#define GT_STACK_MAX_BYTES 2048

/* internal/trace argNum: values a record of this type must carry. */
static size_t arg_num(int ver, const struct gt_raw_event *raw)
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

	slot = gt_idmap_put(&c->batch_of, (uint64_t)p, &isnew);
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
static int seg_add(struct gt_ctx *c, uint32_t bi, uint64_t off, const struct gt_pstate *ps)
{
	struct gt_batch *b = &c->batches[bi];

	return gt_psegs_add(&c->segs, &b->seg_first, &b->seg_last, off, ps->ts, ps->seq);
}

static struct gt_pev *new_event(struct gt_ctx *c)
{
	if (c->nev == c->capev) {
		/* Real traces take about 4 bytes an event: one allocation
		 * sized from the input usually suffices. */
		uint32_t cap = c->capev ? c->capev * 2 : (uint32_t)(c->len / 4 < 1u << 30 ? c->len / 4 + 64 : 1u << 30);

		if (!c->capev && c->stream)
			cap = 1024; /* only the samples: never sized from the input */
		struct gt_pev *e;

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
	s = gt_idmap_put(&c->strings, raw->args[0], &isnew);
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
	s = gt_idmap_put(&c->stacks, raw->args[0], &isnew);
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

	b->last_g = st->ps.g;
	st->ps.p = (int64_t)raw->args[0];
	b = batch_for(c, st->ps.p, &st->cur);
	if (!b)
		return -ENOMEM;
	st->ps.g = b->last_g;
	st->skew_off = 0;
	if (c->version < 1007) {
		st->ps.seq = (int64_t)raw->args[1];
		st->ps.ts = (int64_t)raw->args[2];
	} else {
		st->ps.ts = (int64_t)raw->args[1];
	}
	if (gt_ctx_design_rules(c) && b->has_ts && st->ps.ts < b->last_ts)
		return gt_ctx_fail(c, raw->type, raw->off,
				   "time goes backwards on p %lld: batch starts at %lld, the p's previous event or batch was at %lld",
				   (long long)st->ps.p, (long long)st->ps.ts, (long long)b->last_ts);
	b->last_ts = st->ps.ts;
	b->has_ts = 1;
	c->seen_batch = 1;
	return c->stream ? seg_add(c, st->cur, raw->end, &st->ps) : 0;
}

/* Where the event goes: a new entry of c->ev, or (streaming, not a
 * sample) a scratch one that is only checked. */
static struct gt_pev *event_slot(struct gt_ctx *c, const struct gt_raw_event *raw,
				 struct gt_pev *scratch)
{
	c->nall++;
	if (c->stream && raw->type != GT_EV_CPU_SAMPLE)
		return scratch;
	return new_event(c);
}

static int on_event(struct gt_ctx *c, struct gt_decode_state *st,
		    const struct gt_raw_event *raw)
{
	struct gt_pev scratch, *e = event_slot(c, raw, &scratch);
	int64_t prev_ts = st->ps.ts;
	struct gt_batch *b;
	uint32_t bi;

	if (!e)
		return -ENOMEM;
	gt_parse_event(c->version, &st->ps, raw, e);
	/* Go 1.19 adds a CPUSample's delta to the P's clock, Go 1.22+ skips
	 * it (oldtrace loadBatch): the batch's later events disagree. */
	if (raw->type == GT_EV_CPU_SAMPLE && raw->args[0])
		st->skew_off = raw->off;
	else if (raw->type != GT_EV_CPU_SAMPLE && st->skew_off && gt_ctx_viewer_rules(c))
		return gt_ctx_fail(c, e->type, e->off,
				   "after a CPUSample with a time delta (offset %llu) in its batch: Go 1.22+ skips a sample's delta and puts this event earlier than Go 1.19 does (time stamps out of order)",
				   (unsigned long long)st->skew_off);
	if (gt_ctx_design_rules(c) && e->ts < prev_ts)
		return gt_ctx_fail(c, e->type, e->off, "time goes backwards on p %lld: %lld after %lld (the delta overflows)",
				   (long long)st->ps.p, (long long)e->ts, (long long)prev_ts);
	if (e->type == GT_EV_GC_STW_START && c->version < 1021 && e->args[0] > 1)
		return gt_ctx_fail(c, e->type, e->off,
				   "unknown STW kind %llu (0 or 1 before Go 1.21)",
				   (unsigned long long)e->args[0]);
	gt_parse_fix(&st->ps, e);
	if (e->type == GT_EV_CPU_SAMPLE) {
		b = batch_for(c, GT_PROFILE_P, &bi);
		if (!b)
			return -ENOMEM;
		e->src = bi;
	} else {
		b = &c->batches[st->cur];
		e->src = st->cur;
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
	narg = arg_num(c->version, raw);
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
		return gt_idmap_put(&c->timer_gs, raw->args[0], &isnew) ? 0 : -ENOMEM;
	case GT_EV_STACK:
		return on_stack(c, raw);
	}
	return on_event(c, st, raw);
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
		struct gt_batch *b = &c->batches[c->ev[i].src];

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
	if (c->stream && seg_add(c, st.cur, r.pos, &st.ps) < 0)
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
				   "no Gomaxprocs event (docs/format.md: one right after the initial snapshot)");
	return group_by_batch(c);
}
