/* Folder engine/: sessions over one capture: their targets and /proc
 * snapshot, the dispatch of events to translators, stacks, memtrack, the
 * trace files' writers. It may include every layer below it (common, sym,
 * capture, translate, memtrack) and is what both programs drive.
 *
 * The capture engine and recording sessions: the one API that gotracectl's
 * embedded mode and the gotraced daemon both drive.
 *
 * An engine loads and attaches the BPF programs once and drains the per-CPU
 * ring buffers; each session has its own targets (PIDs or a cgroup), its own
 * translator, symbolizer state, writer, output descriptor and statistics.
 * Events are dispatched to sessions by the `sessions` bit mask that BPF puts
 * in every event header.
 *
 * Return convention: 0 or a negative errno; gt_engine_open writes its
 * failure into the caller's buffer, later calls leave a message for the
 * user in gt_engine_error(engine).
 */
#ifndef GT_SESSION_H
#define GT_SESSION_H

#include <stdint.h>
#include <sys/types.h>

#include "common/session_opts.h"

struct gt_engine;
struct gt_session;

struct gt_engine_opts {
	unsigned ring_bytes_per_cpu;   /* 0 = default (gt_capture_ring_default) */
	int big_rings;                 /* with ring_bytes_per_cpu 0: 4 times the
					* default (--call-graph=dwarf's 8 KiB
					* copies, unwound slowly) */
	unsigned stack_map_entries;    /* 0 = default (16384) */
	int verbose;                   /* libbpf debug output to stderr */
	int background;                /* 1: start and stop without waiting
					* (gotraced): see gt_session_starting,
					* gt_session_ended */
	int many_users;                /* 1: the engine serves many users
					* (gotraced): stack lookups never wait
					* for a binary's load (its thread serves
					* them all, and a user's files set how
					* long their load takes: symbolize.h,
					* gt_symbolizer_set_wait), and each
					* user's loads run within a budget
					* (sym/loader.h) */
	int one_session;               /* 1: the engine runs one session
					* (gotracectl embedded): memory tracking
					* loads only what it asked for, and a
					* later session may be refused it */
	int no_syscall_entries;        /* 1: no session will record every
					* syscall entry (gotracectl embedded
					* without --syscalls=all): that program
					* is not loaded */
	const struct gt_session_opts *only; /* the one session's options, known
					* before load (gotracectl embedded):
					* the code of what they do not use
					* (cgroups, -a, dwarf copies, a non-root
					* owner's rule) is left out of the
					* programs, verified in less time; a
					* session that wants it is refused */
};

/* Loads the BPF programs (attached only while a session records).  0, or
 * -errno with why saying what failed (e.g. the missing kernel feature). */
int gt_engine_open(struct gt_engine **out, const struct gt_engine_opts *opts,
		   char *why, size_t whylen);
void gt_engine_close(struct gt_engine *e); /* stops and finishes every session */

/* How long gt_engine_open took, by step, in ns (gotracectl record -v). */
struct gt_engine_timing {
	uint64_t kernel_check_ns;      /* the kernel's BTF read for the features */
	uint64_t open_ns;              /* BPF object opened, per-CPU offsets, rings */
	uint64_t load_ns;              /* CO-RE relocation, the verifier */
	uint64_t maps_ns;              /* ...of which the maps made, then at once: */
	uint64_t progs_ns[2];          /* ...the programs, in two groups on two
					* threads (GT_CAPTURE_LOAD_GROUPS) */
	uint64_t mem_ns;               /* ...and the memory programs (one_session) */
	uint64_t rings_ns;             /* ...and the rings installed */
	uint64_t verified_insns;       /* the capture's programs: the verifier's work */
	uint64_t probe_ns;             /* the mmap perf events tried */
	uint64_t total_ns;             /* all of gt_engine_open */
};
void gt_engine_timing(const struct gt_engine *e, struct gt_engine_timing *t);

/* A descriptor that becomes readable when events are waiting (epoll). */
int gt_engine_fd(struct gt_engine *e);

/* Drains the rings for up to timeout_ms, translating events into sessions;
 * ends sessions whose duration expired or whose targets all exited.
 * Returns the number of events consumed, or -errno (-EINTR is not an error). */
int gt_engine_poll(struct gt_engine *e, int timeout_ms);

/* With opts.background: a descriptor readable when a session's start or
 * stop finished in the background (gt_engine_poll then completes it);
 * -1 otherwise. */
int gt_engine_notify_fd(struct gt_engine *e);
/* A descriptor readable when a read posted to a loader thread answered
 * (sym/loader.h, gt_sym_calls_fd: Go build info, pprof labels, CPython
 * detection and code objects; gt_engine_poll takes the answers), or
 * -errno. */
int gt_engine_calls_fd(struct gt_engine *e);

/* Stops every session at one instant (their traces all end now) and
 * finishes them, waiting for what runs in the background. */
void gt_engine_stop_all(struct gt_engine *e, const char *reason);

/* gotracectl's own command (`record -- CMD`, child_launch.h): whether the
 * program CMD names is Go is read from now on, before the held child
 * execs it (start it while the BPF programs load).  NULL without memory. */
struct gt_go_preread;
struct gt_go_preread *gt_engine_go_preread(const char *cmd);
void gt_engine_go_preread_drop(struct gt_go_preread *pr); /* NULL: nothing */
/* Waits for pr's read as a caller that lets loads wait does (sym/loader.h:
 * while it makes progress, a few seconds at most): gotracectl, before it
 * releases the child, when the read outlasts the programs' load (an
 * emulated machine). */
void gt_engine_go_preread_wait(struct gt_go_preread *pr);

/* The caller saw process tgid, traced, exec just now (the child released):
 * its goroutine offsets go to BPF now, pr's if tgid runs the file pr read
 * (pr is let go), else from a read of its program posted now rather than
 * when the exec's event is read from the rings (a tick later here, seconds
 * on an emulated machine). */
void gt_engine_exec_seen(struct gt_engine *e, uint32_t tgid, struct gt_go_preread *pr);

/* Last error message of an open engine (empty string if none). */
const char *gt_engine_error(struct gt_engine *e);

/* Starts recording.  With opts.background, what is slow (memtrack's
 * probes) goes on in the background: the session is starting until
 * gt_engine_poll completes it, and if that fails it ends with an error and
 * its reason (gt_session_stats). */
int gt_session_start(struct gt_engine *e, const struct gt_session_opts *opts,
		     struct gt_session **out);
int gt_session_starting(const struct gt_session *s);

enum gt_session_state { GT_SESSION_RUNNING, GT_SESSION_ENDED };

struct gt_session_stats {
	int id;
	enum gt_session_state state;
	const char *end_reason;        /* "duration", "stopped", "targets exited", ... */
	uint64_t started_ns;           /* CLOCK_MONOTONIC */
	uid_t owner_uid;
	GT_SESSION_COUNTER_FIELDS      /* elapsed_ns, trace_events, drops, ... */
};
void gt_session_stats(const struct gt_session *s, struct gt_session_stats *st);

/* Ends the session: every thread descheduled, every P stopped, footer
 * written.  The trace ends now, or earlier if its duration or its last
 * target's exit came first (events stamped later are not written), however
 * long the teardown takes; the stats' elapsed_ns is the trace's span.  The
 * session stays allocated (for its stats) until freed.
 * Returns 0 or the write error that made the file unusable.
 * With opts.background the teardown may go on after it returns: the
 * session is finished (and its return value known) once gt_session_ended;
 * gt_session_free waits for it. */
int gt_session_stop(struct gt_session *s, const char *reason);
int gt_session_ended(const struct gt_session *s);

/* A flight recording (opts.flight; docs/design.md, "Flight recorder").
 * What it keeps stays until gt_session_free, so a dump may follow the stop.
 * dump: the window as one trace on fd (which it does not close), marked
 * with what fired if mark, ending now (at the session's end once it
 * stopped): gt_flight_dump; 0 or -errno with why.  fired: a trigger just
 * accepted (1 and *out).  due: the accepted trigger whose --after passed,
 * or with force any accepted one (1 and *out). */
int gt_session_flight_dump(struct gt_session *s, int fd, const struct gt_flight_fired *mark,
			   char *why, size_t whylen);
/* The same, written with as's file-system ids (gotraced: the user's file;
 * common/fs_ids.h). */
struct gt_fs_ids;
int gt_session_flight_dump_as(struct gt_session *s, int fd, const struct gt_flight_fired *mark,
			      const struct gt_fs_ids *as, char *why, size_t whylen);
/* The same without waiting (gotraced answers other clients meanwhile):
 * begin writes it on a thread of its own, done says 1 once it is written
 * (poll it while the engine's rings are read), end waits for the thread
 * and says how it went (0 or -errno with why).  A dump begun is ended
 * before gt_session_free. */
struct gt_flight_dump;
int gt_session_flight_dump_begin(struct gt_session *s, int fd, const struct gt_flight_fired *mark,
				 const struct gt_fs_ids *as, struct gt_flight_dump **out,
				 char *why, size_t whylen);
int gt_session_flight_dump_done(const struct gt_flight_dump *d);
int gt_session_flight_dump_end(struct gt_session *s, struct gt_flight_dump *d, char *why,
			       size_t whylen);
int gt_session_flight_fired(struct gt_session *s, struct gt_flight_fired *out);
int gt_session_flight_due(struct gt_session *s, int force, struct gt_flight_fired *out);
void gt_session_flight_stats(const struct gt_session *s, struct gt_flight_stats *st);

/* syscalls.c: this architecture's syscall names (record --trigger
 * syscall:NAME): NULL for a number it does not know, -1 for a name. */
const char *gt_engine_syscall_name(int64_t nr);
int64_t gt_engine_syscall_nr(const char *name);

/* flight_parse.c: --trigger SPEC: KIND>DURATION[@NAME] with KIND
 * sched-delay, offcpu, syscall or syscall:NAME; 0, or -EINVAL with why.
 * --flight-size: a count of bytes with an optional K, M or G (binary), at
 * least GT_FLIGHT_MIN_SIZE; 0 or -EINVAL. */
int gt_flight_trigger_parse(const char *spec, struct gt_flight_trigger *t, char *why,
			    size_t whylen);
int gt_flight_size_parse(const char *s, uint64_t *bytes);
/* A trigger's part of a dump's file name: "-offcpu", "-syscall-fsync". */
void gt_flight_trigger_label(const struct gt_flight_trigger *t, char *buf, size_t len);
void gt_session_free(struct gt_session *s);

#endif
