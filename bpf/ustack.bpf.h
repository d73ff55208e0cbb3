/* --call-graph=dwarf on the BPF side: where a user stack is taken, the
 * task's user registers and a bounded slice of its stack from sp go to
 * this CPU's ring as one GT_KEV_USTACK record (gotraced.h), and the
 * record's id stands in for the stack id; user space unwinds the copy
 * from the binaries' .eh_frame/.debug_frame (daemon/sym/unwind.c), as
 * perf's --call-graph dwarf does.  docs/mapping.md, "Stacks without
 * frame pointers", says why the copy and not an unwinder in BPF.
 *
 * Only gotraced.bpf.c includes this file (the memory object's CPU samples
 * still walk frame pointers).  The copy is a global function, verified
 * once on its own; its regs argument is an address (a number), read with
 * a probe-read: the same code on kernels with bpf_task_pt_regs (a BTF
 * pointer) and without (compat.bpf.h finds the registers on the task's
 * kernel stack). */
#ifndef GOTRACED_USTACK_BPF_H
#define GOTRACED_USTACK_BPF_H

#include "common.bpf.h"
#include "python.bpf.h" /* Python frames of CPython threads */

/* Sessions that asked for --call-graph=dwarf, and the bytes of stack they
 * want (the largest any of them asked; a multiple of 8, at most
 * GT_DWARF_STACK_MAX).  Set by user space. */
volatile __u32 dwarf_sessions = 0;
volatile __u32 dwarf_bytes = 0;

#define GT_PT_REGS_MAX 512 /* bytes: x86-64's pt_regs is 168, arm64's 336 */
struct gt_ustack_scratch {
	struct gt_kev_ustack u;
	__u8 stack[GT_DWARF_STACK_MAX];
	__u8 raw[GT_PT_REGS_MAX];      /* the task's pt_regs, as saved */
	__u32 seq;  /* this CPU's next copy's number: its id, with
		     * GT_STACK_DWARF (ids are matched within a ring) */
};
GT_PERCPU_SLOT(ustack_scratch, struct gt_ustack_scratch);

#define GT_RAW_REG(s, f) (*(__u64 *)((s)->raw + bpf_core_field_offset(struct pt_regs, f)))

/* The saved user registers in raw, in the arch's DWARF order. */
static __always_inline void gt_dwarf_regs(struct gt_ustack_scratch *s)
{
	__u64 *r = s->u.regs;

	__builtin_memset(r, 0, sizeof(s->u.regs));
#if defined(__TARGET_ARCH_x86)
	r[0] = GT_RAW_REG(s, ax);
	r[1] = GT_RAW_REG(s, dx);
	r[2] = GT_RAW_REG(s, cx);
	r[3] = GT_RAW_REG(s, bx);
	r[4] = GT_RAW_REG(s, si);
	r[5] = GT_RAW_REG(s, di);
	r[6] = GT_RAW_REG(s, bp);
	r[7] = GT_RAW_REG(s, sp);
	r[8] = GT_RAW_REG(s, r8);
	r[9] = GT_RAW_REG(s, r9);
	r[10] = GT_RAW_REG(s, r10);
	r[11] = GT_RAW_REG(s, r11);
	r[12] = GT_RAW_REG(s, r12);
	r[13] = GT_RAW_REG(s, r13);
	r[14] = GT_RAW_REG(s, r14);
	r[15] = GT_RAW_REG(s, r15);
	r[16] = GT_RAW_REG(s, ip);
	s->u.ip = r[16];
	s->u.sp = r[7];
#elif defined(__TARGET_ARCH_arm64)
	/* x0..x30, sp, pc: the first 33 words of arm64's pt_regs */
	__u32 base = bpf_core_field_offset(struct pt_regs, regs);

	for (int i = 0; i < 31; i++)
		r[i] = *(__u64 *)(s->raw + base + 8 * i);
	r[31] = GT_RAW_REG(s, sp);
	s->u.ip = GT_RAW_REG(s, pc);
	s->u.sp = r[31];
#endif
}

/* Copies the user stack at regs (the address of the current task's saved
 * user registers) into a GT_KEV_USTACK record for the sessions in mask;
 * returns its id, or -1 (nothing readable, ring full: counted).  A stack
 * shorter than dwarf_bytes above sp (a thread near its stack's top) is
 * copied in what part of it reads: half, a quarter... down to 1/16th. */
__noinline __s32 gt_ustack_copy(__u64 regs_addr, __u32 mask)
{
	struct gt_ustack_scratch *s = percpu_slot(&ustack_scratch);
	__u32 cpu = bpf_get_smp_processor_id(), size = dwarf_bytes, seq;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct gt_bpf_stats *st;
	void *ring;

	if (!s || !regs_addr || bpf_core_type_size(struct pt_regs) > GT_PT_REGS_MAX)
		return -1;
	if (bpf_probe_read_kernel(s->raw, bpf_core_type_size(struct pt_regs), (void *)regs_addr))
		return -1;
	gt_dwarf_regs(s);
	if (size > GT_DWARF_STACK_MAX)
		size = GT_DWARF_STACK_MAX;
	size &= ~7u;
#pragma unroll
	for (int i = 0; i < 5; i++) {
		if (!size || !bpf_probe_read_user(s->stack, size, (void *)s->u.sp))
			break;
		size = (size >> 1) & ~7u;
		if (i == 4)
			size = 0;
	}
	seq = s->seq++;
	s->u.hdr.ts = bpf_ktime_get_ns();
	s->u.hdr.type = GT_KEV_USTACK;
	s->u.hdr.cpu = cpu;
	s->u.hdr.tid = (__u32)pid_tgid;
	s->u.hdr.tgid = pid_tgid >> 32;
	s->u.hdr.sessions = mask;
	s->u.id = GT_STACK_DWARF | (seq & GT_STACK_DWARF_SEQ);
	s->u.size = size;
	ring = bpf_map_lookup_elem(&rings, &cpu);
	if (size > GT_DWARF_STACK_MAX) /* for the verifier: it is not */
		return -1;
	if (!ring || bpf_ringbuf_output(ring, s, sizeof(s->u) + size, BPF_RB_NO_WAKEUP)) {
		st = my_stats();
		if (st)
			__sync_fetch_and_add(&st->drops, 1);
		count_drop(mask);
		return -1;
	}
	return (__s32)s->u.id;
}

/* The current task's user stack for the sessions in mask: a copy if one
 * of them wants --call-graph=dwarf, else the frame-pointer walk's id.
 * regs: its saved user registers (NULL: unknown, then the walk). */
static __always_inline __s32 user_stack(void *ctx, struct pt_regs *regs, __u32 mask)
{
	__u64 addr = 0;

	if (loaded_with(GT_WITHOUT_DWARF) && (mask & dwarf_sessions) && regs) {
		/* a global function takes scalars: the address, copied */
		bpf_probe_read_kernel(&addr, sizeof(addr), &regs);
		return gt_py_stack(gt_ustack_copy(addr, mask), mask);
	}
	return gt_py_stack(ustack_id(ctx, regs), mask);
}

#endif
