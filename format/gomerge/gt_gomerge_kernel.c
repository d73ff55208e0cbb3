/* The kernel recording (gotraced's v1 file: a goroutine per thread, a P
 * per CPU) read into the intervals each thread spent off the CPU: from a
 * stop (GoPreempt, a block, a block inside a GoSysCall) to the thread's
 * next GoStart, with the CPU it left and the one it came back on, and,
 * for a preemption, the recorded thread that the same switch put on that
 * CPU (none when a task not recorded took it) and that thread's stack:
 * a CPU sample of it inside the interval (--cpu-profile), else its stop
 * that ended the run the switch began (where it left the CPU).  A
 * preemption right after a UserLog "throttled" of the same thread on that
 * P (the switch-out's, daemon/translate/throttle.c) is CFS bandwidth
 * throttling: no culprit, the log's cgroup instead.  (The log's key is
 * a string id whose String record may come later in the file: it is
 * read when the stops are paired.) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gt_gomerge.h"
#include "gt_gomerge_internal.h"
#include "util/gt_grow.h"
#include "wire/gt_events.h"
#include "wire/gt_parse.h"
#include "wire/gt_reader.h"

#define GM_MAX_P 4096 /* CPUs and the spare P; CPU samples' P is beyond */
/* A stop and the start its sched_switch wrote share their time; 1 us
 * allows for the writer moving an effect after its cause. */
#define GM_SAME_SWITCH_NS 1000

/* A stop or a start of a recorded goroutine, before pairing. */
struct point {
	uint64_t g, stk, culprit;
	int64_t ts, p;
	int start, why;
	uint32_t log;          /* a preemption's: the "cgroup ..." log just
				* before it, its index in kstate.logs + 1 */
};

/* A UserLog whose text says "cgroup ...": the translator's "throttled"
 * (its key, a string id, is checked when the stops are paired); other
 * logs, the goroutine's at every switch-out of a Go thread, are not kept. */
struct throttle_log {
	uint64_t g1;           /* the thread's goroutine + 1, 0: none */
	uint64_t key;
	const uint8_t *text;
	size_t len;
};

/* A CPU sample of a recorded goroutine (thread). */
struct sample {
	uint64_t g, stk;
	int64_t ts;
};

struct kstate {
	struct gt_pstate ps[GM_MAX_P];
	int64_t pend[GM_MAX_P];   /* point index + 1 of a preemption waiting
				   * for the next start on that P */
	uint64_t sys_g[GM_MAX_P]; /* the goroutine whose GoSysCall was the P's
				   * last event, + 1 (0: none) */
	struct throttle_log thr[GM_MAX_P]; /* the P's last, for its next stop */
	struct throttle_log *logs; /* those a preemption came right after */
	size_t nlogs, caplogs;
	int64_t cur;
	struct point *pt;
	size_t npt, cap;
	struct sample *smp;       /* sorted by (g, ts) before use */
	size_t nsmp, capsmp;
};

/* A CPUSample's values: the time delta (0), then ts, p, g, stack (the
 * wire table's arguments, format/wire/gt_events.h). */
static int add_sample(struct kstate *s, const struct gt_raw_event *r)
{
	if (r->nargs < 5 || !r->args[3])
		return 0;
	if (gt_grow(&s->smp, &s->capsmp, s->nsmp + 1, sizeof(*s->smp)))
		return -ENOMEM;
	s->smp[s->nsmp++] = (struct sample){ .g = r->args[3], .stk = r->args[4],
					     .ts = (int64_t)r->args[1] };
	return 0;
}

static int add_point(struct kstate *s, const struct point *p)
{
	if (gt_grow(&s->pt, &s->cap, s->npt + 1, sizeof(*s->pt)))
		return -ENOMEM;
	s->pt[s->npt++] = *p;
	return 0;
}

static int on_dict(struct gt_gm_kernel *k, const struct gt_raw_event *r)
{
	int isnew;

	if (r->type == GT_EV_STRING && r->nargs >= 1) {
		struct gt_gm_str *v = gt_idmap_put(&k->strings, r->args[0], &isnew);

		if (!v)
			return -ENOMEM;
		v->p = r->str;
		v->n = r->str_len;
	} else if (r->type == GT_EV_STACK && r->nargs >= 1) {
		uint64_t *v = gt_idmap_put(&k->stacks, r->args[0], &isnew);

		if (!v)
			return -ENOMEM;
		*v = r->off;
	}
	return 0;
}

static int on_stop(struct kstate *s, const struct gt_pev *e, uint64_t g)
{
	struct point p = { .g = g, .stk = e->stk, .ts = e->ts, .p = e->p };
	int64_t pi = e->p;
	struct throttle_log thr = s->thr[pi];

	s->thr[pi].g1 = 0;
	if (e->type == GT_EV_GO_END)
		return 0;
	if (e->type == GT_EV_GO_PREEMPT) {
		p.why = GT_GM_PREEMPT;
		if (thr.g1 == g + 1 && s->nlogs < UINT32_MAX) {
			if (gt_grow(&s->logs, &s->caplogs, s->nlogs + 1, sizeof(*s->logs)))
				return -ENOMEM;
			s->logs[s->nlogs++] = thr;
			p.log = (uint32_t)s->nlogs;
		}
	}
	else if (s->sys_g[pi] == g + 1)
		p.why = GT_GM_SYSCALL;
	else
		p.why = e->type == GT_EV_GO_BLOCK ? GT_GM_BLOCK : GT_GM_SYSCALL;
	s->pend[pi] = p.why == GT_GM_PREEMPT ? (int64_t)s->npt + 1 : 0;
	return add_point(s, &p);
}

/* A UserLog "cgroup ..." is kept for its thread's next stop on this P
 * (any other log ends a kept one); no log is an event of the thread's own
 * (a GoSysCall stays the P's last). */
static void on_log(struct kstate *s, const struct gt_pev *e, const struct gt_raw_event *r,
		   uint64_t g)
{
	s->thr[s->cur].g1 = 0;
	if (g && r->str && r->str_len > 7 && !memcmp(r->str, "cgroup ", 7))
		s->thr[s->cur] = (struct throttle_log){ g + 1, e->args[1], r->str, r->str_len };
}

/* The "throttled" log point a, a preemption, came right after, or NULL. */
static const struct throttle_log *throttled(const struct gt_gm_kernel *k, const struct kstate *s,
					    const struct point *a)
{
	const struct throttle_log *l = a->log ? &s->logs[a->log - 1] : NULL;
	const struct gt_gm_str *key = l ? gt_idmap_get(&k->strings, l->key) : NULL;

	return key && key->n == 9 && !memcmp(key->p, "throttled", 9) ? l : NULL;
}

static int on_event(struct gt_gm_kernel *k, struct kstate *s, const struct gt_raw_event *r)
{
	struct gt_pstate *ps;
	struct gt_pev e;
	uint64_t g;
	int isnew;

	if (s->cur < 0 || s->cur >= GM_MAX_P || r->nargs < 1)
		return 0;
	ps = &s->ps[s->cur];
	gt_parse_event(k->version, ps, r, &e);
	g = ps->g;
	gt_parse_fix(ps, &e);
	if (r->type == GT_EV_GO_CREATE) {
		uint64_t *v = gt_idmap_put(&k->titles, e.args[0], &isnew);

		if (!v)
			return -ENOMEM;
		*v = e.args[1];
		return 0;
	}
	if (r->type == GT_EV_GO_SYSCALL) {
		s->sys_g[s->cur] = g + 1;
		return 0;
	}
	if (r->type == GT_EV_USER_LOG) {
		on_log(s, &e, r, g);
		return 0;
	}
	if (gt_parse_stops(r->type) && g) {
		int rc = on_stop(s, &e, g);

		s->sys_g[s->cur] = 0;
		return rc;
	}
	s->sys_g[s->cur] = 0;
	if (r->type == GT_EV_GO_START || r->type == GT_EV_GO_START_LOCAL ||
	    r->type == GT_EV_GO_START_LABEL) {
		struct point p = { .g = e.args[0], .ts = e.ts, .p = e.p, .start = 1 };

		/* the preempter is the thread the same sched_switch started: a
		 * later start on that CPU came after tasks not recorded */
		struct point *q = s->pend[s->cur] ? &s->pt[s->pend[s->cur] - 1] : NULL;

		/* the difference in uint64_t: hostile timestamps overflowed it */
		if (q && q->g != p.g &&
		    (p.ts <= q->ts || (uint64_t)p.ts - (uint64_t)q->ts <= GM_SAME_SWITCH_NS))
			q->culprit = p.g;
		s->pend[s->cur] = 0;
		return add_point(s, &p);
	}
	return 0;
}

static int on_record(struct gt_gm_kernel *k, struct kstate *s, const struct gt_raw_event *r)
{
	switch (r->type) {
	case GT_EV_STRING: case GT_EV_STACK:
		return on_dict(k, r);
	case GT_EV_FREQUENCY:
		return r->nargs && r->args[0] != 1000000000 ? -EINVAL : 0;
	case GT_EV_TIMER_GOROUTINE:
		return 0;
	case GT_EV_CPU_SAMPLE:
		return add_sample(s, r);
	case GT_EV_BATCH:
		if (r->nargs < 2 || r->args[0] >= GM_MAX_P) {
			s->cur = -1;
			return 0;
		}
		s->cur = (int64_t)r->args[0];
		s->ps[s->cur].p = s->cur;
		s->ps[s->cur].ts = (int64_t)r->args[1];
		return 0;
	}
	return on_event(k, s, r);
}

static int by_g_ts(const void *a, const void *b)
{
	const struct point *x = a, *y = b;

	if (x->g != y->g)
		return x->g < y->g ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->start - y->start; /* a stop before a start at the same ns */
}

/* The thread id of a recorded goroutine: the line of its [thread]
 * identity frame, else the goroutine id itself below 2^32. */
static uint64_t tid_of(const struct gt_gm_kernel *k, uint64_t g)
{
	const uint64_t *stk = gt_idmap_get(&k->titles, g);
	char fn[8], file[16];
	uint64_t line;

	if (stk && !gt_gm_kernel_frame(k, *stk, 0, fn, sizeof(fn), file, sizeof(file), &line) &&
	    !strcmp(file, "[thread]"))
		return line;
	return g < (1ull << 32) ? g : 0;
}

static int smp_by_g_ts(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;

	if (x->g != y->g)
		return x->g < y->g ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* The first element of v (n of size sz, sorted by (g, ts); g and ts read
 * through get) at or after (g, ts). */
static size_t lower(const void *v, size_t n, size_t sz, uint64_t g, int64_t ts,
		    void (*get)(const void *e, uint64_t *g, int64_t *ts))
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t mg;
		int64_t mts;

		get((const char *)v + mid * sz, &mg, &mts);
		if (mg < g || (mg == g && mts < ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void get_pt(const void *e, uint64_t *g, int64_t *ts)
{
	*g = ((const struct point *)e)->g;
	*ts = ((const struct point *)e)->ts;
}

static void get_smp(const void *e, uint64_t *g, int64_t *ts)
{
	*g = ((const struct sample *)e)->g;
	*ts = ((const struct sample *)e)->ts;
}

/* The culprit's stack for o: its first sample in [start, end], else its
 * first stop after start. */
static void culprit_stack(const struct kstate *s, struct gt_gm_koff *o)
{
	size_t i = lower(s->smp, s->nsmp, sizeof(*s->smp), o->culprit, o->start, get_smp);

	if (i < s->nsmp && s->smp[i].g == o->culprit && s->smp[i].ts <= o->end) {
		o->culprit_stk = s->smp[i].stk;
		o->culprit_sampled = 1;
		return;
	}
	for (i = lower(s->pt, s->npt, sizeof(*s->pt), o->culprit, o->start, get_pt);
	     i < s->npt && s->pt[i].g == o->culprit; i++)
		if (!s->pt[i].start) {
			o->culprit_stk = s->pt[i].stk;
			return;
		}
}

/* Pairs each stop with the same goroutine's next start. */
static int pair(struct gt_gm_kernel *k, struct kstate *s)
{
	if (s->npt) /* none: pt may be NULL, which qsort may not take */
		qsort(s->pt, s->npt, sizeof(*s->pt), by_g_ts);
	if (s->nsmp)
		qsort(s->smp, s->nsmp, sizeof(*s->smp), smp_by_g_ts);
	k->off = calloc(s->npt ? s->npt : 1, sizeof(*k->off));
	if (!k->off)
		return -ENOMEM;
	for (size_t i = 0; i + 1 < s->npt; i++) {
		const struct point *a = &s->pt[i], *b = &s->pt[i + 1];
		const struct throttle_log *l;
		struct gt_gm_koff *o;

		if (a->start || !b->start || a->g != b->g || b->ts <= a->ts)
			continue;
		o = &k->off[k->noff++];
		o->tid = tid_of(k, a->g);
		o->start = a->ts;
		o->end = b->ts;
		o->cpu_from = a->p;
		o->cpu_to = b->p;
		o->why = a->why;
		o->culprit = a->culprit;
		o->stk = a->stk;
		l = a->why == GT_GM_PREEMPT ? throttled(k, s, a) : NULL;
		if (l) {
			o->why = GT_GM_THROTTLED; /* the CPU's next task is no preempter */
			o->culprit = 0;
			o->cgroup = l->text;
			o->cgroup_len = l->len;
		}
		if (o->culprit)
			culprit_stack(s, o);
	}
	return 0;
}

static int by_tid_start(const void *a, const void *b)
{
	const struct gt_gm_koff *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

int gt_gm_kernel_read(struct gt_gm_kernel *k, const uint8_t *data, size_t len,
		      char *err, size_t errlen)
{
	struct gt_raw_event *r = malloc(sizeof(*r));
	struct kstate *s = calloc(1, sizeof(*s));
	struct gt_reader rd;
	int rc;

	memset(k, 0, sizeof(*k));
	gt_idmap_init(&k->strings, 1, sizeof(struct gt_gm_str));
	gt_idmap_init(&k->stacks, 1, sizeof(uint64_t));
	gt_idmap_init(&k->titles, 1, sizeof(uint64_t));
	k->data = data;
	k->len = len;
	if (!r || !s) {
		rc = -ENOMEM;
		goto out;
	}
	if (gt_reader_open(&rd, data, len) < 0) {
		snprintf(err, errlen, "the kernel recording: %s (want gotraced's default Go 1.19 format)",
			 rd.error);
		rc = -EINVAL;
		goto out;
	}
	k->version = rd.version;
	while ((rc = gt_reader_next(&rd, r)) == 1)
		if ((rc = on_record(k, s, r)) < 0)
			break;
	if (rc == -EINVAL && !rd.error[0])
		snprintf(err, errlen, "the kernel recording: its frequency is not 1e9: not a gotraced recording");
	else if (rc < 0 && rc != -ENOMEM)
		snprintf(err, errlen, "the kernel recording: %s", rd.error);
	if (rc == 0 && !(rc = pair(k, s)))
		qsort(k->off, k->noff, sizeof(*k->off), by_tid_start);
out:
	if (s) {
		free(s->pt);
		free(s->smp);
		free(s->logs);
	}
	free(s);
	free(r);
	return rc;
}

void gt_gm_kernel_free(struct gt_gm_kernel *k)
{
	free(k->off);
	gt_idmap_free(&k->strings);
	gt_idmap_free(&k->stacks);
	gt_idmap_free(&k->titles);
	memset(k, 0, sizeof(*k));
}

static void str_of(const struct gt_gm_kernel *k, uint64_t id, char *buf, size_t len)
{
	const struct gt_gm_str *s = gt_idmap_get(&k->strings, id);
	size_t n = s ? (s->n < len - 1 ? s->n : len - 1) : 0;

	if (n)
		memcpy(buf, s->p, n);
	buf[n] = 0;
}

int gt_gm_kernel_frame(const struct gt_gm_kernel *k, uint64_t stk, size_t idx, char *fn,
		       size_t fnlen, char *file, size_t filelen, uint64_t *line)
{
	const uint64_t *off = gt_idmap_get(&k->stacks, stk);
	struct gt_raw_event *r;
	struct gt_reader rd;
	int rc = -1;

	if (!off || gt_reader_open(&rd, k->data, k->len) < 0)
		return -1;
	r = malloc(sizeof(*r));
	if (!r)
		return -1;
	rd.pos = (size_t)*off;
	/* Stack [id, n, {pc, func, file, line}*n] */
	if (gt_reader_next(&rd, r) == 1 && r->type == GT_EV_STACK && r->nargs >= 2 &&
	    idx < r->args[1] && 2 + 4 * idx + 3 < r->nargs && 2 + 4 * idx + 3 < GT_READER_MAX_ARGS) {
		str_of(k, r->args[2 + 4 * idx + 1], fn, fnlen);
		str_of(k, r->args[2 + 4 * idx + 2], file, filelen);
		*line = r->args[2 + 4 * idx + 3];
		rc = 0;
	}
	free(r);
	return rc;
}

void gt_gm_kernel_title(const struct gt_gm_kernel *k, uint64_t g, char *buf, size_t len)
{
	const uint64_t *stk = gt_idmap_get(&k->titles, g);
	char file[16];
	uint64_t line;

	buf[0] = 0;
	if (!stk || gt_gm_kernel_frame(k, *stk, 0, buf, len, file, sizeof(file), &line))
		buf[0] = 0;
	else if (!strcmp(file, "[thread]") && strlen(buf) + 24 < len)
		snprintf(buf + strlen(buf), len - strlen(buf), " (tid %llu)", (unsigned long long)line);
}
