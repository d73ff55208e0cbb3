/* The encoder of Go 1.22+ execution traces (v2; docs/format.md, "Writing
 * v2"): a producer of a "go 1.22 trace" or "go 1.23 trace" file from
 * scheduling facts, with Go's reader's model kept here so the caller never
 * counts sequence numbers nor restates state:
 *
 *   - generations: gt_v2enc_generation ends one (its batches, then its
 *     frequency, string and stack batches) and opens the next, restating
 *     every P (ProcStatus) and goroutine (GoStatus) in it: a file cut after
 *     any generation is complete and readable;
 *   - batches per M: each M's events go to its own buffer, written as an
 *     EventBatch when it would pass Go's 64 KiB limit and at generation end;
 *     a batch's first event is at the batch's time (delta 0), a later
 *     one's time is a delta from its batch's previous one (a time
 *     earlier than the M's last in the generation is raised to it: deltas
 *     are unsigned, and an M's batches follow each other);
 *   - tables per generation: strings (gt_v2enc_string) and stacks
 *     (gt_v2enc_stack, frames named by interned strings) get ids 1, 2, ...
 *     valid until the generation ends;
 *   - sequence numbers: a goroutine's (GoStart, GoUnblock) and a P's
 *     (ProcStart, ProcSteal, GoSyscallBegin), counted from 0 at each
 *     generation's status or at creation, as order.go wants them;
 *   - the rules of order.go are checked before an event is written (a
 *     GoStart needs a P and no running goroutine on its M, a GoBlock a
 *     running goroutine, ...): a broken one is -EINVAL with e->error, and
 *     the file is not written further.
 *
 * In the first generation a P or goroutine never seen is stated where it is
 * first used (ProcStatus idle before ProcStart, GoStatus runnable before
 * GoStart, waiting before GoUnblock), as the runtime states what ran before
 * tracing began; after it, a goroutine must be created (GoCreate).
 *
 * Memory: one 64 KiB buffer per M seen, a few words per P and goroutine,
 * and the current generation's tables.  Output goes through the caller's
 * write function, whole batches at a time.  It includes format/util/,
 * format/wire/ and gt_v2.h only. */
#ifndef GT_V2ENC_H
#define GT_V2ENC_H

#include <stddef.h>
#include <stdint.h>

#include "util/gt_idmap.h"
#include "util/gt_strset.h"

/* Writes n bytes; 0 or a negative errno. */
typedef int (*gt_v2enc_write_fn)(void *ctx, const void *p, size_t n);

struct gt_v2enc_frame {
	uint64_t pc;
	const char *func, *file;
	uint64_t line;
};

struct gt_v2enc {
	int version;                  /* 22 or 23 */
	uint64_t freq;                /* timestamp units per second */
	gt_v2enc_write_fn write;
	void *ctx;
	uint64_t gen;                 /* the open generation, from 1 */
	struct gt_idmap ms, ps, gs;   /* M -> struct gt_v2enc_m, P, G states */
	struct gt_strset strings;     /* this generation's; id = string id */
	struct gt_strset stacks;      /* frames as words; id = stack id */
	struct gt_idmap pcs;          /* pc -> its frame's string ids, this
				       * generation (Go's reader keeps the
				       * first frame of a pc too) */
	int failed;                   /* an error was returned: write no more */
	char error[256];
	uint64_t events;              /* events of the event batches and CPU
				       * samples, as a reader counts them
				       * (inspect; GoStatus restatements
				       * included): a recording's summary */
	uint64_t written;             /* bytes given to the write function */
	uint64_t complete;            /* of them, through the last whole
				       * generation (a cut there is readable) */
	int stage;                    /* gt_v2enc_stage() */
	uint8_t *staged;              /* the open generation's bytes */
	size_t nstaged, capstaged;
	uint64_t (*samples)[5];       /* this generation's CPU samples */
	size_t nsamples, capsamples;
};

/* Writes the header.  version 22 or 23; freq > 0 (1e9: times in ns).
 * 0, -EINVAL (e->error), or the write function's error. */
int gt_v2enc_init(struct gt_v2enc *e, int version, uint64_t freq, gt_v2enc_write_fn write,
		  void *ctx);
void gt_v2enc_free(struct gt_v2enc *e);

/* The id of s in this generation's table (interned), 0 for "" or on error
 * (e->failed). */
uint64_t gt_v2enc_string(struct gt_v2enc *e, const char *s);
/* The id of a stack of n frames (innermost first, n <= 128) in this
 * generation's table, 0 for no frames or on error. */
uint64_t gt_v2enc_stack(struct gt_v2enc *e, const struct gt_v2enc_frame *f, size_t n);
/* A stack id of this generation whose frames are given later, before the
 * generation ends (gt_v2enc_stack_define, once): a thread's name known
 * only at the generation's end.  0 on error.  One left undefined is not
 * written: no event may use it then. */
uint64_t gt_v2enc_stack_reserve(struct gt_v2enc *e);
int gt_v2enc_stack_define(struct gt_v2enc *e, uint64_t id, const struct gt_v2enc_frame *f,
			  size_t n);

/* A CPU sample at ts of M m, P p and goroutine g (GT_V2ENC_NONE: none),
 * stack an id of gt_v2enc_stack: written in the generation's CPUSamples
 * batch at its end.  0 or -ENOMEM. */
int gt_v2enc_cpu_sample(struct gt_v2enc *e, uint64_t ts, uint64_t m, uint64_t p, uint64_t g,
			uint64_t stack);

/* From now on, hold the open generation's bytes and give them to the write
 * function whole at its end: a file killed at any time then ends at a
 * generation boundary (Go's reader refuses a partial one).  The caller
 * bounds the memory by ending generations (e->nstaged says how much). */
void gt_v2enc_stage(struct gt_v2enc *e);

/* Ends the open generation (every batch of it written, then its frequency,
 * strings, stacks and CPU samples batches) and opens the next
 * at time ts, stating every P and goroutine in it.  0 or an error. */
int gt_v2enc_generation(struct gt_v2enc *e, uint64_t ts);
/* Ends the last generation.  The file is complete. */
int gt_v2enc_finish(struct gt_v2enc *e);

/* A timed event written as given on M m (args after the time, as many as
 * the type has): for the events without a modelled state (GC, heap, user
 * annotations, ProcsChange).  -EINVAL for a scheduling event (those go
 * through the calls below) or a type the version lacks. */
int gt_v2enc_raw(struct gt_v2enc *e, uint64_t m, uint64_t ts, unsigned type,
		 const uint64_t *args, unsigned nargs);

/* First generation only: P p (GT_V2_P_*) or goroutine g (GT_V2_G_*) as it
 * was when tracing began; running (and syscall) bind it to M m. */
int gt_v2enc_proc_status(struct gt_v2enc *e, uint64_t m, uint64_t ts, uint64_t p, int status);
int gt_v2enc_go_status(struct gt_v2enc *e, uint64_t m, uint64_t ts, uint64_t g, int status);
/* The same with the goroutine's stack (GoStatusStack: Go 1.23 files only;
 * Go 1.23 names a goroutine that never runs after it). */
int gt_v2enc_go_status_stack(struct gt_v2enc *e, uint64_t m, uint64_t ts, uint64_t g,
			     int status, uint64_t stack);

/* Scheduling on M m at time ts.  Stacks are ids of gt_v2enc_stack (0:
 * none), reasons ids of gt_v2enc_string. */
int gt_v2enc_proc_start(struct gt_v2enc *e, uint64_t m, uint64_t ts, uint64_t p);
int gt_v2enc_proc_stop(struct gt_v2enc *e, uint64_t m, uint64_t ts);
/* m takes P p from the M that holds it in a syscall. */
int gt_v2enc_proc_steal(struct gt_v2enc *e, uint64_t m, uint64_t ts, uint64_t p);
int gt_v2enc_go_create(struct gt_v2enc *e, uint64_t m, uint64_t ts, uint64_t g, uint64_t stack,
		       uint64_t parent_stack);
/* The same, the new goroutine waiting (GoCreateBlocked: Go 1.23 files only,
 * as the runtime writes it for a goroutine that starts parked). */
int gt_v2enc_go_create_blocked(struct gt_v2enc *e, uint64_t m, uint64_t ts, uint64_t g,
			       uint64_t stack, uint64_t parent_stack);
int gt_v2enc_go_start(struct gt_v2enc *e, uint64_t m, uint64_t ts, uint64_t g);
int gt_v2enc_go_stop(struct gt_v2enc *e, uint64_t m, uint64_t ts, uint64_t reason,
		     uint64_t stack);
int gt_v2enc_go_block(struct gt_v2enc *e, uint64_t m, uint64_t ts, uint64_t reason,
		      uint64_t stack);
int gt_v2enc_go_unblock(struct gt_v2enc *e, uint64_t m, uint64_t ts, uint64_t g, uint64_t stack);
int gt_v2enc_go_destroy(struct gt_v2enc *e, uint64_t m, uint64_t ts);
int gt_v2enc_syscall_begin(struct gt_v2enc *e, uint64_t m, uint64_t ts, uint64_t stack);
/* GoSyscallEnd if m still holds its P, else GoSyscallEndBlocked (the
 * goroutine is then runnable and m has none). */
int gt_v2enc_syscall_end(struct gt_v2enc *e, uint64_t m, uint64_t ts);

/* ---- shared by the encoder's files (gt_v2enc*.c) ---------------------- */

#define GT_V2ENC_NONE UINT64_MAX

struct gt_v2enc_m {
	uint8_t *buf;         /* its open batch's events (GT_V2_MAX_BATCH) */
	size_t len;
	uint64_t time, last;  /* the batch's time, its last event's */
	uint64_t p, g;        /* GT_V2ENC_NONE: none */
};

struct gt_v2enc_p {
	uint8_t status;       /* GT_V2_P_* */
	uint64_t seq;
	uint64_t m;           /* running or syscall: its M */
};

struct gt_v2enc_g {
	uint8_t status;       /* GT_V2_G_* */
	uint64_t seq;
	uint64_t m;           /* running or syscall: its M */
};

/* Writes one timed event (args after the time) on m's batch. */
int gt_v2enc_emit(struct gt_v2enc *e, uint64_t m, uint64_t ts, unsigned type,
		  const uint64_t *args, unsigned nargs);
struct gt_v2enc_m *gt_v2enc_mstate(struct gt_v2enc *e, uint64_t m);
int gt_v2enc_fail(struct gt_v2enc *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Writes every P's and goroutine's status at the start of a generation. */
int gt_v2enc_restate(struct gt_v2enc *e, uint64_t ts);

#endif
