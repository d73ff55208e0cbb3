/* The event ABI between the BPF programs (bpf/gotraced.bpf.c) and user space.
 *
 * Fixed-width fields only, no kernel includes, so both sides compile it.
 * Every record in a ring buffer starts with struct gt_kev_hdr; `type` says
 * which struct it is.  hdr.tid/tgid are the task the event is about (for a
 * switch: the task switched out, for a wakeup: the waker, i.e. current).
 * Timestamps are bpf_ktime_get_ns() (CLOCK_MONOTONIC, ns).
 * `sessions` is the bit mask of recording sessions the event belongs to.
 * Stack ids index the stack-trace maps; negative = no stack.
 *
 * Changing a struct here changes the ABI: bump GT_KEV_ABI_VERSION.
 */
#ifndef GOTRACED_BPF_ABI_H
#define GOTRACED_BPF_ABI_H

#define GT_KEV_ABI_VERSION 12
#define GT_COMM_LEN 16
#define GT_MAX_SESSIONS 32
#define GT_STACK_DEPTH 127 /* frames kept per stack-trace map entry */
/* A stack id with this bit is in the spill map (see stack_id() in
 * bpf/common.bpf.h), the rest of it the id there. */
#define GT_STACK_SPILL 0x40000000
/* A user stack id with this bit was not taken by BPF: the heap interposer
 * took the allocation's stack in the process (--heap interpose), and
 * memtrack keeps its return addresses under the rest of the id. */
#define GT_STACK_INTERPOSED 0x20000000
/* A user stack id with this bit names a copy of the stack, not a walk
 * (--call-graph=dwarf): a GT_KEV_USTACK record with this id came just
 * before, in the same ring, and user space unwinds it from the binaries'
 * CFI (daemon/sym/unwind.h); capture replaces the id in the records that
 * follow with the unwound stack's own (daemon/engine/dwarf_stacks.c). */
#define GT_STACK_DWARF 0x10000000
#define GT_STACK_DWARF_SEQ 0x07ffffff /* the copy's sequence number */
/* A user stack id with this bit names a CPython thread's stack: a
 * GT_KEV_PYSTACK record with this id came just before, in the same ring,
 * with the native stack's id and the Python frames (bpf/python.bpf.h);
 * capture replaces it like a copy's (daemon/engine/py_stacks.c). */
#define GT_STACK_PY 0x08000000

/* What a recorder that loads the programs for known sessions only (gotracectl
 * record, embedded) says none of them will use, in the programs' read-only
 * `loaded_without`: the verifier then drops that code, and verifies less at
 * start (docs/design.md, "Cost").  Sessions selected by cgroup, sessions of
 * a non-root owner (the ptrace rule), --call-graph=dwarf copies, every
 * process of the machine (record -a).  User space refuses a session that
 * would need what was left out (daemon/capture/filter.c). */
#define GT_WITHOUT_CGROUPS 0x01
#define GT_WITHOUT_OWNERS  0x02
#define GT_WITHOUT_DWARF   0x04
#define GT_WITHOUT_ALL     0x08

/* Parts of the hot programs a `make bench` run may leave out to time them
 * (bpf/gotraced.bpf.c parts_off; never in a real recording): the user
 * stack walk, the syscall entry written at a wakeup or fork, or carried
 * by the switch record where it blocks (late entry), the copy of the stack's top words, the wakeup's context
 * bookkeeping (interrupt, loopback, racing), the comm copies of a switch,
 * the main record (reservation, fill, submit), and everything after the
 * target filter. */
#define GT_PARTS_OFF_USTACK    0x01
#define GT_PARTS_OFF_LATE      0x02
#define GT_PARTS_OFF_UTOP      0x04
#define GT_PARTS_OFF_WAKEFLAGS 0x08
#define GT_PARTS_OFF_COMM      0x10
#define GT_PARTS_OFF_RECORD    0x20
#define GT_PARTS_OFF_ALL       0x40
/* Not parts: how the user frame walk reads frames (bpf/common.bpf.h
 * uwalk_mode, set from the same knob, bits shifted down by 8): one
 * probe-read per frame, as before the walk copied windows (a bench's
 * comparison); or both ways, their keys compared (gt_bpf_stats uwalk_*: a
 * test's check). */
#define GT_PARTS_UWALK_PER_FRAME 0x100
#define GT_PARTS_UWALK_CHECK     0x200
#define GT_UWALK_PER_FRAME       0x1
#define GT_UWALK_CHECK           0x2

/* User space takes the fixed-width types from the kernel's UAPI header, the
 * same one libbpf's headers include, so any include order works. */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

enum gt_kev_type {
	GT_KEV_SWITCH = 1,    /* sched_switch */
	GT_KEV_WAKEUP,        /* sched_waking (or sched_wakeup_new, see flags) */
	GT_KEV_FORK,          /* sched_process_fork: a thread or process created */
	GT_KEV_EXEC,          /* sched_process_exec */
	GT_KEV_EXIT,          /* sched_process_exit: one thread exits */
	GT_KEV_SYS_ENTER,     /* raw_syscalls:sys_enter */
	GT_KEV_RENAME,        /* task_rename (prctl PR_SET_NAME, comm write) */
	GT_KEV_HEAP,          /* live heap bytes of a process changed (malloc probes) */
	GT_KEV_RSS,           /* rss_stat: resident memory of a process changed */
	GT_KEV_CPU_SAMPLE,    /* perf cpu-clock sample */
	GT_KEV_ALLOC_SAMPLE,  /* a sampled allocation, with its stack */
	GT_KEV_LEAVE,         /* a process left non-root sessions (privileges) */
	GT_KEV_USTACK,        /* a copy of the user stack and registers (dwarf) */
	GT_KEV_PYSTACK,       /* a CPython thread's Python frames (python.bpf.h) */
	GT_KEV_GOID,          /* the goroutine a Go thread runs (goid.bpf.h) */
	GT_KEV_TYPE_MAX,
};

struct gt_kev_hdr {
	__u64 ts;
	__u16 type;
	__u16 cpu;       /* CPU the event happened on */
	__u32 tid;
	__u32 tgid;
	__u32 sessions;
};

/* hdr = the task switched out (prev).  Emitted when prev or next is traced;
 * prev_traced/next_traced say which of them is (as session masks). */
#define GT_SWITCH_PREEMPT 0x1 /* the switch was a preemption (tp arg) */
/* prev (traced) blocks while a waker is inside try_to_wake_up() for it
 * (holds its pi_lock, or has set it TASK_WAKING): the GT_WAKEUP_RACING
 * waking of it before this switch lost its race and ends this block.
 * A traced task's first switch-out after such a waking without it: the
 * waker won, the task never slept (bpf/racing.bpf.h). */
#define GT_SWITCH_RACED   0x2
/* prev (traced) is switched out runnable because the CPU quota of its
 * cgroup or an ancestor is spent (CFS bandwidth throttling), not taken by
 * the next task; prev_cgroup names the throttled cgroup (bpf/throttle.bpf.h). */
#define GT_SWITCH_THROTTLED 0x4
/* prev (traced) blocks inside a syscall that some of its sessions saw no
 * entry of (they do not record every entry): the record is a struct
 * gt_kev_switch_entry, which carries what a GT_KEV_SYS_ENTER record
 * (GT_SYS_ENTER_AT_BLOCK) written just before it would have: for those
 * sessions, the syscall prev_sysnr entered at prev_ustack, and the top of
 * the stack.  One record instead of two, at every blocking syscall. */
#define GT_SWITCH_ENTRY 0x8
struct gt_kev_switch {
	struct gt_kev_hdr hdr;
	__u32 next_tid;
	__u32 next_tgid;
	__s64 prev_state;      /* task __state of prev; 0 = still runnable */
	__u32 prev_sessions;   /* sessions tracing prev (0 if none) */
	__u32 next_sessions;   /* sessions tracing next (0 if none) */
	__s32 prev_ustack;     /* prev's user stack where it stopped */
	__s32 prev_kstack;     /* prev's kernel stack when it blocked */
	__u32 flags;           /* GT_SWITCH_* */
	__s32 prev_sysnr;      /* syscall prev sleeps in, from its saved user
				* registers; -1 = none (a fault, preemption) */
	char prev_comm[GT_COMM_LEN];
	char next_comm[GT_COMM_LEN];
	__u64 prev_goid;       /* the goroutine prev ran, if it is Go (bpf/goid.bpf.h); 0 = none */
	__u64 prev_cgroup;     /* GT_SWITCH_THROTTLED: the throttled cgroup's id
				* (its directory's inode number in the cpu
				* controller's hierarchy); 0 = none, unknown */
};

/* Where the running goroutine of a Go process is (bpf/goid.bpf.h), per
 * tgid in the go_procs map: amd64, g at fsbase + tls_off; arm64, g in R28;
 * goid at g + goid_off. */
struct gt_go_proc {
	__s64 tls_off;
	__u32 goid_off;
	__u32 labels_off; /* g.labels (pprof labels), 0 = not read */
	__u32 m_off;      /* g.m, 0 = unknown: g0 and gsignal name no goroutine */
	__u32 curg_off;   /* m.curg: the goroutine an M on g0/gsignal works for */
};

/* hdr = a thread of a Go process, current: the goroutine it runs now, at
 * a CPU sample or a wakeup it makes (why), or at a switch-out when that
 * goroutine has pprof labels (the switch record then carries goid 0).
 * labels: the address of the labels' map (runtime.hmap: g.labels points
 * at a pprof labelMap, a map[string]string), 0 = none; its hash seed and
 * count tell a map freed and another allocated at the same address apart
 * (docs/mapping.md, "Goroutines of Go programs"). */
enum { GT_GOID_SWITCH = 1, GT_GOID_WAKE, GT_GOID_SAMPLE };
struct gt_kev_goid {
	struct gt_kev_hdr hdr;
	__u64 goid;
	__u64 labels;
	__u32 labels_hash0;
	__u32 labels_count;
	__u32 why;             /* GT_GOID_* */
	__u32 pad;
};

/* hdr = the waker (current; may be untraced or an idle/irq context, tid 0).
 * Emitted when the target is traced.  A wakeup from interrupt context
 * (GT_WAKEUP_IN_IRQ) has no waker task: hdr names the task it interrupted,
 * which woke no one (waker_ustack is then -1). */
#define GT_WAKEUP_NEW     0x1  /* sched_wakeup_new: first wakeup of a new task */
#define GT_WAKEUP_HARDIRQ 0x2  /* from a hardware interrupt handler */
#define GT_WAKEUP_SOFTIRQ 0x4  /* from a softirq (timer wheel, network rx, block) */
#define GT_WAKEUP_NMI     0x8  /* from an NMI (perf, watchdog) */
#define GT_WAKEUP_TIMER   0x10 /* with HARDIRQ: inside hrtimer_interrupt(), a timer expired */
#define GT_WAKEUP_IN_IRQ (GT_WAKEUP_HARDIRQ | GT_WAKEUP_SOFTIRQ | GT_WAKEUP_NMI)
/* The target blocked (off its runqueue, or left on it with its dequeue
 * delayed) but is still on its CPU: it is switching out to sleep, and its
 * sched_switch comes after this wakeup (a wakeup racing the block). */
#define GT_WAKEUP_SWITCHING 0x20
/* From the receive of a packet that came in on a loopback device (a NET_RX
 * softirq).  Without GT_WAKEUP_SOFTIRQ: the softirq ran in the packet's
 * sender's own context, inside its send (hdr = the sender, with its stack
 * if traced; see GT_WAKEUP_SENDER): the wakeup is the sender's.  With it:
 * the sender is not known (sent from a softirq: an ACK, a retransmit), or
 * the softirq ran elsewhere (ksoftirqd): G 0. */
#define GT_WAKEUP_LOOPBACK  0x40
/* The target had begun to block (its state says so) but is still queued
 * on its CPU, running: between set_current_state() and the dequeue in
 * __schedule(), and the waker is not the target itself nor an interrupt
 * on its CPU (those wakeups complete at once: no flag).  Whether it blocks is decided under its runqueue lock
 * later: if the waker gets there first the target goes on running, else
 * it switches out and the wakeup completes after that switch.  Its
 * next switch-out says which (GT_SWITCH_RACED; bpf/racing.bpf.h). */
#define GT_WAKEUP_RACING    0x80
/* Not a sched_waking: the sched_wakeup of a target whose waking was
 * GT_WAKEUP_RACING (hdr = whoever is current then, not a waker; no stack):
 * the wakeup is complete.  If the target switched out to sleep since the
 * waking, that waking ended its block.  No longer written (the
 * sched_wakeup program is gone: GT_SWITCH_RACED says it); still read. */
#define GT_WAKEUP_DONE      0x100
/* With GT_WAKEUP_LOOPBACK, without GT_WAKEUP_SOFTIRQ: the sender (hdr,
 * current) is not traced by every session tracing the target, and the
 * record is a struct gt_kev_wakeup_sender, naming it. */
#define GT_WAKEUP_SENDER    0x200
struct gt_kev_wakeup {
	struct gt_kev_hdr hdr;
	__u32 target_tid;
	__u32 target_tgid;
	__u32 target_cpu;
	__u32 flags;           /* GT_WAKEUP_* */
	__u32 waker_sessions;  /* sessions tracing the waker (0 if none) */
	__s32 waker_ustack;    /* waker's user stack, if the waker is traced */
};

/* A GT_KEV_WAKEUP record with GT_WAKEUP_SENDER: the loopback packet's
 * sender, hdr's tid and tgid, by its comm, for the sessions that may see
 * it (root's, and those whose owner passes the ptrace rule for it:
 * docs/security.md); only those name it.  Only this rare wakeup pays for
 * the longer record and the check. */
struct gt_kev_wakeup_sender {
	struct gt_kev_wakeup wk;
	__u32 sender_sessions; /* sessions that may name the sender */
	__u32 pad;
	char sender_comm[GT_COMM_LEN];
};

/* hdr = the parent (creator).  Emitted when the parent is traced; a child
 * outside the parent's thread group is added to the filter in BPF. */
struct gt_kev_fork {
	struct gt_kev_hdr hdr;
	__u32 child_tid;
	__u32 child_tgid;
	__s32 parent_ustack;
	__u32 pad;
	char child_comm[GT_COMM_LEN];
};

/* hdr = the task after exec (its tid may change to the tgid: old_tid says
 * which thread called exec). */
struct gt_kev_exec {
	struct gt_kev_hdr hdr;
	__u32 old_tid;
	__u32 pad;
	char comm[GT_COMM_LEN];
	char filename[128];   /* truncated */
};

/* hdr = the exiting thread. */
struct gt_kev_exit {
	struct gt_kev_hdr hdr;
	__s32 exit_code;
	__u32 group_dead;     /* the last thread of its process */
};

/* hdr = the thread whose credentials were found changed; hdr.sessions =
 * the non-root sessions its whole process just left: from this record on,
 * nothing of that process reaches them (bpf/common.bpf.h, leave_if_privileged). */
#define GT_LEAVE_CREDS       0x1 /* ids differ from the session owner's */
#define GT_LEAVE_UNDUMPABLE  0x2 /* not dumpable (setuid/setgid/capability exec) */
#define GT_LEAVE_CAPS        0x4 /* holds permitted capabilities */
struct gt_kev_leave {
	struct gt_kev_hdr hdr;
	__u32 why;            /* GT_LEAVE_* */
	__u32 pad;
};

/* The top of a user stack at syscall entry, for the one frame a
 * frame-pointer walk loses there: the caller of a function built without
 * frame pointers (libc's syscall wrappers).  Its return address is in one
 * of these words, or in the link register, while the function runs; user
 * space reads which one from the function's DWARF CFI (daemon/engine/
 * caller.c).  64 bytes hold it in glibc's wrappers of the calls that block
 * (read, write, recv*, send*, accept4, poll, epoll_wait: sp+0 single-
 * threaded, sp+24..sp+56 on their cancellable path). */
#define GT_UTOP_WORDS 8
struct gt_utop {
	__u64 lr;             /* arm64: the link register (x30); 0 elsewhere */
	__u32 nwords;         /* words read: GT_UTOP_WORDS, or 0 (unreadable) */
	__u32 pad;
	__u64 words[GT_UTOP_WORDS]; /* [sp, sp + 8 * GT_UTOP_WORDS) */
};

/* hdr = current.  Written at the entry itself for the sessions that record
 * every entry; for the others, where a syscall wakes a traced task or
 * forks (GT_SYS_ENTER_CALLER_ONLY, before that record: no GoSysCall, only
 * the wrapper's caller for the waker's or parent's stack).  Where the
 * syscall blocks, the switch record carries the entry instead
 * (GT_SWITCH_ENTRY, struct gt_kev_switch_entry); the translator rebuilds
 * it there, flags GT_SYS_ENTER_AT_BLOCK, as one written just before. */
#define GT_SYS_ENTER_AT_BLOCK    0x1
#define GT_SYS_ENTER_CALLER_ONLY 0x2
struct gt_kev_sys_enter {
	struct gt_kev_hdr hdr;
	__s64 nr;
	__s32 ustack;
	__u32 flags;          /* GT_SYS_ENTER_* */
	struct gt_utop top;
};

/* A GT_KEV_SWITCH record with GT_SWITCH_ENTRY: the syscall entry of the
 * sessions entry_sessions (of prev_sessions) folded into the switch where
 * it blocks; nr is sw.prev_sysnr and its stack sw.prev_ustack.  Only such
 * a switch pays for the longer record. */
struct gt_kev_switch_entry {
	struct gt_kev_switch sw;
	__u32 entry_sessions;  /* sessions the entry is for (never 0) */
	__u32 pad;
	struct gt_utop top;
};

/* hdr = the renamed task (current). */
struct gt_kev_rename {
	struct gt_kev_hdr hdr;
	char oldcomm[GT_COMM_LEN];
	char newcomm[GT_COMM_LEN];
};

/* hdr = current; live bytes of hdr.tgid's heap after the change. */
struct gt_kev_heap {
	struct gt_kev_hdr hdr;
	__u64 live_bytes;
	__u64 limit_bytes;    /* cgroup memory limit, 0 if none known */
};

/* hdr = the task whose mm changed; bytes = file+anon+shmem pages * page size */
struct gt_kev_rss {
	struct gt_kev_hdr hdr;
	__u64 rss_bytes;
};

/* hdr = the sampled task. */
struct gt_kev_cpu_sample {
	struct gt_kev_hdr hdr;
	__s32 ustack;
	__s32 kstack;
};

/* hdr = the allocating task. */
struct gt_kev_alloc_sample {
	struct gt_kev_hdr hdr;
	__u64 size;
	__u64 addr;
	__s32 ustack;
	__u32 pad;
};

/* hdr = current.  --call-graph=dwarf: what perf copies for its own DWARF
 * mode, where a user stack is taken: the task's user registers and the
 * first `size` bytes of its stack from sp (the record is that much
 * longer; size is a multiple of 8, at most GT_DWARF_STACK_MAX, smaller
 * than asked where the stack ends before).  regs are in the arch's DWARF
 * numbering: x86-64 rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip (0..16);
 * arm64 x0..x30, sp (0..31).  Only capture reads it (variable-sized, it
 * never reaches a merge slot): see GT_STACK_DWARF. */
#define GT_UREGS 33
#define GT_DWARF_STACK_MAX 16384
#define GT_DWARF_STACK_DEFAULT 8192 /* perf's --call-graph dwarf default */
struct gt_kev_ustack {
	struct gt_kev_hdr hdr;
	__u32 id;             /* GT_STACK_DWARF | sequence number */
	__u32 size;           /* stack bytes that follow regs */
	__u64 ip;
	__u64 sp;
	__u64 regs[GT_UREGS];
	/* __u8 stack[size]; */
};

/* A CPython process (user space fills the py_procs map by tgid, from
 * the interpreter's version: daemon/sym/python.c): where _PyRuntime is
 * and the offsets the walk follows.  Every thread state of the first
 * interpreter (runtime + interp_head, then interp + threads_head, then
 * tstate + next) is compared by its native_tid with the current thread;
 * its frame is at tstate + cframe (then + current_frame if deref2), each
 * frame's code object at + code, its instruction word at + instr, its
 * caller at + previous, and its byte at + entry is entry_val in an entry
 * frame (3.11: is_entry 1; 3.12: owner FRAME_OWNED_BY_CSTACK, 3, the
 * evaluation loop's shim frame). */
struct gt_py_proc {
	__u64 runtime;
	__u16 interp_head, threads_head, tstate_next, native_tid;
	__u16 cframe, current_frame, code, previous;
	__u16 instr, entry;
	__u8 deref2, version_minor;
	__u8 entry_val, pad;  /* an entry frame's byte at + entry */
};

/* hdr = current.  The Python frames of a CPython thread, innermost first:
 * code object address, the raw instruction word (3.11: prev_instr, an
 * address in the code object), and whether the frame is the first of a
 * C call of the evaluation loop (gt_py_proc.entry_val).  The record has n
 * frames; only capture reads it (see GT_STACK_PY). */
#define GT_PY_FRAMES 48
struct gt_py_frame {
	__u64 code;
	__u64 instr;
};
struct gt_kev_pystack {
	struct gt_kev_hdr hdr;
	__u32 id;             /* GT_STACK_PY | sequence number */
	__s32 native;         /* the native stack's id (a copy's BPF id too) */
	__u32 n;              /* frames that follow */
	__u32 truncated;      /* more frames than GT_PY_FRAMES */
	__u64 entry;          /* bit i: frame i is an entry frame */
	struct gt_py_frame f[GT_PY_FRAMES];
};

/* Counters kept by the BPF programs in a per-CPU array (key 0), one per CPU. */
struct gt_bpf_stats {
	__u64 drops;          /* ring-buffer reservations that failed */
	__u64 stack_errors;   /* bpf_get_stackid() failures (map full, no stack) */
	__u64 uwalk_checks;   /* GT_UWALK_CHECK: user stack keys walked both ways */
	__u64 uwalk_mismatches; /* ... and the two keys differed */
};

/* The same failures by session bit: those of the records each session
 * wanted (one value per CPU, the session_drops map's only entry). */
struct gt_bpf_session_drops {
	__u64 n[GT_MAX_SESSIONS];
};

#ifndef __VMLINUX_H__
/* User space: any one record, aligned (ring records may not be), big
 * enough for the largest struct above. */
union gt_kev_any {
	struct gt_kev_hdr hdr;
	struct gt_kev_switch sw;
	struct gt_kev_switch_entry swe;
	struct gt_kev_wakeup wk;
	struct gt_kev_wakeup_sender wks;
	struct gt_kev_fork fork;
	struct gt_kev_exec exec;
	struct gt_kev_exit exit;
	struct gt_kev_sys_enter se;
	struct gt_kev_rename rn;
	struct gt_kev_heap heap;
	struct gt_kev_rss rss;
	struct gt_kev_cpu_sample cs;
	struct gt_kev_alloc_sample as;
	struct gt_kev_leave leave;
	struct gt_kev_goid goid;
};

/* User space: the size of event type `type`'s struct, 0 if unknown. */
static inline unsigned long gt_kev_size(unsigned type)
{
	switch (type) {
	case GT_KEV_SWITCH: return sizeof(struct gt_kev_switch);
	case GT_KEV_WAKEUP: return sizeof(struct gt_kev_wakeup);
	case GT_KEV_FORK: return sizeof(struct gt_kev_fork);
	case GT_KEV_EXEC: return sizeof(struct gt_kev_exec);
	case GT_KEV_EXIT: return sizeof(struct gt_kev_exit);
	case GT_KEV_SYS_ENTER: return sizeof(struct gt_kev_sys_enter);
	case GT_KEV_RENAME: return sizeof(struct gt_kev_rename);
	case GT_KEV_HEAP: return sizeof(struct gt_kev_heap);
	case GT_KEV_RSS: return sizeof(struct gt_kev_rss);
	case GT_KEV_CPU_SAMPLE: return sizeof(struct gt_kev_cpu_sample);
	case GT_KEV_ALLOC_SAMPLE: return sizeof(struct gt_kev_alloc_sample);
	case GT_KEV_LEAVE: return sizeof(struct gt_kev_leave);
	case GT_KEV_GOID: return sizeof(struct gt_kev_goid);
	/* GT_KEV_USTACK, GT_KEV_PYSTACK: 0, capture's alone (never in a
	 * merge slot) */
	}
	return 0;
}
#endif

#endif
