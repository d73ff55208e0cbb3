/* Folder translate/: the thread/CPU state machine and the syscall
 * classification: kernel events in, Go trace events out through format/'s
 * writer. It knows no BPF object, no /proc and no session: it may include
 * common/, bpf/gotraced.h (the event structs) and format/.
 *
 * The translator: kernel scheduler/syscall events -> Go execution-trace events.
 *
 * A per-thread and per-CPU state machine (after perf's builtin-sched.c).
 * It consumes the event stream of bpf/gotraced.h in timestamp order and
 * writes Go trace events through the writer (format/writer/gt_writer.h):
 *
 *   thread = goroutine (a fresh id per thread lifetime), CPU = P,
 *   switch in = GoStart, switch out = GoPreempt / GoSched / GoBlock* /
 *   GoSleep by the syscall the thread was in, wakeup = GoUnblock on the
 *   waker's CPU with its stack (G 0 for an interrupt), clone = GoCreate,
 *   exit = GoEnd, syscall entry = GoSysCall, heap/RSS = HeapAlloc.
 *
 * Whatever the kernel delivers (lost, duplicated or reordered events,
 * threads first seen mid-flight, reused tids, CPUs >= ncpus), the output
 * stays valid: the model is repaired and each repair is counted.
 * Timestamps are clamped forward so that the emitted stream is globally
 * ordered (a cause never carries a later time than its effect).
 *
 * Choices worth knowing:
 *  - one goroutine per thread lifetime, whatever renames (prctl,
 *    pthread_setname_np) or execs it does.  Its name is its creation
 *    stack's one frame {pc = hash of comm, func = comm, file "[thread]",
 *    line = tid}: the stack id is reserved at GoCreate and its frame
 *    defined at GoEnd or gt_translator_end with the thread's LAST comm
 *    and tid (a worker renamed after clone shows the worker's name; a
 *    `record -- CMD` child shows the command after exec);
 *  - where threads of different processes have shared a comm (postgres,
 *    nginx's master and workers), that name is the process's title
 *    (gt_title_source: "nginx: worker process"), followed by the
 *    thread's own comm in brackets where it differs from the process's;
 *    the frame's pc hashes that whole name, so each title is its own
 *    group on the Goroutines pages;
 *  - a thread blocked in a syscall shows the syscall's GoSysCall, then a
 *    GoBlock* (syscall_class.h), so that its waker's GoUnblock can name
 *    the waker (GoSysExit cannot);
 *  - a wakeup from interrupt context names no task: G 0 writes it, on the
 *    CPU's P when none of ours runs there, else on the spare P ncpus,
 *    with a one-frame stack naming the interrupt ("[timer interrupt]",
 *    "[hardirq]", "[softirq]", "[nmi]", or "[loopback]": the receive of a
 *    loopback packet whose sender is not ours);
 *  - a wakeup from the receive softirq of a loopback packet that ran in
 *    its traced sender's own context, inside its send (GT_WAKEUP_LOOPBACK
 *    without GT_WAKEUP_SOFTIRQ), is the sender's: its stack with a
 *    "[loopback]" frame on top;
 *  - G 0 acts (creates, unblocks) on an idle P, or on the spare P ncpus
 *    when every CPU runs one of our threads;
 *  - ProcStart's thread (Go 1.22+'s M) is GT_TR_M_BASE + the P: one M per
 *    CPU, never the TID of whichever thread started the P;
 *  - a thread of the snapshot that never ran is started for 0 ns at the
 *    stop on the spare P and stops there with its identity stack, so that
 *    Go 1.22+ (which names a goroutine from its own transitions' stacks)
 *    names it (docs/mapping.md, "Threads that never ran").
 *
 * With gt_translator_opts.v2 the same events are written as a Go 1.22+
 * trace (output_v2.c, docs/format.md "Recording v2"): M = the thread.
 *
 * Return convention: 0 or a negative errno (only writer or allocation
 * failures are errors; bad kernel input is repaired, never an error).
 */
#ifndef GT_TRANSLATE_H
#define GT_TRANSLATE_H

#include <stddef.h>
#include <stdint.h>

#include "gotraced.h"
#include "writer/gt_writer.h"

struct gt_translator;

/* A thread alive when the recording starts, as the caller read it (the
 * engine reads /proc): it becomes a goroutine created by G 0, with
 * GoWaiting when it is not runnable. */
struct gt_thread_snapshot {
	uint32_t tid, tgid;
	char state;          /* /proc state letter: R S D T t Z X I ... */
	int64_t syscall_nr;  /* syscall it is blocked in, -1 none/unknown */
	int cpu;             /* CPU it last ran on (-1 unknown); for 'R' the
			      * translator assumes it is running there */
	char comm[16];
};


/* Timestamps above this (73 years of ns) are garbage: Go reads times as
 * int64 and deltas would overflow; such events take the current time. */
#define GT_TS_MAX ((uint64_t)1 << 61)

/* Where the function at frame 0 of a user stack keeps its return address
 * (see daemon/engine/caller.h): a word of struct gt_utop (its index), the
 * link register, or nowhere known. */
#define GT_RA_NONE (-1)
#define GT_RA_LR (-2)

/* The candidate caller in slot `slot` of a stack top, 0 if none. */
static inline uint64_t gt_utop_pick(const struct gt_utop *top, int slot)
{
	if (slot == GT_RA_LR)
		return top->lr;
	if (slot >= 0 && slot < GT_UTOP_WORDS && (uint32_t)slot < top->nwords)
		return top->words[slot];
	return 0;
}

/* Resolves kernel stack ids to frames (symbolized; kernel frames marked by
 * the source).  Returns the number of frames written to out (<= max), 0 if
 * none.  caller: the return address ra_slot pointed at in the stack top
 * taken with the user stack (0: none), which the source inserts as user
 * frame 1 where it fits.  Results are cached by (tgid, ustack_id,
 * kstack_id, caller), and ra_slot's by (tgid, ustack_id). */
struct gt_stack_source {
	int (*frames)(void *ctx, uint32_t tgid, int32_t ustack_id, int32_t kstack_id,
		      uint64_t caller, struct gt_frame *out, int max);
	/* GT_RA_* or a word index for user stack ustack_id; NULL = never */
	int (*ra_slot)(void *ctx, uint32_t tgid, int32_t ustack_id);
	/* Late names (NULL = never): whether the last frames() left a frame a
	 * later look may name (JIT code its perf map did not name yet: a map
	 * rewritten, or written at exit).  The translator then holds that
	 * stack's frames and defines it when the process exits or the trace
	 * ends: recheck(tgid) once (look at the perf map again, whatever the
	 * wait between reads), then rename() copies in to out, naming the
	 * frames the source names now. */
	int (*unnamed)(void *ctx);
	void (*recheck)(void *ctx, uint32_t tgid);
	void (*rename)(void *ctx, uint32_t tgid, const struct gt_frame *in, struct gt_frame *out,
		       int n);
	void *ctx;
	/* Optional (NULL: what frames and ra_slot give is final).  After a
	 * call of either: 0 if its answer is final, else the names' clock, a
	 * count that moves when the answer may have changed (a binary it
	 * needed was still loading, and a load ended since).  Such an answer
	 * is asked for again at the stack's next use once the clock moved. */
	uint64_t (*pending)(void *ctx);
	/* The names' clock now (needed with pending). */
	uint64_t (*clock)(void *ctx);
};

/* Names a process for goroutine names: its title, as /proc/PID/cmdline
 * shows what the program set (arguments joined by spaces: "postgres:
 * checkpointer"), into title, and its main thread's comm into comm.
 * Returns 0, or -1 when the process is unknown (gone, no access). */
#define GT_TITLE_LEN 96
struct gt_title_source {
	int (*title)(void *ctx, uint32_t tgid, char title[GT_TITLE_LEN],
		     char comm[GT_COMM_LEN]);
	void *ctx;
};

/* The pprof labels of a Go goroutine (docs/mapping.md, "Goroutines of Go
 * programs"): the map at address map in process tgid, whose hash seed and
 * count BPF read, as "{key=value, ...}" into out (NUL-terminated).
 * Returns the text's length, -EAGAIN when its read has not answered yet
 * (the log then says so), or -1 when it cannot be read (gone, freed:
 * another map at that address, or no access). */
struct gt_golabels_source {
	int (*labels)(void *ctx, uint32_t tgid, uint64_t map, uint32_t hash0, uint32_t count,
		      char *out, size_t len);
	void *ctx;
};

struct gt_translator_opts {
	int ncpus;                           /* P count = EvGomaxprocs; > 0 */
	const struct gt_stack_source *stacks; /* NULL = no stacks */
	const struct gt_title_source *titles; /* NULL = names are comms */
	const struct gt_golabels_source *golabels; /* NULL = goroutines without labels */
	/* The path of the cgroup a throttled switch-out names by id
	 * (GT_SWITCH_THROTTLED, e.g. gt_cgroup_id_path), given the tid of
	 * the task switched out (the cgroup is its own or an ancestor);
	 * called once per id a translator meets (GT_TR_CGROUPS remembered),
	 * on the caller's thread.  NULL or < 0: the log says "cgroup id N". */
	int (*cgroup_path)(uint64_t id, int tid, char *out, size_t len);
	int go_version;                      /* writer's version, 0 = GT_V1_19
						(CPUSample needs >= 1.19) */
	uint32_t session_mask;               /* this session's bit in the
						*_sessions masks; 0 = any bit */
	struct gt_v2enc *v2;                 /* non-NULL: write a Go 1.22+ trace
						through this encoder (initialized,
						times in ns), not w; the caller
						finishes and frees it after
						gt_translator_end */
};

struct gt_v2enc;

/* Valid calls: o non-NULL with 0 < o->ncpus <= GT_MAX_P, and an output:
 * o->v2 (then w may be NULL, and is not used) or the v1 writer w.
 * -EINVAL otherwise, -ENOMEM. */
int gt_translator_new(struct gt_translator **out, struct gt_writer *w,
		      const struct gt_translator_opts *o);

/* UserLogs not written (v2 has none without a running goroutine). */
uint64_t gt_translator_dropped(const struct gt_translator *t);

/* Writes the initial snapshot (GoCreate by G 0 for each thread, GoWaiting
 * for the blocked ones, ProcStart + GoStart for those running)
 * then one Gomaxprocs.  Must be called once, before any event. */
int gt_translator_begin(struct gt_translator *t, uint64_t ts,
			const struct gt_thread_snapshot *threads, int n);

/* Consumes one kernel event (len = bytes available at ev; short or unknown
 * records are counted and skipped). */
int gt_translator_event(struct gt_translator *t, const struct gt_kev_hdr *ev, size_t len);

/* Deschedules every running goroutine and stops every P.  No event is
 * accepted afterwards.  The writer is not closed. */
int gt_translator_end(struct gt_translator *t, uint64_t ts);

/* The model now as a snapshot (docs/design.md, "Flight recorder"): every
 * live thread, running ('R' with its CPU), runnable ('R', cpu -1) or
 * blocked ('S'), for gt_translator_begin of another translator that picks
 * up the stream from here.  *out is malloc'ed (free() it). */
int gt_translator_snapshot(const struct gt_translator *t, struct gt_thread_snapshot **out,
			   int *n);

/* A UserLog (category, message) at the current time, on the P where tid
 * runs (P 0 if it does not; in v2, whose UserLog needs a running
 * goroutine, a P where one runs, else none is written): a marker the viewer shows, e.g. what fired a
 * flight recording's dump. */
int gt_translator_mark(struct gt_translator *t, uint32_t tid, const char *category,
		       const char *message);

/* Repairs of the model, by kind (anomaly counters; perf's
 * nr_context_switch_bugs and friends). */
#define GT_REPAIR_LIST(X)                                                   \
	X(BAD_RECORD,      "bad_record")      /* short/unknown record */     \
	X(BAD_CPU,         "bad_cpu")         /* cpu >= ncpus */              \
	X(MIDFLIGHT,       "midflight")       /* thread first seen running */ \
	X(LOST_SWITCH_OUT, "lost_switch_out") /* CPU ran someone else */      \
	X(MIGRATED,        "migrated")        /* running on two CPUs */       \
	X(NOT_RUNNING,     "not_running")     /* acted while thought off CPU */ \
	X(LOST_WAKEUP,     "lost_wakeup")     /* switched in while waiting */ \
	X(STALE_SWITCH,    "stale_switch")    /* switch-out of an off-CPU thread */ \
	X(TID_REUSE,       "tid_reuse")       /* new thread with a live tid */ \
	X(LOST_EXIT,       "lost_exit")       /* dead state without exit */   \
	X(LATE_EVENT,      "late_event")      /* timestamp clamped forward */ \
	X(BAD_TIME,        "bad_time")        /* timestamp beyond GT_TS_MAX */ \
	X(AFTER_END,       "after_end")       /* event after gt_translator_end */

enum gt_repair_kind {
#define GT_X_REPAIR_ENUM(e, name) GT_REPAIR_##e,
	GT_REPAIR_LIST(GT_X_REPAIR_ENUM)
#undef GT_X_REPAIR_ENUM
	GT_REPAIR_COUNT
};

extern const char *const gt_repair_names[GT_REPAIR_COUNT];

struct gt_translator_stats {
	uint64_t threads;          /* thread lifetimes seen (= goroutines) */
	uint64_t events_in;        /* kernel events consumed */
	uint64_t events_out;       /* Go trace events written */
	uint64_t wakeups_running;  /* wakeups of a thread already runnable (normal) */
	uint64_t wakeups_raced;    /* wakeups that raced their target's block and,
				      confirmed at its switch-out, ended it */
	uint64_t throttled;        /* switch-outs by CFS bandwidth throttling
				      (GT_SWITCH_THROTTLED), logged "throttled" */
	uint64_t loopback_credited; /* loopback wakeups credited to their sender */
	uint64_t loopback_anon;    /* loopback wakeups written as G 0: the sender is
				      not known, not current, or one the session
				      may not see */
	uint64_t loopback_named;   /* ... by G 0 naming a sender not traced */
	uint64_t samples_lost;     /* allocation samples not written: their
				      thread was unknown, ended or never ran
				      again, or held GT_TR_HELD_MAX already
				      (docs/mapping.md "Heap and samples") */
	uint64_t repairs;          /* sum of repair[] */
	uint64_t repair[GT_REPAIR_COUNT];
};
void gt_translator_stats(const struct gt_translator *t, struct gt_translator_stats *st);

/* Frees the translator (not the writer). */
void gt_translator_free(struct gt_translator *t);

#endif
