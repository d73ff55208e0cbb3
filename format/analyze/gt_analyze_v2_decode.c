/* A v2 generation read and decoded: its batches gathered (the next
 * generation's first batch kept for later), then each batch's events
 * sorted out: strings and stacks into the tables (gt_analyze_v2_tables.c),
 * the frequency checked, the rest checked and counted.  Those (the state
 * events) are decoded again when the merge reaches them, one at a time
 * per M (gt_analyze_v2_heads.c): a generation costs its file bytes, not
 * a decoded copy of its events. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gt_analyze_v2_run.h"

static int on_frequency(struct v2run *r, const struct gt_v2_ev *e)
{
	if (e->args[0] == 0 || (int64_t)e->args[0] < 0)
		return gt_an_v2_fail(r, "frequency", "frequency %llu is not one", e->args[0]);
	if (r->a->freq && r->a->freq != e->args[0])
		return gt_an_v2_fail(r, "frequency", "frequency changed to %llu", e->args[0]);
	r->a->freq = e->args[0];
	return 0;
}

/* 1 if an event of this type goes to the state machine (the tables and
 * the section markers do not). */
static int kept(unsigned type)
{
	switch (type) {
	case GT_V2_STRING: case GT_V2_STACK: case GT_V2_FREQUENCY:
	case GT_V2_STRINGS: case GT_V2_STACKS: case GT_V2_CPU_SAMPLES:
		return 0;
	}
	return 1;
}

int gt_an_v2_next_kept(struct v2run *r, struct gt_v2_cursor *c, size_t bi, uint32_t *k,
		       struct v2e *out)
{
	struct gt_v2_ev e;
	int rc;

	while ((rc = gt_v2_next_event(c, &e, r->a->error, sizeof(r->a->error))) == 1) {
		if (!kept(e.type))
			continue;
		/* timed ones lose their time argument: it is ts */
		*out = (struct v2e){ e.ts, ((uint64_t)bi << 32) | (*k)++, c->b->m, { 0 }, e.type };
		memcpy(out->args, e.args + (gt_v2_descs[e.type].timed ? 1 : 0), sizeof(out->args));
		return 1;
	}
	return rc;
}

int gt_an_v2_scan(struct v2run *r, struct v2scan *s, struct v2e *out)
{
	int rc;

	for (;;) {
		if (s->open && (rc = gt_an_v2_next_kept(r, &s->c, s->bi, &s->k, out)))
			return rc;
		if (s->open)
			s->bi++;
		if (s->bi >= r->nbatches)
			return 0;
		gt_v2_cursor_init(&s->c, &r->f, &r->batches[s->bi]);
		s->k = 0;
		s->open = 1;
	}
}

int gt_an_v2_decode_batch(struct v2run *r, const struct gt_v2_batch *b)
{
	struct gt_v2_cursor c;
	struct gt_v2_ev e;
	int rc;

	gt_v2_cursor_init(&c, &r->f, b);
	if (b->kind == GT_V2_K_FREQ)
		r->nfreq++;
	while ((rc = gt_v2_next_event(&c, &e, r->a->error, sizeof(r->a->error))) == 1) {
		switch (e.type) {
		case GT_V2_STRING:
			rc = gt_an_v2_on_string(r, &e);
			break;
		case GT_V2_STACK:
			rc = gt_an_v2_on_stack(r, &e, b);
			break;
		case GT_V2_FREQUENCY:
			rc = on_frequency(r, &e);
			break;
		default:
			r->nev += kept(e.type);
			rc = 0;
		}
		if (rc)
			return rc;
	}
	return rc;
}

/* The batches of generation r->gen from b on, until one of another
 * generation (kept in *next) or the end. */
static int gather(struct v2run *r, struct gt_v2_batch b, struct gt_v2_batch *next,
		  int *have_next)
{
	int rc = 0;

	do {
		if (b.gen != r->gen) {
			*next = b;
			*have_next = 1;
			break;
		}
		if (gt_grow(&r->batches, &r->capbatches, r->nbatches + 1, sizeof(b)))
			return -ENOMEM;
		r->batches[r->nbatches++] = b;
	} while ((rc = gt_v2_next_batch(&r->f, &b)) == 1);
	if (!*have_next && rc < 0) {
		snprintf(r->a->error, sizeof(r->a->error), "%s", r->f.error);
		return -EINVAL;
	}
	return 1;
}

int gt_an_v2_read_gen(struct v2run *r, struct gt_v2_batch *next, int *have_next)
{
	struct gt_v2_batch b;

	r->nbatches = 0;
	r->nev = 0;
	r->nfreq = 0;
	gt_an_v2_new_tables(r);
	gt_idmap_free(&r->pcs);
	gt_idmap_init(&r->pcs, 1, 2 * sizeof(uint64_t));
	if (!*have_next)
		return 0;
	/* Go's readGeneration: numbers from 1, each generation the one after
	 * the last */
	if (next->gen == 0)
		return gt_an_v2_fail(r, "generations", "generation number %llu", 0);
	if (r->genidx && next->gen != r->gen + 1) {
		r->gen = next->gen;
		return gt_an_v2_fail(r, "generations",
				     "generation number %llu after another than the one before",
				     next->gen);
	}
	r->gen = next->gen;
	r->genidx++;
	r->a->generations++;
	b = *next;
	*have_next = 0;
	return gather(r, b, next, have_next);
}
