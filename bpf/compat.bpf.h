/* Kernel-version shims for the CO-RE programs: each one names the kernel
 * change that made it necessary.  Everything else in gotraced.bpf.c reads
 * fields that have been stable since BTF tracepoints exist (5.5). */
#ifndef GOTRACED_COMPAT_BPF_H
#define GOTRACED_COMPAT_BPF_H

#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "gotraced.h" /* struct gt_utop */

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

/* Linux 5.11 (commit 3ca1032ab7ab, "bpf: Implement get_current_task_btf and
 * RET_PTR_TO_BTF_ID") gave the current task as a BTF pointer, one that plain
 * loads may follow.  Before it, current is only a number
 * (bpf_get_current_task) and every field of it is read with a probe-read:
 * GT_TASK_FIELD reads that way there, from any task pointer, since a
 * caller cannot tell which kind it holds.  Correct, a little
 * slower per event on 5.8-5.10; plain loads from 5.11 on. */
#define gt_has_current_task_btf() \
	bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_task_btf)

static __always_inline struct task_struct *gt_current_task(void)
{
	if (gt_has_current_task_btf())
		return (struct task_struct *)bpf_get_current_task_btf();
	return (struct task_struct *)bpf_get_current_task();
}

/* A field of a task pointer that may be such a number. */
#define GT_TASK_FIELD(t, field) \
	(gt_has_current_task_btf() ? (t)->field : BPF_CORE_READ(t, field))
#define gt_task_pid(t) ((__u32)GT_TASK_FIELD(t, pid))
#define gt_task_tgid(t) ((__u32)GT_TASK_FIELD(t, tgid))

/* The CPU a task is queued on: task_struct.cpu until Linux 5.16 (commit
 * bcf9033e5449, "sched: move CPU field back into thread_info if
 * THREAD_INFO_IN_TASK") moved it into thread_info. */
struct task_struct___pre516 {
	unsigned int cpu;
};

static __always_inline __u32 gt_task_cpu(struct task_struct *t)
{
	if (bpf_core_field_exists(t->thread_info.cpu))
		return BPF_CORE_READ(t, thread_info.cpu);
	return BPF_CORE_READ((struct task_struct___pre516 *)t, cpu);
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

/* Whether the final switch-out of dead task t is the process's last: no
 * thread of it can run again.  live reaching 0 is not enough: a thread
 * preempted between its decrement of live and its sched_process_exit (seen
 * on a busy 2-CPU guest: exit_group killing preempted spinners) would have
 * its exit filtered out if the tgid left the filter at a sibling's last
 * switch.  A thread still on its way out counts in signal->nr_threads until
 * release_task(), which every exiting thread but the leader passes before
 * its last switch; the leader counts until reaped, and is past its exit
 * once exit_notify() set its exit_state. */
static __always_inline int gt_group_gone(struct task_struct *t)
{
	struct task_struct *leader;

	if (!gt_group_dead(t) || BPF_CORE_READ(t, signal, nr_threads) > 1)
		return 0;
	leader = BPF_CORE_READ(t, group_leader);
	return leader == t || BPF_CORE_READ(leader, exit_state) != 0;
}

/* The syscall a task sleeps in, from its saved user registers (those at the
 * top of its kernel stack), or -1 when it entered the kernel otherwise.
 * x86-64: orig_ax is the syscall number after a syscall, but a fault's error
 * code after a fault and negative after an interrupt; ax holds -ENOSYS from
 * syscall entry until the return value is stored, and the user's rax after
 * any other entry, so the pair tells them apart.  arm64: syscallno is
 * NO_SYSCALL (-1) outside a syscall.  This replaces following sys_exit,
 * which would run a program at every syscall return of every process. */
#define GT_ENOSYS 38

/* Whether this kernel has bpf_task_pt_regs() (Linux 5.15, commit
 * dd6e10fbd9fb): its pointer may be followed by plain loads.  Before it,
 * gt_current_user_regs() computes the pointer, a number, and every field is
 * read with a probe-read (GT_REGS_FIELD); the syscall `regs` argument of
 * sys_enter, a BTF pointer, is read either way. */
#define gt_has_task_pt_regs() \
	bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs)
#define GT_REGS_FIELD(regs, field) \
	(gt_has_task_pt_regs() ? (regs)->field : BPF_CORE_READ(regs, field))

static __always_inline long gt_regs_syscall(struct pt_regs *regs)
{
	if (!regs)
		return -1;
#if defined(__TARGET_ARCH_arm64)
	return BPF_CORE_READ(regs, syscallno);
#else
	long nr = GT_REGS_FIELD(regs, orig_ax);

	return nr >= 0 && (long)GT_REGS_FIELD(regs, ax) == -GT_ENOSYS ? nr : -1;
#endif
}

/* The top of the user stack (struct gt_utop) from a task's saved user
 * registers: the words at its stack pointer (one probe-read), and on arm64
 * the link register.  x86-64 and arm64 name the stack pointer `sp` alike. */
static __always_inline void gt_read_utop(struct pt_regs *regs, struct gt_utop *top)
{
	__u64 sp;

	top->lr = 0;
	top->nwords = 0;
	top->pad = 0;
	if (!regs) { /* no ring byte left as it was (the flight codec reads all) */
		__builtin_memset(top->words, 0, sizeof(top->words));
		return;
	}
#if defined(__TARGET_ARCH_arm64)
	top->lr = GT_REGS_FIELD(regs, regs[30]);
#endif
	sp = GT_REGS_FIELD(regs, sp);
	if (sp && !bpf_probe_read_user(top->words, sizeof(top->words), (void *)sp))
		top->nwords = GT_UTOP_WORDS;
}

/* Before bpf_task_pt_regs(): the arch's task_pt_regs(), the pt_regs at the
 * top of the task's kernel stack (no padding on x86-64 or arm64).  The
 * stack's size is not in BTF: 16 KiB on both (4 KiB pages), 32 KiB with
 * KASAN, 64 KiB on arm64 with 64 KiB pages (RHEL's); what is saved at the
 * top proves which, so a wrong guess gives NULL, not another task's
 * numbers: x86-64's user segment selectors; arm64's EL0 mode bits with a
 * user pc and sp.  Only traced user threads ask, and they always have
 * user registers there. */
#define GT_THREAD_SIZES { 16384, 32768, 65536 }
#if defined(__TARGET_ARCH_x86)
#define GT_USER_CS 0x33 /* arch/x86/include/asm/segment.h __USER_CS: 64-bit user code */
#define GT_USER_DS 0x2b /* __USER_DS, the user stack segment */

static __always_inline int gt_user_regs_plausible(struct pt_regs *regs)
{
	return BPF_CORE_READ(regs, cs) == GT_USER_CS && BPF_CORE_READ(regs, ss) == GT_USER_DS;
}
#elif defined(__TARGET_ARCH_arm64)
#define GT_PSR_MODE_MASK 0x1f /* arch/arm64/include/uapi/asm/ptrace.h: EL0t = 0 */
#define GT_USER_VA_END (1ull << 52)

static __always_inline int gt_user_regs_plausible(struct pt_regs *regs)
{
	__u64 pc = BPF_CORE_READ(regs, pc), sp = BPF_CORE_READ(regs, sp);

	return (BPF_CORE_READ(regs, pstate) & GT_PSR_MODE_MASK) == 0 &&
	       pc && pc < GT_USER_VA_END && sp && sp < GT_USER_VA_END;
}
#else
static __always_inline int gt_user_regs_plausible(struct pt_regs *regs)
{
	return 0;
}
#endif

static __always_inline struct pt_regs *gt_stack_user_regs(void)
{
	const __u64 sizes[] = GT_THREAD_SIZES;
	__u64 stack = (__u64)BPF_CORE_READ(gt_current_task(), stack);

	if (!stack)
		return (struct pt_regs *)0;
	for (int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct pt_regs *regs = (struct pt_regs *)(stack + sizes[i] -
							  bpf_core_type_size(struct pt_regs));

		if (gt_user_regs_plausible(regs))
			return regs;
	}
	return (struct pt_regs *)0;
}

/* The saved user registers of the current task, or NULL when they cannot
 * be found.  Callers then do without (see gt_ustack_head). */
static __always_inline struct pt_regs *gt_current_user_regs(void)
{
	if (!gt_has_task_pt_regs())
		return gt_stack_user_regs();
	return (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
}

/* Per-CPU variables of the kernel, found without kallsyms: a kernel built
 * without CONFIG_KALLSYMS_ALL (Debian's) lists no data symbols, so typed
 * __ksym variables fail to load there.  Every static per-CPU variable sits
 * at the same distance from `runqueues` in each CPU's copy of the per-CPU
 * section, and user space reads those distances from the .data..percpu
 * section of the kernel's BTF (gt_capture_percpu_offsets); 0 = unknown.
 * The runqueue of this CPU is current's: se.cfs_rq->rq.  That field needs
 * CONFIG_FAIR_GROUP_SCHED (every systemd distribution has it); without it
 * the variables read as unknown. */
const volatile __s64 preempt_count_from_rq = 0; /* __preempt_count, or
						 * pcpu_hot.preempt_count */
const volatile __s64 hrtimer_bases_from_rq = 0;

struct cfs_rq___gt {
	struct rq *rq;
} __attribute__((preserve_access_index));
struct sched_entity___gt {
	struct cfs_rq___gt *cfs_rq;
} __attribute__((preserve_access_index));
struct task_struct___gt {
	struct sched_entity___gt se;
} __attribute__((preserve_access_index));

/* This CPU's struct rq, or 0 when it cannot be found. */
static __always_inline __u64 gt_this_rq(void)
{
	struct task_struct___gt *cur = (void *)bpf_get_current_task();
	struct rq *rq;

	if (!bpf_core_field_exists(cur->se.cfs_rq))
		return 0;
	rq = (struct rq *)BPF_CORE_READ(cur, se.cfs_rq, rq);
	/* a runqueue knows its CPU: a wrong pointer must not pass for it */
	if (!rq || BPF_CORE_READ(rq, cpu) != (int)bpf_get_smp_processor_id())
		return 0;
	return (__u64)rq;
}

/* The preempt count of this CPU, whose HARDIRQ/SOFTIRQ/NMI fields say
 * which context a program runs in; 0 (task context) when unknown.  arm64
 * keeps it in thread_info; x86 per CPU, in __preempt_count except from
 * Linux 6.2 (commit 64701838bf05, "x86/percpu: Move preempt_count next to
 * current_task") to 6.15 (commit 46e8fff6d45f, "x86: Remove pcpu_hot"),
 * in pcpu_hot.preempt_count (user space resolves which). */
static __always_inline int gt_preempt_count(__u64 rq)
{
#if defined(__TARGET_ARCH_arm64)
	/* through gt_current_task(): bpf_get_current_task_btf() is 5.11+ */
	return GT_TASK_FIELD(gt_current_task(), thread_info.preempt.count);
#else
	int pc = 0;

	if (!rq || !preempt_count_from_rq)
		return 0;
	bpf_probe_read_kernel(&pc, sizeof(pc), (void *)(rq + preempt_count_from_rq));
	return pc;
#endif
}

/* Whether hrtimer_interrupt() runs on this CPU: hrtimer_cpu_base.in_hrtirq
 * (there since Linux 3.19) of the per-CPU hrtimer_bases.  A wakeup inside
 * it is a high-resolution timer's expiry (nanosleep, a timeout of futex,
 * poll, epoll).  0 when unknown. */
struct hrtimer_cpu_base___gt {
	unsigned int in_hrtirq: 1;
} __attribute__((preserve_access_index)); /* vmlinux.h's type is too aligned
					   * for clang 14's bitfield relocation */

static __always_inline int gt_in_hrtimer_irq(__u64 rq)
{
	struct hrtimer_cpu_base___gt *b;

	if (!rq || !hrtimer_bases_from_rq)
		return 0;
	b = (void *)(rq + hrtimer_bases_from_rq);
	return BPF_CORE_READ_BITFIELD_PROBED(b, in_hrtirq);
}

/* Whether a task blocked but is left on its runqueue until its lag is
 * spent: Linux 6.12 (commit 152e11f6df29, "sched/fair: Implement delayed
 * dequeue") keeps on_rq set for such a task, so on_rq alone no longer says
 * it is going to sleep.  0 before. */
static __always_inline int gt_sched_delayed(struct task_struct *p)
{
	if (!bpf_core_field_exists(p->se.sched_delayed))
		return 0;
	return BPF_CORE_READ(p, se.sched_delayed);
}

/* One step of the user stack key's hash. */
static __always_inline __u64 gt_mix(__u64 h, __u64 v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 31);
}

/* The frame walk's per-CPU scratch (common.bpf.h gt_ustack_walk): a copy of a window of
 * the stack, GT_UWALK_WIN bytes aligned to their size (so within one
 * page), and a frame read alone. */
#define GT_UWALK_WIN 1024

struct gt_uframe {
	__u64 next, ret;
};

/* Walks nest: a walk in a program an interrupt or NMI ran on top of
 * another's (a CPU sample, a softirq's wakeup) must not touch the window
 * or the frame of the walk it interrupted.  Each level of nesting reads
 * frames alone into a slot of its own; only the outermost copies windows
 * (an interrupt ends before what it interrupted resumes, so a count of
 * the walks under way is enough). */
#define GT_UWALK_LEVELS 4

struct gt_uwalk_win {
	__u64 base;            /* the window copied in b, or 1: none */
	__u32 busy;            /* walks under way on this CPU */
	__u32 pad;
	struct gt_uframe one[GT_UWALK_LEVELS]; /* a frame read alone, by level */
	__u8 b[GT_UWALK_WIN];
};

#if defined(__TARGET_ARCH_x86)
/* The user addresses one top-level page-table entry maps with 4-level
 * paging (PGDIR_SHIFT 39); with 5-level paging the first entry maps more
 * (2^48), which holds all of [0, 2^39) too. */
#define GT_PGD0_SPAN (1ull << 39)
#define GT_PAGE_PRESENT 0x1 /* arch/x86/include/asm/pgtable_types.h _PAGE_PRESENT */

/* Whether nothing at all is mapped under GT_PGD0_SPAN for the current
 * task: its mm's first top-level page-table entry is not present, so a read
 * of a frame there faults.  A frame read runs with page faults disabled
 * (bpf_probe_read_user, and perf_callchain_user under bpf_get_stackid
 * alike): a page not present fails it, whatever the VMAs say.  With
 * page-table isolation mm->pgd is the kernel's copy, whose user entries
 * are the user copy's (plus NX).  0 = not known (no mm: the reads tell).
 * Plain loads from 5.11 (the current task is a BTF pointer), three
 * probe-reads before; asked only when a walk reaches such a frame (the
 * walk is a global function, verified once: its paths are few). */
static __always_inline int gt_pgd0_absent(void)
{
	struct task_struct *t = gt_current_task();
	__u64 e = GT_PAGE_PRESENT;
	struct mm_struct *mm;
	pgd_t *pgd;

	if (gt_has_current_task_btf()) {
		mm = t->mm;
		pgd = mm ? mm->pgd : 0;
		if (!pgd)
			return 0;
		e = pgd->pgd;
	} else {
		pgd = BPF_CORE_READ(t, mm, pgd);
		if (!pgd || bpf_probe_read_kernel(&e, sizeof(e), pgd))
			return 0;
	}
	return !(e & GT_PAGE_PRESENT);
}

/* The frame at fp, {saved fp, return address}: from the copy of the stack
 * window that holds it, copied first unless win holds it already; a frame
 * astride two windows (or unaligned, or when its window cannot be read) is
 * read alone, as perf_callchain_user() reads it.  NULL where the kernel's
 * walk stops (the frame is unreadable).  Exact: a window lies within one
 * page, a page reads whole or not at all, and bpf_probe_read_user never
 * leaves part of a copy, so a frame taken from a window is what reading it
 * alone would give.  Also NULL for fp = 0 and a low fp that cannot be
 * read (gt_pgd0_absent): the kernel's walk would stop there too. */
static __always_inline struct gt_uframe *gt_uframe_at(struct gt_uwalk_win *win, __u64 fp,
						      int per_frame, struct gt_uframe *one)
{
	__u64 start = fp & ~(__u64)(GT_UWALK_WIN - 1), off = fp & (GT_UWALK_WIN - 1);

	/* fp = 0, or [fp, fp + 16) under GT_PGD0_SPAN where nothing is
	 * mapped there: asked only of such a low fp (the end of a main
	 * thread's chain), not at every walk */
	if (fp <= GT_PGD0_SPAN - 16 && (!fp || gt_pgd0_absent()))
		return 0;
	if (!per_frame && !(off & 7) && off <= GT_UWALK_WIN - sizeof(struct gt_uframe)) {
		if (start != win->base)
			win->base = bpf_probe_read_user(win->b, GT_UWALK_WIN, (void *)start) ? 1 : start;
		if (start == win->base)
			return (struct gt_uframe *)(win->b + off);
	}
	if (bpf_probe_read_user(one, sizeof(*one), (void *)fp))
		return 0;
	return one;
}

/* A 64-bit key for the user stack that bpf_get_stackid(BPF_F_USER_STACK)
 * would record now: the same walk as x86's perf_callchain_user() (regs->ip,
 * then the return address of each frame up the rbp chain, up to `depth`
 * entries, stopping at the first frame it cannot read), hashed instead of
 * stored.  0 = no key (not a 64-bit user task).  The kernel's walk usually
 * ends by faulting on the null frame pointer that ends every chain, which
 * costs microseconds in a VM; this walk stops before reading address 0,
 * and before reading a low address (under 512 GiB) where the task's page
 * tables map nothing: the main thread of a C program (PIE, so mapped far
 * above) usually ends its chain on a small integer that glibc's
 * __libc_start_call_main left in rbp, and reading it faulted at every
 * block (1.5 of the 2.2 us of a switch in the loopback ping-pong).
 *
 * The frames are read a window of stack at a time (gt_uframe_at; a
 * bench's per_frame: one read per frame): a probe-read costs about as
 * much however few bytes it copies, and the frames of a blocked thread
 * usually lie within a few hundred bytes above its fp.
 * The key is the same either way (tests/unit/test_capture.c compares the
 * two walks on deep stacks: GT_PARTS_UWALK_CHECK).
 *
 * In parts: gt_ustack_head() reads the registers (h: the key so far,
 * 0 = no key), common.bpf.h's gt_ustack_walk() follows the chain from fp,
 * a frame at a time with gt_uframe_at() (both global functions there:
 * inlined, the verifier walked the loop again for every path that reached
 * it, 20 times the instructions). */
static __always_inline __u64 gt_ustack_head(struct pt_regs *regs, __u64 *fp)
{
	if (!regs || GT_REGS_FIELD(regs, cs) != GT_USER_CS)
		return 0;
	*fp = GT_REGS_FIELD(regs, bp);
	return gt_mix(0x6a09e667f3bcc908ull, GT_REGS_FIELD(regs, ip));
}

#else
/* the frame walk above is x86's; elsewhere always walk (no key) */
static __always_inline __u64 gt_ustack_head(struct pt_regs *regs, __u64 *fp)
{
	return 0;
}

static __always_inline struct gt_uframe *gt_uframe_at(struct gt_uwalk_win *win, __u64 fp,
						      int per_frame, struct gt_uframe *one)
{
	return 0;
}
#endif

/* The first word of mm_struct.flags (its dumpable bits).  Linux 6.17
 * (commit "mm: convert mm_struct.flags to a bitmap", mm_flags_t) made the
 * unsigned long a struct holding an array of them: a CO-RE read of one type
 * does not relocate against the other, so each layout is read only where
 * it exists. */
struct mm_struct___flags_word {
	unsigned long flags;
} __attribute__((preserve_access_index));

static __always_inline unsigned long gt_mm_flags_word(struct mm_struct *mm)
{
	unsigned long w = 0;

	if (bpf_core_field_exists(((struct mm_struct___flags_word *)mm)->flags))
		bpf_core_read(&w, sizeof(w), &((struct mm_struct___flags_word *)mm)->flags);
	else
		bpf_core_read(&w, sizeof(w), &mm->flags);
	return w;
}

#endif
