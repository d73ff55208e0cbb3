/* CFS bandwidth throttling at a traced task's runnable switch-out
 * (GT_SWITCH_THROTTLED): the task leaves its CPU because the CPU quota of
 * its cgroup, or of an ancestor, is spent (cpu.max, cpu.cfs_quota_us), not
 * because another task took the CPU.  Included by gotraced.bpf.c.
 *
 * What is read depends on the kernel's throttle model (kernel/sched/fair.c):
 *  - up to Linux 6.17 a throttle dequeues the whole cfs_rq
 *    (throttle_cfs_rq(), from put_prev_entity()/pick_next_task_fair() once
 *    the tick's account_cfs_rq_runtime() found the runtime spent and
 *    rescheduled): the task stays queued on its throttled cfs_rq, and
 *    tg_throttle_down() has counted the throttle in throttle_count of that
 *    cfs_rq and of every descendant's (throttled_hierarchy()).  All this
 *    happens in __schedule() before trace_sched_switch(), so a task switched
 *    out runnable whose se.cfs_rq->throttle_count is not 0 is throttled: in
 *    this model nothing of a throttled hierarchy runs until the unthrottle.
 *  - from Linux 6.18 ("sched/fair: Switch to task based throttle model") a
 *    throttled hierarchy's tasks keep running in the kernel: a task picked
 *    there gets a task work, throttle_cfs_rq_work(), which on its way back
 *    to user space dequeues it, sets p->throttled and reschedules.  A task
 *    preempted in the kernel of a throttled hierarchy is picked again, so
 *    throttle_count no longer tells; p->throttled does.  The model is
 *    told by what it brought, p->sched_throttle_work (the task work);
 *    there, without p->throttled nothing is flagged.
 * Only a fair task (prio >= MAX_RT_PRIO: not RT, deadline or PI-boosted)
 * is flagged: an RT task keeps se.cfs_rq, and its group can be throttled
 * by fair siblings while a higher RT task preempts it.  A sched_ext task
 * (6.12+) is not told apart (docs/mapping.md).
 * Kernels without CONFIG_FAIR_GROUP_SCHED or CONFIG_CFS_BANDWIDTH have
 * neither field: the guards leave the code out, nothing is throttled.
 * Three plain loads on a traced task's runnable switch-out only; a
 * bystander runs none of this. */
#ifndef GOTRACED_THROTTLE_BPF_H
#define GOTRACED_THROTTLE_BPF_H

#define GT_THROTTLE_MAX_DEPTH 8 /* cgroup levels walked for the quota's owner */

struct task_group___thr {
	struct cgroup_subsys_state css;
} __attribute__((preserve_access_index));
struct cfs_rq___thr {
	int throttle_count; /* CONFIG_CFS_BANDWIDTH */
	struct task_group___thr *tg;
} __attribute__((preserve_access_index));
struct sched_entity___thr {
	struct sched_entity___thr *parent; /* CONFIG_FAIR_GROUP_SCHED */
	struct cfs_rq___thr *cfs_rq;
} __attribute__((preserve_access_index));
struct task_struct___thr {
	int prio;
	struct sched_entity___thr se;
	/* Linux 6.18+, CONFIG_CFS_BANDWIDTH: the task based model */
	struct callback_head sched_throttle_work;
	bool throttled;
} __attribute__((preserve_access_index));

#define GT_MAX_RT_PRIO 100 /* include/linux/sched/prio.h: below, RT or deadline */

/* GT_SWITCH_THROTTLED or 0, for task p switched out with state `state`
 * (0: runnable).  Plain loads from the BTF pointer. */
static __always_inline __u32 throttle_flags(struct task_struct *p, long state)
{
	struct task_struct___thr *t = (void *)p;
	struct cfs_rq___thr *cfs_rq;

	/* a task of another class (SCHED_FIFO/RR, deadline, or a fair one
	 * PI-boosted to RT) keeps se.cfs_rq, and its group may be throttled
	 * by its fair siblings' runtime: its switch-out is a preemption */
	if (state || t->prio < GT_MAX_RT_PRIO)
		return 0;
	/* the task based model (6.18+) is told by its task work, not by the
	 * flag: a kernel of that model without p->throttled (a backport, a
	 * rename) must not fall back on throttle_count, wrong there */
	if (bpf_core_field_exists(t->sched_throttle_work))
		return bpf_core_field_exists(t->throttled) && t->throttled ?
			GT_SWITCH_THROTTLED : 0;
	if (!bpf_core_field_exists(t->se.cfs_rq) ||
	    !bpf_core_field_exists(struct cfs_rq___thr, throttle_count))
		return 0;
	cfs_rq = t->se.cfs_rq;
	return cfs_rq && cfs_rq->throttle_count ? GT_SWITCH_THROTTLED : 0;
}

/* The cgroup id (kernfs id, the directory's inode number in the cpu
 * controller's hierarchy) of the outermost throttled group of the task at
 * address `task`: up from its cfs_rq while throttle_count says the group
 * is throttled or under a throttled one (the throttled group itself is
 * the last such level).  0 if none is found.  A global function: verified
 * once, run on a throttled switch-out only. */
__noinline __u64 gt_throttled_cgroup(__u64 task)
{
	struct task_struct___thr *t = (struct task_struct___thr *)task;
	struct sched_entity___thr *se;
	struct cfs_rq___thr *cfs_rq, *top = NULL;

	if (!bpf_core_field_exists(t->se.cfs_rq) ||
	    !bpf_core_field_exists(struct cfs_rq___thr, throttle_count))
		return 0;
	se = &t->se;
	for (int i = 0; i < GT_THROTTLE_MAX_DEPTH && se; i++) {
		cfs_rq = BPF_CORE_READ(se, cfs_rq);
		if (!cfs_rq || !BPF_CORE_READ(cfs_rq, throttle_count))
			break;
		top = cfs_rq;
		se = BPF_CORE_READ(se, parent);
	}
	if (!top)
		return 0;
	return gt_cgroup_id(BPF_CORE_READ(top, tg, css.cgroup));
}

#endif
