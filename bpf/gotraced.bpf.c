// SPDX-License-Identifier: GPL-2.0
/* gotraced's kernel side: scheduler, process-lifetime and syscall
 * tracepoints of traced tasks, written into per-CPU ring buffers.
 *
 * Filtering happens before any ring space is reserved: a task is traced
 * when its thread group is in `tgids` or (only when user space registered a
 * cgroup session, n_cgroup_sessions > 0) its cgroup or an ancestor is in
 * `cgroups`.  Both maps give a bit mask of sessions; every record carries
 * the union in hdr.sessions.  See gotraced.h for the records. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "common.bpf.h" /* maps, filter, ring and stack helpers */
#include "ustack.bpf.h" /* --call-graph=dwarf: user stack copies */
#include "goid.bpf.h"   /* the goroutine of a Go thread */

char LICENSE[] SEC("license") = "GPL";

#define GT_TASK_DEAD 0x80 /* include/linux/sched.h TASK_DEAD */
#include "racing.bpf.h" /* wakings that raced their target's block */
#include "throttle.bpf.h" /* CFS bandwidth throttling at a switch-out */

/* Parts of the hot programs left out, for `make bench` only (GT_PARTS_OFF_*
 * in gotraced.h, set before load from GOTRACED_BENCH_PARTS_OFF by make
 * bench's own build of gotracectl, tests/bench/parts_off.c): the
 * difference of a program's ns per run with and without a part is what
 * that part costs.  0 in every real recording; a
 * read-only constant, so the verifier drops the tests and the code they
 * skip (nothing of them is left in the JIT image). */
const volatile __u32 parts_off = 0;

static __always_inline bool part_on(__u32 part)
{
	return !(parts_off & part);
}

/* Sessions that asked for the kernel stack at every blocking switch-out
 * (--kernel-stacks); set by user space.  Walking a kernel stack costs about
 * as much as the rest of a switch, so by default it is taken only where
 * nothing else explains the block: outside a syscall (a page fault, a
 * D-state wait), where the syscall number is no help. */
volatile __u32 kstack_sessions = 0;

static __always_inline bool want_kstack(__u32 sessions, long sysnr)
{
	return sysnr < 0 || (sessions & kstack_sessions);
}

/* Sessions that record every syscall entry (GoSysCall, --syscalls=all);
 * the others see only the syscalls that block, from the switch.  Set by
 * user space, which also keeps gt_sys_enter detached while no session
 * wants entries: it runs at every syscall of the machine, and on a
 * server that alone costs more than all of perf sched's recording.  All
 * of them until user space says otherwise (gt_capture_syscall_entries). */
volatile __u32 syscall_sessions = 0xffffffff;

/* The sessions among m that see no syscall entries and so are owed one
 * for syscall nr: a late entry, written where the syscall does what
 * matters (a block, a wakeup, a fork), is what the entry program would
 * have written, so that the translator models both modes alike and
 * recovers the wrapper's caller from the top of the user stack
 * (gt_read_utop) for the syscalls that matter to latency. */
static __always_inline __u32 late_sessions(__u32 m, long nr)
{
	return nr < 0 || !part_on(GT_PARTS_OFF_LATE) ? 0 : m & ~syscall_sessions;
}

/* For the sessions among m owed one (late_sessions), the current task's
 * syscall nr as an entry record written now, before the record of what
 * it does inside it (a wakeup, a fork): GT_SYS_ENTER_CALLER_ONLY.
 * A block's entry rides in its switch record instead (GT_SWITCH_ENTRY). */
static __always_inline void late_entry(__u64 ts, struct task_struct *cur, __u32 m, long nr,
				       __s32 ustack, struct pt_regs *regs)
{
	struct gt_kev_sys_enter *e;

	m = late_sessions(m, nr);
	if (!m)
		return;
	e = reserve_event_at(sizeof(*e), ts, GT_KEV_SYS_ENTER, cur, m);
	if (!e)
		return;
	e->nr = nr;
	e->ustack = ustack;
	e->flags = GT_SYS_ENTER_CALLER_ONLY;
	gt_read_utop(part_on(GT_PARTS_OFF_UTOP) ? regs : NULL, &e->top);
	submit(e);
}

/* The switch record, with room for the syscall entry of the sessions em
 * (em != 0: a struct gt_kev_switch_entry, GT_SWITCH_ENTRY; its top read
 * here).  One record instead of a late entry's and the switch's: the
 * second reservation and submit cost a blocking switch ~300 ns
 * (docs/design.md, "Cost"); a switch that owes no entry keeps the short
 * record. */
static __always_inline struct gt_kev_switch *reserve_switch(__u64 now, struct task_struct *prev,
							   __u32 m, __u32 em, struct pt_regs *regs)
{
	struct gt_kev_switch_entry *x;

	if (!em)
		return reserve_event_at(sizeof(struct gt_kev_switch), now, GT_KEV_SWITCH, prev, m);
	x = reserve_event_at(sizeof(*x), now, GT_KEV_SWITCH, prev, m);
	if (!x)
		return NULL;
	x->entry_sessions = em;
	x->pad = 0;
	gt_read_utop(part_on(GT_PARTS_OFF_UTOP) ? regs : NULL, &x->top);
	return &x->sw;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(gt_sched_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	__u32 pm = task_mask(prev), nm = task_mask(next);
	struct pt_regs *regs = NULL;
	struct gt_kev_switch *e;
	__s32 ustack = -1;
	long state, sysnr = -1;
	__u32 flags = 0, em = 0;
	__u64 now, goid, cgroup = 0;

	if (!(pm | nm) || !part_on(GT_PARTS_OFF_ALL))
		return 0;
	now = bpf_ktime_get_ns(); /* before the stack walk: fill_hdr_at */
	/* A preempted task is runnable whatever its state word says (it may
	 * have been preempted while preparing to sleep): as the kernel's own
	 * __trace_sched_switch_state() does. */
	state = preempt ? 0 : gt_task_state(prev);
	if (pm) {
		flags = racing_flags(prev, state) | throttle_flags(prev, state);
		/* a global function takes scalars: prev is still current */
		if (flags & GT_SWITCH_THROTTLED)
			cgroup = gt_throttled_cgroup(bpf_get_current_task());
		/* prev is still current here: the stacks are where it stopped */
		regs = gt_current_user_regs();
		sysnr = gt_regs_syscall(regs);
		if (part_on(GT_PARTS_OFF_USTACK))
			ustack = user_stack(ctx, regs, pm);
		if (state) /* blocks in a syscall: its entry, in the record */
			em = late_sessions(pm, sysnr);
	}
	if (!part_on(GT_PARTS_OFF_RECORD))
		return 0;
	goid = pm ? gt_go_switch_out(now, prev, regs, pm) : 0; /* before: its record goes first */
	e = reserve_switch(now, prev, pm | nm, em, regs);
	if (!e)
		return 0;
	e->next_tid = next->pid;
	e->next_tgid = next->tgid;
	e->prev_state = state;
	e->prev_sessions = pm;
	e->next_sessions = nm;
	e->prev_ustack = ustack;
	e->prev_kstack = -1;
	e->prev_sysnr = sysnr;
	if (pm && state && want_kstack(pm, sysnr))
		e->prev_kstack = stack_id(ctx, 0);
	e->flags = flags | (preempt ? GT_SWITCH_PREEMPT : 0) | (em ? GT_SWITCH_ENTRY : 0);
	e->prev_goid = goid;
	e->prev_cgroup = cgroup;
	/* plain loads from the BTF pointers (the scheduler just touched both
	 * tasks): a probe-read helper call each would cost more than the rest */
	if (part_on(GT_PARTS_OFF_COMM)) {
		__builtin_memcpy(e->prev_comm, prev->comm, GT_COMM_LEN);
		__builtin_memcpy(e->next_comm, next->comm, GT_COMM_LEN);
	}
	submit(e);
	/* The last switch-out of the last thread of a process: the tgid can
	 * never run again, drop it so a reused pid is not traced by mistake. */
	if (pm && state == GT_TASK_DEAD && gt_group_gone(prev)) {
		__u32 tgid = prev->tgid;

		bpf_map_delete_elem(&tgids, &tgid);
		gt_go_proc_forget(tgid);
	}
	return 0;
}

/* include/linux/preempt.h: the preempt count's context fields.  The NMI
 * field has been 4 bits wide since Linux 5.10 (one bit before: the mask
 * covers both); SOFTIRQ_OFFSET is set only while a softirq is served, not
 * while softirqs are merely disabled (local_bh_disable adds twice it). */
#define GT_SOFTIRQ_OFFSET 0x00000100
#define GT_HARDIRQ_MASK   0x000f0000
#define GT_NMI_MASK       0x00f00000

/* This CPU's runqueue address, found once per CPU (it never moves): the
 * walk from current costs three helper calls, at every wakeup. */
GT_PERCPU_SLOT(this_rq_cache, __u64);

static __always_inline __u64 this_rq(void)
{
	__u64 *c = percpu_slot(&this_rq_cache), rq;

	if (c && *c)
		return *c;
	rq = gt_this_rq();
	if (c)
		*c = rq;
	return rq;
}

/* GT_WAKEUP_* flags of the context this program runs in: 0 in task context. */
static __always_inline __u32 irq_flags(void)
{
	__u64 rq = preempt_count_from_rq ? this_rq() : 0;
	int pc = gt_preempt_count(rq);

	if (pc & GT_NMI_MASK)
		return GT_WAKEUP_NMI;
	if (pc & GT_HARDIRQ_MASK)
		return GT_WAKEUP_HARDIRQ | (gt_in_hrtimer_irq(rq) ? GT_WAKEUP_TIMER : 0);
	if (pc & GT_SOFTIRQ_OFFSET)
		return GT_WAKEUP_SOFTIRQ;
	return 0;
}

#include "loopback.bpf.h" /* loopback senders: netif_rx, netif_receive_skb, softirq_exit */

/* The sessions among tm that may see task `task`, a loopback sender some
 * of them do not trace: root's, and those whose owner passes the ptrace
 * rule for it (unfollowable).  Global: verified once, off on_wakeup's
 * paths. */
__noinline __u32 gt_sender_visible(__u64 task, __u32 tm)
{
	__u32 why = 0;

	return tm & ~unfollowable((struct task_struct *)task, tm & owner_sessions, &why);
}

/* A wakeup by a loopback sender that some sessions of the target do not
 * trace: the record names the sender (GT_WAKEUP_SENDER).  Returns 0 (a
 * record not reserved is counted as dropped). */
static __always_inline int wakeup_by_sender(struct task_struct *cur, struct task_struct *p,
					    __u64 now, __u32 tm, __u32 wm, __s32 wustack,
					    __u32 flags)
{
	struct gt_kev_wakeup_sender *e;
	__u32 visible = tm;

	/* before the reservation: no global function is called holding one;
	 * a global function takes scalars: the address, copied */
	if (loaded_with(GT_WITHOUT_OWNERS) && (tm & owner_sessions)) {
		__u64 addr = 0;

		bpf_probe_read_kernel(&addr, sizeof(addr), &cur);
		visible = gt_sender_visible(addr, tm);
	}

	e = reserve_event_at(sizeof(*e), now, GT_KEV_WAKEUP, cur, tm);
	if (!e)
		return 0;
	e->wk.target_tid = p->pid;
	e->wk.target_tgid = p->tgid;
	e->wk.target_cpu = gt_task_cpu(p);
	e->wk.flags = flags | GT_WAKEUP_SENDER;
	e->wk.waker_sessions = wm;
	e->wk.waker_ustack = wustack;
	e->sender_sessions = visible;
	e->pad = 0;
	bpf_get_current_comm(e->sender_comm, sizeof(e->sender_comm));
	submit(e);
	return 0;
}

static __always_inline int on_wakeup(void *ctx, struct task_struct *p, __u32 flags)
{
	__u32 tm = task_mask(p), wm;
	struct task_struct *cur;
	struct pt_regs *regs;
	struct gt_kev_wakeup *e;
	__s32 wustack = -1;
	__u64 now;

	if (!tm || !part_on(GT_PARTS_OFF_ALL))
		return 0; /* a bystander's: before any helper call */
	now = bpf_ktime_get_ns();
	cur = current_task();
	/* An interrupt wakes on behalf of no task: current is whoever it
	 * interrupted, so its stack would name an innocent bystander.  A new
	 * task's first wakeup needs none of it: wake_up_new_task() runs in
	 * the forking task (kernel_clone(), never an interrupt) and the task
	 * has never run (on_cpu 0), so its flags are GT_WAKEUP_NEW alone; left
	 * out, the code of sched_wakeup_new verifies in less time at start. */
	if (part_on(GT_PARTS_OFF_WAKEFLAGS) && !(flags & GT_WAKEUP_NEW)) {
		flags = loopback_flags(cur, flags | irq_flags());
		if (p->on_cpu && (!p->on_rq || gt_sched_delayed(p)))
			flags |= GT_WAKEUP_SWITCHING;
		else if (p->on_cpu && p->pid != gt_task_pid(cur))
			flags |= GT_WAKEUP_RACING; /* current's own: done at once */
	}
	wm = task_mask(cur);
	if (wm && !(flags & GT_WAKEUP_IN_IRQ)) {
		regs = gt_current_user_regs();
		if (part_on(GT_PARTS_OFF_USTACK))
			wustack = user_stack(ctx, regs, wm);
		late_entry(now, cur, wm, gt_regs_syscall(regs), wustack, regs);
		if (part_on(GT_PARTS_OFF_RECORD))
			gt_go_note_wake(now, cur, regs, wm); /* the waker's goroutine */
	}
	if (!part_on(GT_PARTS_OFF_RECORD))
		return 0;
	if ((flags & (GT_WAKEUP_LOOPBACK | GT_WAKEUP_IN_IRQ)) == GT_WAKEUP_LOOPBACK &&
	    (wm & tm) != tm)
		return wakeup_by_sender(cur, p, now, tm, wm, wustack, flags);
	e = reserve_event_at(sizeof(*e), now, GT_KEV_WAKEUP, cur, tm);
	if (!e)
		return 0;
	e->target_tid = p->pid;
	e->target_tgid = p->tgid;
	e->target_cpu = gt_task_cpu(p);
	e->flags = flags;
	e->waker_sessions = wm;
	e->waker_ustack = wustack;
	submit(e);
	return 0;
}

/* sched_waking, not sched_wakeup: a remote wakeup may be queued to the
 * target CPU and sched_wakeup then fires there, from an IPI, with the idle
 * task or a bystander as `current`.  sched_waking always fires in the
 * waker's own context, on the waker's CPU: who woke whom, with its stack. */
SEC("tp_btf/sched_waking")
int BPF_PROG(gt_sched_waking, struct task_struct *p)
{
	return on_wakeup(ctx, p, 0);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(gt_sched_wakeup_new, struct task_struct *p)
{
	return on_wakeup(ctx, p, GT_WAKEUP_NEW);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(gt_sched_process_fork, struct task_struct *parent,
	     struct task_struct *child)
{
	__u32 ptgid = parent->tgid;
	__u32 ctgid = child->tgid;
	__u32 pm = task_mask(parent), *own;
	struct gt_kev_fork *e;
	struct pt_regs *regs;
	__s32 ustack;
	__u64 now;

	if (!pm)
		return 0;
	now = bpf_ktime_get_ns();
	/* A new process inherits the pid-filter sessions of its parent (cgroup
	 * sessions follow it by membership already). */
	own = bpf_map_lookup_elem(&tgids, &ptgid);
	if (own && ctgid != ptgid) {
		__u32 m = *own;

		maybe_tgid[ctgid % GT_MAYBE_SLOTS] = 1; /* before the entry */
		bpf_map_update_elem(&tgids, &ctgid, &m, BPF_ANY);
	}
	regs = gt_current_user_regs();
	ustack = user_stack(ctx, regs, pm);
	late_entry(now, parent, pm, gt_regs_syscall(regs), ustack, regs);
	e = reserve_event_at(sizeof(*e), now, GT_KEV_FORK, parent, pm);
	if (!e)
		return 0;
	e->child_tid = child->pid;
	e->child_tgid = ctgid;
	e->parent_ustack = ustack;
	e->pad = 0;
	BPF_CORE_READ_STR_INTO(&e->child_comm, child, comm);
	submit(e);
	return 0;
}

/* Sessions that select processes by name (record --name), and the names:
 * a comm (NUL-padded, as the kernel keeps it) to the sessions that want
 * it.  Set by user space; the lookup is skipped while no session uses it. */
volatile __u32 name_sessions = 0;

/* comm -> session mask */
GT_MAP(names, BPF_MAP_TYPE_HASH, 1024, char[GT_COMM_LEN], __u32);

/* A process whose new comm (the basename of what it executes) is a name
 * some session asked for joins those sessions here, before its exec event
 * is filtered: what it did before this point (the exec's own start) is not
 * recorded. */
static __always_inline void match_name(struct task_struct *p)
{
	char comm[GT_COMM_LEN] = {};
	__u32 tgid = p->tgid, m, *want, *own;

	bpf_probe_read_kernel_str(comm, sizeof(comm), p->comm);
	want = bpf_map_lookup_elem(&names, comm);
	if (!want)
		return;
	own = bpf_map_lookup_elem(&tgids, &tgid);
	m = *want | (own ? *own : 0);
	maybe_tgid[tgid % GT_MAYBE_SLOTS] = 1; /* before the entry */
	bpf_map_update_elem(&tgids, &tgid, &m, BPF_ANY);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(gt_sched_process_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	struct gt_kev_exec *e;
	__u32 m;

	if (name_sessions)
		match_name(p);
	m = task_mask_at(p, 1); /* a set-user-ID program leaves cgroup sessions here */

	if (!m)
		return 0;
	e = reserve_event(sizeof(*e), GT_KEV_EXEC, p, m);
	if (!e)
		return 0;
	e->old_tid = old_pid;
	e->pad = 0;
	BPF_CORE_READ_STR_INTO(&e->comm, p, comm);
	bpf_probe_read_kernel_str(&e->filename, sizeof(e->filename),
				  BPF_CORE_READ(bprm, filename));
	submit(e);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(gt_sched_process_exit, struct task_struct *p)
{
	__u32 m = task_mask_at(p, 1);
	struct gt_kev_exit *e;

	if (!m)
		return 0;
	e = reserve_event(sizeof(*e), GT_KEV_EXIT, p, m);
	if (!e)
		return 0;
	e->exit_code = BPF_CORE_READ(p, exit_code);
	e->group_dead = gt_group_dead(p);
	submit(e);
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(gt_sys_enter, struct pt_regs *regs, long id)
{
	struct task_struct *cur = current_task();
	__u32 m = task_mask(cur) & syscall_sessions;
	struct gt_kev_sys_enter *e;
	__u32 dm = loaded_with(GT_WITHOUT_DWARF) ? m & dwarf_sessions : 0;
	__s32 copy = -1;

	if (!m || !part_on(GT_PARTS_OFF_ALL))
		return 0;
	/* a copy is a record of its own, which must come before this one in
	 * the ring (capture reads the id from it): taken before the reserve */
	if (dm)
		copy = user_stack(ctx, regs, m);
	e = reserve_event(sizeof(*e), GT_KEV_SYS_ENTER, cur, m);
	if (!e)
		return 0;
	e->nr = id;
	e->ustack = dm ? copy :
		    part_on(GT_PARTS_OFF_USTACK) ? ustack_id(ctx, regs) : -1;
	e->flags = 0;
	gt_read_utop(part_on(GT_PARTS_OFF_UTOP) ? regs : NULL, &e->top);
	submit(e);
	return 0;
}

SEC("tp_btf/task_rename")
int BPF_PROG(gt_task_rename, struct task_struct *task, const char *comm)
{
	__u32 m = task_mask(task);
	struct gt_kev_rename *e;

	if (!m)
		return 0;
	e = reserve_event(sizeof(*e), GT_KEV_RENAME, task, m);
	if (!e)
		return 0;
	BPF_CORE_READ_STR_INTO(&e->oldcomm, task, comm);
	bpf_probe_read_kernel_str(&e->newcomm, sizeof(e->newcomm), comm);
	submit(e);
	return 0;
}
