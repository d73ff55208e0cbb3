/* Folder format/gomerge/: `gotracectl merge`, a Go runtime's own trace
 * (Go 1.22+, v2) and gotraced's kernel recording of the same process
 * (v1, threads as goroutines, CPUs as Ps) into one v2 file.  It may
 * include format/util/, format/wire/ and format/v2/; never daemon/,
 * bpf/ or a Linux header.  The rules are in docs/mapping.md, "A Go
 * runtime's trace with the kernel inside".
 *
 * Every byte of the runtime's events is kept (type, arguments, times);
 * only its event batches are re-framed where events are inserted between
 * two of an M's events (the deltas around them are recomputed), and each
 * generation gains one Strings batch for the names it adds.  What is added,
 * on the M (thread) the kernel saw and the goroutine the runtime says it
 * ran there:
 *  - a user region "kernel: ..." for each interval in which the runtime has
 *    the goroutine running and the kernel had its thread off the CPU
 *    (preempted, by whom when recorded; throttled by a cgroup's CPU quota,
 *    no one's doing; blocked outside a syscall), with a
 *    UserLog "kernel" at its start saying the detail (CPUs, stack top);
 *  - a UserLog "kernel" for each block of the thread inside a syscall of
 *    the runtime's (the time the runtime cannot see), written where the
 *    goroutine runs again after the syscall, on its M or the one it ran
 *    on next (a user event needs a P, which the M in a syscall may have
 *    lost);
 *  - a UserLog "kernel" where the thread came back on another CPU.
 *
 * Clock: a Go 1.22/1.23 runtime on Linux stamps events with nanotime()/64
 * (CLOCK_MONOTONIC, frequency 15625000), gotraced with CLOCK_MONOTONIC ns.
 * The merge checks that against the events both sides see: each kernel
 * off-CPU interval of a thread lies between two consecutive runtime events
 * of its M, which bounds the offset between the clocks; the bounds and the
 * intervals that break them are reported (gt_gm_result). */
#ifndef GT_GOMERGE_H
#define GT_GOMERGE_H

#include <stddef.h>
#include <stdint.h>

#include "v2/gt_v2.h"

/* Why a thread was off the CPU, as the kernel recording says. */
enum gt_gm_why { GT_GM_PREEMPT, GT_GM_BLOCK, GT_GM_SYSCALL, GT_GM_THROTTLED, GT_GM_NWHY };
extern const char *const gt_gm_why_names[GT_GM_NWHY];

struct gt_gm_result {
	uint64_t rt_counts[GT_V2_NTYPES]; /* the runtime's events, by type */
	uint64_t out_counts[GT_V2_NTYPES]; /* the merged file's, by type */
	uint64_t koff;          /* kernel off-CPU intervals of the runtime's Ms */
	uint64_t regions;       /* of them: while the runtime said running */
	uint64_t in_syscall;    /* of them: inside a runtime syscall */
	uint64_t idle;          /* of them: the M had no goroutine */
	uint64_t moved;         /* of in_syscall: logged where the goroutine ran
				 * next on another M */
	uint64_t unplaced;      /* in a syscall whose goroutine never ran
				 * again in the trace: no log */
	uint64_t migrations;
	uint64_t violations;    /* a runtime event inside a kernel off-CPU interval */
	uint64_t bounds;        /* intervals that bounded the offset */
	int64_t off_lo, off_hi; /* kernel ns - runtime ns lies in [lo, hi] */
	uint64_t ns_by_why[GT_GM_NWHY]; /* running but off-CPU, by cause */
	char error[256];
};

/* Merges: rt is the runtime's v2 trace, k gotraced's v1 recording.  The
 * merged file is written through write (0 or -errno).  0, -EINVAL (error
 * says why) or -ENOMEM; on failure nothing more is written and the caller
 * drops the partial output. */
typedef int (*gt_gm_write_fn)(void *ctx, const void *p, size_t n);
int gt_gomerge(const uint8_t *rt, size_t rtlen, const uint8_t *k, size_t klen,
	       gt_gm_write_fn write, void *ctx, struct gt_gm_result *res);

#endif

/* ---- reading a merged file back (`report`) ------------------------------
 * Per goroutine and region name ("kernel: preempted by bash (tid 12)"):
 * how many intervals and their total, from the merge's regions; the same
 * per thread (the M the regions are on: its tid on Linux); and per
 * goroutine its running time by the runtime's own events (each M's
 * goroutine from its start or status to its stop, block, syscall or
 * destruction). */
struct gt_gm_row {
	uint64_t g;           /* the goroutine, or in mrows the M */
	char what[192];       /* the region's name less "kernel: " */
	uint64_t n, ns;
	char stack[192];      /* a preemption's culprit's stack, as the log of
			       * the row's longest interval gives it ("(how):
			       * f <- g"), or "" */
	uint64_t stack_ns;
};

struct gt_gm_goroutine {
	uint64_t g, running_ns, kernel_ns;
};

struct gt_gm_report {
	struct gt_gm_row *rows;        /* heaviest first */
	size_t nrows;
	struct gt_gm_row *mrows;       /* by M (thread) id, each M's heaviest first */
	size_t nmrows;
	struct gt_gm_goroutine *gs;    /* those with a row, most kernel time first */
	size_t ngs;
};

/* Reads a v2 file, in two passes.  release (may be NULL) is told after
 * each batch that bytes [0, end) will not be read again in this pass, as
 * gt_analyze_opts.release is (the second pass starts again at 0).  0
 * (nrows 0: no kernel region: not a merged file), -EINVAL (err says why)
 * or -ENOMEM. */
int gt_gm_report_read(const uint8_t *data, size_t len, void (*release)(void *arg, size_t end),
		      void *arg, struct gt_gm_report *r, char *err, size_t errlen);
void gt_gm_report_free(struct gt_gm_report *r);
