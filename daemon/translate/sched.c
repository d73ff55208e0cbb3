/* Scheduler events: sched_switch, sched_wakeup, fork, exec, exit, rename. */
#include "internal.h"

#include <string.h>

#include "syscall_class.h"

/* __state bits of a task making its last switch (TASK_DEAD) or the
 * exit_state bits the tracepoint folds into prev_state. */
#define GT_TASK_DEAD_BITS (0x80 | 0x10 | 0x20)

/* The Go event describing why prev left the CPU: the syscall it is in is
 * read from its registers at the switch itself (prev_sysnr). */
static int switch_out_type(const struct gt_kev_switch *e)
{
	enum gt_sys_class cls = e->prev_sysnr >= 0 ? gt_syscall_class(e->prev_sysnr) : GT_SYS_OTHER;
	if (cls == GT_SYS_YIELD)
		return GT_EV_GO_SCHED;
	if (e->prev_state == 0 || (e->flags & GT_SWITCH_PREEMPT))
		return GT_EV_GO_PREEMPT;
	return gt_tr_block_type(e->prev_sysnr);
}

int gt_tr_block_type(int64_t sysnr)
{
	if (sysnr < 0)
		return GT_EV_GO_BLOCK;
	switch (gt_syscall_class(sysnr)) {
	case GT_SYS_FUTEX:  return GT_EV_GO_BLOCK_SYNC;
	case GT_SYS_SLEEP:  return GT_EV_GO_SLEEP;
	case GT_SYS_SELECT: return GT_EV_GO_BLOCK_SELECT;
	case GT_SYS_NET:    return GT_EV_GO_BLOCK_NET;
	case GT_SYS_READ:   return GT_EV_GO_BLOCK_RECV;
	case GT_SYS_WRITE:  return GT_EV_GO_BLOCK_SEND;
	default:            return GT_EV_GO_BLOCK_COND;
	}
}

/* Whether a block of this type is a generic syscall's wait, which shows
 * its GoSysCall (syscall_class.h). */
static bool generic_syscall_wait(int type)
{
	return type == GT_EV_GO_BLOCK_RECV || type == GT_EV_GO_BLOCK_SEND ||
	       type == GT_EV_GO_BLOCK_COND;
}

static bool dying(const struct gt_kev_switch *e)
{
	return (e->prev_state & GT_TASK_DEAD_BITS) && !(e->flags & GT_SWITCH_PREEMPT);
}

static void wake_pending(struct gt_translator *t, struct gt_thread *th);
static void process_gone(struct gt_translator *t, uint32_t tgid, int c);

/* Thread tid as the model knows it, if it is still ours at this event
 * (sessions: the event's mask for it; a DEAD record is returned as is).
 * One alive that no longer carries the session's bit left the session
 * unseen (its GT_KEV_LEAVE stamped before the trace began, or a cgroup it
 * moved out of): its process ends here, and nothing of this event is its:
 * another's switch or wakeup never gives it a run, a name or a stack. */
struct gt_thread *gt_tr_lookup_ours(struct gt_translator *t, uint32_t tid, uint32_t sessions, int c)
{
	struct gt_thread *th = tid ? gt_tr_lookup(t, tid) : NULL;

	if (!th || th->state == GT_TH_DEAD || gt_tr_traced(t, sessions))
		return th;
	process_gone(t, th->tgid, c);
	return NULL;
}

/* The syscall around a switch-out of th of this type (stack stk).
 * Without entries (--syscalls=blocking) the entry is written where the
 * syscall blocks: a sleep, futex, poll or socket wait says what it is by
 * its block alone, as before (the entry only lent the stack its caller);
 * the others show it, and only now may its stack take the goroutine's
 * name (Go 1.22+, gt_tr_named_stack). */
static void switch_syscall(struct gt_translator *t, struct gt_thread *th,
			   const struct gt_kev_switch *e, int c, int type, uint64_t stk)
{
	struct gt_cpu *cp = &t->cpus[c];

	if (cp->sys_pending && cp->sys_at_block) {
		if (generic_syscall_wait(type))
			cp->sys_stack = gt_tr_named_stack(t, th, cp->sys_stack);
		else
			cp->sys_pending = false;
	}
	if (!generic_syscall_wait(type))
		return;
	/* The syscall stays in the syscall profile: its GoSysCall right
	 * before the block, with the switch's fuller stack (the kernel's
	 * frames) when the entry's is held back, or written now when
	 * entries are not recorded.  With entries, a block with no entry
	 * since is the call shown blocking again: no GoSysCall. */
	if (cp->sys_pending) {
		/* the entry's, with the kernel's frames (kept rooted in the
		 * thread's name if it was: Go 1.23 names it so) */
		if (e->prev_kstack >= 0 && th->root_id && cp->sys_stack == th->root_id) {
			th->root_base = stk;
			gt_tr_identity_now(t, th);
		} else if (e->prev_kstack >= 0) {
			cp->sys_stack = stk;
		}
	} else if (cp->last_type != GT_EV_GO_SYSCALL && !th->entries_seen) {
		uint64_t a[1] = {gt_tr_named_stack(t, th, stk)};
		gt_tr_emit(t, c, GT_EV_GO_SYSCALL, a, 1);
	}
}

/* The first switch-out of th since its GT_WAKEUP_RACING waking settles
 * the race (bpf/racing.bpf.h): true when it is the block that waking
 * ends (GT_SWITCH_RACED: the waker lost, and completes the wakeup right
 * after this switch), else the waker won and th never slept. */
static bool settle_race(struct gt_translator *t, struct gt_thread *th, const struct gt_kev_switch *e)
{
	th->race_pending = false;
	if (e->flags & GT_SWITCH_RACED) {
		t->st.wakeups_raced++;
		return true;
	}
	t->st.wakeups_running++;
	return false;
}

/* The prev half of a switch on CPU c. */
static void switch_prev(struct gt_translator *t, const struct gt_kev_switch *e, int c)
{
	const struct gt_kev_hdr *h = &e->hdr;
	struct gt_thread *th = gt_tr_lookup_ours(t, h->tid, e->prev_sessions, c);
	bool woken = th && th->wake_pending;
	if (th)
		th->wake_pending = false; /* this switch is the one it raced */
	if (th && th->race_pending)
		woken |= settle_race(t, th, e);
	if (th && th->state == GT_TH_DEAD) {
		/* GoEnd is written.  Its last switch frees the record (the tid
		 * may be reused now); an earlier one (preempted or blocked
		 * between the exit event and do_task_dead) is the same ended
		 * thread, not a new one. */
		if (dying(e))
			gt_tr_remove(t, th);
		if (t->cpus[c].cur)
			gt_tr_free_p(t, c);
		return;
	}
	if (!th && h->tid && !dying(e) && gt_tr_traced(t, e->prev_sessions))
		th = gt_tr_create_midflight(t, c, h->tid, h->tgid, e->prev_comm);
	/* Whatever else the model runs on c was switched out unseen. */
	if (t->cpus[c].cur && t->cpus[c].cur != th)
		gt_tr_free_p(t, c);
	if (!th)
		return;
	if ((th->state == GT_TH_RUNNING && th->cpu != c) ||
	    th->state == GT_TH_WAITING || th->state == GT_TH_WAITING_SYS) {
		gt_tr_repair(t, GT_REPAIR_STALE_SWITCH); /* duplicate or late */
		return;
	}
	if (!strcmp(th->comm, GT_UNKNOWN_COMM) && e->prev_comm[0])
		gt_tr_set_comm(t, th, e->prev_comm);
	gt_tr_ensure_running(t, th, c);
	if (dying(e)) {
		gt_tr_repair(t, GT_REPAIR_LOST_EXIT);
		gt_tr_end_g(t, th);
		gt_tr_remove(t, th);
		return;
	}
	int type = switch_out_type(e);
	uint64_t stk = gt_tr_thread_stack(t, th, e->prev_ustack, e->prev_kstack);
	switch_syscall(t, th, e, c, type, stk);
	gt_tr_goid_log(t, c, th, e->prev_goid, e->hdr.ts); /* after its GoSysCall */
	if (type == GT_EV_GO_PREEMPT && (e->flags & GT_SWITCH_THROTTLED))
		gt_tr_throttle_log(t, c, e);
	gt_tr_deschedule(t, th, type, stk);
	if (woken && th->state == GT_TH_WAITING)
		wake_pending(t, th);
}

/* The next half: a traced next starts on c, anything else stops P c. */
static void switch_next(struct gt_translator *t, const struct gt_kev_switch *e, int c)
{
	struct gt_thread *th = gt_tr_lookup_ours(t, e->next_tid, e->next_sessions, c);
	if (th && th->state == GT_TH_DEAD) {
		/* An exiting thread back on CPU after a preemption (its exit
		 * event came first): it runs no goroutine.  A reused tid shows
		 * itself by a fork or wakeup_new event first. */
		gt_tr_stop_p(t, c);
		return;
	}
	if (!th && e->next_tid && gt_tr_traced(t, e->next_sessions))
		th = gt_tr_create_midflight(t, c, e->next_tid, e->next_tgid, e->next_comm);
	if (!th) {
		gt_tr_stop_p(t, c);
		return;
	}
	if (!strcmp(th->comm, GT_UNKNOWN_COMM) && e->next_comm[0])
		gt_tr_set_comm(t, th, e->next_comm);
	th->race_pending = false; /* its switch-out was lost, if it blocked */
	if (th->state == GT_TH_WAITING || th->state == GT_TH_WAITING_SYS) {
		gt_tr_repair(t, GT_REPAIR_LOST_WAKEUP);
		gt_tr_make_runnable(t, th, gt_tr_g0_p(t, c), 0);
	}
	if (th->state == GT_TH_RUNNABLE) {
		gt_tr_free_p(t, c);
		gt_tr_start(t, th, c); /* the normal case */
	} else {
		gt_tr_ensure_running(t, th, c);
	}
}

/* e: with GT_SWITCH_ENTRY, a struct gt_kev_switch_entry (gt_translator_event
 * leaves the flag only where the record holds one). */
void gt_tr_on_switch(struct gt_translator *t, const struct gt_kev_switch *e)
{
	int c = e->hdr.cpu;
	if (e->flags & GT_SWITCH_ENTRY)
		gt_tr_on_switch_entry(t, (const struct gt_kev_switch_entry *)e);
	switch_prev(t, e, c);
	switch_next(t, e, c);
}

/* The P and stack a wakeup from interrupt context is written with: G 0,
 * with the interrupt's one-frame stack, on the CPU's own P when none of
 * our threads runs there, else on the spare P ncpus (the one where
 * interrupts that hit a running thread of ours show).  The interrupted
 * task is current on the CPU, and the model is made to agree, but it
 * woke no one. */
static int irq_waker_p(struct gt_translator *t, const struct gt_kev_wakeup *e, uint64_t *stack)
{
	const struct gt_kev_hdr *h = &e->hdr;
	int c = h->cpu;
	*stack = gt_tr_irq_stack(t, e->flags);
	if (e->flags & GT_WAKEUP_LOOPBACK)
		t->st.loopback_anon++;
	if (c >= t->ncpus)
		return t->ncpus;
	struct gt_kev_hdr wh = *h;
	wh.sessions = e->waker_sessions;
	if (!gt_tr_current(t, &wh, NULL))
		gt_tr_free_p(t, c); /* an untraced task or the idle task was hit */
	return t->cpus[c].cur ? t->ncpus : c;
}

/* The kernel stack id a task's wakeup is written with: GT_KSTACK_LOOPBACK
 * (a [loopback] frame) when its softirq delivered its own loopback packet. */
static int32_t waker_kstack(struct gt_translator *t, const struct gt_kev_wakeup *e)
{
	if (!(e->flags & GT_WAKEUP_LOOPBACK))
		return -1;
	t->st.loopback_credited++;
	return GT_KSTACK_LOOPBACK;
}

/* The P and stack a wakeup is written with: the waker's own P when it is
 * one of our threads, else G 0 on the waker's CPU (or any idle P). */
static int waker_p(struct gt_translator *t, const struct gt_kev_wakeup *e, uint64_t *stack)
{
	const struct gt_kev_hdr *h = &e->hdr;
	int c = h->cpu;
	if (e->flags & GT_WAKEUP_IN_IRQ)
		return irq_waker_p(t, e, stack);
	*stack = 0;
	if (c >= t->ncpus)
		return gt_tr_g0_p(t, -1);
	struct gt_kev_hdr wh = *h;
	wh.sessions = e->waker_sessions;
	struct gt_thread *w = gt_tr_current(t, &wh, NULL);
	if (w) {
		*stack = gt_tr_thread_stack(t, w, e->waker_ustack, waker_kstack(t, e));
		return c;
	}
	/* An untraced task or the idle task is current on c: a loopback
	 * sender is named only where the session may see it. */
	if (e->flags & GT_WAKEUP_LOOPBACK)
		*stack = gt_tr_loopback_stack(t, e);
	gt_tr_free_p(t, c);
	return c;
}

/* Ends th's block, just written, with the wakeup that raced it (kept in
 * th->pending): by the waker if it is one of ours and still running
 * (somewhere), else by G 0 with the waker's or the interrupt's stack. */
static void wake_pending(struct gt_translator *t, struct gt_thread *th)
{
	const struct gt_kev_wakeup *e = &th->pending.wk;
	struct gt_thread *w = NULL;
	uint64_t stack = 0;
	if (e->flags & GT_WAKEUP_IN_IRQ) {
		stack = gt_tr_irq_stack(t, e->flags);
		if (e->flags & GT_WAKEUP_LOOPBACK)
			t->st.loopback_anon++;
	} else if (e->hdr.tid && gt_tr_traced(t, e->waker_sessions)) {
		w = gt_tr_lookup(t, e->hdr.tid);
	}
	if (w && w->state != GT_TH_DEAD) {
		stack = gt_tr_thread_stack(t, w, e->waker_ustack, waker_kstack(t, e));
	} else if ((e->flags & GT_WAKEUP_LOOPBACK) && !(e->flags & GT_WAKEUP_IN_IRQ)) {
		stack = gt_tr_loopback_stack(t, e); /* its sender is not ours */
	}
	int p = w && w->state == GT_TH_RUNNING ? w->cpu : gt_tr_g0_p(t, e->hdr.cpu);
	gt_tr_make_runnable(t, th, p, stack);
}

/* The sched_wakeup of a thread whose waking raced its block: if it
 * switched out to sleep since, that waking ends the block now (the waker
 * is still inside it, waiting for that switch); if it is still running,
 * the waker won and it never slept.  Written by an earlier build's
 * programs only (a sched_wakeup program): the race is settled at the
 * switch-out now (settle_race), and this finds nothing pending then. */
static void wakeup_done(struct gt_translator *t, const struct gt_kev_wakeup *e)
{
	struct gt_thread *th = gt_tr_lookup(t, e->target_tid);

	if (!th || !th->race_pending)
		return;
	th->race_pending = false;
	if (th->state == GT_TH_WAITING || th->state == GT_TH_WAITING_SYS) {
		t->st.wakeups_raced++;
		wake_pending(t, th);
	} else {
		t->st.wakeups_running++;
	}
}

void gt_tr_on_wakeup(struct gt_translator *t, const struct gt_kev_wakeup *e)
{
	if (e->flags & GT_WAKEUP_DONE) {
		wakeup_done(t, e);
		return;
	}
	struct gt_thread *th = gt_tr_lookup(t, e->target_tid);
	if (th && th->state == GT_TH_DEAD) {
		if (!(e->flags & GT_WAKEUP_NEW))
			return; /* an exiting thread woken before its last switch */
		gt_tr_repair(t, GT_REPAIR_TID_REUSE); /* a new task: tid reused unseen */
		gt_tr_remove(t, th);
		th = NULL;
	}
	if (!th) {
		/* Woken but never seen: it was waiting all along. */
		th = gt_tr_create_midflight(t, e->hdr.cpu, e->target_tid, e->target_tgid, NULL);
		if (!th)
			return;
		if (e->flags & GT_WAKEUP_NEW)
			return; /* a new task: runnable from its creation */
		uint64_t a[1] = {th->goid};
		gt_tr_emit(t, gt_tr_g0_p(t, e->hdr.cpu), GT_EV_GO_WAITING, a, 1);
		th->last_p = gt_tr_g0_p(t, e->hdr.cpu);
		th->seq++;
		th->state = GT_TH_WAITING;
		th->unnamed122 = true; /* GoWaiting: a GoStatus for Go 1.22+ */
	}
	th->race_pending = false; /* a later waking: that one lost its race */
	if (th->state == GT_TH_RUNNING && (e->flags & GT_WAKEUP_SWITCHING)) {
		th->pending = *(const struct gt_kev_wakeup_sender *)(const void *)e;
		/* its switch-out comes next: the wakeup ends that */
		th->wake_pending = true;
		return;
	}
	if (th->state == GT_TH_RUNNING && (e->flags & GT_WAKEUP_RACING)) {
		th->pending = *(const struct gt_kev_wakeup_sender *)(const void *)e;
		/* it may block first: GT_WAKEUP_DONE decides */
		th->race_pending = true;
		return;
	}
	if (th->state == GT_TH_RUNNABLE || th->state == GT_TH_RUNNING) {
		t->st.wakeups_running++;
		return;
	}
	uint64_t stack;
	int p = waker_p(t, e, &stack);
	/* The waker's repairs cannot touch th (a waiting thread), but check. */
	if (th->state == GT_TH_WAITING || th->state == GT_TH_WAITING_SYS)
		gt_tr_make_runnable(t, th, p, stack);
}

void gt_tr_on_fork(struct gt_translator *t, const struct gt_kev_fork *e)
{
	struct gt_thread *child = gt_tr_lookup(t, e->child_tid);
	if (child && child->fresh && child->state == GT_TH_RUNNABLE &&
	    child->tgid == e->child_tgid)
		return; /* duplicated event */
	struct gt_thread *parent = gt_tr_current(t, &e->hdr, e->child_comm);
	child = gt_tr_lookup(t, e->child_tid);
	if (child) {
		if (child->state != GT_TH_DEAD)
			gt_tr_repair(t, GT_REPAIR_TID_REUSE);
		if (child == parent)
			return; /* a thread cannot fork itself: ignore */
		gt_tr_retire(t, child);
	}
	int p = parent ? parent->cpu : gt_tr_g0_p(t, e->hdr.cpu);
	uint64_t stk = parent ? gt_tr_thread_stack(t, parent, e->parent_ustack, -1) : 0;
	if (!parent)
		gt_tr_repair(t, GT_REPAIR_MIDFLIGHT); /* creator not ours: G 0 */
	gt_tr_create(t, p, stk, e->child_tid, e->child_tgid, e->child_comm);
}

void gt_tr_on_exec(struct gt_translator *t, const struct gt_kev_exec *e)
{
	const struct gt_kev_hdr *h = &e->hdr;
	struct gt_thread *old = e->old_tid != h->tid ? gt_tr_lookup(t, e->old_tid) : NULL;
	if (old && old->state != GT_TH_DEAD) {
		/* de_thread(): the exec'ing thread takes the leader's tid. */
		struct gt_thread *leader = gt_tr_lookup(t, h->tid);
		if (leader) {
			if (leader->state != GT_TH_DEAD)
				gt_tr_repair(t, GT_REPAIR_TID_REUSE);
			gt_tr_retire(t, leader);
		}
		gt_tr_rekey(t, old, h->tid);
		old->tgid = h->tgid;
	}
	struct gt_thread *th = gt_tr_current(t, h, e->comm);
	if (!th)
		return;
	th->tgid = h->tgid;
	th->sys_caller = 0; /* a caller in the old program's code */
	if (e->comm[0])
		gt_tr_set_comm(t, th, e->comm); /* same goroutine, named at its end */
}

void gt_tr_on_exit(struct gt_translator *t, const struct gt_kev_exit *e)
{
	struct gt_thread *th = gt_tr_lookup(t, e->hdr.tid);
	if (e->group_dead) { /* its heap leaves the session's total */
		gt_tr_heap_process_gone(t, e->hdr.tgid, e->hdr.cpu);
		/* a JIT writes its perf map at exit, if at all */
		gt_tr_late_settle(t, e->hdr.tgid, false);
	}
	if (!th || th->state == GT_TH_DEAD)
		return; /* never ours, or a duplicate */
	gt_tr_ensure_running(t, th, e->hdr.cpu);
	gt_tr_end_g(t, th);
}

/* One goroutine of a process that left: a running one ends where it runs,
 * any other is woken by G 0, started and ended on a free P. */
static void end_left(struct gt_translator *t, struct gt_thread *th, int c)
{
	int p;

	if (th->state == GT_TH_DEAD)
		return;
	if (th->state == GT_TH_RUNNING) {
		gt_tr_end_g(t, th);
		return;
	}
	p = gt_tr_g0_p(t, c);
	gt_tr_make_runnable(t, th, p, 0);
	gt_tr_start(t, th, p);
	gt_tr_end_g(t, th);
	if (p >= t->ncpus) /* every CPU was busy: no event will stop this P */
		gt_tr_stop_p(t, p);
}

/* The process left the session (it gained privileges its owner may not
 * trace, see bpf/common.bpf.h): nothing of it comes any more, so each of
 * its goroutines ends now, the one that noticed first. */
void gt_tr_on_leave(struct gt_translator *t, const struct gt_kev_leave *e)
{
	struct gt_thread *th = gt_tr_lookup(t, e->hdr.tid);

	if (th && th->tgid == e->hdr.tgid)
		end_left(t, th, e->hdr.cpu);
	process_gone(t, e->hdr.tgid, e->hdr.cpu);
}

/* Every goroutine of process tgid ends, noticed on CPU c. */
static void process_gone(struct gt_translator *t, uint32_t tgid, int c)
{
	struct gt_thread *th;

	gt_tr_heap_process_gone(t, tgid, c);
	for (size_t i = 0; i < t->threads.cap && !t->err; i++)
		if ((th = gt_tr_thread_at(t, i)) && th->tgid == tgid)
			end_left(t, th, c);
}

/* A rename writes no event: the goroutine's identity stack is defined
 * when it ends, with the last name (a worker renamed right after
 * pthread_create is one goroutine named as the worker). */
void gt_tr_on_rename(struct gt_translator *t, const struct gt_kev_rename *e)
{
	struct gt_thread *th = gt_tr_lookup(t, e->hdr.tid);
	if (!th || th->state == GT_TH_DEAD || !e->newcomm[0])
		return;
	gt_tr_set_comm(t, th, e->newcomm);
}
