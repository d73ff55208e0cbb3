/* The merge of a Go runtime's v2 trace with gotraced's kernel recording
 * (gt_gomerge.h).  Three steps: index the runtime's events per M (each
 * with the state its M is in after it), place every kernel off-CPU
 * interval of that thread between two consecutive events of its M (the
 * clock check), then copy the file, re-framing the event batches that
 * receive inserted events and appending a Strings batch per generation. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gt_gomerge.h"
#include "gt_gomerge_internal.h"
#include "util/gt_idmap.h"
#include "util/gt_strset.h"
#include "wire/gt_varint.h"

const char *const gt_gm_why_names[GT_GM_NWHY] = { "preempted", "blocked", "syscall", "throttled" };

/* Linux's runtime clock: nanotime()/64 (runtime/tracetime.go, 1.22, 1.23) */
#define GM_RT_FREQ 15625000u
#define GM_DIV 64

enum { ST_NONE, ST_RUN, ST_SYS };

/* One event of an M, in the runtime's file. */
struct rev {
	uint64_t ts;      /* ticks */
	uint64_t g;       /* the goroutine on the M after it */
	size_t off;       /* its type byte */
	uint32_t gen;
	uint8_t st;       /* ST_* after it */
};

/* Where a goroutine starts running on an M: (g, ticks) -> ml[ml].ev[ev]. */
struct runat {
	uint64_t g, ts;
	size_t ml, ev;
};

struct mline {
	uint64_t m;
	struct rev *ev;
	size_t n, cap;
	uint8_t st;
	uint64_t g;
};

/* An event to insert after the runtime event at file offset `after`. */
struct ins {
	size_t after;
	uint64_t ts;
	uint32_t seq;     /* order among those after the same event */
	uint8_t type;
	uint64_t a[4];    /* arguments after the time delta */
	uint8_t na;
};

struct obatch {
	uint8_t buf[GT_V2_MAX_BATCH];
	size_t len;
	uint64_t gen, m, time, last;
};

/* A string the merge adds to a generation. */
struct addstr {
	uint32_t gen;
	uint64_t id;
	char *s;
};

struct gm {
	const uint8_t *rt;
	size_t rtlen;
	struct gt_gm_kernel k;
	struct mline *ml;
	size_t nml, capml;
	struct gt_idmap mindex;      /* m -> index into ml + 1 */
	uint64_t *maxstr;            /* per generation (index gen) */
	uint64_t *genend;            /* per generation: its last event's ticks */
	size_t ngen;
	struct runat *run;           /* sorted by (g, ts) once indexed */
	size_t nrun, caprun;
	struct ins *ins;
	size_t nins, capins;
	uint32_t seq;
	struct addstr *str;
	size_t nstr, capstr;
	struct gt_strset sset;       /* (gen, string) -> rank: str[rank - 1] */
	gt_gm_write_fn write;
	void *ctx;
	struct gt_gm_result *res;
	struct obatch *ob;           /* the batch being written */
};

static int fail(struct gm *g, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(g->res->error, sizeof(g->res->error), fmt, ap);
	va_end(ap);
	return rc;
}

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	size_t c;
	void *q;

	if (n < *cap)
		return p;
	c = *cap ? 2 * *cap : 256;
	q = realloc(p, c * size);
	if (q)
		*cap = c;
	return q;
}

static struct mline *mline_of(struct gm *g, uint64_t m)
{
	int isnew;
	size_t *v = gt_idmap_put(&g->mindex, m, &isnew);
	struct mline *n;

	if (!v)
		return NULL;
	if (!isnew)
		return &g->ml[*v - 1];
	n = grow(g->ml, &g->capml, g->nml, sizeof(*g->ml));
	if (!n)
		return NULL;
	g->ml = n;
	memset(&g->ml[g->nml], 0, sizeof(*g->ml));
	g->ml[g->nml].m = m;
	*v = ++g->nml;
	return &g->ml[g->nml - 1];
}

/* The M's state after event e (Go's order.go, the transitions of the
 * goroutine bound to the M). */
static void track(struct mline *l, const struct gt_v2_ev *e)
{
	switch (e->type) {
	case GT_V2_GO_START: case GT_V2_GO_SWITCH: case GT_V2_GO_SWITCH_DESTROY:
		l->g = e->args[1];
		l->st = ST_RUN;
		break;
	case GT_V2_GO_STOP: case GT_V2_GO_BLOCK: case GT_V2_GO_DESTROY:
	case GT_V2_GO_SYSCALL_END_BLOCKED: case GT_V2_GO_DESTROY_SYSCALL:
		l->st = ST_NONE;
		break;
	case GT_V2_GO_SYSCALL_BEGIN:
		l->st = ST_SYS;
		break;
	case GT_V2_GO_SYSCALL_END:
		l->st = ST_RUN;
		break;
	case GT_V2_GO_CREATE_SYSCALL:
		l->g = e->args[1];
		l->st = ST_SYS;
		break;
	case GT_V2_GO_STATUS: case GT_V2_GO_STATUS_STACK:
		if (e->args[2] == l->m && (e->args[3] == GT_V2_G_RUNNING || e->args[3] == GT_V2_G_SYSCALL)) {
			l->g = e->args[1];
			l->st = e->args[3] == GT_V2_G_RUNNING ? ST_RUN : ST_SYS;
		}
		break;
	}
}

static int gen_slot(struct gm *g, uint64_t gen)
{
	size_t n;

	if (gen < g->ngen)
		return 0;
	if (gen > (1u << 20))
		return fail(g, -EINVAL, "the runtime's trace: generation %llu: too many",
			    (unsigned long long)gen);
	n = (size_t)gen + 1;
	uint64_t *a = realloc(g->maxstr, n * sizeof(*a)), *b;

	if (!a)
		return -ENOMEM;
	g->maxstr = a;
	b = realloc(g->genend, n * sizeof(*b));
	if (!b)
		return -ENOMEM;
	g->genend = b;
	for (size_t i = g->ngen; i < n; i++)
		g->maxstr[i] = g->genend[i] = 0;
	g->ngen = n;
	return 0;
}

/* The M's last event started its goroutine running: noted, so that a
 * syscall's log can follow the goroutine to the M it runs on next. */
static int add_run(struct gm *g, const struct mline *l)
{
	struct runat *n = grow(g->run, &g->caprun, g->nrun, sizeof(*g->run));

	if (!n)
		return -ENOMEM;
	g->run = n;
	n[g->nrun++] = (struct runat){ .g = l->g, .ts = l->ev[l->n - 1].ts,
				       .ml = (size_t)(l - g->ml), .ev = l->n - 1 };
	return 0;
}

static int index_batch(struct gm *g, const struct gt_v2_file *f, const struct gt_v2_batch *b)
{
	struct gt_v2_cursor c;
	struct gt_v2_ev e;
	struct mline *l = NULL;
	char err[200];
	int rc;

	if ((rc = gen_slot(g, b->gen)))
		return rc;
	if (b->kind == GT_V2_K_EVENTS && !(l = mline_of(g, b->m)))
		return -ENOMEM;
	gt_v2_cursor_init(&c, f, b);
	while ((rc = gt_v2_next_event(&c, &e, err, sizeof(err))) == 1) {
		g->res->rt_counts[e.type]++;
		if (e.type == GT_V2_STRING && e.args[0] > g->maxstr[b->gen])
			g->maxstr[b->gen] = e.args[0];
		if (e.type == GT_V2_FREQUENCY && e.args[0] != GM_RT_FREQ)
			return fail(g, -EINVAL,
				    "the runtime's trace: clock frequency %llu Hz, not Linux's nanotime()/64 (%u Hz): only a Go 1.22+ runtime on Linux is merged",
				    (unsigned long long)e.args[0], GM_RT_FREQ);
		if (!l || !gt_v2_descs[e.type].timed)
			continue;
		struct rev *n = grow(l->ev, &l->cap, l->n, sizeof(*l->ev));

		if (!n)
			return -ENOMEM;
		l->ev = n;
		uint8_t st0 = l->st;
		uint64_t g0 = l->g;

		track(l, &e);
		l->ev[l->n++] = (struct rev){ .ts = e.ts, .g = l->g, .off = e.off,
					      .gen = (uint32_t)b->gen, .st = l->st };
		if (l->st == ST_RUN && (st0 != ST_RUN || g0 != l->g) && (rc = add_run(g, l)))
			return rc;
		if (e.ts > g->genend[b->gen])
			g->genend[b->gen] = e.ts;
	}
	return rc < 0 ? fail(g, -EINVAL, "the runtime's trace: %s", err) : 0;
}

static int by_g_ts(const void *a, const void *b)
{
	const struct runat *x = a, *y = b;

	if (x->g != y->g)
		return x->g < y->g ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int index_runtime(struct gm *g)
{
	struct gt_v2_file f;
	struct gt_v2_batch b;
	int rc;

	if (gt_v2_open(&f, g->rt, g->rtlen))
		return fail(g, -EINVAL, "the runtime's trace: %s", f.error);
	while ((rc = gt_v2_next_batch(&f, &b)) == 1)
		if ((rc = index_batch(g, &f, &b)))
			return rc;
	if (rc < 0)
		return fail(g, -EINVAL, "the runtime's trace: %s", f.error);
	if (g->nrun)
		qsort(g->run, g->nrun, sizeof(*g->run), by_g_ts);
	return 0;
}

/* The id of string s in generation gen, added if new (interned with its
 * generation: the strset's rank r is g->str[r - 1]). */
static int string_id(struct gm *g, uint32_t gen, const char *s, uint64_t *id)
{
	char key[4 + 1024];
	size_t n = strlen(s);
	struct addstr *a;
	uint64_t rank;
	int rc;

	if (n > GT_V2_MAX_STRING)
		n = GT_V2_MAX_STRING;
	memcpy(key, &gen, 4);
	memcpy(key + 4, s, n);
	if ((rc = gt_strset_add(&g->sset, key, 4 + n, &rank, NULL)))
		return rc;
	if (rank <= g->nstr) {
		*id = g->str[rank - 1].id;
		return 0;
	}
	if (!(a = grow(g->str, &g->capstr, g->nstr, sizeof(*g->str))))
		return -ENOMEM;
	g->str = a;
	if (!(a[g->nstr].s = strndup(s, n)))
		return -ENOMEM;
	a[g->nstr].gen = gen;
	a[g->nstr].id = *id = ++g->maxstr[gen];
	g->nstr++;
	return 0;
}

static int insert(struct gm *g, const struct rev *after, uint64_t ts, uint8_t type,
		  const uint64_t *a, uint8_t na)
{
	struct ins *n = grow(g->ins, &g->capins, g->nins, sizeof(*g->ins));

	if (!n)
		return -ENOMEM;
	g->ins = n;
	n[g->nins] = (struct ins){ .after = after->off, .ts = ts, .seq = g->seq++, .type = type,
				   .na = na };
	memcpy(n[g->nins].a, a, na * sizeof(*a));
	g->nins++;
	return 0;
}

/* A UserLog "kernel" with this text, after event `after`. */
static int add_log(struct gm *g, const struct rev *after, uint64_t ts, const char *text)
{
	uint64_t a[4] = { 0 };
	int rc;

	if ((rc = string_id(g, after->gen, "kernel", &a[1])) ||
	    (rc = string_id(g, after->gen, text, &a[2])))
		return rc;
	return insert(g, after, ts, GT_V2_USER_LOG, a, 4);
}

static int add_region(struct gm *g, const struct rev *after, uint64_t t0, uint64_t t1,
		      const char *name)
{
	uint64_t a[3] = { 0 };
	int rc;

	if ((rc = string_id(g, after->gen, name, &a[1])) ||
	    (rc = insert(g, after, t0, GT_V2_USER_REGION_BEGIN, a, 3)))
		return rc;
	return insert(g, after, t1, GT_V2_USER_REGION_END, a, 3);
}

/* The last event of l at or before ticks t, or NULL. */
static const struct rev *at(const struct mline *l, uint64_t t)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->ev[mid].ts <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &l->ev[lo - 1] : NULL;
}

/* o's length in ns, 0 if it ends before it starts; uint64_t, as the
 * difference of two hostile int64_t timestamps may not fit one. */
static uint64_t span(const struct gt_gm_koff *o)
{
	return o->end > o->start ? (uint64_t)o->end - (uint64_t)o->start : 0;
}

/* Up to 4 frames of stack stk from the first that is not an identity
 * or context frame ("[thread]"), leaf first, "fn <- fn", into buf. */
static void frames(struct gm *g, uint64_t stk, char *buf, size_t len)
{
	char fn[96], file[64];
	uint64_t line;
	size_t n = 0, shown = 0;

	buf[0] = 0;
	for (size_t fr = 0; shown < 4 && fr < 32 &&
	     !gt_gm_kernel_frame(&g->k, stk, fr, fn, sizeof(fn), file, sizeof(file), &line); fr++) {
		if (fn[0] == '[' || !fn[0])
			continue;
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", shown ? " <- " : "", fn);
		if (n >= len)
			break;
		shown++;
	}
}

/* What the kernel said, in a few words, the stop's top frame and, for a
 * preemption by a recorded task, that task's stack. */
static void describe(struct gm *g, const struct gt_gm_koff *o, char *name, size_t nlen,
		     char *text, size_t tlen)
{
	char who[96] = "", fn[96] = "", file[64], cst[400] = "", more[512] = "";
	uint64_t line;
	size_t fr = 0;

	if (o->culprit)
		gt_gm_kernel_title(&g->k, o->culprit, who, sizeof(who));
	if (o->culprit && !who[0])
		snprintf(who, sizeof(who), "thread %llu", (unsigned long long)o->culprit);
	/* the first frame that is not an identity or context frame */
	while (!gt_gm_kernel_frame(&g->k, o->stk, fr, fn, sizeof(fn), file, sizeof(file), &line) &&
	       fn[0] == '[' && fr < 4)
		fr++;
	if (o->why == GT_GM_PREEMPT)
		snprintf(name, nlen, "kernel: preempted by %s", who[0] ? who : "a task not recorded");
	else if (o->why == GT_GM_THROTTLED)
		snprintf(name, nlen, "kernel: throttled by the CPU quota of %.*s",
			 (int)(o->cgroup_len < 256 ? o->cgroup_len : 256), (const char *)o->cgroup);
	else if (o->why == GT_GM_BLOCK)
		snprintf(name, nlen, "kernel: blocked (page fault, I/O)");
	else
		snprintf(name, nlen, "kernel: blocked in a syscall");
	if (o->why == GT_GM_PREEMPT && o->culprit_stk)
		frames(g, o->culprit_stk, cst, sizeof(cst));
	if (cst[0])
		snprintf(more, sizeof(more), "; the preempter's stack (%s): %s",
			 o->culprit_sampled ? "a CPU sample in this interval" : "where it left the CPU",
			 cst);
	snprintf(text, tlen, "%s for %llu us on CPU %lld%s%s%s", name + 8,
		 (unsigned long long)(span(o) / 1000), (long long)o->cpu_from,
		 fn[0] ? ", at " : "", fn, more);
}

/* The goroutine's first start on any M after ticks t, or NULL. */
static const struct rev *next_run(const struct gm *g, uint64_t gid, uint64_t t)
{
	size_t lo = 0, hi = g->nrun;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g->run[mid].g < gid || (g->run[mid].g == gid && g->run[mid].ts <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == g->nrun || g->run[lo].g != gid)
		return NULL;
	return &g->ml[g->run[lo].ml].ev[g->run[lo].ev];
}

/* A block inside a runtime syscall: the log goes after the event that
 * has the goroutine running again, never inside the syscall: Go's reader
 * wants a P for a user event, and the runtime may have handed the P to
 * another M meanwhile.  On this M (its GoSyscallEnd, or its GoStart after
 * GoSyscallEndBlocked) when it runs there next; else where it runs next,
 * on whichever M (the runtime put it on a run queue at
 * GoSyscallEndBlocked, and another M took it). */
static int place_syscall(struct gm *g, const struct mline *l, const struct rev *a, char *text,
			 size_t tlen)
{
	const struct rev *end = &l->ev[l->n], *r;

	for (r = a + 1; r < end && r < a + 16; r++) {
		if (r->st == ST_RUN && r->g == a->g) {
			g->res->in_syscall++;
			snprintf(text + strlen(text), tlen - strlen(text), "%s",
				 " (in the runtime's syscall that ended here)");
			return add_log(g, r, r->ts, text);
		}
		if (r->st == ST_RUN || r->g != a->g)
			break;
	}
	if ((r = next_run(g, a->g, a->ts))) {
		g->res->in_syscall++;
		g->res->moved++;
		snprintf(text + strlen(text), tlen - strlen(text),
			 " (in its runtime syscall on thread %llu, before it ran here)",
			 (unsigned long long)l->m);
		return add_log(g, r, r->ts, text);
	}
	g->res->unplaced++;
	return 0;
}

/* Places one kernel interval on its M. */
static int place(struct gm *g, const struct mline *l, const struct gt_gm_koff *o)
{
	uint64_t t0 = (uint64_t)o->start / GM_DIV, t1 = (uint64_t)o->end / GM_DIV;
	const struct rev *a = at(l, t0);
	char name[320], text[1024];
	uint64_t next, end;
	int rc;

	if (!a || a == &l->ev[l->n - 1])
		return 0; /* before the runtime's first event or after its last */
	next = a[1].ts;
	end = t1 < next ? t1 : next;
	if (a->gen != a[1].gen && end > g->genend[a->gen])
		end = g->genend[a->gen];
	g->res->koff++;
	if (next < t1) {
		g->res->violations++;
	} else {
		g->res->bounds++;
		/* in uint64_t: hostile timestamps wrap (the bound is then
		 * nonsense, as the file is) instead of overflowing int64_t */
		int64_t lo = (int64_t)((uint64_t)o->end - (next * GM_DIV + GM_DIV - 1));
		int64_t hi = (int64_t)((uint64_t)o->start - a->ts * GM_DIV);

		if (lo > g->res->off_lo)
			g->res->off_lo = lo;
		if (hi < g->res->off_hi)
			g->res->off_hi = hi;
	}
	if (a->st == ST_NONE) {
		g->res->idle++;
		return 0;
	}
	describe(g, o, name, sizeof(name), text, sizeof(text));
	t0 = t0 > a->ts ? t0 : a->ts;
	if (end < t0)
		end = t0;
	if (a->st == ST_SYS)
		return place_syscall(g, l, a, text, sizeof(text));
	g->res->regions++;
	g->res->ns_by_why[o->why] += span(o);
	if ((rc = add_region(g, a, t0, end, name)) || (rc = add_log(g, a, t0, text)))
		return rc;
	if (o->cpu_from != o->cpu_to) {
		g->res->migrations++;
		snprintf(text, sizeof(text), "migrated: CPU %lld -> CPU %lld",
			 (long long)o->cpu_from, (long long)o->cpu_to);
		return add_log(g, a, end, text);
	}
	return 0;
}

static int place_all(struct gm *g)
{
	int rc;

	g->res->off_lo = INT64_MIN;
	g->res->off_hi = INT64_MAX;
	for (size_t i = 0; i < g->k.noff; i++) {
		size_t *v = gt_idmap_get(&g->mindex, g->k.off[i].tid);

		if (v && (rc = place(g, &g->ml[*v - 1], &g->k.off[i])))
			return rc;
	}
	return 0;
}

static int by_after(const void *a, const void *b)
{
	const struct ins *x = a, *y = b;

	if (x->after != y->after)
		return x->after < y->after ? -1 : 1;
	/* begins and logs at the region's start come before its end */
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : 1;
}

/* ---- writing ------------------------------------------------------------ */

static int put(struct gm *g, const void *p, size_t n)
{
	return g->write(g->ctx, p, n);
}

static int flush_batch(struct gm *g, struct obatch *o)
{
	uint8_t h[1 + 4 * GT_UVARINT_MAX];
	size_t n = 0;
	int rc;

	if (!o->len)
		return 0;
	h[n++] = GT_V2_EVENT_BATCH;
	n += gt_uvarint_put(h + n, o->gen);
	n += gt_uvarint_put(h + n, o->m);
	n += gt_uvarint_put(h + n, o->time);
	n += gt_uvarint_put(h + n, o->len);
	if ((rc = put(g, h, n)) || (rc = put(g, o->buf, o->len)))
		return rc;
	o->len = 0;
	return 0;
}

/* Appends one event: its type, its time delta, then rest (its other
 * arguments, already encoded). */
static int emit(struct gm *g, struct obatch *o, uint8_t type, uint64_t ts, const uint8_t *rest,
		size_t restlen)
{
	size_t need = 1 + GT_UVARINT_MAX + restlen;
	int rc;

	if (o->len + need > sizeof(o->buf)) {
		if ((rc = flush_batch(g, o)))
			return rc;
		o->time = o->last = ts;
	}
	o->buf[o->len++] = type;
	o->len += gt_uvarint_put(o->buf + o->len, ts - o->last);
	memcpy(o->buf + o->len, rest, restlen);
	o->len += restlen;
	o->last = ts;
	g->res->out_counts[type]++;
	return 0;
}

static int emit_ins(struct gm *g, struct obatch *o, const struct ins *in)
{
	uint8_t rest[4 * GT_UVARINT_MAX];
	size_t n = 0;

	for (unsigned i = 0; i < in->na; i++)
		n += gt_uvarint_put(rest + n, in->a[i]);
	return emit(g, o, in->type, in->ts, rest, n);
}

/* An event batch with insertions, re-framed: the runtime's events with
 * their bytes, deltas recomputed around the inserted ones. */
static int reframe(struct gm *g, const struct gt_v2_file *f, const struct gt_v2_batch *b,
		   size_t *ii)
{
	struct obatch *op = g->ob;
	struct gt_v2_cursor c;
	struct gt_v2_ev e;
	char err[200];
	uint64_t dummy;
	int rc, dl;

	op->len = 0;
	op->gen = b->gen;
	op->m = b->m;
	op->time = op->last = b->time;
	gt_v2_cursor_init(&c, f, b);
	while ((rc = gt_v2_next_event(&c, &e, err, sizeof(err))) == 1) {
		dl = gt_uvarint_get(g->rt + e.off + 1, c.pos - e.off - 1, &dummy);
		if (dl <= 0)
			return fail(g, -EINVAL, "the runtime's trace: event at offset %zu", e.off);
		rc = emit(g, op, e.type, e.ts, g->rt + e.off + 1 + dl, c.pos - e.off - 1 - (size_t)dl);
		while (!rc && *ii < g->nins && g->ins[*ii].after == e.off)
			rc = emit_ins(g, op, &g->ins[(*ii)++]);
		if (rc)
			return rc;
	}
	if (rc < 0)
		return fail(g, -EINVAL, "the runtime's trace: %s", err);
	return flush_batch(g, op);
}

static int strings_batch(struct gm *g, uint64_t gen)
{
	struct obatch *op = g->ob;
	int rc;

	op->len = 0;
	op->gen = gen;
	op->m = 0;
	op->time = gen < g->ngen ? g->genend[gen] : 0;
	op->buf[op->len++] = GT_V2_STRINGS;
	for (size_t i = 0; i < g->nstr; i++) {
		size_t n = strlen(g->str[i].s);

		if (g->str[i].gen != gen)
			continue;
		if (n > GT_V2_MAX_STRING)
			n = GT_V2_MAX_STRING;
		if (op->len + 1 + 2 * GT_UVARINT_MAX + n > sizeof(op->buf)) {
			if ((rc = flush_batch(g, op)))
				return rc;
			op->buf[op->len++] = GT_V2_STRINGS;
		}
		op->buf[op->len++] = GT_V2_STRING;
		op->len += gt_uvarint_put(op->buf + op->len, g->str[i].id);
		op->len += gt_uvarint_put(op->buf + op->len, n);
		memcpy(op->buf + op->len, g->str[i].s, n);
		op->len += n;
		g->res->out_counts[GT_V2_STRING]++;
	}
	if (op->len == 1)
		return 0;
	g->res->out_counts[GT_V2_STRINGS]++;
	return flush_batch(g, op);
}

/* Counts a batch copied as it is. */
static int count_batch(struct gm *g, const struct gt_v2_file *f, const struct gt_v2_batch *b)
{
	struct gt_v2_cursor c;
	struct gt_v2_ev e;
	char err[200];
	int rc;

	gt_v2_cursor_init(&c, f, b);
	while ((rc = gt_v2_next_event(&c, &e, err, sizeof(err))) == 1)
		g->res->out_counts[e.type]++;
	return rc < 0 ? fail(g, -EINVAL, "the runtime's trace: %s", err) : 0;
}

static int write_all(struct gm *g)
{
	struct gt_v2_file f;
	struct gt_v2_batch b;
	uint64_t gen = 0;
	size_t ii = 0;
	int rc, have = 0;

	if (g->nins) /* none: ins is NULL, which qsort may not take */
		qsort(g->ins, g->nins, sizeof(*g->ins), by_after);
	if (gt_v2_open(&f, g->rt, g->rtlen))
		return fail(g, -EINVAL, "the runtime's trace: %s", f.error);
	if ((rc = put(g, g->rt, GT_V2_HEADER_LEN)))
		return rc;
	while ((rc = gt_v2_next_batch(&f, &b)) == 1) {
		if (have && b.gen != gen && (rc = strings_batch(g, gen)))
			return rc;
		have = 1;
		gen = b.gen;
		while (ii < g->nins && g->ins[ii].after < b.off)
			ii++; /* (none: every anchor is an event) */
		if (b.kind == GT_V2_K_EVENTS && ii < g->nins && g->ins[ii].after < b.end)
			rc = reframe(g, &f, &b, &ii);
		else if (!(rc = count_batch(g, &f, &b)))
			rc = put(g, g->rt + b.hdr, b.end - b.hdr);
		if (rc)
			return rc;
	}
	if (rc < 0)
		return fail(g, -EINVAL, "the runtime's trace: %s", f.error);
	return have ? strings_batch(g, gen) : 0;
}

static void gm_free(struct gm *g)
{
	for (size_t i = 0; i < g->nml; i++)
		free(g->ml[i].ev);
	free(g->ml);
	gt_idmap_free(&g->mindex);
	free(g->maxstr);
	free(g->genend);
	free(g->ins);
	free(g->run);
	for (size_t i = 0; i < g->nstr; i++)
		free(g->str[i].s);
	free(g->str);
	gt_strset_free(&g->sset);
	free(g->ob);
	gt_gm_kernel_free(&g->k);
}

int gt_gomerge(const uint8_t *rt, size_t rtlen, const uint8_t *k, size_t klen,
	       gt_gm_write_fn write, void *ctx, struct gt_gm_result *res)
{
	struct gm g = { .rt = rt, .rtlen = rtlen, .write = write, .ctx = ctx, .res = res };
	int rc;

	memset(res, 0, sizeof(*res));
	gt_idmap_init(&g.mindex, 1, sizeof(size_t));
	if (!(g.ob = malloc(sizeof(*g.ob))))
		rc = -ENOMEM;
	else if (!(rc = gt_gm_kernel_read(&g.k, k, klen, res->error, sizeof(res->error))) &&
	    !(rc = index_runtime(&g)) && !(rc = place_all(&g)))
		rc = write_all(&g);
	if (rc == -ENOMEM && !res->error[0])
		snprintf(res->error, sizeof(res->error), "out of memory");
	gm_free(&g);
	return rc;
}
