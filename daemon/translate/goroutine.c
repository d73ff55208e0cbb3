/* Goroutine transitions.  Each helper writes exactly the Go events that
 * move one goroutine (or one P) from a state the Go parser accepts to
 * another, and updates the model to match, so model and parser never
 * disagree.  Repairs (moving a thread the kernel shows somewhere the
 * model does not expect it) are built from these same steps. */
#include "internal.h"

#include <string.h>

/* GoCreate by whoever runs on P p (G 0 if none); the new G is runnable. */
struct gt_thread *gt_tr_create(struct gt_translator *t, int p, uint64_t creator_stack,
			       uint32_t tid, uint32_t tgid, const char *comm)
{
	struct gt_thread *th = gt_tr_add(t, tid, tgid, comm);
	if (!th)
		return NULL;
	th->ident = gt_tr_identity_reserve(t);
	gt_tr_identity_now(t, th);
	uint64_t a[3] = {th->goid, th->ident, creator_stack};
	gt_tr_emit(t, p, GT_EV_GO_CREATE, a, 3);
	th->last_p = p;
	/* A GoCreate at the snapshot's time ties with Gomaxprocs, and Go
	 * 1.22+ breaks that tie either way from one reading to the next
	 * (seen: `record -- CMD`'s thread named after a libc frame one time
	 * in ten): if it lands first, it is dropped as part of the trace's
	 * setup, so the thread's first stack must carry its name. */
	if (t->now <= t->begin_ts + 1)
		th->unnamed122 = true;
	return th;
}

/* A thread we meet for the first time in the middle of its life. */
struct gt_thread *gt_tr_create_midflight(struct gt_translator *t, int hint, uint32_t tid,
					 uint32_t tgid, const char *comm)
{
	gt_tr_repair(t, GT_REPAIR_MIDFLIGHT);
	return gt_tr_create(t, gt_tr_g0_p(t, hint), 0, tid, tgid, comm);
}

void gt_tr_proc_start(struct gt_translator *t, int c)
{
	if (t->cpus[c].p_running)
		return;
	uint64_t a[1] = {GT_TR_M_BASE + (uint64_t)c};
	gt_tr_emit(t, c, GT_EV_PROC_START, a, 1);
	t->cpus[c].p_running = true;
}

/* GoStart of a runnable th on P c, which must run no G. */
void gt_tr_start(struct gt_translator *t, struct gt_thread *th, int c)
{
	gt_tr_proc_start(t, c);
	uint64_t a[2] = {th->goid, ++th->seq};
	/* Made runnable on this same P: the P's own order already puts the
	 * cause first, so Go's reader needs no seq (as the runtime does). */
	if (th->last_p == c)
		gt_tr_emit(t, c, GT_EV_GO_START_LOCAL, a, 1);
	else
		gt_tr_emit(t, c, GT_EV_GO_START, a, 2);
	th->last_p = c;
	th->state = GT_TH_RUNNING;
	th->cpu = c;
	th->fresh = false;
	t->cpus[c].cur = th;
	if (th->nheld)
		gt_tr_alloc_flush(t, th);
}

/* Takes running th off its P with one of GoPreempt, GoSched, GoSleep,
 * GoBlock*, GoSysBlock; the state follows the event. */
void gt_tr_deschedule(struct gt_translator *t, struct gt_thread *th, int type, uint64_t stack)
{
	int c = th->cpu;
	uint64_t a[1] = {0};
	if (type != GT_EV_GO_SYSBLOCK)
		a[0] = gt_tr_named_stack(t, th, stack);
	gt_tr_emit(t, c, type, a, type == GT_EV_GO_SYSBLOCK ? 0 : 1);
	th->last_p = c;
	if (type == GT_EV_GO_PREEMPT || type == GT_EV_GO_SCHED)
		th->state = GT_TH_RUNNABLE;
	else if (type == GT_EV_GO_SYSBLOCK)
		th->state = GT_TH_WAITING_SYS;
	else
		th->state = GT_TH_WAITING;
	t->cpus[c].cur = NULL;
	th->cpu = -1;
}

/* GoEnd of running th; the record stays (DEAD) until its last switch-out.
 * Its name is final now: the identity stack gets its frame. */
void gt_tr_end_g(struct gt_translator *t, struct gt_thread *th)
{
	gt_tr_emit(t, th->cpu, GT_EV_GO_END, NULL, 0);
	t->cpus[th->cpu].cur = NULL;
	th->cpu = -1;
	th->state = GT_TH_DEAD;
	gt_tr_identity_define(t, th);
}

/* Waiting th becomes runnable: GoUnblock by whoever runs on P p (its G or
 * G 0), or GoSysExit after a GoSysBlock/GoInSyscall. */
void gt_tr_make_runnable(struct gt_translator *t, struct gt_thread *th, int p, uint64_t stack)
{
	int local = th->last_p == p;

	if (th->state == GT_TH_WAITING) {
		uint64_t a[3] = {th->goid, ++th->seq, stack};
		if (local) {
			a[1] = stack;
			gt_tr_emit(t, p, GT_EV_GO_UNBLOCK_LOCAL, a, 2);
		} else {
			gt_tr_emit(t, p, GT_EV_GO_UNBLOCK, a, 3);
		}
	} else if (th->state == GT_TH_WAITING_SYS) {
		/* Never GoSysExitLocal: Go's parser takes its goroutine from the
		 * P's running G, and here the waker runs, not the sleeper. */
		uint64_t a[3] = {th->goid, ++th->seq, 0};
		gt_tr_emit(t, p, GT_EV_GO_SYSEXIT, a, 3);
	} else {
		return;
	}
	th->last_p = p;
	th->state = GT_TH_RUNNABLE;
}

/* P c must run no G: whatever the model has there must have been switched
 * out by events we did not get. */
void gt_tr_free_p(struct gt_translator *t, int c)
{
	struct gt_thread *cur = t->cpus[c].cur;
	if (!cur)
		return;
	gt_tr_repair(t, GT_REPAIR_LOST_SWITCH_OUT);
	gt_tr_deschedule(t, cur, GT_EV_GO_PREEMPT, 0);
}

void gt_tr_stop_p(struct gt_translator *t, int c)
{
	gt_tr_free_p(t, c);
	if (!t->cpus[c].p_running)
		return;
	gt_tr_emit(t, c, GT_EV_PROC_STOP, NULL, 0);
	t->cpus[c].p_running = false;
}

/* The kernel shows th current on CPU c: make the model agree. */
void gt_tr_ensure_running(struct gt_translator *t, struct gt_thread *th, int c)
{
	if (th->state == GT_TH_RUNNING && th->cpu == c)
		return;
	if (th->state == GT_TH_DEAD)
		return; /* callers never resurrect a dead goroutine */
	if (th->state == GT_TH_RUNNING) {
		int d = th->cpu;
		gt_tr_repair(t, GT_REPAIR_MIGRATED);
		gt_tr_deschedule(t, th, GT_EV_GO_PREEMPT, 0);
		gt_tr_stop_p(t, d);
	} else if (th->state != GT_TH_RUNNABLE) {
		gt_tr_repair(t, GT_REPAIR_LOST_WAKEUP);
		gt_tr_make_runnable(t, th, gt_tr_g0_p(t, c), 0);
	} else if (!th->fresh) {
		gt_tr_repair(t, GT_REPAIR_NOT_RUNNING);
	}
	gt_tr_free_p(t, c);
	gt_tr_start(t, th, c);
}

/* Drops the record of a thread whose tid now names another thread: a
 * running one ends, an off-CPU one is left as it was (no event can end a
 * goroutine that is not running). */
void gt_tr_retire(struct gt_translator *t, struct gt_thread *th)
{
	if (th->state == GT_TH_RUNNING)
		gt_tr_end_g(t, th);
	gt_tr_remove(t, th);
}

/* The thread an event says is current on its CPU (hdr.tid): found or
 * created, and made running there.  NULL if the event is not about a
 * thread of ours (untraced, dead, or CPU out of range). */
struct gt_thread *gt_tr_current(struct gt_translator *t, const struct gt_kev_hdr *h,
				const char *comm)
{
	if (h->tid == 0)
		return NULL;
	struct gt_thread *th = gt_tr_lookup_ours(t, h->tid, h->sessions, h->cpu);
	if (th && th->state == GT_TH_DEAD)
		return NULL;
	if (!th) {
		if (!gt_tr_traced(t, h->sessions))
			return NULL;
		th = gt_tr_create_midflight(t, h->cpu, h->tid, h->tgid, comm);
		if (!th)
			return NULL;
	}
	gt_tr_ensure_running(t, th, h->cpu);
	return th;
}
