#include "stacks.h"

#include <errno.h>
#include <string.h>

#include "caller.h"
#include "dwarf_stacks.h"
#include "py_stacks.h"
#include "capture/capture.h"
#include "sym/symbolize.h"
#include "translate/translate.h"

/* Frame 0 is where the task was interrupted; deeper frames are return
 * addresses, looked up one byte earlier so the call's line is reported. */
static uint64_t lookup_ip(uint64_t ip, int depth)
{
	return depth == 0 || ip == 0 ? ip : ip - 1;
}

/* A kernel stack is taken inside the tracepoint: its first frames are the
 * tracer's own (the BPF program, bpf_trace_run4, __traceiter_sched_switch),
 * not the task's, and are dropped. */
static int tracer_frame(const char *func)
{
	static const char *const prefixes[] = {"bpf_prog_", "bpf_trace_run", "__traceiter_",
					       "__bpf_trace_", "__probestub_", "bpf_get_stack"};

	for (size_t i = 0; func && i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(func, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

/* Whether user frame i ends the walk: a frame-pointer chain through code
 * built without frame pointers (libc) reads whatever the stack holds, so
 * the first return address in no executable mapping of the process ends
 * the stack there (garbage frames were 26% of nginx's).  Symbolizes
 * frame i into *s otherwise. */
static int broken_chain(struct gt_stack_resolver *r, uint32_t tgid, const uint64_t *ips, int i,
			int depth, struct gt_sym *s)
{
	return gt_symbolize_user(r->sym, (pid_t)tgid, lookup_ip(ips[i], depth), s) == -EFAULT;
}

/* The ips of a stack id: BPF's stack maps, or the interposer's (whose
 * frames are all return addresses: *first_depth = 1). */
static int stack_ips(struct gt_stack_resolver *r, int32_t id, int kernel, uint64_t *ips,
		     int *first_depth)
{
	*first_depth = 0;
	if (!kernel && (id & GT_STACK_DWARF))
		return gt_dwarf_stacks_get(r->dwarf, id, ips, GT_STACK_DEPTH);
	if (!kernel && (id & GT_STACK_INTERPOSED)) {
		*first_depth = 1;
		return r->user_stack ? r->user_stack(r->user_ctx, id, ips, GT_STACK_DEPTH) : -ENOENT;
	}
	return gt_capture_stack(r->capture, id, ips, GT_STACK_DEPTH);
}

/* A frame pointer that points at itself makes the kernel's walk repeat one
 * frame to the full depth (127 copies seen).  Recursion repeats return
 * addresses too, but ends before the depth limit: only a run of copies
 * that reaches the limit is a loop, and becomes one frame. */
static int trim_loop(const uint64_t *ips, int got)
{
	int start = got - 1;

	if (got < GT_STACK_DEPTH)
		return got;
	while (start > 0 && ips[start - 1] == ips[got - 1])
		start--;
	return start < got - 1 ? start + 1 : got;
}

static int append_frames(struct gt_stack_resolver *r, uint32_t tgid, int32_t id,
			 int kernel, uint64_t caller, struct gt_frame *out, int n, int max)
{
	uint64_t ips[GT_STACK_DEPTH + 1]; /* + the caller a walk lost */
	int got, d0;

	if (id < 0 || n >= max)
		return n;
	got = stack_ips(r, id, kernel, ips, &d0);
	if (got < 0) {
		r->unknown_ids++;
		return n;
	}
	int first = n;

	if (!kernel)
		got = trim_loop(ips, got);
	/* frame 0 of BPF's user stacks is the interrupted instruction; an
	 * unwound copy lost no caller */
	if (!kernel && d0 == 0 && !(id & GT_STACK_DWARF)) {
		int had = got;

		got = gt_caller_insert(r->sym, tgid, ips, got, GT_STACK_DEPTH + 1, caller);
		r->callers += got > had;
	}

	for (int i = 0; i < got && n < max; i++) {
		struct gt_sym s;

		if (ips[i] == 0)
			continue;
		if (kernel) {
			gt_symbolize_kernel(r->sym, lookup_ip(ips[i], i + d0), &s);
		} else if (broken_chain(r, tgid, ips, i, i + d0, &s)) {
			r->truncated++;
			break;
		}
		if (kernel && n == first && tracer_frame(s.func))
			continue;
		out[n].pc = ips[i];
		out[n].func = s.func;
		out[n].file = s.file;
		out[n].line = s.line;
		n++;
	}
	return n;
}

/* The user frames out[first..n) of a CPython thread, with its Python
 * frames py[0..npy) (innermost first) in place of the evaluation loop's
 * native frames, as py-spy --native shows them: each
 * _PyEval_EvalFrameDefault runs the Python frames down to an entry frame
 * (py_stacks.h).  Python frames no such native frame took (a native walk
 * cut short, an interpreter built otherwise) go outermost. */
static int interleave(struct gt_frame *out, int first, int n, int max,
		      const struct gt_py_named *py, int npy)
{
	struct gt_frame native[GT_STACK_DEPTH + 1];
	int nn = n - first < GT_STACK_DEPTH + 1 ? n - first : GT_STACK_DEPTH + 1, k = 0;

	memcpy(native, out + first, (size_t)nn * sizeof(*native));
	n = first;
	for (int i = 0; i < nn && n < max; i++) {
		if (k >= npy || !native[i].func || strcmp(native[i].func, "_PyEval_EvalFrameDefault")) {
			out[n++] = native[i];
			continue;
		}
		while (k < npy && n < max) {
			out[n++] = (struct gt_frame){py[k].pc, py[k].func, py[k].file, py[k].line};
			if (py[k++].entry)
				break;
		}
	}
	for (; k < npy && n < max; k++)
		out[n++] = (struct gt_frame){py[k].pc, py[k].func, py[k].file, py[k].line};
	return n;
}

int gt_resolve_stack(void *resolver, uint32_t tgid, int32_t ustack_id,
		     int32_t kstack_id, uint64_t caller, struct gt_frame *out, int max)
{
	struct gt_stack_resolver *r = resolver;
	uint64_t misses = gt_symbolizer_jit_misses(r->sym);
	const struct gt_py_named *py = NULL;
	int n, first, npy = 0, later = 0;

	gt_symbolizer_pending(r->sym); /* what is pending is this stack's */
	n = append_frames(r, tgid, kstack_id, 1, 0, out, 0, max);
	if (ustack_id >= 0 && (ustack_id & GT_STACK_PY)) {
		npy = gt_py_stacks_get(r->py, tgid, ustack_id, &ustack_id, &py, &later);
		if (npy < 0) {
			r->unknown_ids++;
			ustack_id = -1;
		}
	}
	first = n;
	n = append_frames(r, tgid, ustack_id, 0, caller, out, n, max);
	if (npy > 0)
		n = interleave(out, first, n, max, py, npy);
	/* named late: a JIT frame its perf map did not have, or a Python
	 * frame whose code object is still being read */
	r->unnamed = gt_symbolizer_jit_misses(r->sym) != misses || later;
	return n;
}

int gt_resolve_unnamed(void *resolver)
{
	return ((struct gt_stack_resolver *)resolver)->unnamed;
}

void gt_resolve_recheck(void *resolver, uint32_t tgid)
{
	gt_symbolizer_jit_recheck(((struct gt_stack_resolver *)resolver)->sym, (pid_t)tgid);
}

/* Frames of a stack gt_resolve_stack made, named again: its user frames
 * follow the kernel's ("[kernel]") and the synthetic ones ("[interrupt]"),
 * the first is looked up as it is, the others as return addresses. */
void gt_resolve_rename(void *resolver, uint32_t tgid, const struct gt_frame *in,
		       struct gt_frame *out, int n)
{
	struct gt_stack_resolver *r = resolver;
	int depth = 0;

	for (int i = 0; i < n; i++) {
		struct gt_sym s;
		unsigned line;

		out[i] = in[i];
		if (!strcmp(in[i].file, "[kernel]") || !strcmp(in[i].file, "[interrupt]"))
			continue;
		if (gt_py_stacks_rename(r->py, tgid, in[i].pc, &out[i].func, &out[i].file,
					&line) == 0) {
			out[i].line = line;
			continue;
		}
		if (gt_symbolize_user(r->sym, (pid_t)tgid, lookup_ip(in[i].pc, depth++), &s) == 0) {
			out[i].func = s.func;
			out[i].file = s.file;
			out[i].line = s.line;
		}
	}
}

int gt_resolve_ra_slot(void *resolver, uint32_t tgid, int32_t ustack_id)
{
	struct gt_stack_resolver *r = resolver;
	uint64_t ip;

	gt_symbolizer_pending(r->sym);
	if (ustack_id >= 0 && (ustack_id & GT_STACK_PY)) {
		const struct gt_py_named *py;
		int later;

		if (gt_py_stacks_get(r->py, tgid, ustack_id, &ustack_id, &py, &later) < 0)
			return GT_RA_NONE;
	}

	/* the interposer's stacks hold return addresses only; an unwound
	 * copy needs no caller found */
	if (ustack_id < 0 || (ustack_id & (GT_STACK_INTERPOSED | GT_STACK_DWARF)) ||
	    gt_capture_stack(r->capture, ustack_id, &ip, 1) != 1)
		return GT_RA_NONE;
	return gt_caller_slot(r->sym, tgid, ip);
}

uint64_t gt_resolve_pending(void *resolver)
{
	return gt_symbolizer_pending(((struct gt_stack_resolver *)resolver)->sym);
}

uint64_t gt_resolve_clock(void *resolver)
{
	(void)resolver;
	return gt_symbolizer_clock();
}
