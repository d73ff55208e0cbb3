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

#include "gotraced.h"
#include "compat.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define GT_CGROUP_MAX_DEPTH 32
#define GT_TASK_DEAD 0x80 /* include/linux/sched.h TASK_DEAD */

/* Number of cgroup entries; the cgroup walk is skipped while 0. */
volatile __u32 n_cgroup_sessions = 0;
/* A cheap negative filter in front of the tgids hash, so that bystanders
 * (every other process on the machine, at every syscall and switch) pay one
 * byte load instead of a hash lookup: maybe_tgid[tgid % GT_MAYBE_SLOTS] is
 * set before a tgid enters `tgids` (by user space or at fork) and cleared
 * only while `tgids` is empty.  A set byte just means "look in the hash". */
#define GT_MAYBE_SLOTS 65536
__u8 maybe_tgid[GT_MAYBE_SLOTS];
/* Bytes waiting in a ring that wake user space (set before load). */
const volatile __u64 wakeup_bytes = 1;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);   /* tgid */
	__type(value, __u32); /* session mask */
} tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);   /* cgroup v2 id (directory inode) */
	__type(value, __u32); /* session mask */
} cgroups SEC(".maps");

/* One ring buffer per CPU; user space creates them and sets the inner map
 * template before load, and the outer size to the number of possible CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} rings SEC(".maps");

/* No BPF_F_REUSE_STACKID: an id's content never changes while it lives. */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, GT_STACK_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

/* User stack ids by the key of gt_ustack_key(): a thread that enters the
 * same syscall from the same place again (a loop) reuses the id instead of
 * walking its stack again.  Emptied with `stacks` (ids are only valid
 * until then); sized like it by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __s32);
} ustack_ids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gt_bpf_stats);
} stats SEC(".maps");

static __always_inline struct gt_bpf_stats *my_stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&stats, &zero);
}

static __always_inline __u32 cgroup_mask(struct task_struct *t)
{
	struct cgroup *cg = BPF_CORE_READ(t, cgroups, dfl_cgrp);
	__u32 mask = 0;

	for (int i = 0; i < GT_CGROUP_MAX_DEPTH && cg; i++) {
		__u64 id = gt_cgroup_id(cg);
		__u32 *m = bpf_map_lookup_elem(&cgroups, &id);

		if (m)
			mask |= *m;
		cg = gt_cgroup_parent(cg);
	}
	return mask;
}

/* Session mask of a task; 0 = untraced.  The idle tasks (pid 0) never are.
 * Task pointers here are BTF pointers (tracepoint arguments, current), read
 * by plain loads: a bpf_probe_read per field would cost a helper call, on
 * every event of every process. */
static __always_inline __u32 task_mask(struct task_struct *t)
{
	__u32 tgid = t->tgid;
	__u32 mask = 0, *m;

	if (!t->pid)
		return 0;
	if (maybe_tgid[tgid % GT_MAYBE_SLOTS]) {
		m = bpf_map_lookup_elem(&tgids, &tgid);
		if (m)
			mask = *m;
	}
	if (n_cgroup_sessions)
		mask |= cgroup_mask(t);
	return mask;
}

/* Reserves `size` bytes in this CPU's ring; counts a drop on failure. */
static __always_inline void *reserve(__u32 size)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct gt_bpf_stats *st;
	void *ring = bpf_map_lookup_elem(&rings, &cpu);
	void *e = NULL;

	if (ring)
		e = bpf_ringbuf_reserve(ring, size, 0);
	if (!e) {
		st = my_stats();
		if (st)
			__sync_fetch_and_add(&st->drops, 1);
	}
	return e;
}

/* Commits a record.  User space is woken only once wakeup_bytes are
 * waiting (it also polls on a short tick while tracing): one wakeup per
 * event would cost the consumer more than the event itself. */
static __always_inline void submit(void *e)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct gt_bpf_stats *st = my_stats();
	void *ring = bpf_map_lookup_elem(&rings, &cpu);
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (st)
		__sync_fetch_and_add(&st->events, 1); /* programs nest (irq) */
	if (ring && bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(e, flags);
}

static __always_inline void fill_hdr(struct gt_kev_hdr *h, __u16 type,
				     struct task_struct *t, __u32 sessions)
{
	h->ts = bpf_ktime_get_ns();
	h->type = type;
	h->cpu = bpf_get_smp_processor_id();
	h->tid = t->pid;
	h->tgid = t->tgid;
	h->sessions = sessions;
}

/* Stack id of the current task (user stack, or kernel with flags 0);
 * failures give a negative id and are counted. */
static __always_inline __s32 stack_id(void *ctx, __u64 flags)
{
	long id = bpf_get_stackid(ctx, &stacks, flags);
	struct gt_bpf_stats *st;

	if (id < 0) {
		st = my_stats();
		if (st)
			__sync_fetch_and_add(&st->stack_errors, 1);
	}
	return id;
}

/* The current task's user stack id, from ustack_ids when the same frames
 * were walked before.  regs = its saved user registers (NULL: unknown). */
static __always_inline __s32 ustack_id(void *ctx, struct pt_regs *regs)
{
	__u64 key = gt_ustack_key(regs, GT_STACK_DEPTH);
	__s32 *hit, id;

	if (key) {
		hit = bpf_map_lookup_elem(&ustack_ids, &key);
		if (hit)
			return *hit;
	}
	id = stack_id(ctx, BPF_F_USER_STACK);
	if (key && id >= 0)
		bpf_map_update_elem(&ustack_ids, &key, &id, BPF_ANY);
	return id;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(gt_sched_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	__u32 pm = task_mask(prev), nm = task_mask(next);
	struct gt_kev_switch *e;
	long state;

	if (!(pm | nm))
		return 0;
	e = reserve(sizeof(*e));
	if (!e)
		return 0;
	fill_hdr(&e->hdr, GT_KEV_SWITCH, prev, pm | nm);
	e->next_tid = next->pid;
	e->next_tgid = next->tgid;
	/* A preempted task is runnable whatever its state word says (it may
	 * have been preempted while preparing to sleep): as the kernel's own
	 * __trace_sched_switch_state() does. */
	state = preempt ? 0 : gt_task_state(prev);
	e->prev_state = state;
	e->prev_sessions = pm;
	e->next_sessions = nm;
	e->prev_ustack = -1;
	e->prev_kstack = -1;
	if (pm) {
		/* prev is still current here: the stacks are where it stopped */
		e->prev_ustack = ustack_id(ctx, gt_current_user_regs());
		if (e->prev_state)
			e->prev_kstack = stack_id(ctx, 0);
	}
	e->flags = preempt ? GT_SWITCH_PREEMPT : 0;
	e->pad = 0;
	BPF_CORE_READ_STR_INTO(&e->prev_comm, prev, comm);
	BPF_CORE_READ_STR_INTO(&e->next_comm, next, comm);
	submit(e);
	/* The last switch-out of the last thread of a process: the tgid can
	 * never run again, drop it so a reused pid is not traced by mistake. */
	if (pm && state == GT_TASK_DEAD && gt_group_dead(prev)) {
		__u32 tgid = prev->tgid;

		bpf_map_delete_elem(&tgids, &tgid);
	}
	return 0;
}

static __always_inline int on_wakeup(void *ctx, struct task_struct *p, __u32 flags)
{
	struct task_struct *cur = (struct task_struct *)bpf_get_current_task_btf();
	__u32 tm = task_mask(p), wm;
	struct gt_kev_wakeup *e;

	if (!tm)
		return 0;
	wm = task_mask(cur);
	e = reserve(sizeof(*e));
	if (!e)
		return 0;
	fill_hdr(&e->hdr, GT_KEV_WAKEUP, cur, tm);
	e->target_tid = p->pid;
	e->target_tgid = p->tgid;
	e->target_cpu = p->thread_info.cpu;
	e->flags = flags;
	e->waker_sessions = wm;
	e->waker_ustack = wm ? ustack_id(ctx, gt_current_user_regs()) : -1;
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

	if (!pm)
		return 0;
	/* A new process inherits the pid-filter sessions of its parent (cgroup
	 * sessions follow it by membership already). */
	own = bpf_map_lookup_elem(&tgids, &ptgid);
	if (own && ctgid != ptgid) {
		__u32 m = *own;

		maybe_tgid[ctgid % GT_MAYBE_SLOTS] = 1; /* before the entry */
		bpf_map_update_elem(&tgids, &ctgid, &m, BPF_ANY);
	}
	e = reserve(sizeof(*e));
	if (!e)
		return 0;
	fill_hdr(&e->hdr, GT_KEV_FORK, parent, pm);
	e->child_tid = child->pid;
	e->child_tgid = ctgid;
	e->parent_ustack = ustack_id(ctx, gt_current_user_regs());
	e->pad = 0;
	BPF_CORE_READ_STR_INTO(&e->child_comm, child, comm);
	submit(e);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(gt_sched_process_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	__u32 m = task_mask(p);
	struct gt_kev_exec *e;

	if (!m)
		return 0;
	e = reserve(sizeof(*e));
	if (!e)
		return 0;
	fill_hdr(&e->hdr, GT_KEV_EXEC, p, m);
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
	__u32 m = task_mask(p);
	struct gt_kev_exit *e;

	if (!m)
		return 0;
	e = reserve(sizeof(*e));
	if (!e)
		return 0;
	fill_hdr(&e->hdr, GT_KEV_EXIT, p, m);
	e->exit_code = BPF_CORE_READ(p, exit_code);
	e->group_dead = gt_group_dead(p);
	submit(e);
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(gt_sys_enter, struct pt_regs *regs, long id)
{
	struct task_struct *cur = (struct task_struct *)bpf_get_current_task_btf();
	__u32 m = task_mask(cur);
	struct gt_kev_sys_enter *e;

	if (!m)
		return 0;
	e = reserve(sizeof(*e));
	if (!e)
		return 0;
	fill_hdr(&e->hdr, GT_KEV_SYS_ENTER, cur, m);
	e->nr = id;
	e->ustack = ustack_id(ctx, regs);
	e->pad = 0;
	submit(e);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(gt_sys_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *cur = (struct task_struct *)bpf_get_current_task_btf();
	__u32 m = task_mask(cur);
	struct gt_kev_sys_exit *e;

	if (!m)
		return 0;
	e = reserve(sizeof(*e));
	if (!e)
		return 0;
	fill_hdr(&e->hdr, GT_KEV_SYS_EXIT, cur, m);
	e->nr = gt_regs_syscall_nr(regs);
	e->ret = ret;
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
	e = reserve(sizeof(*e));
	if (!e)
		return 0;
	fill_hdr(&e->hdr, GT_KEV_RENAME, task, m);
	BPF_CORE_READ_STR_INTO(&e->oldcomm, task, comm);
	bpf_probe_read_kernel_str(&e->newcomm, sizeof(e->newcomm), comm);
	submit(e);
	return 0;
}
