/* Kernel-version shims for the CO-RE programs: each one names the kernel
 * change that made it necessary.  Everything else in gotraced.bpf.c reads
 * fields that have been stable since BTF tracepoints exist (5.5). */
#ifndef GOTRACED_COMPAT_BPF_H
#define GOTRACED_COMPAT_BPF_H

#include <vmlinux.h>
#include <bpf/bpf_core_read.h>

/* Linux 5.14 (commit 2f064a59a11f, "sched: Change task_struct::state")
 * renamed task_struct.state to __state (and made it unsigned int). */
struct task_struct___pre514 {
	long state;
};

static __always_inline long gt_task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___pre514 *)t, state);
}

/* Linux 5.5 (commit 67c0496e87d1, "kernfs: convert kernfs_node->id from
 * union kernfs_node_id to u64") made the cgroup id a plain u64, the inode
 * number user space sees.  Before that the id was a union {ino, generation}. */
union kernfs_node_id___pre55 {
	struct {
		u32 ino;
		u32 generation;
	};
	u64 id;
};
struct kernfs_node___pre55 {
	union kernfs_node_id___pre55 id;
};

static __always_inline u64 gt_cgroup_id(struct cgroup *cg)
{
	struct kernfs_node *kn = BPF_CORE_READ(cg, kn);

	if (!kn)
		return 0;
	if (bpf_core_type_exists(union kernfs_node_id___pre55))
		return BPF_CORE_READ((struct kernfs_node___pre55 *)kn, id.ino);
	return BPF_CORE_READ(kn, id);
}

/* The parent of a cgroup: cgroup.self.parent is the parent's css, and `self`
 * is the first member of struct cgroup.  Walking parents works on every
 * kernel; cgroup->ancestor_ids[] became ancestors[] in Linux 6.1 (commit
 * 7f203bc89eb6), so the array is avoided. */
static __always_inline struct cgroup *gt_cgroup_parent(struct cgroup *cg)
{
	struct cgroup_subsys_state *p = BPF_CORE_READ(cg, self.parent);

	return p ? (struct cgroup *)p : (struct cgroup *)0;
}

/* Whether the process is gone with this thread: signal->live counts live
 * threads and is decremented in do_exit() before trace_sched_process_exit.
 * (Linux 6.16 added a group_dead tracepoint argument; reading the counter
 * works before and after.) */
static __always_inline int gt_group_dead(struct task_struct *t)
{
	return BPF_CORE_READ(t, signal, live.counter) == 0;
}

/* The syscall number in the saved user registers (sys_exit only passes
 * regs and ret): orig_ax on x86-64, syscallno on arm64. */
static __always_inline long gt_regs_syscall_nr(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_arm64)
	return BPF_CORE_READ(regs, syscallno);
#else
	return BPF_CORE_READ(regs, orig_ax);
#endif
}

#endif
