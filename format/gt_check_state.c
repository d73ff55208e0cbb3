/* Phase 3, as Go 1.19's postProcessTrace: walk the merged events and hold
 * every goroutine and P to its state machine.  Then the rules only the
 * viewer (or DESIGN.md) enforces: every G descheduled and every P stopped
 * at the end, every GoCreate's new-goroutine stack present with a non-zero
 * top PC, GoSysExit only after GoSysBlock/GoInSyscall.  Along the way it
 * gathers per-goroutine statistics for `gotracectl inspect --goroutines`. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gt_check_internal.h"

enum { G_DEAD, G_RUNNABLE, G_RUNNING, G_WAITING };

struct gdesc {
	int state;
	uint8_t ev_type;      /* g.ev: what made it waiting/runnable (0 = nil) */
	uint8_t has_start;    /* g.evStart != nil */
	uint8_t has_create;   /* g.evCreate != nil */
	uint8_t mark_assist;  /* g.evMarkAssist != nil */
	uint8_t created, ended, runnable_known;
	uint64_t create_stk;  /* new-goroutine stack id from GoCreate */
	uint64_t start_off;   /* offset of the last GoStart */
	int64_t region_top;   /* innermost active region, or -1 */
	/* statistics */
	uint64_t starts, unblocks, blocks[GT_BLK_COUNT];
	int64_t running_since, runnable_since; /* ns */
	uint64_t running_ns, runnable_ns;
};

struct pdesc {
	int running;
	uint64_t g;
	uint64_t start_off; /* offset of the last ProcStart */
	uint64_t open_off;  /* offset of the unfinished sweep or per-P STW */
	uint8_t stw, sweep;
};

struct region {
	uint64_t task, name;
	int64_t prev;
};

struct state {
	struct gt_ctx *c;
	struct gt_map gs, ps, tasks;
	struct region *regions;
	int64_t nregions, capregions;
	int gc, stw;
	uint64_t gc_off, stw_off;
	int64_t min_ts;
	double ns_per_tick;
	int64_t now;
};

const char *const gt_block_reason_names[GT_BLK_COUNT] = {
	"sync", "sleep", "select", "net", "syscall", "block", "preempt", "sched",
};

const char *const gt_gstate_names[4] = { "dead", "runnable", "running", "waiting" };

static const char *ev_name(int type)
{
	return gt_event_descs[type].name;
}

static int64_t to_ns(const struct state *s, int64_t ts)
{
	double v = (double)(int64_t)((uint64_t)ts - (uint64_t)s->min_ts) * s->ns_per_tick;

	if (!(v > 0))
		return 0;
	return v > 9.0e18 ? (int64_t)9.0e18 : (int64_t)v;
}

static int block_reason(int type)
{
	switch (type) {
	case GT_EV_GO_BLOCK_SYNC: case GT_EV_GO_BLOCK_COND:
	case GT_EV_GO_BLOCK_SEND: case GT_EV_GO_BLOCK_RECV:
		return GT_BLK_SYNC;
	case GT_EV_GO_SLEEP: return GT_BLK_SLEEP;
	case GT_EV_GO_BLOCK_SELECT: return GT_BLK_SELECT;
	case GT_EV_GO_BLOCK_NET: return GT_BLK_NET;
	case GT_EV_GO_SYSBLOCK: return GT_BLK_SYSCALL;
	case GT_EV_GO_PREEMPT: return GT_BLK_PREEMPT;
	case GT_EV_GO_SCHED: return GT_BLK_SCHED;
	}
	return GT_BLK_BLOCK;
}

static int check_running(struct state *s, const struct pdesc *p, const struct gdesc *g,
			 const struct gt_cev *e, int allow_g0)
{
	if (g->state != G_RUNNING)
		return gt_ctx_fail(s->c, e->type, e->off, "g %llu is not running while %s (it is %s)",
				   (unsigned long long)e->g, ev_name(e->type), gt_gstate_names[g->state]);
	if (p->g != e->g)
		return gt_ctx_fail(s->c, e->type, e->off, "p %lld is not running g %llu while %s (it runs g %llu)",
				   (long long)e->p, (unsigned long long)e->g, ev_name(e->type),
				   (unsigned long long)p->g);
	if (!allow_g0 && e->g == 0)
		return gt_ctx_fail(s->c, e->type, e->off, "g 0 did %s", ev_name(e->type));
	return 0;
}

static void stop_running(struct state *s, struct gdesc *g, struct pdesc *p)
{
	g->running_ns += (uint64_t)(s->now - g->running_since);
	g->has_start = 0;
	p->g = 0;
}

static void make_runnable(struct state *s, struct gdesc *g)
{
	g->state = G_RUNNABLE;
	g->runnable_since = s->now;
	g->runnable_known = 1;
}

static int on_create(struct state *s, struct pdesc *p, struct gdesc *g, const struct gt_cev *e)
{
	struct gdesc *ng;
	int isnew, rc = check_running(s, p, g, e, 1);

	if (rc)
		return rc;
	if (gt_map_get(&s->gs, e->args[0]))
		return gt_ctx_fail(s->c, e->type, e->off, "g %llu already exists",
				   (unsigned long long)e->args[0]);
	/* Before 1.7 the argument is a PC, not a stack id. */
	if (gt_ctx_viewer_rules(s->c) && s->c->version >= 1007) {
		const struct gt_stack *stk = gt_map_get(&s->c->stacks, e->args[1]);

		if (!stk)
			return gt_ctx_fail(s->c, e->type, e->off,
					   "new-goroutine stack %llu of g %llu is missing or empty (the viewer needs it)",
					   (unsigned long long)e->args[1], (unsigned long long)e->args[0]);
		if (gt_ctx_design_rules(s->c) && stk->top_pc == 0)
			return gt_ctx_fail(s->c, e->type, e->off,
					   "new-goroutine stack %llu of g %llu has PC 0 in its top frame",
					   (unsigned long long)e->args[1], (unsigned long long)e->args[0]);
	}
	ng = gt_map_put(&s->gs, e->args[0], &isnew);
	if (!ng)
		return -ENOMEM;
	memset(ng, 0, sizeof(*ng));
	ng->region_top = -1;
	ng->ev_type = e->type;
	ng->has_create = 1;
	ng->created = 1;
	ng->create_stk = e->args[1];
	make_runnable(s, ng);
	s->c->rep->goroutines++;
	return 0;
}

static int on_start(struct state *s, struct pdesc *p, struct gdesc *g, const struct gt_cev *e)
{
	if (g->state != G_RUNNABLE)
		return gt_ctx_fail(s->c, e->type, e->off, "g %llu is not runnable before start (it is %s)",
				   (unsigned long long)e->g, gt_gstate_names[g->state]);
	if (p->g != 0)
		return gt_ctx_fail(s->c, e->type, e->off, "p %lld is already running g %llu while start g %llu",
				   (long long)e->p, (unsigned long long)p->g, (unsigned long long)e->g);
	g->state = G_RUNNING;
	g->has_start = 1;
	g->has_create = 0;
	g->ev_type = 0;
	g->start_off = e->off;
	p->g = e->g;
	g->starts++;
	if (g->runnable_known)
		g->runnable_ns += (uint64_t)(s->now - g->runnable_since);
	g->runnable_known = 0;
	g->running_since = s->now;
	return 0;
}

static int on_unblock(struct state *s, struct pdesc *p, struct gdesc *g, const struct gt_cev *e)
{
	struct gdesc *t;
	int isnew;

	if (g->state != G_RUNNING)
		return gt_ctx_fail(s->c, e->type, e->off, "g %llu is not running while unpark (it is %s)",
				   (unsigned long long)e->g, gt_gstate_names[g->state]);
	if (e->p != GT_TIMER_P && p->g != e->g)
		return gt_ctx_fail(s->c, e->type, e->off, "p %lld is not running g %llu while unpark (it runs g %llu)",
				   (long long)e->p, (unsigned long long)e->g, (unsigned long long)p->g);
	t = gt_map_put(&s->gs, e->args[0], &isnew);
	if (!t)
		return -ENOMEM;
	if (isnew) {
		memset(t, 0, sizeof(*t));
		t->region_top = -1;
	}
	if (t->state != G_WAITING)
		return gt_ctx_fail(s->c, e->type, e->off, "g %llu is not waiting before unpark (it is %s)",
				   (unsigned long long)e->args[0], gt_gstate_names[t->state]);
	make_runnable(s, t);
	t->ev_type = e->type;
	t->unblocks++;
	return 0;
}

static int on_sysexit(struct state *s, struct gdesc *g, const struct gt_cev *e)
{
	if (g->state != G_WAITING)
		return gt_ctx_fail(s->c, e->type, e->off, "g %llu is not waiting during syscall exit (it is %s)",
				   (unsigned long long)e->g, gt_gstate_names[g->state]);
	/* The viewer counts threads in syscalls: an exit without a block
	 * drives its count negative and it gives up. */
	if (gt_ctx_viewer_rules(s->c) && g->ev_type != GT_EV_GO_SYSBLOCK &&
	    g->ev_type != GT_EV_GO_IN_SYSCALL)
		return gt_ctx_fail(s->c, e->type, e->off,
				   "g %llu exits a syscall but waits after %s, not GoSysBlock or GoInSyscall",
				   (unsigned long long)e->g, g->ev_type ? ev_name(g->ev_type) : "nothing");
	make_runnable(s, g);
	g->ev_type = e->type;
	return 0;
}

/* GoEnd, GoStop, GoSched, GoPreempt, GoSysBlock and the blocks. */
static int on_stop(struct state *s, struct pdesc *p, struct gdesc *g, const struct gt_cev *e)
{
	int rc = check_running(s, p, g, e, 0);

	if (rc)
		return rc;
	stop_running(s, g, p);
	switch (e->type) {
	case GT_EV_GO_END: case GT_EV_GO_STOP:
		g->state = G_DEAD;
		if (e->type == GT_EV_GO_END) {
			g->ended = 1;
			g->region_top = -1;
		} else {
			g->blocks[GT_BLK_BLOCK]++;
		}
		break;
	case GT_EV_GO_SCHED: case GT_EV_GO_PREEMPT:
		make_runnable(s, g);
		g->ev_type = e->type;
		g->blocks[block_reason(e->type)]++;
		break;
	default:
		g->state = G_WAITING;
		/* Unlike Go's g.ev, this remembers GoSysBlock too: the strict
		 * GoSysExit rule needs to know why the goroutine waits. */
		g->ev_type = e->type;
		g->blocks[block_reason(e->type)]++;
		break;
	}
	return 0;
}

static int on_proc(struct state *s, struct pdesc *p, const struct gt_cev *e)
{
	if (e->type == GT_EV_PROC_START) {
		if (p->running)
			return gt_ctx_fail(s->c, e->type, e->off, "p %lld is running before start",
					   (long long)e->p);
		p->running = 1;
		p->start_off = e->off;
		return 0;
	}
	if (!p->running)
		return gt_ctx_fail(s->c, e->type, e->off, "p %lld is not running before stop",
				   (long long)e->p);
	if (p->g != 0)
		return gt_ctx_fail(s->c, e->type, e->off, "p %lld is running a goroutine %llu during stop",
				   (long long)e->p, (unsigned long long)p->g);
	p->running = 0;
	return 0;
}

static int on_gc(struct state *s, struct pdesc *p, struct gdesc *g, const struct gt_cev *e)
{
	/* Before 1.10 STW was per P. */
	uint8_t gstw = (uint8_t)s->stw;
	uint8_t *stw = s->c->version < 1010 ? &p->stw : &gstw;
	int rc = 0;

	switch (e->type) {
	case GT_EV_GC_START:
		if (s->gc)
			return gt_ctx_fail(s->c, e->type, e->off, "previous GC is not ended before a new one");
		s->gc = 1;
		s->gc_off = e->off;
		break;
	case GT_EV_GC_DONE:
		if (!s->gc)
			return gt_ctx_fail(s->c, e->type, e->off, "bogus GC end (no GCStart)");
		s->gc = 0;
		break;
	case GT_EV_GC_STW_START:
		if (*stw)
			return gt_ctx_fail(s->c, e->type, e->off, "previous STW is not ended before a new one");
		*stw = 1;
		if (stw == &gstw)
			s->stw_off = e->off;
		else
			p->open_off = e->off;
		break;
	case GT_EV_GC_STW_DONE:
		if (!*stw)
			return gt_ctx_fail(s->c, e->type, e->off, "bogus STW end (no GCSTWStart)");
		*stw = 0;
		break;
	case GT_EV_GC_SWEEP_START:
		if (p->sweep)
			return gt_ctx_fail(s->c, e->type, e->off, "previous sweeping is not ended before a new one");
		p->sweep = 1;
		p->open_off = e->off;
		break;
	case GT_EV_GC_SWEEP_DONE:
		if (!p->sweep)
			return gt_ctx_fail(s->c, e->type, e->off, "bogus sweeping end (no GCSweepStart)");
		p->sweep = 0;
		break;
	case GT_EV_GC_MARK_ASSIST_START:
		if (g->mark_assist)
			return gt_ctx_fail(s->c, e->type, e->off, "previous mark assist is not ended before a new one");
		g->mark_assist = 1;
		break;
	case GT_EV_GC_MARK_ASSIST_DONE:
		g->mark_assist = 0; /* may be in progress when tracing starts */
		break;
	}
	s->stw = gstw;
	return rc;
}

static int same_string(const struct gt_ctx *c, uint64_t a, uint64_t b)
{
	const struct gt_string *x = gt_map_get(&c->strings, a);
	const struct gt_string *y = gt_map_get(&c->strings, b);
	size_t lx = x ? x->len : 0, ly = y ? y->len : 0;

	return lx == ly && (lx == 0 || memcmp(c->data + x->off, c->data + y->off, lx) == 0);
}

static int on_user(struct state *s, struct gdesc *g, const struct gt_cev *e)
{
	int isnew;

	/* tasks: id -> 1 while the task lives (Go deletes it at its end,
	 * so an id may be reused afterwards). */
	if (e->type == GT_EV_USER_TASK_CREATE) {
		uint8_t *live = gt_map_put(&s->tasks, e->args[0], &isnew);

		if (!live)
			return -ENOMEM;
		if (*live)
			return gt_ctx_fail(s->c, e->type, e->off, "task id conflicts (id %llu)",
					   (unsigned long long)e->args[0]);
		*live = 1;
		return 0;
	}
	if (e->type == GT_EV_USER_TASK_END) {
		uint8_t *live = gt_map_get(&s->tasks, e->args[0]);

		if (live)
			*live = 0;
		return 0;
	}
	/* UserRegion: mode 0 start, 1 end. */
	if (e->args[1] == 0) {
		if (s->nregions == s->capregions) {
			int64_t cap = s->capregions ? s->capregions * 2 : 64;
			struct region *r = realloc(s->regions, (size_t)cap * sizeof(*r));

			if (!r)
				return -ENOMEM;
			s->regions = r;
			s->capregions = cap;
		}
		s->regions[s->nregions] = (struct region){e->args[0], e->args[2], g->region_top};
		g->region_top = s->nregions++;
	} else if (e->args[1] == 1) {
		if (g->region_top >= 0) {
			const struct region *r = &s->regions[g->region_top];

			if (r->task != e->args[0] || !same_string(s->c, r->name, e->args[2]))
				return gt_ctx_fail(s->c, e->type, e->off,
						   "misuse of region in goroutine %llu: end does not match the innermost active start",
						   (unsigned long long)e->g);
			g->region_top = r->prev;
		}
	} else {
		return gt_ctx_fail(s->c, e->type, e->off, "invalid user region mode %llu",
				   (unsigned long long)e->args[1]);
	}
	return 0;
}

static int dispatch(struct state *s, struct pdesc *p, struct gdesc *g, const struct gt_cev *e)
{
	switch (e->type) {
	case GT_EV_PROC_START: case GT_EV_PROC_STOP:
		return on_proc(s, p, e);
	case GT_EV_GC_START: case GT_EV_GC_DONE: case GT_EV_GC_STW_START:
	case GT_EV_GC_STW_DONE: case GT_EV_GC_SWEEP_START: case GT_EV_GC_SWEEP_DONE:
	case GT_EV_GC_MARK_ASSIST_START: case GT_EV_GC_MARK_ASSIST_DONE:
		return on_gc(s, p, g, e);
	case GT_EV_GO_WAITING: case GT_EV_GO_IN_SYSCALL:
		if (g->state != G_RUNNABLE)
			return gt_ctx_fail(s->c, e->type, e->off, "g %llu is not runnable before %s (it is %s)",
					   (unsigned long long)e->g, ev_name(e->type),
					   gt_gstate_names[g->state]);
		g->state = G_WAITING;
		g->runnable_known = 0;
		g->ev_type = e->type;
		return 0;
	case GT_EV_GO_CREATE:
		return on_create(s, p, g, e);
	case GT_EV_GO_START: case GT_EV_GO_START_LABEL:
		return on_start(s, p, g, e);
	case GT_EV_GO_END: case GT_EV_GO_STOP: case GT_EV_GO_SCHED: case GT_EV_GO_PREEMPT:
	case GT_EV_GO_SLEEP: case GT_EV_GO_BLOCK: case GT_EV_GO_BLOCK_SEND:
	case GT_EV_GO_BLOCK_RECV: case GT_EV_GO_BLOCK_SELECT: case GT_EV_GO_BLOCK_SYNC:
	case GT_EV_GO_BLOCK_COND: case GT_EV_GO_BLOCK_NET: case GT_EV_GO_BLOCK_GC:
	case GT_EV_GO_SYSBLOCK:
		return on_stop(s, p, g, e);
	case GT_EV_GO_UNBLOCK:
		return on_unblock(s, p, g, e);
	case GT_EV_GO_SYSCALL:
		return check_running(s, p, g, e, 0);
	case GT_EV_GO_SYSEXIT:
		return on_sysexit(s, g, e);
	case GT_EV_USER_TASK_CREATE: case GT_EV_USER_TASK_END: case GT_EV_USER_REGION:
		return on_user(s, g, e);
	}
	return 0;
}

/* One event: Go reads gs[ev.G] and ps[ev.P] by value and stores them back
 * at the end, so the entries exist from then on (it matters for "g already
 * exists"). */
static int step(struct state *s, struct gt_cev *e)
{
	struct gdesc g, *gp;
	struct pdesc p, *pp;
	int isnew, rc;

	if (e->type == GT_EV_GO_UNBLOCK && gt_map_get(&s->c->timer_gs, e->g))
		e->p = GT_TIMER_P;
	if (e->type == GT_EV_GO_SYSEXIT)
		e->p = GT_SYSCALL_P;
	s->now = to_ns(s, e->ts);
	gp = gt_map_get(&s->gs, e->g);
	if (gp) {
		g = *gp;
	} else {
		memset(&g, 0, sizeof(g));
		g.region_top = -1;
	}
	pp = gt_map_get(&s->ps, (uint64_t)e->p);
	if (pp)
		p = *pp;
	else
		memset(&p, 0, sizeof(p));
	rc = dispatch(s, &p, &g, e);
	if (rc)
		return rc;
	gp = gt_map_put(&s->gs, e->g, &isnew);
	pp = gt_map_put(&s->ps, (uint64_t)e->p, &isnew);
	if (!gp || !pp)
		return -ENOMEM;
	*gp = g;
	*pp = p;
	return 0;
}

struct end_scan {
	uint64_t g, off, p_off;
	int64_t p;
	int found_g, found_p;
};

static void find_running_g(uint64_t key, void *val, void *arg)
{
	const struct gdesc *g = val;
	struct end_scan *e = arg;

	if (key != 0 && g->state == G_RUNNING && (!e->found_g || key < e->g)) {
		e->found_g = 1;
		e->g = key;
		e->off = g->start_off;
	}
}

static void find_running_p(uint64_t key, void *val, void *arg)
{
	const struct pdesc *p = val;
	struct end_scan *e = arg;

	if (p->running && (!e->found_p || (int64_t)key < e->p)) {
		e->found_p = 1;
		e->p = (int64_t)key;
		e->p_off = p->start_off;
	}
}

static void find_open_p(uint64_t key, void *val, void *arg)
{
	const struct pdesc *p = val;
	struct end_scan *e = arg;

	if ((p->stw || p->sweep) && (!e->found_p || (int64_t)key < e->p)) {
		e->found_p = 1;
		e->p = (int64_t)key;
		e->p_off = p->open_off;
	}
}

/* The Go 1.19/1.21 viewer draws every start as a slice up to its end:
 * a start without an end crashes it. */
static int check_end(struct state *s)
{
	struct end_scan e = {0};

	gt_map_each(&s->gs, find_running_g, &e);
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
	gt_map_each(&s->ps, find_open_p, &e);
	if (e.found_p)
		return gt_ctx_fail(s->c, GT_EV_GC_SWEEP_START, e.p_off,
				   "p %lld: sweep or per-P STW never ends before the end of the trace (the viewer crashes)",
				   (long long)e.p);
	if (!gt_ctx_design_rules(s->c))
		return 0;
	gt_map_each(&s->ps, find_running_p, &e);
	if (e.found_p)
		return gt_ctx_fail(s->c, GT_EV_PROC_START, e.p_off,
				   "p %lld is not stopped at the end of the trace (DESIGN.md: every P stopped at the end)",
				   (long long)e.p);
	return 0;
}

struct collect {
	uint64_t *ids;
	size_t n;
};

static void collect_g(uint64_t key, void *val, void *arg)
{
	const struct gdesc *g = val;
	struct collect *c = arg;

	if (key != 0 && (g->created || g->starts))
		c->ids[c->n++] = key;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void fill_name(const struct state *s, const struct gdesc *g, struct gt_goroutine_stats *st)
{
	const struct gt_ctx *c = s->c;
	const struct gt_stack *stk = g->created ? gt_map_get(&c->stacks, g->create_stk) : NULL;
	const struct gt_string *fn, *file;

	st->name = "";
	st->name_len = 0;
	st->tid = -1;
	if (!stk || c->version < 1007)
		return;
	fn = gt_map_get(&c->strings, stk->top_fn);
	if (fn) {
		st->name = (const char *)c->data + fn->off;
		st->name_len = fn->len;
	}
	file = gt_map_get(&c->strings, stk->top_file);
	if (file && file->len == 8 && memcmp(c->data + file->off, "[thread]", 8) == 0)
		st->tid = (int64_t)stk->top_line;
}

static int report_goroutines(struct state *s, gt_goroutine_fn fn, void *arg)
{
	struct collect col = { .ids = malloc((s->gs.count + 1) * sizeof(uint64_t)) };

	if (!col.ids)
		return -ENOMEM;
	gt_map_each(&s->gs, collect_g, &col);
	qsort(col.ids, col.n, sizeof(*col.ids), cmp_u64);
	for (size_t i = 0; i < col.n; i++) {
		const struct gdesc *g = gt_map_get(&s->gs, col.ids[i]);
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

static int state_init(struct state *s, struct gt_ctx *c)
{
	struct gdesc *g0;
	int isnew;

	memset(s, 0, sizeof(*s));
	s->c = c;
	if (gt_map_init(&s->gs, sizeof(struct gdesc)) < 0 ||
	    gt_map_init(&s->ps, sizeof(struct pdesc)) < 0 ||
	    gt_map_init(&s->tasks, 1) < 0)
		return -ENOMEM;
	g0 = gt_map_put(&s->gs, 0, &isnew);
	if (!g0)
		return -ENOMEM;
	g0->state = G_RUNNING; /* g 0 stands for "no goroutine": always running */
	g0->region_top = -1;
	s->min_ts = c->norder ? c->ev[c->order[0]].ts : 0;
	s->ns_per_tick = 1e9 / (double)c->ticks_per_sec;
	return 0;
}

static void state_free(struct state *s)
{
	gt_map_free(&s->gs);
	gt_map_free(&s->ps);
	gt_map_free(&s->tasks);
	free(s->regions);
}

int gt_check_state(struct gt_ctx *c, gt_goroutine_fn fn, void *arg)
{
	struct state s;
	int rc = state_init(&s, c);

	for (uint32_t i = 0; i < c->norder && !rc; i++)
		rc = step(&s, &c->ev[c->order[i]]);
	if (!rc && gt_ctx_viewer_rules(c))
		rc = check_end(&s);
	if (rc >= 0 && fn && s.gs.cap) {
		int rc2 = report_goroutines(&s, fn, arg);

		if (rc2)
			rc = rc2;
	}
	state_free(&s);
	return rc;
}
