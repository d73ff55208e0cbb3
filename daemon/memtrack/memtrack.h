/* Folder memtrack/: heap and RSS tracking, allocator discovery, the cgroup
 * memory limit and CPU samples (bpf/memory.bpf.c). It may include common/,
 * sym/ (allocator symbols) and capture/ (the shared maps and rings).
 *
 * Memory and CPU-profile tracking of a recording session:
 * allocator uprobes (--heap=malloc), the rss_stat tracepoint (--heap=rss,
 * the default, and always for Go and static programs), the heap record of
 * a command launched with the interposer preloaded (--heap=interpose,
 * interpose.c: read every few ms, no probe at all), allocation samples
 * (--alloc-stacks N: malloc probes, or the interposer's ring)
 * and perf-event CPU samples (--cpu-profile HZ).
 *
 * The BPF side is bpf/memory.bpf.c, a separate object loaded on first use;
 * it shares the capture's ring buffers, filter and stack maps, so its
 * events arrive through gt_capture_poll like every other one (GT_KEV_HEAP,
 * GT_KEV_RSS, GT_KEV_ALLOC_SAMPLE, GT_KEV_CPU_SAMPLE).
 *
 * Uprobes are attached per process (that pid only), only while a session
 * needs them, and detached when the session stops: as uprobe_multi links
 * where the kernel has them (one per program and binary), else one
 * perf-event link per function (uprobe_multi.h), and all of a session's
 * links are closed at once (detach.c: each waits for grace periods).  A Go program never
 * gets a uprobe or uretprobe (Go moves goroutine stacks: a uretprobe
 * crashes it): it is recorded in RSS mode.
 *
 * Return convention: 0 or -errno; err/errlen get a message for the user.
 * Not thread-safe: one thread at a time drives it; a heap record taken out
 * of it (gt_memtrack_take_record) is its taker's alone.
 */
#ifndef GT_MEMTRACK_H
#define GT_MEMTRACK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "capture/capture.h"
#include "common/session_opts.h"

struct gt_memtrack;

/* What one session asks for. */
struct gt_memtrack_req {
	int bit;                 /* session bit, 0..GT_MAX_SESSIONS-1 */
	enum gt_heap_mode heap;  /* DEFAULT = rss (probes only when asked);
				  * Go programs are rss whatever is asked */
	unsigned cpu_hz;         /* 0 = no CPU samples */
	unsigned alloc_every;    /* 0 = no allocation samples */
	const pid_t *pids;       /* processes whose allocators to probe */
	int npids;
	int by_cgroup;           /* a cgroup session: RSS for everyone in it */
};

/* Loads bpf/memory.bpf.c against the capture's shared maps (nothing is
 * attached yet).  -EPERM etc. as gt_capture_open.  With `only` (a request
 * that will be the only one: gotracectl's embedded session), the
 * allocator probes and the CPU sampler are loaded only if it asks for
 * them: verifying the probes is about 100 ms of a default recording's
 * start; a later request that needs what was not loaded is refused
 * (-EOPNOTSUPP).  NULL loads everything (a daemon). */
int gt_memtrack_open(struct gt_memtrack **out, struct gt_capture *c,
		     const struct gt_memtrack_req *only, char *err, size_t errlen);
void gt_memtrack_close(struct gt_memtrack *m); /* detaches everything */

/* What one allocator call costs the target under --heap malloc's probes
 * (a uprobe and a uretprobe trap), in ns, measured on this machine the
 * first time it is asked (about 10 ms of trapping, in call_cost.c); 0 with
 * why filled when it cannot be measured.  The first malloc probe of a
 * process asks for it.  _known() never measures: 0 until measured. */
uint64_t gt_memtrack_call_cost_ns(char *why, size_t whylen);
uint64_t gt_memtrack_call_cost_known(void);

/* Whether a session with these options needs memtrack at all. */
int gt_memtrack_wanted(enum gt_heap_mode heap, unsigned cpu_hz, unsigned alloc_every);

/* Attaches what the session needs.  A process that cannot be probed (no
 * allocator found, a static binary) falls back to RSS; only failures to
 * attach anything at all are errors. */
int gt_memtrack_start(struct gt_memtrack *m, const struct gt_memtrack_req *r,
		      char *err, size_t errlen);

/* Delivers the exact final heap (or RSS) value of each of the session's
 * processes as GT_KEV_HEAP / GT_KEV_RSS events stamped ts, so the trace
 * ends on the true value whatever the coalescing skipped (--heap
 * interpose: the taker of the record reads it once more itself). */
typedef int (*gt_memtrack_emit_fn)(void *ctx, const struct gt_kev_hdr *ev, size_t len);
int gt_memtrack_final(struct gt_memtrack *m, int bit, uint64_t ts,
		      gt_memtrack_emit_fn fn, void *ctx);

/* --heap interpose: the session's heap record (the command's own counts,
 * mapped read-only), handed over once gt_memtrack_start succeeded.  From
 * then on memtrack keeps no pointer to it and never reads it: its taker
 * may read it on another thread than the one driving memtrack, and closes
 * it.  NULL when the session has none (or it was taken). */
struct gt_mt_interpose;
struct gt_mt_interpose *gt_memtrack_take_record(struct gt_memtrack *m, int bit);
void gt_memtrack_record_close(struct gt_mt_interpose *rec);
/* Delivers the processes' changed live bytes as GT_KEV_HEAP events stamped
 * ts (the engine reads every few ms, and once at the session's end) and
 * the record's new allocation samples, their stacks interned in stacks
 * (NULL: samples without a stack).  Returns how many events. */
struct gt_mt_pcs;
/* Only the record's new allocation samples (no heap values): for a
 * thread's exit, before the translator sees it.  Returns how many. */
int gt_memtrack_record_samples(struct gt_mt_interpose *rec, struct gt_mt_pcs *stacks, int bit,
			       gt_memtrack_emit_fn fn, void *ctx);
int gt_memtrack_record_poll(struct gt_mt_interpose *rec, struct gt_mt_pcs *stacks, int bit,
			    uint64_t ts, gt_memtrack_emit_fn fn, void *ctx);
/* The heap mode chosen for a process of a session (GT_HEAP_OFF if it is
 * not the session's, or gone). */
enum gt_heap_mode gt_memtrack_mode(const struct gt_memtrack *m, int bit, pid_t pid);
/* After an exec, pid's mode in the session (gt_memtrack_mode) told to its
 * record: a Go or static image (GT_HEAP_RSS) is not counted from it. */
void gt_memtrack_record_mode(struct gt_mt_interpose *rec, pid_t pid, enum gt_heap_mode mode);
/* The interned stacks of the records' allocation samples (ids with
 * GT_STACK_INTERPOSED), owned by the records' taker and shared by its
 * sessions; get returns the return addresses' count, or -ENOENT. */
struct gt_mt_pcs *gt_memtrack_stacks_new(void);
void gt_memtrack_stacks_free(struct gt_mt_pcs *stacks);
int gt_memtrack_stacks_get(const struct gt_mt_pcs *stacks, int32_t id, uint64_t *ips, int max);

/* A process of some session called exec (GT_KEV_EXEC): its allocators and
 * whether it is a Go program are decided again for the new image (e.g.
 * `record -- CMD` starts from a forked recorder, not yet CMD). */
int gt_memtrack_exec(struct gt_memtrack *m, pid_t pid, char *err, size_t errlen);

/* Detaches the session's probes (and the shared tracepoint / perf events
 * when no other session needs them); forgets its processes' accounting. */
void gt_memtrack_stop(struct gt_memtrack *m, int bit);



struct gt_memtrack_stats {
	uint64_t map_full;       /* allocations not tracked: live map full */
	uint64_t unknown_free;   /* frees of addresses never seen allocated */
	int cpu_events_open;     /* perf events open for CPU samples */
};
void gt_memtrack_stats(const struct gt_memtrack *m, struct gt_memtrack_stats *st);

#endif
