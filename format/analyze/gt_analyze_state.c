/* The per-goroutine state machine of the analysis: the rules listed in
 * gt_analyze.h, applied to each merged event in order. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gt_analyze_internal.h"
#include "wire/gt_events.h"

static int in_window(const struct gt_analysis *a, int64_t ns)
{
	const struct gt_analyze_opts *o = &a->priv->opts;

	return ns >= o->since_ns && (o->until_ns < 0 || ns <= o->until_ns);
}

/* The part of [from, to] inside the window. */
static uint64_t overlap(const struct gt_analysis *a, int64_t from, int64_t to)
{
	const struct gt_analyze_opts *o = &a->priv->opts;

	if (from < o->since_ns)
		from = o->since_ns;
	if (o->until_ns >= 0 && to > o->until_ns)
		to = o->until_ns;
	return to > from ? (uint64_t)(to - from) : 0;
}

/* Waker rows live per thread; the (thread, WAKER, waker) key of the
 * aggregate map finds them, so a thread woken by thousands of goroutines
 * costs no scan. */
#define KIND_WAKER UINT64_MAX

static struct gt_an_waker *waker_of(struct gt_analysis *a, struct gt_an_thread *t, uint64_t g)
{
	int64_t i = gt_an_map_get(&a->priv->aggmap, t->id, KIND_WAKER, g);

	if (i >= 0)
		return &t->wak[i];
	if (gt_grow(&t->wak, &t->capwak, t->nwak + 1, sizeof(*t->wak)) ||
	    gt_an_map_put(&a->priv->aggmap, t->id, KIND_WAKER, g, (uint32_t)t->nwak))
		return NULL;
	t->wak[t->nwak] = (struct gt_an_waker){ .g = g };
	return &t->wak[t->nwak++];
}

/* The syscall table entry of name index n; -1 if memory ran out. */
static int32_t sys_entry(struct gt_an_thread *t, uint32_t name)
{
	for (size_t i = 0; i < t->nsys; i++)
		if (t->sys[i].name == name)
			return (int32_t)i;
	if (gt_grow(&t->sys, &t->capsys, t->nsys + 1, sizeof(*t->sys)))
		return -1;
	t->sys[t->nsys] = (struct gt_an_syscall){ .name = name };
	return (int32_t)t->nsys++;
}

/* A syscall of t ends at ns: into the table under its stack's name. */
static int sys_close(struct gt_analysis *a, struct gt_an_thread *t, uint64_t g, int64_t ns)
{
	int32_t name, i;
	uint64_t d = ns > t->sys_ns ? (uint64_t)(ns - t->sys_ns) : 0;
	struct gt_an_syscall *s;

	t->sys_open = t->sys_blocked = t->sys_resumed = 0;
	if (!in_window(a, ns))
		return 0;
	name = gt_an_stack_sysname(a, t->sys_stk);
	if (name < 0)
		return -ENOMEM;
	t = gt_an_thread_get(a, g); /* the name lookup may not move threads, but be safe */
	i = t ? sys_entry(t, (uint32_t)name) : -1;
	if (i < 0)
		return -ENOMEM;
	s = &t->sys[i];
	if (!s->count || d < s->min_ns)
		s->min_ns = d;
	if (d > s->max_ns)
		s->max_ns = d;
	s->count++;
	s->total_ns += d;
	return 0;
}

/* 1 if the event takes its goroutine off the CPU until something wakes
 * it (not a preemption or a yield: those leave it runnable). */
static int waits(int type)
{
	return gt_parse_stops(type) && type != GT_EV_GO_END && type != GT_EV_GO_SCHED &&
	       type != GT_EV_GO_PREEMPT;
}

/* 1 if t is one of gotraced's threads (its name stack is an identity
 * frame).  Asked at every event of a thread resumed inside a syscall, so
 * the answer is kept until its name stack changes (a GoCreate). */
static int ours(const struct gt_analysis *a, struct gt_an_thread *t)
{
	size_t len;
	int64_t tid;

	if (!t->ours_known || t->ours_stk != t->name_stk) {
		gt_an_thread_name(a, t, &len, &tid);
		t->ours = tid >= 0;
		t->ours_stk = t->name_stk;
		t->ours_known = 1;
	}
	return t->ours;
}

/* 1 if a block of type `type` that follows a GoSysCall of thread t is a
 * wait inside that syscall, to be counted as `syscall`: gotraced writes a
 * generic syscall that blocks (fsync, read, write, wait4, ...) as
 * GoSysCall then GoBlockRecv / GoBlockSend / GoBlockCond, so that its
 * waker's GoUnblock shows (docs/mapping.md).  Its threads are known by their
 * identity frame ("[thread]").  In a Go runtime's trace the same pair
 * is a syscall that returned, then a channel or sync.Cond wait. */
static int generic_syscall_block(const struct gt_analysis *a, struct gt_an_thread *t,
				 int type)
{
	if (type != GT_EV_GO_BLOCK_RECV && type != GT_EV_GO_BLOCK_SEND &&
	    type != GT_EV_GO_BLOCK_COND)
		return 0;
	return ours(a, t);
}

/* A syscall ends at its goroutine's next event; when that event is a
 * wait (GoSysBlock, or a GoBlock* of a syscall that sleeps, as futex and
 * poll do), it ends when the goroutine is woken instead (GoSysExit,
 * GoUnblock, or its next event if no wakeup was written).  A call of
 * gotraced's that blocks again after its wakeup (fsync, a long read)
 * or is preempted in it, writes no second GoSysCall when entries are
 * recorded: it stays one call through its blocks, and ends at the start
 * that followed its last wakeup (the thread back on a CPU to return), or
 * at its preemption if it never blocks again. */
static int sys_track(struct gt_analysis *a, struct gt_an_thread *t, uint64_t g,
		     const struct gt_pev *e, int64_t ns)
{
	t->sys_closed_by_call = 0;
	if (t->sys_open && t->sys_resumed) {
		if (e->type == GT_EV_GO_START || e->type == GT_EV_GO_START_LABEL) {
			if (t->sys_woke)
				t->sys_end_ns = ns;
			return 0;
		}
		if (generic_syscall_block(a, t, e->type)) {
			t->sys_resumed = 0;
			t->sys_blocked = 1;
			return 0;
		}
		if (e->type == GT_EV_GO_PREEMPT)
			return 0;
		return sys_close(a, t, g, t->sys_end_ns);
	}
	/* preempted in a call of gotraced's: it may go on and block in it
	 * (entries recorded: no second GoSysCall), or have returned */
	if (t->sys_open && !t->sys_blocked && e->type == GT_EV_GO_PREEMPT && ours(a, t)) {
		t->sys_resumed = 1;
		t->sys_woke = 0;
		t->sys_end_ns = ns;
		return 0;
	}
	if (t->sys_open && !t->sys_blocked && waits(e->type)) {
		t->sys_blocked = 1;
		return 0;
	}
	t->sys_closed_by_call = t->sys_open && e->type == GT_EV_GO_SYSCALL;
	return t->sys_open ? sys_close(a, t, g, ns) : 0;
}

/* A goroutine blocked in a syscall is woken at ns: gotraced's calls may
 * block again (sys_track), the others end here. */
static int sys_woken(struct gt_analysis *a, struct gt_an_thread *t, uint64_t g, int64_t ns)
{
	if (!ours(a, t))
		return sys_close(a, t, g, ns);
	t->sys_blocked = 0;
	t->sys_resumed = 1;
	t->sys_woke = 1;
	t->sys_end_ns = ns;
	return 0;
}

static void runnable(struct gt_an_thread *t, int64_t ns, int wake, uint64_t waker)
{
	t->state = GT_AN_RUNNABLE;
	t->since_ns = ns;
	t->wake = wake;
	t->waker = waker;
}

/* 1 if this GoStart is gotraced's 0 ns start of a thread on its spare P
 * (P >= Gomaxprocs: not a CPU), made only so that Go 1.22+ names a thread
 * that never ran, or to end one whose process left (docs/mapping.md): no
 * scheduling delay, waker, start or migration of the thread. */
static int spare_start(const struct gt_analysis *a, const struct gt_an_thread *t,
		       const struct gt_pev *e)
{
	size_t len;
	int64_t tid;

	if (!a->priv->gomaxprocs || e->p < 0 || (uint64_t)e->p < a->priv->gomaxprocs)
		return 0;
	gt_an_thread_name(a, t, &len, &tid);
	return tid >= 0;
}

/* Among the longest waits (a->waits, longest first, at most
 * GT_AN_WAITS), if it is long enough and of a thread kept. */
static void keep_wait(struct gt_analysis *a, const struct gt_an_thread *t,
		      const struct gt_an_wait *w)
{
	const struct gt_analyze_opts *o = &a->priv->opts;
	int64_t d = w->start_ns - w->stop_ns;
	size_t i;

	if (a->nwaits == GT_AN_WAITS &&
	    d <= a->waits[GT_AN_WAITS - 1].start_ns - a->waits[GT_AN_WAITS - 1].stop_ns)
		return;
	if (o->keep_waits_of && !o->keep_waits_of(a, t, o->keep_arg))
		return;
	if (a->nwaits == GT_AN_WAITS)
		a->nwaits--;
	for (i = a->nwaits; i > 0; i--) {
		const struct gt_an_wait *p = &a->waits[i - 1];

		if (p->start_ns - p->stop_ns >= d)
			break;
		a->waits[i] = *p;
	}
	a->waits[i] = *w;
	a->nwaits++;
}

unsigned gt_an_log2_slot(uint64_t ns)
{
	uint64_t us = ns / 1000;
	unsigned s = 0;

	while (us >>= 1)
		s++;
	return s < GT_AN_LOG2 ? s : GT_AN_LOG2 - 1;
}

/* The run-queue latency d of t ending at ns, and its part: wakeup delay
 * (perf sched timehist's sch delay) or preemption delay.  timehist takes
 * the ready time from the first sched_waking after the thread's switch-out
 * and drops one that came before it (its switch-out resets the ready
 * time): a raced wakeup is no sch delay there, so none here either. */
static void add_delay(struct gt_an_thread *t, uint64_t d, int64_t ns)
{
	int other = t->wake == GT_AN_WAKE_PREEMPT || t->wake == GT_AN_WAKE_RACED;
	struct gt_hist *h = other ? &t->pdelay : &t->wdelay;
	int64_t *at = other ? &t->pworst_at_ns : &t->wworst_at_ns;

	if (!t->delay.count || d > t->delay.max)
		t->worst_at_ns = ns;
	gt_hist_add(&t->delay, d);
	t->rq_log2[gt_an_log2_slot(d)]++;
	if (!h->count || d > h->max)
		*at = ns;
	gt_hist_add(h, d);
}

/* A stopped thread starts at ns: its wait is over.  The last wait is
 * kept whatever the window (a trigger's wait is the one before it, even
 * when --since/--until leave it out of the tables), the longest waits
 * only inside it. */
static void wait_over(struct gt_analysis *a, struct gt_an_thread *t, int64_t ns, int in)
{
	struct gt_an_wait w = { .g = t->id, .stk = t->stop_stk, .reason = t->stop_reason,
				.stop_ns = t->stop_ns, .start_ns = ns, .woken_ns = t->woken_ns };

	t->last_stop_ns = w.stop_ns;
	t->last_woken_ns = w.woken_ns;
	t->last_start_ns = ns;
	t->last_reason = w.reason;
	t->last_stk = w.stk;
	if (in)
		keep_wait(a, t, &w);
}

static int on_start(struct gt_analysis *a, struct gt_an_thread *t, const struct gt_pev *e,
		    int64_t ns)
{
	int in = in_window(a, ns), spare = spare_start(a, t, e), counted = in && !spare;

	if (t->state == GT_AN_RUNNABLE && counted) {
		uint64_t d = ns > t->since_ns ? (uint64_t)(ns - t->since_ns) : 0;

		add_delay(t, d, ns);
		if (t->wake == GT_AN_WAKE_UNBLOCK || t->wake == GT_AN_WAKE_RACED) {
			struct gt_an_waker *w = waker_of(a, t, t->waker);

			if (!w)
				return -ENOMEM;
			w->count++;
			w->delay_total_ns += d;
			if (d > w->delay_max_ns)
				w->delay_max_ns = d;
		}
	}
	if (t->stopped && in) {
		uint64_t off = ns > t->stop_ns ? (uint64_t)(ns - t->stop_ns) : 0;

		t->offcpu_ns[t->stop_reason] += off;
		t->offcpu_n[t->stop_reason]++;
		if (t->stop_sys >= 0)
			t->sys[t->stop_sys].blocked_ns += off;
		if (gt_an_agg_add(a, t->id, GT_AN_KIND_OFFCPU + (uint64_t)t->stop_reason,
				  t->stop_stk, off))
			return -ENOMEM;
		if (t->stop_goid && gt_an_goid_stop_end(a, t, t->stop_reason, off))
			return -ENOMEM;
		if (t->stop_throttle)
			gt_an_throttle_end(a, t, off);
	}
	if (t->stopped)
		wait_over(a, t, ns, in);
	if (!spare) {
		if (in && t->last_p >= 0 && t->last_p != e->p)
			t->migrations++;
		if (in)
			t->starts++;
		t->last_p = e->p;
	}
	t->stopped = 0;
	t->state = GT_AN_RUNNING;
	t->since_ns = ns;
	return 0;
}

static int on_stop(struct gt_analysis *a, struct gt_an_thread *t, const struct gt_pev *e,
		   int64_t ns)
{
	/* GoEnd: no reason, the goroutine is gone */
	int r = e->type == GT_EV_GO_END ? -1 : (int)gt_block_reason_of(e->type);

	if (r >= 0 && in_window(a, ns))
		t->stops_n[r]++;
	if (t->sys_blocked && generic_syscall_block(a, t, e->type))
		r = GT_BLK_SYSCALL;

	if (t->state == GT_AN_RUNNING)
		t->oncpu_ns += overlap(a, t->since_ns, ns);
	t->state = GT_AN_WAITING;
	t->stopped = r >= 0;
	t->stop_reason = r;
	t->stop_ns = ns;
	t->stop_stk = e->stk;
	t->stop_sys = -1;
	t->woken_ns = -1;
	t->stop_goid = t->goid_log; /* the Go goroutine it stopped, if named */
	memcpy(t->stop_labels, t->goid_labels, sizeof(t->stop_labels));
	t->goid_log = 0;
	t->goid_labels[0] = 0;
	t->stop_throttle = e->type == GT_EV_GO_PREEMPT ? t->throttle_log : 0;
	t->throttle_log = 0;
	if (!t->name_stk && !t->root_stk)
		t->root_stk = e->stk;
	/* blocked inside a syscall: the time is that syscall's too, and a
	 * GoSysBlock, which has no stack, takes its GoSysCall's */
	if (t->sys_blocked) {
		int32_t name = gt_an_stack_sysname(a, t->sys_stk);

		if (name < 0 || (t->stop_sys = sys_entry(t, (uint32_t)name)) < 0)
			return -ENOMEM;
		if (!t->stop_stk)
			t->stop_stk = t->sys_stk;
	}
	if (r < 0) {
		t->state = GT_AN_DEAD;
		t->ended = 1;
	}
	else if (r == GT_BLK_PREEMPT || r == GT_BLK_SCHED)
		runnable(t, ns, GT_AN_WAKE_PREEMPT, 0);
	return 0;
}

/* 1 if a GoUnblock of t at ns raced its block: one of gotraced's threads
 * woken at its block's own time (a Go runtime's goroutines are left out:
 * their ticks are coarser than a nanosecond). */
static int raced(const struct gt_analysis *a, struct gt_an_thread *t, int64_t ns)
{
	return t->state == GT_AN_WAITING && t->stopped && ns <= t->stop_ns + GT_AN_RACED_NS &&
	       ours(a, t);
}

/* Events that change another goroutine than the one running. */
static int on_other(struct gt_analysis *a, const struct gt_pev *e, int64_t ns)
{
	struct gt_an_thread *t = gt_an_thread_get(a, e->args[0]);

	if (!t)
		return -ENOMEM;
	switch (e->type) {
	case GT_EV_GO_CREATE:
		t->name_stk = e->args[1];
		runnable(t, ns, GT_AN_WAKE_NONE, 0);
		break;
	case GT_EV_GO_UNBLOCK:
		if (t->stopped && t->woken_ns < 0)
			t->woken_ns = ns;
		/* gotraced writes a wakeup whose sched_waking came before the
		 * switch-out to sleep right after that block, at its time
		 * (docs/mapping.md): a later one has its own */
		runnable(t, ns, raced(a, t, ns) ? GT_AN_WAKE_RACED : GT_AN_WAKE_UNBLOCK, e->g);
		if (t->sys_blocked)
			return sys_woken(a, t, e->args[0], ns);
		break;
	}
	return 0;
}

/* A v1 UserLog: its value is read again from its record. */
static void v1_user_log(struct gt_analysis *a, const struct gt_pev *e, int64_t ns)
{
	struct gt_reader r = a->priv->rd;
	const char *key;
	size_t keylen = 0;

	r.pos = e->off;
	if (gt_reader_next(&r, a->priv->raw) != 1)
		return;
	key = gt_an_string(a, e->args[1], &keylen);
	gt_an_user_log(a, e->g, ns, key, keylen, (const char *)a->priv->raw->str,
		       a->priv->raw->str_len);
}

/* v1 UserLog [task, key, stack] with its value after the arguments: read
 * again from the record (v2 files call gt_an_goid_log themselves). */
static int user_log(struct gt_analysis *a, const struct gt_pev *e)
{
	struct gt_reader r = a->priv->rd;
	struct gt_raw_event raw;
	const char *key;
	size_t klen = 0;

	if (a->version >= 1022)
		return 0;
	r.pos = e->off;
	if (gt_reader_next(&r, &raw) != 1 || raw.type != GT_EV_USER_LOG || !raw.str)
		return 0;
	key = gt_an_string(a, e->args[1], &klen);
	return gt_an_goid_log(a, e->g, key, klen, (const char *)raw.str, raw.str_len);
}

int gt_an_event(struct gt_analysis *a, const struct gt_pev *e, int64_t ns)
{
	struct gt_an_thread *t;
	int rc;

	if (ns > a->end_ns)
		a->end_ns = ns;
	if (e->type == GT_EV_GOMAXPROCS)
		a->priv->gomaxprocs = e->args[0];
	rc = gt_an_viewers(a, e, ns, in_window(a, ns));
	if (rc)
		return rc;
	if (e->type == GT_EV_USER_LOG && a->priv->opts.mark_key)
		v1_user_log(a, e, ns);
	if (e->type == GT_EV_GO_CREATE || e->type == GT_EV_GO_UNBLOCK) {
		rc = on_other(a, e, ns);
		if (rc)
			return rc;
	}
	if (e->g == 0)
		return 0;
	/* a log is no event of the thread's own: it neither ends nor resumes
	 * a syscall (v2 files never bring one here) */
	if (e->type == GT_EV_USER_LOG)
		return user_log(a, e);
	t = gt_an_thread_get(a, e->g);
	if (!t)
		return -ENOMEM;
	rc = sys_track(a, t, e->g, e, ns);
	if (rc)
		return rc;
	t = gt_an_thread_get(a, e->g);
	if (gt_parse_stops(e->type))
		return on_stop(a, t, e, ns);
	switch (e->type) {
	case GT_EV_GO_START: case GT_EV_GO_START_LABEL:
		t->goid_log = 0;
		t->throttle_log = 0;
		return on_start(a, t, e, ns);
	case GT_EV_GO_SYSCALL:
		/* calls are counted: a Go runtime's GoSysCall is each call; one
		 * of gotraced's follows a call that returned without blocking
		 * only when entries are recorded (sys_track closed it) */
		if (t->sys_closed_by_call || !ours(a, t))
			a->sys_calls = 1;
		t->sys_open = 1;
		t->sys_ns = ns;
		t->sys_stk = e->stk;
		if (!t->name_stk && !t->root_stk)
			t->root_stk = e->stk;
		return 0;
	case GT_EV_GO_SYSEXIT:
		if (t->stopped && t->woken_ns < 0)
			t->woken_ns = ns; /* the call's block ends: asleep until here */
		runnable(t, ns, GT_AN_WAKE_NONE, 0);
		return 0;
	case GT_EV_GO_WAITING: case GT_EV_GO_IN_SYSCALL:
		t->state = GT_AN_WAITING;
		return 0;
	}
	return 0;
}

void gt_an_user_log(struct gt_analysis *a, uint64_t g, int64_t ns, const char *key,
		    size_t keylen, const char *val, size_t vallen)
{
	const char *want = a->priv->opts.mark_key;
	int64_t i = g ? gt_an_map_get(&a->priv->gs, g, 0, 0) : -1;
	const struct gt_an_thread *t = i >= 0 ? &a->threads[i] : NULL;
	struct gt_an_mark *m;

	if (!want || a->nmarks == GT_AN_MARKS || !key || strlen(want) != keylen ||
	    memcmp(want, key, keylen))
		return;
	m = &a->marks[a->nmarks++];
	memset(m, 0, sizeof(*m));
	m->ns = ns;
	m->g = g;
	if (vallen >= sizeof(m->msg))
		vallen = sizeof(m->msg) - 1;
	snprintf(m->msg, sizeof(m->msg), "%.*s", (int)vallen, val ? val : "");
	m->wait.stop_ns = -1;
	if (t && t->last_stop_ns >= 0)
		m->wait = (struct gt_an_wait){ .g = g, .stk = t->last_stk, .reason = t->last_reason,
					       .stop_ns = t->last_stop_ns, .start_ns = t->last_start_ns,
					       .woken_ns = t->last_woken_ns };
}

int gt_an_sample(struct gt_analysis *a, const struct gt_pev *e)
{
	a->samples++;
	a->events++;
	if (!in_window(a, gt_an_ns(a, e->ts)))
		return 0;
	return gt_an_agg_add(a, e->g, GT_AN_KIND_CPU, e->stk, 1);
}

void gt_an_finish(struct gt_analysis *a)
{
	for (size_t i = 0; i < a->nthreads; i++) {
		struct gt_an_thread *t = &a->threads[i];

		/* a call woken for the last time: it returned (no memory is
		 * taken: its table entry exists since its block) */
		if (t->sys_open && t->sys_resumed)
			(void)sys_close(a, t, t->id, t->sys_end_ns);
		t = &a->threads[i];

		if (t->state == GT_AN_RUNNING)
			t->oncpu_ns += overlap(a, t->since_ns, a->end_ns);
	}
}

int gt_an_syscall_end(struct gt_analysis *a, uint64_t g, int64_t ns)
{
	struct gt_an_thread *t = gt_an_thread_get(a, g);

	if (!t)
		return -ENOMEM;
	if (!t->sys_open || t->sys_blocked || t->sys_resumed)
		return 0;
	return sys_close(a, t, g, ns);
}
