/* Turns the stack ids carried by kernel events into symbolized frames for
 * the trace: kernel frames (when the event has a kernel stack) first, then
 * the user frames, innermost first. */
#ifndef GT_SESSION_STACKS_H
#define GT_SESSION_STACKS_H

#include <stdint.h>

#include "writer/gt_writer.h"

struct gt_capture;
struct gt_symbolizer;

struct gt_stack_resolver {
	struct gt_capture *capture;
	struct gt_symbolizer *sym;
	/* stacks the heap interposer took in the process (ids with
	 * GT_STACK_INTERPOSED): their return addresses, or -ENOENT */
	int (*user_stack)(void *ctx, int32_t id, uint64_t *ips, int max);
	void *user_ctx;
	/* --call-graph=dwarf: the unwound copies (ids with GT_STACK_DWARF) */
	struct gt_dwarf_stacks *dwarf;
	/* CPython threads' stacks (ids with GT_STACK_PY): a native id and
	 * named Python frames, put in place of the evaluation loop's */
	struct gt_py_stacks *py;
	uint64_t unknown_ids;  /* ids the stack map no longer knew */
	uint64_t truncated;    /* user stacks cut at a frame in no mapping */
	uint64_t callers;      /* user stacks given the caller a walk lost */
	int unnamed;           /* the last gt_resolve_stack left JIT code unnamed */
};

/* Fills out (at most max frames); returns the number of frames.  caller:
 * see gt_stack_source (translate.h) and caller.h. */
int gt_resolve_stack(void *resolver, uint32_t tgid, int32_t ustack_id,
		     int32_t kstack_id, uint64_t caller, struct gt_frame *out, int max);

/* gt_stack_source.pending and .clock: whether the last stack or slot
 * given met a binary still loading (symbolize.h, gt_symbolizer_pending),
 * and the clock that moves when a load ends. */
uint64_t gt_resolve_pending(void *resolver);
uint64_t gt_resolve_clock(void *resolver);

/* gt_stack_source's late names (translate.h): unnamed, recheck, rename. */
int gt_resolve_unnamed(void *resolver);
void gt_resolve_recheck(void *resolver, uint32_t tgid);
void gt_resolve_rename(void *resolver, uint32_t tgid, const struct gt_frame *in,
		       struct gt_frame *out, int n);

/* gt_stack_source.ra_slot: where frame 0 of a user stack the BPF programs
 * took keeps its return address (caller.h), GT_RA_NONE if unknown. */
int gt_resolve_ra_slot(void *resolver, uint32_t tgid, int32_t ustack_id);

#endif
