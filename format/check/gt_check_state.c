/* Phase 3, as Go 1.19's postProcessTrace: walk the merged events and hold
 * every goroutine and P to its state machine.  Then the rules only the
 * viewer (or docs/format.md) enforces: every G descheduled and every P stopped
 * at the end, every GoCreate's new-goroutine stack present with a non-zero
 * top PC, GoSysExit only after GoSysBlock/GoInSyscall.  Along the way it
 * gathers per-goroutine statistics for `gotracectl inspect --goroutines`. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gt_check_state.h"

const char *const gt_gstate_names[4] = { "dead", "runnable", "running", "waiting" };

static const char *ev_name(int type)
{
	return gt_event_descs[type].name;
}

static int64_t to_ns(const struct gt_state *s, int64_t ts)
{
	double v = (double)(int64_t)((uint64_t)ts - (uint64_t)s->min_ts) * s->ns_per_tick;

	if (!(v > 0))
		return 0;
	return v > 9.0e18 ? (int64_t)9.0e18 : (int64_t)v;
}

static int check_running(struct gt_state *s, const struct gt_pdesc *p, const struct gt_gdesc *g,
			 const struct gt_pev *e, int allow_g0)
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

static void stop_running(struct gt_state *s, struct gt_gdesc *g, struct gt_pdesc *p)
{
	g->running_ns += (uint64_t)(s->now - g->running_since);
	g->has_start = 0;
	p->g = 0;
}

static void make_runnable(struct gt_state *s, struct gt_gdesc *g)
{
	g->state = G_RUNNABLE;
	g->runnable_since = s->now;
	g->runnable_known = 1;
}

static int on_create(struct gt_state *s, struct gt_pdesc *p, struct gt_gdesc *g, const struct gt_pev *e)
{
	struct gt_gdesc *ng;
	int isnew, rc = check_running(s, p, g, e, 1);
	const uint64_t new_g = e->args[gt_event_arg(GT_EV_GO_CREATE, "g")];
	const uint64_t new_stk = e->args[gt_event_arg(GT_EV_GO_CREATE, "new_stack")];

	if (rc)
		return rc;
	if (gt_idmap_get(&s->gs, new_g))
		return gt_ctx_fail(s->c, e->type, e->off, "g %llu already exists",
				   (unsigned long long)new_g);
	/* Before 1.7 the argument is a PC, not a stack id. */
	if (gt_ctx_viewer_rules(s->c) && s->c->version >= 1007) {
		const struct gt_stack *stk = gt_idmap_get(&s->c->stacks, new_stk);

		if (!stk)
			return gt_ctx_fail(s->c, e->type, e->off,
					   "new-goroutine stack %llu of g %llu is missing or empty (the viewer needs it)",
					   (unsigned long long)new_stk, (unsigned long long)new_g);
		if (gt_ctx_design_rules(s->c) && stk->top_pc == 0)
			return gt_ctx_fail(s->c, e->type, e->off,
					   "new-goroutine stack %llu of g %llu has PC 0 in its top frame",
					   (unsigned long long)new_stk, (unsigned long long)new_g);
	}
	ng = gt_idmap_put(&s->gs, new_g, &isnew);
	if (!ng)
		return -ENOMEM;
	memset(ng, 0, sizeof(*ng));
	ng->region_top = -1;
	ng->ev_type = e->type;
	ng->has_create = 1;
	ng->created = 1;
	ng->create_stk = new_stk;
	make_runnable(s, ng);
	s->c->rep->goroutines++;
	return 0;
}

static int on_start(struct gt_state *s, struct gt_pdesc *p, struct gt_gdesc *g, const struct gt_pev *e)
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

static int on_unblock(struct gt_state *s, struct gt_pdesc *p, struct gt_gdesc *g, const struct gt_pev *e)
{
	struct gt_gdesc *t;
	int isnew;

	if (g->state != G_RUNNING)
		return gt_ctx_fail(s->c, e->type, e->off, "g %llu is not running while unpark (it is %s)",
				   (unsigned long long)e->g, gt_gstate_names[g->state]);
	if (e->p != GT_TIMER_P && p->g != e->g)
		return gt_ctx_fail(s->c, e->type, e->off, "p %lld is not running g %llu while unpark (it runs g %llu)",
				   (long long)e->p, (unsigned long long)e->g, (unsigned long long)p->g);
	t = gt_idmap_put(&s->gs, e->args[0], &isnew);
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

static int on_sysexit(struct gt_state *s, struct gt_gdesc *g, const struct gt_pev *e)
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
static int on_stop(struct gt_state *s, struct gt_pdesc *p, struct gt_gdesc *g, const struct gt_pev *e)
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
		g->blocks[gt_block_reason_of(e->type)]++;
		break;
	default:
		g->state = G_WAITING;
		/* Unlike Go's g.ev, this remembers GoSysBlock too: the strict
		 * GoSysExit rule needs to know why the goroutine waits. */
		g->ev_type = e->type;
		g->blocks[gt_block_reason_of(e->type)]++;
		break;
	}
	return 0;
}

static int on_proc(struct gt_state *s, struct gt_pdesc *p, const struct gt_pev *e)
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

/* Begins (on = 1) or ends (0) an activity that may not nest (a GC, a
 * stop-the-world, a sweep, a mark assist); *flag: one is in progress.
 * `start` names the event an end needs before it. */
static int toggle(struct gt_state *s, const struct gt_pev *e, uint8_t *flag, int on,
		  const char *what, const char *start)
{
	if (*flag && on)
		return gt_ctx_fail(s->c, e->type, e->off, "previous %s is not ended before a new one",
				   what);
	if (!*flag && !on)
		return gt_ctx_fail(s->c, e->type, e->off, "bogus %s end (no %s)", what, start);
	*flag = (uint8_t)on;
	return 0;
}

/* The first error is the one kept: what changes after it does not matter. */
static int on_gc(struct gt_state *s, struct gt_pdesc *p, struct gt_gdesc *g, const struct gt_pev *e)
{
	/* Before 1.10 STW was per P. */
	uint8_t gstw = (uint8_t)s->stw;
	uint8_t *stw = s->c->version < 1010 ? &p->stw : &gstw;
	int rc = 0;

	switch (e->type) {
	case GT_EV_GC_START:
		rc = toggle(s, e, &s->gc, 1, "GC", NULL);
		s->gc_off = e->off;
		break;
	case GT_EV_GC_DONE:
		rc = toggle(s, e, &s->gc, 0, "GC", "GCStart");
		break;
	case GT_EV_GC_STW_START:
		rc = toggle(s, e, stw, 1, "STW", NULL);
		*(stw == &gstw ? &s->stw_off : &p->open_off) = e->off;
		break;
	case GT_EV_GC_STW_DONE:
		rc = toggle(s, e, stw, 0, "STW", "GCSTWStart");
		break;
	case GT_EV_GC_SWEEP_START:
		rc = toggle(s, e, &p->sweep, 1, "sweeping", NULL);
		p->open_off = e->off;
		break;
	case GT_EV_GC_SWEEP_DONE:
		rc = toggle(s, e, &p->sweep, 0, "sweeping", "GCSweepStart");
		break;
	case GT_EV_GC_MARK_ASSIST_START:
		rc = toggle(s, e, &g->mark_assist, 1, "mark assist", NULL);
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
	const struct gt_string *x = gt_idmap_get(&c->strings, a);
	const struct gt_string *y = gt_idmap_get(&c->strings, b);
	size_t lx = x ? x->len : 0, ly = y ? y->len : 0;

	return lx == ly && (lx == 0 || memcmp(c->data + x->off, c->data + y->off, lx) == 0);
}

static int on_user(struct gt_state *s, struct gt_gdesc *g, const struct gt_pev *e)
{
	int isnew;

	/* tasks: id -> 1 while the task lives (Go deletes it at its end,
	 * so an id may be reused afterwards). */
	if (e->type == GT_EV_USER_TASK_CREATE) {
		uint8_t *live = gt_idmap_put(&s->tasks, e->args[0], &isnew);

		if (!live)
			return -ENOMEM;
		if (*live)
			return gt_ctx_fail(s->c, e->type, e->off, "task id conflicts (id %llu)",
					   (unsigned long long)e->args[0]);
		*live = 1;
		return 0;
	}
	if (e->type == GT_EV_USER_TASK_END) {
		uint8_t *live = gt_idmap_get(&s->tasks, e->args[0]);

		if (live)
			*live = 0;
		return 0;
	}
	/* UserRegion: mode 0 start, 1 end; its name is a string id. */
	const uint64_t task = e->args[gt_event_arg(GT_EV_USER_REGION, "task")];
	const uint64_t mode = e->args[gt_event_arg(GT_EV_USER_REGION, "mode")];
	const uint64_t name = e->args[gt_event_arg(GT_EV_USER_REGION, "name")];

	if (mode == 0) {
		if (s->nregions == s->capregions) {
			int64_t cap = s->capregions ? s->capregions * 2 : 64;
			struct gt_region *r = realloc(s->regions, (size_t)cap * sizeof(*r));

			if (!r)
				return -ENOMEM;
			s->regions = r;
			s->capregions = cap;
		}
		s->regions[s->nregions] = (struct gt_region){task, name, g->region_top};
		g->region_top = s->nregions++;
	} else if (mode == 1) {
		if (g->region_top >= 0) {
			const struct gt_region *r = &s->regions[g->region_top];

			if (r->task != task || !same_string(s->c, r->name, name))
				return gt_ctx_fail(s->c, e->type, e->off,
						   "misuse of region in goroutine %llu: end does not match the innermost active start",
						   (unsigned long long)e->g);
			g->region_top = r->prev;
		}
	} else {
		return gt_ctx_fail(s->c, e->type, e->off, "invalid user region mode %llu",
				   (unsigned long long)mode);
	}
	return 0;
}

static int dispatch(struct gt_state *s, struct gt_pdesc *p, struct gt_gdesc *g, const struct gt_pev *e)
{
	if (gt_parse_stops(e->type))
		return on_stop(s, p, g, e);
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
static int step(struct gt_state *s, struct gt_pev *e)
{
	struct gt_gdesc g, *gp;
	struct gt_pdesc p, *pp;
	int isnew, rc;

	if (e->type == GT_EV_GO_UNBLOCK && gt_idmap_get(&s->c->timer_gs, e->g))
		e->p = GT_TIMER_P;
	if (e->type == GT_EV_GO_SYSEXIT)
		e->p = GT_SYSCALL_P;
	s->now = to_ns(s, e->ts);
	gp = gt_idmap_get(&s->gs, e->g);
	if (gp) {
		g = *gp;
	} else {
		memset(&g, 0, sizeof(g));
		g.region_top = -1;
	}
	pp = gt_idmap_get(&s->ps, (uint64_t)e->p);
	if (pp)
		p = *pp;
	else
		memset(&p, 0, sizeof(p));
	rc = dispatch(s, &p, &g, e);
	if (rc)
		return rc;
	gp = gt_idmap_put(&s->gs, e->g, &isnew);
	pp = gt_idmap_put(&s->ps, (uint64_t)e->p, &isnew);
	if (!gp || !pp)
		return -ENOMEM;
	*gp = g;
	*pp = p;
	return 0;
}

static int state_init(struct gt_state *s, struct gt_ctx *c, int64_t min_ts)
{
	struct gt_gdesc *g0;
	int isnew;

	memset(s, 0, sizeof(*s));
	s->c = c;
	if (gt_idmap_init(&s->gs, 1, sizeof(struct gt_gdesc)) < 0 ||
	    gt_idmap_init(&s->ps, 1, sizeof(struct gt_pdesc)) < 0 ||
	    gt_idmap_init(&s->tasks, 1, 1) < 0)
		return -ENOMEM;
	g0 = gt_idmap_put(&s->gs, 0, &isnew);
	if (!g0)
		return -ENOMEM;
	g0->state = G_RUNNING; /* g 0 stands for "no goroutine": always running */
	g0->region_top = -1;
	s->min_ts = min_ts;
	s->ns_per_tick = 1e9 / (double)c->ticks_per_sec;
	return 0;
}

static void state_free(struct gt_state *s)
{
	gt_idmap_free(&s->gs);
	gt_idmap_free(&s->ps);
	gt_idmap_free(&s->tasks);
	free(s->regions);
}

/* The end of the pass: end rules, then the report (also after an error). */
static int state_finish(struct gt_state *s, int rc, int end_rules, gt_goroutine_fn fn, void *arg)
{
	if (!rc && end_rules)
		rc = gt_state_check_end(s);
	if (rc >= 0 && fn && s->gs.count) {
		int rc2 = gt_state_report(s, fn, arg);

		if (rc2)
			rc = rc2;
	}
	state_free(s);
	return rc;
}

int gt_check_state(struct gt_ctx *c, gt_goroutine_fn fn, void *arg)
{
	struct gt_state s;
	int rc = state_init(&s, c, c->norder ? c->ev[c->order[0]].ts : 0);

	for (uint32_t i = 0; i < c->norder && !rc; i++)
		rc = step(&s, &c->ev[c->order[i]]);
	return state_finish(&s, rc, gt_ctx_viewer_rules(c), fn, arg);
}

int gt_state_open(struct gt_ctx *c, int64_t min_ts, struct gt_state **out)
{
	struct gt_state *s = malloc(sizeof(*s));
	int rc;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	rc = state_init(s, c, min_ts);
	if (rc) {
		state_free(s);
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int gt_state_event(struct gt_state *s, struct gt_pev *e)
{
	return step(s, e);
}

int gt_state_close(struct gt_state *s, int end_rules, gt_goroutine_fn fn, void *arg)
{
	int rc = state_finish(s, 0, end_rules, fn, arg);

	free(s);
	return rc;
}
