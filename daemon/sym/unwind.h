/* DWARF unwinding of a copied user stack (--call-graph=dwarf): from the
 * registers and the slice of stack BPF copied where the stack was taken
 * (bpf/ustack.bpf.h), the return addresses of every frame, found through
 * the call-frame information of the process's binaries (.eh_frame, and
 * .debug_frame where the binary itself carries it), as perf's
 * --call-graph dwarf does (its util/unwind-libdw.c): libdwfl, told the
 * process's modules from /proc/PID/maps, reads the initial registers and
 * the stack's words through callbacks that answer from the copy only.
 * So a frame whose CFA lies past the copy ends the stack there.
 *
 * Binaries are opened inside the process's root without following links
 * (safe_open.h), as the symbolizer opens them; the vDSO from the process's
 * memory, through libdwfl.  One libdwfl session per process, kept for
 * the next stacks; told the maps again when a stack starts in no module
 * (a library loaded since), at most every GT_UNWIND_REREPORT_NS.
 *
 * Native 64-bit code of this machine only (x86-64, arm64).  Thread
 * safety: none; one unwinder per engine thread. */
#ifndef GT_SYM_UNWIND_H
#define GT_SYM_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define GT_UNWIND_REGS 33 /* as GT_UREGS: the arch's DWARF registers */
#define GT_UNWIND_REREPORT_NS 100000000ull

struct gt_unwinder;

/* What BPF copied: the registers in the arch's DWARF numbering, the
 * instruction pointer, and size bytes of stack that were at sp. */
struct gt_unwind_in {
	pid_t tgid, tid;
	uint64_t ip, sp;
	const uint64_t *regs;   /* GT_UNWIND_REGS */
	const uint8_t *stack;
	size_t size;
};

struct gt_unwinder *gt_unwinder_new(void);
void gt_unwinder_free(struct gt_unwinder *u);

/* The stack's frames into ips (at most max): ips[0] = the interrupted
 * instruction, then return addresses, as a frame-pointer walk gives them.
 * Returns how many (>= 1 when ip is known), or -errno. */
int gt_unwind(struct gt_unwinder *u, const struct gt_unwind_in *in, uint64_t *ips, int max);

/* Process tgid exec'd at exec_ns (CLOCK_MONOTONIC, as BPF's timestamps):
 * forgets its libdwfl session if the session read the maps before then
 * (the old image's).  One read since is the new image's and is kept: the
 * exec record is read after copies of other CPUs' rings, seconds after
 * the exec when the rings are read behind (qemu), and by then the process
 * may be gone: no session could be opened again, and every later copy
 * would unwind to its first frame only. */
void gt_unwinder_forget(struct gt_unwinder *u, pid_t tgid, uint64_t exec_ns);

#endif
