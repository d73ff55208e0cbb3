/* The caller a frame-pointer walk loses at a syscall: code built without
 * frame pointers (Debian's libc) leaves the frame-pointer register holding
 * its caller's frame, so the kernel's walk goes from the interrupted
 * instruction (frame 0, in read()) straight to the caller's caller, and
 * the caller (read_blocking()) is missing.  Its return address is still
 * where the call left it, and the function's DWARF CFI says where: in one
 * of the words at the stack pointer, or in the link register, which BPF
 * copies at syscall entry (struct gt_utop).
 *
 * The rule, in two steps so that the first is asked once per stack:
 *   gt_caller_slot   where frame 0's function keeps its return address
 *                    (its binary's CFI at frame 0; none without CFI, or
 *                    when the frame is addressed from a frame pointer,
 *                    which the walk follows already);
 *   gt_caller_insert the address found there becomes frame 1 only if it
 *                    lies in an executable mapping of the process and is
 *                    not frame 1 already.
 * So no frame is ever inserted outside the process's code, and only where
 * the unwinding information of the very instruction proves it is the
 * return address. */
#ifndef GT_ENGINE_CALLER_H
#define GT_ENGINE_CALLER_H

#include <stdint.h>

struct gt_symbolizer;

/* A slot of struct gt_utop (translate.h: GT_RA_LR, a word index) or
 * GT_RA_NONE, for the user stack of process tgid whose frame 0 is frame0. */
int gt_caller_slot(struct gt_symbolizer *sym, uint32_t tgid, uint64_t frame0);

/* Inserts caller as frame 1 of ips[0..n) when it fits the rule above and
 * n < max (ips has room for max); returns the new number of frames. */
int gt_caller_insert(struct gt_symbolizer *sym, uint32_t tgid, uint64_t *ips, int n, int max,
		     uint64_t caller);

#endif
