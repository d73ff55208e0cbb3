/* Folder format/analyze/: the latency analysis behind `gotracectl report`.
 * It may include format/wire/ and format/util/; never writer/ or check/,
 * never daemon/, bpf/ or a Linux header.
 *
 * Latency analysis of a Go execution trace (legacy format, Go 1.7 to 1.21):
 * what `gotracectl report` prints.  Knows nothing of Linux: a goroutine is
 * whatever the producer made it (gotraced: a thread), a P a CPU.
 *
 * Streaming, in bounded memory: a first pass indexes the dictionaries
 * (strings, stacks) and where each P's batches lie; a second pass merges
 * the Ps' event streams as Go 1.19's order1007 does (sequence numbers, then
 * time) and feeds each event to a per-goroutine state machine.  Memory is
 * per goroutine, per stack and per batch, never per event.
 *
 * Timestamps are Go's: nanoseconds since the first event, computed as
 * int64((ts - minTs) * (1e9 / freq)) in double, so every figure equals one
 * computed from `go tool trace -d`'s dump.
 *
 * The rules (tests/integration/report_check.py repeats them from -d):
 *  - scheduling delay: a goroutine made runnable (GoCreate, GoUnblock,
 *    GoSysExit, GoSched, GoPreempt) until its next GoStart;
 *  - off-CPU: a stop (GoBlock*, GoSleep, GoStop, GoSysBlock, GoSched,
 *    GoPreempt) until its next GoStart, by the stop's reason, weighted on the
 *    stop's stack (GoSysBlock: its GoSysCall's stack);
 *  - on-CPU: GoStart until the next stop or GoEnd (or the trace's end);
 *  - migration: a GoStart on another P than the goroutine's previous one;
 *  - syscall: GoSysCall until the goroutine's next event (CPUSample aside),
 *    or, when that event is a wait (GoSysBlock, or GoBlock*, GoSleep,
 *    GoStop of a syscall that sleeps, as futex and poll do), until it is
 *    woken (GoSysExit, GoUnblock); the off-CPU time of such a wait is also
 *    the syscall's "blocked" time.  A thread of gotraced's (identity
 *    frame) woken or preempted in a syscall stays in it while its next
 *    stops are GoBlockRecv/Send/Cond (the same call blocking again) or
 *    GoPreempt, and the call ends at the GoStart after its last wakeup
 *    (or at the preemption, if it was not woken since);
 *  - waker: the goroutine that wrote the GoUnblock (0: none, an interrupt);
 *  - a gotraced thread's GoStart on a P >= Gomaxprocs (its spare P, not a
 *    CPU: a 0 ns start that names a thread that never ran, or ends one
 *    whose process left) counts no delay, waker, start or migration;
 *  - the Go viewers' profile totals (go119, go123): each reader's own
 *    rules, which differ from the above (gt_analyze_viewers.c).
 * A figure counts in the window [since, until] when the event that ends it
 * is in the window; on-CPU time counts its overlap with the window.
 */
#ifndef GT_ANALYZE_H
#define GT_ANALYZE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "wire/gt_events.h" /* enum gt_block_reason */

/* ---- log-linear histogram ----------------------------------------------
 * Values below 64 exactly; above, 64 buckets per power of two, reported at
 * the bucket's middle: relative error at most 1/128 (< 1%).  Storage is
 * allocated per power of two on first use. */
#define GT_HIST_SUB 64
#define GT_HIST_CHUNKS 59 /* chunk 0: 0..63; chunk k: [2^(k+5), 2^(k+6)) */

struct gt_hist {
	uint64_t count, sum, min, max;
	uint64_t *chunk[GT_HIST_CHUNKS];
	int oom; /* a chunk could not be allocated: counts are short */
};

void gt_hist_add(struct gt_hist *h, uint64_t v);
/* The value at percentile p (0..100): exact min/max at the ends, else the
 * middle of the bucket holding rank ceil(p/100 * count); 0 if empty. */
uint64_t gt_hist_pct(const struct gt_hist *h, double p);
/* dst += src; -ENOMEM if a chunk could not be allocated. */
int gt_hist_merge(struct gt_hist *dst, const struct gt_hist *src);
void gt_hist_free(struct gt_hist *h);

/* ---- results ------------------------------------------------------------ */
struct gt_an_syscall {
	uint32_t name;      /* index into gt_analysis.names */
	uint64_t count, total_ns, min_ns, max_ns;
	uint64_t blocked_ns; /* off-CPU after its GoSysBlock */
};

struct gt_an_waker {
	uint64_t g;         /* 0: interrupt/none */
	uint64_t count, delay_total_ns, delay_max_ns;
};

/* The Go viewers' profiles (`go tool trace -pprof=TYPE`): what each
 * reader totals, by its own definition (gt_analyze_viewers.c). */
enum gt_an_view { GT_AN_VIEW_SCHED, GT_AN_VIEW_SYNC, GT_AN_VIEW_SYSCALL, GT_AN_VIEW_NET,
		  GT_AN_VIEW_COUNT };

struct gt_an_view_totals {
	uint64_t ns[GT_AN_VIEW_COUNT], n[GT_AN_VIEW_COUNT];
};

/* runqlat's histogram (libbpf-tools' runqlat, bcc's the same ranges): slot
 * floor(log2(usecs)), usecs = ns / 1000, 0 and 1 in slot 0. */
#define GT_AN_LOG2 48
/* A GoUnblock at most this long after its goroutine's block raced it:
 * gotraced writes the two at one time (docs/mapping.md), its Go 1.22+
 * writer a few ns apart (events that share a time move 1 ns each); a real
 * wakeup takes a BPF program's run at least, hundreds of ns */
#define GT_AN_RACED_NS 10
unsigned gt_an_log2_slot(uint64_t ns);

enum gt_an_gstate { GT_AN_DEAD, GT_AN_RUNNABLE, GT_AN_RUNNING, GT_AN_WAITING };

/* What report keeps of a Go goroutine's pprof labels (the log's text). */
#define GT_AN_GO_LABELS 48

/* How a runnable period began: woken without a waker written (GoCreate,
 * GoSysExit), by a GoUnblock, by a GoUnblock that raced the block (written
 * at the block's own time: its sched_waking came before the switch-out), or
 * preempted / yielded (GoPreempt, GoSched) */
enum gt_an_wake { GT_AN_WAKE_NONE, GT_AN_WAKE_UNBLOCK, GT_AN_WAKE_RACED, GT_AN_WAKE_PREEMPT };

struct gt_an_thread {
	uint64_t id;
	uint64_t name_stk;   /* GoCreate's new-goroutine stack (0: unknown) */
	uint64_t root_stk;   /* without one: its first own stack, whose root
			      * frame names it if that is a [thread] frame
			      * (a goroutine a Go 1.22 file stated by GoStatus,
			      * named as Go 1.22 names it) */
	struct gt_hist delay;  /* run-queue latency (runqlat): wdelay + pdelay */
	struct gt_hist wdelay; /* wakeup delay: woken (GoUnblock, GoCreate,
				* GoSysExit) -> running, perf sched timehist's
				* "sch delay" */
	struct gt_hist pdelay; /* preemption delay: preempted or yielded
				* (GoPreempt, GoSched), or woken by a wakeup
				* that raced the block -> running: no sch
				* delay in timehist (docs/mapping.md) */
	int64_t worst_at_ns; /* when the worst delay ended (its GoStart) */
	int64_t wworst_at_ns, pworst_at_ns; /* the same, of wdelay and pdelay */
	uint64_t rq_log2[GT_AN_LOG2]; /* run-queue latencies by runqlat's slot */
	uint64_t offcpu_ns[GT_BLK_COUNT], offcpu_n[GT_BLK_COUNT];
	uint64_t oncpu_ns, starts, migrations;
	uint64_t stops_n[GT_BLK_COUNT]; /* stops by their own event's reason,
					 * as v1's `inspect --json` counts
					 * blocks (offcpu_n moves a generic
					 * syscall's wait to syscall) */
	struct gt_an_syscall *sys;
	size_t nsys, capsys;
	struct gt_an_waker *wak;
	size_t nwak, capwak;
	int ended;           /* its GoEnd (v2: GoDestroy) was read */

	/* state machine, private */
	int state;           /* enum gt_an_gstate */
	int64_t since_ns;    /* runnable or running since */
	int wake;            /* enum gt_an_wake of the runnable period */
	int64_t woken_ns;    /* a stopped thread's wakeup (GoUnblock), or -1 */
	/* its last off-CPU wait (stop -> start), for a mark after it */
	int64_t last_stop_ns, last_woken_ns, last_start_ns;
	int last_reason;
	uint64_t last_stk;
	uint64_t waker;
	int stopped;         /* a stop awaits its GoStart */
	int stop_reason;
	int64_t stop_ns;
	uint64_t stop_stk;
	int32_t stop_sys;    /* syscall entry of a GoSysBlock stop, or -1 */
	int64_t last_p;      /* P of the previous GoStart, or -1 */
	int sys_open, sys_blocked;
	int sys_closed_by_call; /* its last call ended, unblocked, at its next
				 * GoSysCall */
	int sys_resumed;     /* woken or preempted inside the call: it may
			      * block again */
	int sys_woke;        /* resumed by a wakeup (its start ends it) */
	int ours, ours_known; /* gotraced's thread, as of name stack ours_stk */
	uint64_t ours_stk;
	int64_t sys_ns, sys_end_ns;
	uint64_t sys_stk;
	int v19_type, v19_stk;   /* Go 1.19's pending event (g.ev) */
	int64_t v19_ns;
	int v23_state;           /* Go 1.23's tracked state, 0: none */
	int64_t v23_ns;
	int v23_started;         /* Go 1.23's summary StartTime is set */
	int64_t v23_start_ns;    /* (its first transition to running) */
	uint64_t goid_log;       /* a "goroutine N" log since its last start */
	uint64_t stop_goid;      /* the goroutine its pending stop stopped */
	size_t throttle_log;     /* a "throttled" log since its last start:
				  * its cgroup's index in throttles + 1 */
	size_t stop_throttle;    /* ... of its pending stop, a GoPreempt */
	char goid_labels[GT_AN_GO_LABELS]; /* the log's "{k=v}" (cut), and */
	char stop_labels[GT_AN_GO_LABELS]; /* its pending stop's */
};

/* A Go program's goroutine on one of its threads (gotraced's UserLog
 * "goroutine N" before a stop, docs/mapping.md "Goroutines of Go
 * programs"): the stops it was switched out at and the off-CPU time after
 * them, the preemptions apart. */
struct gt_an_goroutine {
	uint64_t thread, goid;
	char labels[GT_AN_GO_LABELS]; /* its pprof labels at its last stop that had any */
	uint64_t stops, offcpu_ns;
	uint64_t preempts, preempt_ns, preempt_max_ns; /* throttling apart */
};

/* The waits of threads throttled by CFS bandwidth, by cgroup: gotraced's
 * UserLog "throttled" (message "cgroup PATH") just before a GoPreempt
 * says the CPU quota of that cgroup is spent (docs/mapping.md, "CFS
 * bandwidth throttling"); each wait runs from that stop to the thread's
 * next start.  Not counted as preemptions (gt_an_goroutine). */
struct gt_an_throttle {
	char cgroup[256];
	uint64_t count, ns, max_ns;
};

/* One off-CPU wait of a thread: its stop until its next start. */
struct gt_an_wait {
	uint64_t g, stk;      /* the stop's stack */
	int reason;           /* enum gt_block_reason */
	int64_t stop_ns, start_ns;
	int64_t woken_ns;     /* its wakeup (GoUnblock), or -1: none written
			       * (a preemption, a yield: runnable throughout) */
};

/* The longest single waits kept (gt_analysis.waits). */
#define GT_AN_WAITS 64

/* A UserLog of the key gt_analyze_opts.mark_key: its time, its goroutine
 * (the one running on its P) and that goroutine's last wait before it. */
struct gt_an_mark {
	int64_t ns;
	uint64_t g;
	char msg[512];
	struct gt_an_wait wait; /* g's last wait ended by then (stop_ns -1: none) */
};

#define GT_AN_MARKS 16

/* Stack-weighted totals: on-CPU samples and off-CPU time. */
enum { GT_AN_KIND_CPU = 0, GT_AN_KIND_OFFCPU = 1 /* + enum gt_block_reason */ };

struct gt_an_stackagg {
	uint64_t g, kind, stk;
	uint64_t weight; /* samples (CPU) or ns (off-CPU) */
	uint64_t count;
};

struct gt_analysis;

struct gt_analyze_opts {
	int64_t since_ns; /* window start, ns from the trace's first event */
	int64_t until_ns; /* window end; < 0: none */
	/* The syscall names the producer's kernel has (any order), or none:
	 * with a list, a stack's top frame names a syscall only when its
	 * name (or "new" + it, as newfstatat) is in the list. */
	const char *const *sysnames;
	size_t nsysnames;
	/* Go 1.22+ files: an event that breaks a state rule of Go's reader
	 * (a status not restated, a start of a goroutine not runnable, a
	 * goroutine event without a goroutine) is an error naming the rule,
	 * not an anomaly counted (`inspect`). */
	int strict;
	/* Go 1.22+ files, read one generation at a time: after each, bytes
	 * [0, end) of the buffer are not read again, and the caller may let
	 * them go (report: madvise); NULL: not told. */
	void (*release)(void *arg, size_t end);
	void *release_arg;
	/* UserLogs of this key are kept (gt_analysis.marks); NULL: none */
	const char *mark_key;
	/* The longest single waits (gt_analysis.waits) are kept of the
	 * threads this says 1 of (report --thread), asked of each wait long
	 * enough to be kept; NULL: of all. */
	int (*keep_waits_of)(const struct gt_analysis *a, const struct gt_an_thread *t, void *arg);
	void *keep_arg;
};

struct gt_analysis {
	int version;
	uint64_t freq;
	int64_t end_ns;        /* last event's time */
	uint64_t events;       /* events merged (CPU samples included) */
	uint64_t samples;      /* CPUSample events */
	uint64_t anomalies;    /* events that broke an ordering or state rule */
	uint64_t futile;       /* FutileWakeup events (Go's reader drops them) */
	struct gt_an_view_totals go119, go123; /* the viewers' profile totals */
	uint64_t generations, strings, stacks; /* Go 1.22+ files: tables read */
	/* Go 1.22+ files: the v1 events their transitions read as, by type
	 * (gt_analyze_v2_go.c: GoBlock "sleep" is GoSleep, GoSyscallBegin
	 * GoSysCall, GoDestroy GoEnd, ...); inspect --json's "counts" */
	uint64_t v1_counts[GT_EV_COUNT];
	struct gt_an_thread *threads; /* by id, after gt_analyze */
	size_t nthreads;
	struct gt_an_stackagg *aggs;
	size_t naggs;
	/* the longest single off-CPU waits in the window, longest first */
	struct gt_an_wait waits[GT_AN_WAITS];
	size_t nwaits;
	struct gt_an_mark marks[GT_AN_MARKS]; /* in time order */
	size_t nmarks;
	/* 1: the syscall tables count calls (a Go runtime's trace, or a
	 * recording with its entries, --syscalls=all: a syscall of gotraced's
	 * that returned without blocking was seen); 0: they count blocks
	 * (gotraced's default, --syscalls=blocking: a GoSysCall is written
	 * only where a call blocks, once per block) */
	int sys_calls;
	struct gt_an_goroutine *goros; /* by first sight */
	size_t ngoros;
	struct gt_an_throttle *throttles; /* by first sight */
	size_t nthrottles;
	char **names;          /* syscall names (index 0: "syscall") */
	size_t nnames;
	char error[256];
	struct gt_an_priv *priv; /* dictionaries and lookups */
};

/* Analyzes data[0..len).  0, -EINVAL (a->error says why: unreadable or no
 * consistent order) or -ENOMEM.  The buffer must outlive the analysis:
 * strings and stacks are read from it. */
int gt_analyze(struct gt_analysis *a, const uint8_t *data, size_t len,
	       const struct gt_analyze_opts *o);
void gt_analysis_free(struct gt_analysis *a);

/* The thread with this id, or NULL. */
const struct gt_an_thread *gt_an_thread_of(const struct gt_analysis *a, uint64_t id);

/* A goroutine's name (its creation stack's top function; "" if unknown) and,
 * for gotraced's threads (file "[thread]"), its tid (else -1). */
const char *gt_an_thread_name(const struct gt_analysis *a, const struct gt_an_thread *t,
			      size_t *len, int64_t *tid);

struct gt_an_frame {
	const char *fn, *file; /* not NUL-terminated */
	size_t fn_len, file_len;
	uint64_t pc, line;
};

/* Frames of stack stk, innermost first, at most max; returns how many
 * (0 for stack 0 or an unknown id). */
size_t gt_an_stack(const struct gt_analysis *a, uint64_t stk, struct gt_an_frame *out, size_t max);

/* Syscall name of a GoSysCall stack's top frame: a kernel entry
 * (`__x64_sys_read` -> "read") or a C (libc) function (`__libc_read`,
 * `__GI___read_nocancel` -> "read"); NULL when the frame is a Go function
 * or unknown (the caller says "syscall").  Writes into buf. */
const char *gt_an_syscall_name(const struct gt_an_frame *top, char *buf, size_t len);

/* ---- folded stacks -------------------------------------------------------
 * `root;frame;...;leaf COUNT` lines, root first, the thread's name as the
 * root frame: flamegraph.pl, inferno and speedscope read them.  kind is
 * GT_AN_KIND_CPU (count = samples) or GT_AN_KIND_OFFCPU + reason, or -1
 * for every off-CPU reason (count = microseconds).  keep: NULL (every
 * goroutine) or says which goroutines to fold.  Identical lines are
 * merged.  0 or -ENOMEM / -EIO. */
typedef int (*gt_an_keep_fn)(const struct gt_analysis *a, uint64_t g, void *arg);
int gt_an_fold(const struct gt_analysis *a, int kind, gt_an_keep_fn keep, void *arg, FILE *out);

/* One folded line from frames given innermost first. */
void gt_an_fold_line(FILE *out, const char *root, const struct gt_an_frame *f, size_t n,
		     uint64_t count);

#endif
