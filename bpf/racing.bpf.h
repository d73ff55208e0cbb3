/* Wakings that raced their target's block (GT_WAKEUP_RACING), settled at
 * the target's own switch-out instead of at its sched_wakeup: a program
 * on sched_wakeup ran at every wakeup of the machine, the bystanders'
 * too, for these rare races alone (docs/design.md "Cost", docs/mapping.md).
 * Included by gotraced.bpf.c.
 *
 * The race: the waker, holding the target's pi_lock, has passed the
 * target's state check (so the wakeup will happen) while the target is
 * still queued on its CPU between set_current_state() and the dequeue in
 * __schedule().  Whoever takes the target's runqueue lock first decides:
 *  - the waker: the target's state is set back to running, it never
 *    sleeps (its next switch-out, if any, is not a block, or a later
 *    block of its own);
 *  - the target: it dequeues and switches out to sleep, and the waker
 *    completes the wakeup after that switch.  At that switch-out (its
 *    sched_switch runs under the runqueue lock, interrupts off, before
 *    the target leaves its CPU) the waker is still inside
 *    try_to_wake_up(): either it still holds the target's pi_lock, or it
 *    has set the target's state to TASK_WAKING (before it queues the
 *    wakeup to the target's CPU and lets the lock go).
 * So every blocking switch-out of a traced task says whether a waker is
 * inside try_to_wake_up() for it then (GT_SWITCH_RACED), and the
 * translator, which has the GT_WAKEUP_RACING waking before it (that
 * waking's clock is read before the target dequeues), ends the block with
 * it (a waking of current, by itself or an interrupt on its CPU, is
 * completed at once by try_to_wake_up(): not GT_WAKEUP_RACING).  Not a
 * mark the waking leaves for the switch: the two run at once on
 * two CPUs, and the switch often came before the mark was stored (a third
 * of the races, on 2 vCPUs).  The pi_lock can also be held by someone else
 * at that instant (sched_setaffinity, a read of /proc/PID/wchan): only a
 * race the waker won, followed at once by a new block during such a hold,
 * is then read as lost.  Two plain loads, on a traced task's blocking
 * switch-out only: a bystander runs none of this. */
#ifndef GOTRACED_RACING_BPF_H
#define GOTRACED_RACING_BPF_H

#define GT_TASK_WAKING 0x200 /* include/linux/sched.h, every kernel since 2.6.33 */

/* GT_SWITCH_RACED or 0: whether, as task p (still on its CPU, in
 * __schedule()) blocks with state `state`, a waker is inside
 * try_to_wake_up() for it.  The lock word first, then the state: the
 * waker sets TASK_WAKING before it lets the lock go, so a lock seen free
 * is followed by a state seen TASK_WAKING (loads keep their order on x86;
 * BPF has no fence for arm64, where a miss is a block ended at its
 * switch-in by a repaired wakeup).  Plain loads from the BTF pointer. */
static __always_inline __u32 racing_flags(struct task_struct *p, long state)
{
	int lock;
	long now;

	if (!state || state == GT_TASK_DEAD)
		return 0;
	lock = p->pi_lock.raw_lock.val.counter;
	asm volatile("" ::: "memory");
	if (bpf_core_field_exists(p->__state))
		now = p->__state;
	else
		now = ((struct task_struct___pre514 *)p)->state;
	return lock || now == GT_TASK_WAKING ? GT_SWITCH_RACED : 0;
}

#endif
