/* Syscall entry and CPU samples. */
#include "internal.h"

/* The syscall th is in, and the caller its libc wrapper hides: stacks
 * taken inside it until the next one (a block, a wakeup, a fork) get it. */
static void note_syscall_caller(struct gt_translator *t, struct gt_thread *th, int32_t ustack,
				const struct gt_utop *top)
{
	th->sys_ustack = ustack;
	th->sys_caller = gt_tr_caller(t, th->tgid, ustack, top);
}

/* h's thread entered a syscall at ustack (top: its stack's top words):
 * the GoSysCall it begins, at_block when written where it blocks. */
static void entered(struct gt_translator *t, const struct gt_kev_hdr *h, int32_t ustack,
		    const struct gt_utop *top, bool at_block)
{
	struct gt_thread *th = gt_tr_current(t, h, NULL);
	if (!th)
		return;
	struct gt_cpu *c = &t->cpus[th->cpu];
	gt_tr_flush_syscall(t, th->cpu); /* the last one returned */
	c->sys_pending = true;
	c->sys_at_block = at_block;
	th->entries_seen = !at_block;
	c->sys_ts = t->now;
	note_syscall_caller(t, th, ustack, top);
	uint64_t stk = gt_tr_thread_stack(t, th, ustack, -1);
	/* written where it blocks: named once the switch keeps it (sched.c) */
	c->sys_stack = at_block ? stk : gt_tr_named_stack(t, th, stk);
}

/* An entry record: the syscall's entry itself (--syscalls=all), or written
 * where it blocks (GoSysCall then, just before its block), or where it
 * wakes a task or forks (only its caller, for the stack of what follows:
 * the syscall itself is not shown). */
void gt_tr_on_sys_enter(struct gt_translator *t, const struct gt_kev_sys_enter *e)
{
	if (e->flags & GT_SYS_ENTER_CALLER_ONLY) {
		struct gt_thread *th = gt_tr_lookup(t, e->hdr.tid);
		if (th && th->state != GT_TH_DEAD)
			note_syscall_caller(t, th, e->ustack, &e->top);
		return;
	}
	entered(t, &e->hdr, e->ustack, &e->top, (e->flags & GT_SYS_ENTER_AT_BLOCK) != 0);
}

/* The entry a blocking switch carries (GT_SWITCH_ENTRY), for the sessions
 * that record no entries: taken as the late entry record written just
 * before the switch was (GT_SYS_ENTER_AT_BLOCK), so the trace is the same. */
void gt_tr_on_switch_entry(struct gt_translator *t, const struct gt_kev_switch_entry *x)
{
	struct gt_kev_hdr h = x->sw.hdr;

	if (!gt_tr_traced(t, x->entry_sessions) || x->sw.prev_sysnr < 0)
		return;
	h.sessions = x->entry_sessions; /* the entry's, as its own record had */
	entered(t, &h, x->sw.prev_ustack, &x->top, true);
}

/* CPUSample [real ts, p, g, stack]; only traces >= 1.19 have it. */
void gt_tr_on_cpu_sample(struct gt_translator *t, const struct gt_kev_cpu_sample *e)
{
	if (t->version < GT_V1_19 || e->hdr.cpu >= t->ncpus)
		return;
	struct gt_thread *th = gt_tr_lookup(t, e->hdr.tid);
	/* Samples sit in a batch of their own, ordered by time alone: one at
	 * the very time of its goroutine's GoCreate could be taken first and
	 * make the reader think the goroutine existed already. */
	uint64_t g = th && th->state != GT_TH_DEAD && th->born < t->now ? th->goid : 0;
	uint32_t tgid = th ? th->tgid : e->hdr.tgid;
	uint64_t a[4] = {t->now, e->hdr.cpu, g, gt_tr_stack(t, tgid, e->ustack, e->kstack)};
	gt_tr_emit(t, e->hdr.cpu, GT_EV_CPU_SAMPLE, a, 4);
}
