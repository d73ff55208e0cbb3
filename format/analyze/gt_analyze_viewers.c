/* What the Go viewers' profiles total (`go tool trace -pprof=TYPE` and
 * the /sched, /block, /syscall, /io pages), each by its own reader's
 * definition, so that `report` can print the figures a user sees there
 * next to its own and say why they differ (docs/mapping.md, "Profiles").
 *
 * Go 1.19 (cmd/trace/pprof.go on internal/trace's links): an interval
 * runs from an event that has a stack to the event the parser links it
 * to.  The parser keeps one pending event per goroutine (g.ev):
 *  - sched:   GoUnblock or GoCreate -> the goroutine's next GoStart;
 *  - sync:    GoBlockSend/Recv/Select/Sync/Cond/GC -> its GoUnblock;
 *  - net:     GoBlockNet -> its GoUnblock;
 *  - syscall: GoSysCall -> GoSysExit, when nothing replaced it in between.
 *
 * Go 1.23 (cmd/trace/pprof.go on the state transitions that its
 * converter makes of an old trace): an interval runs from a transition
 * into the state, that has a stack, to the goroutine's next transition
 * that has a stack and leaves the state.  GoStart, GoSysExit, GoEnd and
 * the goroutines that existed before the first Gomaxprocs have no stack
 * in that model, so those transitions end nothing:
 *  - sched:   into Runnable (GoCreate, GoUnblock, GoSched, GoPreempt) up
 *             to the next stop with a stack, running time included;
 *  - sync:    into Waiting for chan, select or sync reasons (GoBlockSend/
 *             Recv/Select/Sync/Cond) -> its GoUnblock;
 *  - net:     GoBlockNet -> its GoUnblock;
 *  - syscall: GoSysCall -> the next stop with a stack;
 * each interval clipped to start no earlier than its goroutine's first
 * GoStart.  An interval counts when the event that ends it is in the window. */
#include <errno.h>

#include "gt_analyze_internal.h"
#include "wire/gt_events.h"

/* ---- Go 1.19 ------------------------------------------------------------ */

static int view119_of(int type)
{
	switch (type) {
	case GT_EV_GO_UNBLOCK: case GT_EV_GO_CREATE:
		return GT_AN_VIEW_SCHED;
	case GT_EV_GO_BLOCK_SEND: case GT_EV_GO_BLOCK_RECV: case GT_EV_GO_BLOCK_SELECT:
	case GT_EV_GO_BLOCK_SYNC: case GT_EV_GO_BLOCK_COND: case GT_EV_GO_BLOCK_GC:
		return GT_AN_VIEW_SYNC;
	case GT_EV_GO_BLOCK_NET:
		return GT_AN_VIEW_NET;
	case GT_EV_GO_SYSCALL:
		return GT_AN_VIEW_SYSCALL;
	}
	return -1;
}

static void add(struct gt_an_view_totals *v, int view, int64_t from, int64_t to, int in)
{
	/* both readers drop an empty interval */
	if (view < 0 || !in || to <= from)
		return;
	v->ns[view] += (uint64_t)(to - from);
	v->n[view]++;
}

/* The event t->v19 pending for goroutine t (g.ev) is linked to one at ns. */
static void link119(struct gt_analysis *a, struct gt_an_thread *t, int64_t ns, int in)
{
	if (t->v19_type && t->v19_stk)
		add(&a->go119, view119_of(t->v19_type), t->v19_ns, ns, in);
	t->v19_type = 0;
}

static void pend119(struct gt_an_thread *t, const struct gt_pev *e, int64_t ns)
{
	t->v19_type = e->type;
	t->v19_stk = e->stk != 0;
	t->v19_ns = ns;
}

/* The parser's g.ev bookkeeping, for the goroutine the event changes. */
static void go119(struct gt_analysis *a, struct gt_an_thread *t, const struct gt_pev *e,
		  int64_t ns, int in)
{
	switch (e->type) {
	case GT_EV_GO_CREATE: case GT_EV_GO_WAITING: case GT_EV_GO_IN_SYSCALL:
	case GT_EV_GO_SCHED: case GT_EV_GO_PREEMPT: case GT_EV_GO_SLEEP: case GT_EV_GO_BLOCK:
	case GT_EV_GO_BLOCK_SEND: case GT_EV_GO_BLOCK_RECV: case GT_EV_GO_BLOCK_SELECT:
	case GT_EV_GO_BLOCK_SYNC: case GT_EV_GO_BLOCK_COND: case GT_EV_GO_BLOCK_NET:
	case GT_EV_GO_BLOCK_GC: case GT_EV_GO_SYSCALL:
		pend119(t, e, ns);
		break;
	case GT_EV_GO_UNBLOCK: case GT_EV_GO_START: case GT_EV_GO_START_LABEL:
		link119(a, t, ns, in);
		if (e->type == GT_EV_GO_UNBLOCK)
			pend119(t, e, ns);
		break;
	case GT_EV_GO_SYSEXIT:
		if (t->v19_type == GT_EV_GO_SYSCALL)
			link119(a, t, ns, in);
		pend119(t, e, ns);
		break;
	}
}

/* ---- Go 1.23 ------------------------------------------------------------ */

enum { ST_NONE, ST_RUNNABLE, ST_WAITING_SYNC, ST_WAITING_NET, ST_WAITING_OTHER, ST_SYSCALL };

/* The state a transition with a stack leads to, or ST_NONE when the
 * converted event has no stack (it then ends and starts nothing). */
static int state123_of(const struct gt_analysis *a, const struct gt_pev *e)
{
	if (!e->stk)
		return ST_NONE;
	switch (e->type) {
	case GT_EV_GO_CREATE:
		return a->priv->seen_gomaxprocs ? ST_RUNNABLE : ST_NONE; /* before: GoStatus */
	case GT_EV_GO_UNBLOCK: case GT_EV_GO_SCHED: case GT_EV_GO_PREEMPT:
		return ST_RUNNABLE;
	case GT_EV_GO_BLOCK_SEND: case GT_EV_GO_BLOCK_RECV: case GT_EV_GO_BLOCK_SELECT:
	case GT_EV_GO_BLOCK_SYNC: case GT_EV_GO_BLOCK_COND:
		return ST_WAITING_SYNC;
	case GT_EV_GO_BLOCK_NET:
		return ST_WAITING_NET;
	case GT_EV_GO_BLOCK: case GT_EV_GO_BLOCK_GC: case GT_EV_GO_SLEEP: case GT_EV_GO_STOP:
		return ST_WAITING_OTHER;
	case GT_EV_GO_SYSCALL:
		return ST_SYSCALL;
	}
	return ST_NONE;
}

/* Waiting is one state to Go 1.23: its reasons only choose the profile. */
static int same_state(int x, int y)
{
	int wx = x >= ST_WAITING_SYNC && x <= ST_WAITING_OTHER;
	int wy = y >= ST_WAITING_SYNC && y <= ST_WAITING_OTHER;

	return x == y || (wx && wy);
}

static int view123_of(int st)
{
	switch (st) {
	case ST_RUNNABLE: return GT_AN_VIEW_SCHED;
	case ST_WAITING_SYNC: return GT_AN_VIEW_SYNC;
	case ST_WAITING_NET: return GT_AN_VIEW_NET;
	case ST_SYSCALL: return GT_AN_VIEW_SYSCALL;
	}
	return -1;
}

/* Go 1.23 clips every interval to its goroutine's life as its summary
 * sees it, from its first start (pprofMatchingGoroutines): the wait from
 * its creation to that start is not in the profiles. */
static void go123(struct gt_analysis *a, struct gt_an_thread *t, int st, int64_t ns, int in)
{
	if (st == ST_NONE)
		return;
	if (t->v23_state != ST_NONE) {
		int64_t from = t->v23_ns;

		if (same_state(t->v23_state, st))
			return;
		/* never started: StartTime 0 in Go's summary, nothing clipped */
		if (t->v23_started && t->v23_start_ns > from)
			from = t->v23_start_ns;
		add(&a->go123, view123_of(t->v23_state), from, ns, in);
		t->v23_state = ST_NONE;
	}
	if (view123_of(st) >= 0) {
		t->v23_state = st;
		t->v23_ns = ns;
	}
}

/* ---- both --------------------------------------------------------------- */

/* The goroutine an event changes: the target of GoCreate and GoUnblock. */
static uint64_t subject(const struct gt_pev *e)
{
	return e->type == GT_EV_GO_CREATE || e->type == GT_EV_GO_UNBLOCK ? e->args[0] : e->g;
}

int gt_an_viewers(struct gt_analysis *a, const struct gt_pev *e, int64_t ns, int in)
{
	uint64_t g = subject(e);
	struct gt_an_thread *t;
	int64_t ns123;

	if (e->type == GT_EV_GOMAXPROCS)
		a->priv->seen_gomaxprocs = 1;
	/* Go 1.23's converter gives no two events one time: a tie moves on
	 * by 1 ns (and a syscall that does not block takes 1 ns) */
	ns123 = a->priv->v2 || ns > a->priv->last123_ns ? ns : a->priv->last123_ns + 1;
	a->priv->last123_ns = ns123 + (e->type == GT_EV_GO_SYSCALL);
	if (!g)
		return 0;
	t = gt_an_thread_get(a, g);
	if (!t)
		return -ENOMEM;
	go119(a, t, e, ns, in);
	if ((e->type == GT_EV_GO_START || e->type == GT_EV_GO_START_LABEL) && !t->v23_started) {
		t->v23_started = 1;
		t->v23_start_ns = ns123;
	}
	go123(a, t, state123_of(a, e), ns123, in);
	return 0;
}

/* A v2 GoStatusStack (a stack, from undetermined to status): Go 1.23's
 * profiles start tracking there like at any transition with a stack. */
int gt_an_viewers_status(struct gt_analysis *a, uint64_t g, int status, int64_t ns)
{
	static const int st[] = { ST_NONE, ST_RUNNABLE, ST_NONE, ST_SYSCALL, ST_WAITING_OTHER };
	struct gt_an_thread *t = gt_an_thread_get(a, g);
	const struct gt_analyze_opts *o = &a->priv->opts;

	if (!t)
		return -ENOMEM;
	if (status < 0 || status > 4)
		return 0;
	go123(a, t, st[status], ns, ns >= o->since_ns && (o->until_ns < 0 || ns <= o->until_ns));
	return 0;
}

/* A v2 goroutine is running at ns (GoStart, GoStatus running): the first
 * such time is Go 1.23's summary StartTime. */
int gt_an_viewers_started(struct gt_analysis *a, uint64_t g, int64_t ns)
{
	struct gt_an_thread *t = gt_an_thread_get(a, g);

	if (!t)
		return -ENOMEM;
	if (!t->v23_started) {
		t->v23_started = 1;
		t->v23_start_ns = ns;
	}
	return 0;
}
