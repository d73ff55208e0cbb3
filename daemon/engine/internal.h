/* Private structures of the engine and its sessions (session*.c only). */
#ifndef GT_SESSION_INTERNAL_H
#define GT_SESSION_INTERNAL_H

#include <stdint.h>

#include "capture/capture.h"
#include "common/clock.h"
#include "common/ptrace_rule.h"
#include "session.h"
#include "mmap_backlog.h"
#include "py_stacks.h"
#include "stacks.h"
#include "util/gt_idmap.h"
#include "titles.h"
#include "golabels.h"
#include "translate/translate.h"
#include "worker.h"
#include "flight.h"

struct gt_writer;
struct gt_v2enc;
struct gt_translator;
struct gt_mt_interpose;
struct gt_mt_pcs;
struct gt_symbolizer;

struct gt_session {
	struct gt_engine *engine;
	int bit;                    /* session bit in the BPF filters */
	int id;                     /* user-visible id, never reused */
	struct gt_writer *writer;
	struct gt_v2enc *v2;        /* or a Go 1.22+ trace's encoder (session_v2.c) */
	struct gt_translator *tr;
	struct gt_flight *flight;   /* a flight recording: no tr, no writer */
	struct gt_stack_source stack_src;
	struct gt_idmap targets; /* live traced processes (pid sessions); the
				       members a non-root cgroup session had
				       (session.c, process_left) */
	int by_cgroup;              /* a cgroup subtree: never "targets exited" */
	int targets_dead;           /* /proc shows none of the targets alive */
	uint64_t cgroup_id;
	uint64_t started_ns;        /* CLOCK_MONOTONIC, = first trace timestamp */
	uint64_t end_ns;            /* the trace's last timestamp (see window.c) */
	uint64_t ended_ns;          /* = end_ns once ended */
	uint64_t duration_ns;
	struct gt_idmap awaiting_exec; /* from_exec: the trace begins when
				       one of these execs (window.c) */
	uint64_t kernel_events;
	uint64_t drops_at_start;
	uint64_t drops;             /* frozen when the session ends */
	int out_fd;
	uint64_t last_trace_events;
	uint64_t last_bytes;
	uint64_t threads;
	uint64_t repairs;
	uint64_t loopback_anon;
	uint64_t samples_lost;      /* the translator's, kept at its end */
	uint64_t left;              /* processes that left (GT_KEV_LEAVE) */
	uint64_t refused;           /* found in /proc, not ptrace-able by the owner */
	int ended;
	int err;                    /* first write/translate error, -errno */
	char end_reason[128];
	uid_t owner_uid;
	gid_t owner_gid;
	struct gt_tracer tracer;    /* the owner, for ptrace's rule (common/ptrace_rule.h) */
	int mem_active;             /* memtrack attached for this session */
	int mem_pending;            /* memtrack jobs of this session in flight */
	int starting;               /* memtrack's attach not done yet */
	int start_err;              /* it failed (an explicit request) */
	char start_why[448];
	int closing;                /* out of the rings, memtrack detaching */
	struct gt_mt_interpose *heap_record; /* --heap interpose: built on the
				       worker, handed over by the attach's
				       completion; the engine's thread alone
				       reads it and closes it before the
				       session's stop is posted */
	int syscall_entries;        /* GoSysCall at every syscall entry */
	int malloc_probes;          /* asked for allocator probes: its stats
				       carry what a probed call costs */
	struct gt_session_phases {  /* how long starting and stopping took (ns) */
		uint64_t attach, perf, targets, probes, notice, flush, detach, mem, finish;
	} phase;
};

struct gt_engine {
	struct gt_capture *capture;
	uint64_t open_ns;           /* how long gt_engine_open took */
	int one_session;            /* gt_engine_opts.one_session */
	const struct gt_session_opts *only; /* gt_engine_opts.only, during gt_engine_open */
	struct gt_symbolizer *sym;
	struct gt_stack_resolver resolver;
	struct gt_titles titles;    /* process titles for goroutine names */
	struct gt_golabels golabels; /* Go goroutines' pprof labels */
	struct gt_session *active[GT_MAX_SESSIONS]; /* by session bit */
	int nactive;                /* sessions in active[]: BPF attached while > 0 */
	uint32_t syscall_sessions;  /* active sessions that want syscall entries */
	struct gt_idmap symbolized; /* processes whose maps are snapshotted */
	struct gt_idmap dying;   /* of those, found dead at the last check */
	struct gt_mmap_backlog mmap_backlog; /* mappings of processes not
				       followed yet (mmaps.c) */
	uint64_t mmaps_applied;     /* perf mapping records given the symbolizer */
	int next_id;
	uint64_t last_liveness_ns;
	struct gt_memtrack *mem;    /* memory/CPU programs, loaded on first use
				       (by the worker, the only one to touch it) */
	int mem_used;               /* some session asked memtrack for something */
	uint32_t mem_bits;          /* session bits memtrack still holds (a
				       detach pending): not given out again */
	struct gt_worker worker;    /* the slow parts of start and stop */
	int nclosing;               /* sessions out of the rings, not finished */
	struct gt_dwarf_stacks *dwarf; /* --call-graph=dwarf's unwound stacks,
				       from the first session that asks */
	struct gt_py_stacks *py;    /* CPython processes and their stacks */
	struct gt_mt_pcs *mem_stacks; /* stacks of the heap records' samples
				       (the engine's thread's, like the records) */
	struct gt_go_read **go_reads; /* go_procs.c: build-info reads under way */
	size_t ngo_reads, capgo_reads;
	char err[512];
};

/* session_targets.c: attach the session's targets and build the initial
 * snapshot; write_error describes failures for the user. */
int gt_session_attach_targets(struct gt_session *s, const struct gt_session_opts *o);
/* Sets targets_dead when no target lives any more, whether or not we saw
 * their exit events (lost, or a zombie never reaped). */
void gt_session_check_liveness(struct gt_session *s);

/* followed.c: the one owner of a process's life in the engine: tells every
 * per-process holder of its first sight, its fork (the parent's maps
 * first) and its exec; forgets (maps, binaries) processes that died at the
 * last two checks; forgets every process once no session is left. */
void gt_engine_process_seen(struct gt_engine *e, uint32_t tgid);
void gt_engine_process_forked(struct gt_engine *e, uint32_t parent, uint32_t child);
void gt_engine_process_exec(struct gt_engine *e, uint32_t tgid);
void gt_engine_prune_followed(struct gt_engine *e);
void gt_engine_forget_followed(struct gt_engine *e);
/* mmaps.c: the perf records of executable mappings into the symbolizer
 * (says once on stderr why there are none, if so); a process that
 * becomes followed gets the records it made before. */
void gt_engine_mmaps_start(struct gt_engine *e);
void gt_engine_followed_new(struct gt_engine *e, uint32_t tgid);
/* go_procs.c: tells BPF where Go process tgid's goroutine ids are (or that
 * it is not Go), at its first sight and at each exec: its binary is read
 * on a loader thread (sym/loader.h), never on the engine's; until the
 * answer, BPF knows of no Go program there (no goroutine ids). */
void gt_engine_go_proc(struct gt_engine *e, uint32_t tgid);
/* go_launch.c knew tgid's new program before its exec: gp now, and no
 * earlier read of tgid's answer undoes it. */
void gt_engine_go_proc_known(struct gt_engine *e, uint32_t tgid, const struct gt_go_proc *gp);
/* Lets the reads finished since go (each drain of the rings; their loader
 * thread applied them when it had their answer). */
void gt_engine_go_procs_poll(struct gt_engine *e);
/* Process tgid is forgotten: its read, if any, is let go (NULL: all of them,
 * the engine closing). */
void gt_engine_go_procs_forget(struct gt_engine *e, const uint32_t *tgid);

/* session.c: hands one event to the session's translator, if it is in its
 * window (see gt_session_deliver); always 0 (a failure ends the session). */
int gt_session_deliver(struct gt_session *s, const struct gt_kev_hdr *ev, size_t len);

/* write_as.c: the trace writer's write(2) for a session of a user other
 * than root: each write runs on its thread with the owner's fsuid and
 * fsgid (setfsuid, per thread), so the file system charges it to them
 * (ext4 gives root's reserved blocks to fsuid 0; gotraced also holds no
 * CAP_SYS_RESOURCE, which would bypass quotas and the reserve).  -1 with
 * EPERM if the ids cannot be taken (no CAP_SETUID/CAP_SETGID): never
 * written as root instead. */
long gt_session_write_as_owner(void *ctx, int fd, const void *buf, size_t n);

/* session_v2.c: the encoder of a Go 1.22+ trace on s->out_fd (staged: the
 * file grows by whole generations); close writes the last generation. */
int gt_session_v2_open(struct gt_session *s, int go_version);
int gt_session_v2_close(struct gt_session *s);
void gt_session_v2_free(struct gt_session *s);
uint64_t gt_session_v2_bytes(const struct gt_session *s);
/* The events of the file as `inspect` counts them (the v2 encoder's: a
 * GoStart is also a ProcStart, every generation restates the threads),
 * not the translator's v1 events. */
uint64_t gt_session_v2_events(const struct gt_session *s);
/* The rule the encoder refused, or NULL. */
const char *gt_session_v2_error(const struct gt_session *s);

/* window.c: the span of time a session's trace covers. */
void gt_session_window_open(struct gt_session *s, uint64_t ts);
int gt_session_in_window(struct gt_session *s, const struct gt_kev_hdr *ev);
void gt_session_targets_gone(struct gt_session *s, uint64_t ts);
void gt_session_window_close(struct gt_session *s, uint64_t now);

#endif
