/* --call-graph=dwarf on the engine's side: the user stack copies capture
 * reads (GT_KEV_USTACK) are unwound as they are read, while the process
 * still has its mappings (sym/unwind.h), and each distinct stack of a
 * process is kept once under an id of its own (GT_STACK_DWARF | index),
 * which capture puts in the records in place of the copy's: the
 * translator caches stacks by id, so equal stacks must share one.  The
 * table lives as long as the engine, like the BPF stack maps' content
 * does while a session records.  The engine's thread only. */
#ifndef GT_ENGINE_DWARF_STACKS_H
#define GT_ENGINE_DWARF_STACKS_H

#include <stdint.h>
#include <sys/types.h>

struct gt_capture;
struct gt_dwarf_stacks;

/* The table, installed as capture's copy callback.  NULL: no memory. */
struct gt_dwarf_stacks *gt_dwarf_stacks_new(struct gt_capture *c);
void gt_dwarf_stacks_free(struct gt_dwarf_stacks *d);

/* The frames of id (GT_STACK_DWARF | index) into ips, at most max: ips[0]
 * the interrupted instruction, then return addresses.  -ENOENT if unknown. */
int gt_dwarf_stacks_get(const struct gt_dwarf_stacks *d, int32_t id, uint64_t *ips, int max);

/* Process tgid exec'd at exec_ns (the record's timestamp): its unwinding
 * session is stale if it was opened before (gt_unwinder_forget).  Told by
 * capture as the exec record is read from its ring (gt_capture_exec_cb). */
void gt_dwarf_stacks_forget(struct gt_dwarf_stacks *d, pid_t tgid, uint64_t exec_ns);

/* Copies unwound so far, and the time spent unwinding them (ns). */
void gt_dwarf_stacks_cost(const struct gt_dwarf_stacks *d, uint64_t *stacks, uint64_t *ns);

#endif
