/* Python frames of CPython threads (docs/mapping.md, "Python frames"):
 * where a user stack is taken for a thread of a process user space found
 * to be CPython (py_procs, filled from the interpreter's version by
 * daemon/sym/python.c), the thread's own PyThreadState is found in the
 * first interpreter's list by its native thread id (3.11's
 * _PyRuntime.gilstate.tstate_current is the GIL holder only, and a
 * blocked thread does not hold it), and its frame chain is copied as
 * (code object, instruction) pairs into a GT_KEV_PYSTACK record before
 * the event, whose stack id becomes the record's (GT_STACK_PY | seq).
 * User space names each code object once per process (daemon/sym/python.c)
 * and puts the Python frames in place of the evaluation loop's native
 * frames (daemon/engine/py_stacks.c), as py-spy --native does.
 *
 * Every read is a probe-read of the process's memory, bounded: at most
 * GT_PY_THREADS thread states and GT_PY_FRAMES frames.  A process whose
 * memory reads wrong gives wrong frames, never a fault. */
#ifndef GOTRACED_PYTHON_BPF_H
#define GOTRACED_PYTHON_BPF_H

#include "common.bpf.h"

#define GT_PY_THREADS 64 /* thread states compared, at most */
#define GT_PY_FRAME_READ 128 /* bytes of a frame read at once */

/* tgid -> the interpreter's layout; user space adds and deletes. */
GT_MAP(py_procs, BPF_MAP_TYPE_HASH, 4096, __u32, struct gt_py_proc);

struct gt_py_scratch {
	struct gt_kev_pystack r;
	__u8 frame[GT_PY_FRAME_READ + 8];
	__u32 seq;
};
GT_PERCPU_SLOT(py_scratch, struct gt_py_scratch);

static __always_inline __u64 gt_py_word(const struct gt_py_scratch *s, __u16 off)
{
	return *(const __u64 *)(s->frame + (off & (GT_PY_FRAME_READ - 1)));
}

static __always_inline __u64 gt_py_ptr(__u64 addr)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (const void *)addr))
		return 0;
	return v;
}

/* The current thread's PyThreadState, 0 if none (not yet, or no longer,
 * a Python thread; the interpreter not initialized). */
static __always_inline __u64 gt_py_tstate(const struct gt_py_proc *p, __u32 tid)
{
	__u64 interp = gt_py_ptr(p->runtime + p->interp_head), ts;

	if (!interp)
		return 0;
	ts = gt_py_ptr(interp + p->threads_head);
	for (int i = 0; i < GT_PY_THREADS && ts; i++) {
		if (gt_py_ptr(ts + p->native_tid) == tid)
			return ts;
		ts = gt_py_ptr(ts + p->tstate_next);
	}
	return 0;
}

/* Copies the current thread's Python frames into a GT_KEV_PYSTACK record
 * for mask, naming the native stack `native`; returns the record's id,
 * or native itself (not a CPython thread, no frame, ring full).  A global
 * function: verified once, on its own. */
__noinline __s32 gt_py_stack(__s32 native, __u32 mask)
{
	struct gt_py_scratch *s = percpu_slot(&py_scratch);
	__u64 pid_tgid = bpf_get_current_pid_tgid(), ts, frame;
	__u32 tgid = pid_tgid >> 32, cpu = bpf_get_smp_processor_id(), n = 0;
	struct gt_py_proc *p = bpf_map_lookup_elem(&py_procs, &tgid);
	void *ring;

	if (!s || !p)
		return native;
	ts = gt_py_tstate(p, (__u32)pid_tgid);
	if (!ts)
		return native;
	frame = gt_py_ptr(ts + p->cframe);
	if (p->deref2 && frame)
		frame = gt_py_ptr(frame + p->current_frame);
	s->r.entry = 0;
	for (int i = 0; i < GT_PY_FRAMES && frame; i++) {
		if (bpf_probe_read_user(s->frame, GT_PY_FRAME_READ, (const void *)frame))
			break;
		s->r.f[i].code = gt_py_word(s, p->code);
		s->r.f[i].instr = gt_py_word(s, p->instr);
		if (p->entry && s->frame[p->entry & (GT_PY_FRAME_READ - 1)] == p->entry_val)
			s->r.entry |= 1ull << i;
		frame = gt_py_word(s, p->previous);
		n = i + 1;
	}
	if (!n)
		return native;
	s->r.truncated = frame != 0;
	s->r.n = n;
	s->r.native = native;
	s->r.id = GT_STACK_PY | (s->seq++ & GT_STACK_DWARF_SEQ);
	s->r.hdr.ts = bpf_ktime_get_ns();
	s->r.hdr.type = GT_KEV_PYSTACK;
	s->r.hdr.cpu = cpu;
	s->r.hdr.tid = (__u32)pid_tgid;
	s->r.hdr.tgid = tgid;
	s->r.hdr.sessions = mask;
	ring = bpf_map_lookup_elem(&rings, &cpu);
	if (n > GT_PY_FRAMES) /* for the verifier: it is not */
		return native;
	if (!ring || bpf_ringbuf_output(ring, &s->r, sizeof(s->r) - sizeof(s->r.f) +
				       n * sizeof(s->r.f[0]), BPF_RB_NO_WAKEUP)) {
		count_drop(mask);
		return native;
	}
	return (__s32)s->r.id;
}

#endif
