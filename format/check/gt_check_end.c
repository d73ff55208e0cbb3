/* After the last event: the rules about what is left open (a goroutine
 * still running, an unfinished GC, STW or sweep, a P not stopped), then
 * the per-goroutine statistics for `gotracectl inspect --goroutines`. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gt_check_state.h"

struct end_scan {
	uint64_t g, off, p_off;
	int64_t p;
	int found_g, found_p;
};

static void find_running_g(uint64_t key, void *val, void *arg)
{
	const struct gt_gdesc *g = val;
	struct end_scan *e = arg;

	if (key != 0 && g->state == G_RUNNING && (!e->found_g || key < e->g)) {
		e->found_g = 1;
		e->g = key;
		e->off = g->start_off;
	}
}

static void find_running_p(uint64_t key, void *val, void *arg)
{
	const struct gt_pdesc *p = val;
	struct end_scan *e = arg;

	if (p->running && (!e->found_p || (int64_t)key < e->p)) {
		e->found_p = 1;
		e->p = (int64_t)key;
		e->p_off = p->start_off;
	}
}

static void find_open_p(uint64_t key, void *val, void *arg)
{
	const struct gt_pdesc *p = val;
	struct end_scan *e = arg;

	if ((p->stw || p->sweep) && (!e->found_p || (int64_t)key < e->p)) {
		e->found_p = 1;
		e->p = (int64_t)key;
		e->p_off = p->open_off;
	}
}

/* The Go 1.19/1.21 viewer draws every start as a slice up to its end:
 * a start without an end crashes it. */
int gt_state_check_end(struct gt_state *s)
{
	struct end_scan e = {0};

	gt_idmap_each(&s->gs, find_running_g, &e);
	if (e.found_g)
		return gt_ctx_fail(s->c, GT_EV_GO_START, e.off,
				   "g %llu is still running at the end of the trace (the viewer needs every G descheduled)",
				   (unsigned long long)e.g);
	if (s->gc)
		return gt_ctx_fail(s->c, GT_EV_GC_START, s->gc_off,
				   "GC never ends (no GCDone before the end; the viewer crashes)");
	if (s->stw)
		return gt_ctx_fail(s->c, GT_EV_GC_STW_START, s->stw_off,
				   "STW never ends (no GCSTWDone before the end; the viewer crashes)");
	gt_idmap_each(&s->ps, find_open_p, &e);
	if (e.found_p)
		return gt_ctx_fail(s->c, GT_EV_GC_SWEEP_START, e.p_off,
				   "p %lld: sweep or per-P STW never ends before the end of the trace (the viewer crashes)",
				   (long long)e.p);
	if (!gt_ctx_design_rules(s->c))
		return 0;
	gt_idmap_each(&s->ps, find_running_p, &e);
	if (e.found_p)
		return gt_ctx_fail(s->c, GT_EV_PROC_START, e.p_off,
				   "p %lld is not stopped at the end of the trace (docs/format.md: every P stopped at the end)",
				   (long long)e.p);
	return 0;
}

struct collect {
	uint64_t *ids;
	size_t n;
};

static void collect_g(uint64_t key, void *val, void *arg)
{
	const struct gt_gdesc *g = val;
	struct collect *c = arg;

	if (key != 0 && (g->created || g->starts))
		c->ids[c->n++] = key;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void fill_name(const struct gt_state *s, const struct gt_gdesc *g, struct gt_goroutine_stats *st)
{
	const struct gt_ctx *c = s->c;
	const struct gt_stack *stk = g->created ? gt_idmap_get(&c->stacks, g->create_stk) : NULL;
	const struct gt_string *fn, *file;

	st->name = "";
	st->name_len = 0;
	st->tid = -1;
	if (!stk || c->version < 1007)
		return;
	fn = gt_idmap_get(&c->strings, stk->top_fn);
	if (fn) {
		st->name = (const char *)c->data + fn->off;
		st->name_len = fn->len;
	}
	file = gt_idmap_get(&c->strings, stk->top_file);
	if (file && file->len == 8 && memcmp(c->data + file->off, "[thread]", 8) == 0)
		st->tid = (int64_t)stk->top_line;
}

int gt_state_report(struct gt_state *s, gt_goroutine_fn fn, void *arg)
{
	struct collect col = { .ids = malloc((s->gs.count + 1) * sizeof(uint64_t)) };

	if (!col.ids)
		return -ENOMEM;
	gt_idmap_each(&s->gs, collect_g, &col);
	qsort(col.ids, col.n, sizeof(*col.ids), cmp_u64);
	for (size_t i = 0; i < col.n; i++) {
		const struct gt_gdesc *g = gt_idmap_get(&s->gs, col.ids[i]);
		struct gt_goroutine_stats st = {0};

		st.id = col.ids[i];
		fill_name(s, g, &st);
		st.starts = g->starts;
		memcpy(st.blocks, g->blocks, sizeof(st.blocks));
		st.running_ns = g->running_ns;
		st.runnable_ns = g->runnable_ns;
		/* Time up to the end of the trace counts for the last state. */
		if (g->state == G_RUNNING)
			st.running_ns += (uint64_t)(s->now - g->running_since);
		else if (g->state == G_RUNNABLE && g->runnable_known)
			st.runnable_ns += (uint64_t)(s->now - g->runnable_since);
		st.unblocks_received = g->unblocks;
		st.ended = g->ended;
		st.end_state = (enum gt_gstate)g->state;
		fn(&st, arg);
	}
	free(col.ids);
	return 0;
}

