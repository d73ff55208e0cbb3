/* Shared by the gt_analyze_v2*.c files only: the state of one analysis of
 * a Go 1.22+ (v2) file (struct v2run: its generation's events, the Ms, Ps
 * and goroutines as Go's order.go sees them, the merge heads) and the
 * functions the files hand each other.  Not a public API.
 *
 *   gt_analyze_v2.c          the entry: generations, dispatch, errors,
 *                            the legacy events handed to the analysis
 *   gt_analyze_v2_decode.c   a generation's batches read and decoded
 *   gt_analyze_v2_tables.c   strings and stacks (per generation in v2)
 *   gt_analyze_v2_status.c   GoStatus and the trace start
 *   gt_analyze_v2_go.c       goroutine transitions
 *   gt_analyze_v2_proc.c     P transitions (ProcStart ... , syscalls' P)
 *   gt_analyze_v2_heads.c    the Ms' runs of events and their heap
 *   gt_analyze_v2_order.c    which head may go next (order.go's rules) */
#ifndef GT_ANALYZE_V2_RUN_H
#define GT_ANALYZE_V2_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "gt_analyze_internal.h"
#include "v2/gt_v2.h"

/* One event of the generation (idx: its place as read, the tie-break:
 * its batch's index in the generation, then its rank in the batch). */
struct v2e {
	uint64_t ts, idx, m;
	uint64_t args[5];
	uint8_t type;
};

struct mstate {
	uint64_t g;
	int64_t p;
	uint8_t pre;    /* PRE_G, PRE_P: g, p bound at the first generation's
			 * start (its legacy events) before the M's own status
			 * event: order.go's M has none yet */
};
#define PRE_G 1
#define PRE_P 2
#define M_SEEN 4        /* order.go has a state for the M: an event of its
			 * went, or a GoStatus named it */

/* A P as order.go sees it: status, and its sequence number (gen: the
 * generation ordinal that numbered it; a ProcStatus restarts it at 0). */
struct pstate {
	uint8_t status; /* GT_V2_P_*, 0: never stated */
	uint32_t gen;
	uint64_t seq;
};

struct gstate {
	uint8_t status; /* GT_V2_G_*, 0: unknown (dead or never seen) */
	uint8_t sysblocked;
	uint8_t known;  /* order.go has its state (stated or created, not
			 * ended): gt_analyze_v2_rules.c */
	uint32_t gen;   /* generation (ordinal) of seq */
	uint64_t seq;   /* its sequence number in that generation */
};

/* A batch of state events (or CPU samples) of M m: r->batches[bi]. */
struct mbatch {
	uint64_t m;
	size_t bi;
};

/* An M's run of the generation's events, a merge head: its batches
 * r->order[pos..end), read one event at a time (ev: the next one). */
struct mhead {
	struct v2e ev;
	size_t pos, end;
	struct gt_v2_cursor c;  /* in batch r->order[pos] */
	uint32_t k;             /* events read of that batch */
	int64_t next_wait;  /* the next head waiting on the same goroutine */
	int waiting;
};

/* A pass over the generation's state events in the order read (a zeroed
 * struct starts at its first). */
struct v2scan {
	size_t bi;
	uint32_t k;
	int open;
	struct gt_v2_cursor c;
};

struct v2run {
	struct gt_analysis *a;
	struct gt_v2_file f;
	struct gt_v2_batch *batches;
	size_t nbatches, capbatches;
	size_t nev;                 /* the generation's state events */
	struct mbatch *order;       /* its batches of them, by M */
	size_t norder, caporder;
	struct gt_idmap ms, gs;     /* M -> mstate, G -> gstate */
	struct gt_idmap ps;         /* P -> pstate */
	struct gt_idmap lstk;       /* this generation's stack id -> global */
	struct gt_idmap content;    /* (pc hash, pc hash, n) -> global id */
	struct gt_idmap pcs;        /* this generation's PC -> its first
				     * frame's func and file string ids */
	int nfreq;                  /* this generation's Frequency batches */
	struct gt_idmap ranges;     /* (G, or PKEY of a P; begin type) ->
				     * the range in flight's string id + 1 */
	struct gt_idmap regions;    /* (G, depth) -> user region (task, name's
				     * offset and length); (G, ~0) -> depth */
	uint64_t gcseq;             /* the GC's sequence number */
	int gcstate;                /* 0 undetermined, 1 running, 2 not */
	struct mhead *heads;        /* per M, then the heap of ready ones */
	size_t nheads, capheads;
	size_t *heap;               /* indexes into heads: those that may go */
	size_t nheap, capheap, nwaiting;
	struct gt_idmap waits;      /* G, or PKEY(P), -> first head waiting on
				     * it (+1) */
	int disorder;               /* nothing could go: time order for the
				     * rest of the generation */
	uint64_t gen;               /* current generation's number */
	uint32_t genidx;            /* its ordinal, from 1 */
	uint64_t nextstk;
	int started;                /* the first generation was done */
};

/* The wait key of a P (a goroutine's is its id: a clash only wakes a
 * head to look again). */
#define PKEY(p) ((uint64_t)(p) | (1ull << 63))

/* The state of M m, G g, P p, created (zeroed; an M holds no P) when new;
 * NULL if memory ran out. */
static inline struct mstate *mst(struct v2run *r, uint64_t m)
{
	int isnew;
	struct mstate *s = gt_idmap_insert(&r->ms, &m, &isnew);

	if (s && isnew)
		s->p = -1;
	return s;
}

static inline struct gstate *gst(struct v2run *r, uint64_t g)
{
	int isnew;

	return gt_idmap_insert(&r->gs, &g, &isnew);
}

static inline struct pstate *pst(struct v2run *r, uint64_t p)
{
	int isnew;

	return gt_idmap_insert(&r->ps, &p, &isnew);
}

/* ---- errors and output (gt_analyze_v2.c) ---- */
/* The error (rule broken, fmt with one number): -EINVAL. */
int gt_an_v2_fail(struct v2run *r, const char *rule, const char *fmt, unsigned long long x);
/* An event that breaks a state rule of Go's reader: counted, or with
 * opts.strict the error. */
int gt_an_v2_anomaly(struct v2run *r, const char *rule, const char *fmt, unsigned long long x);
/* gt_an_v2_anomaly() with a message made already. */
int gt_an_v2_anomaly_msg(struct v2run *r, const char *rule, const char *msg);
/* Hands the legacy event type (GT_EV_*) to the analysis. */
int gt_an_v2_emit(struct v2run *r, int type, uint64_t g, int64_t p, uint64_t a0, uint64_t a1,
		  uint64_t stk, uint64_t ts);

/* ---- reading (gt_analyze_v2_decode.c, gt_analyze_v2_tables.c) ---- */
/* Reads the batches of one generation; the next one's first batch is kept
 * in *next.  1 (a generation read), 0 (end), < 0. */
int gt_an_v2_read_gen(struct v2run *r, struct gt_v2_batch *next, int *have_next);
/* The batch's tables into the analysis, its events checked and counted
 * (r->nev). */
int gt_an_v2_decode_batch(struct v2run *r, const struct gt_v2_batch *b);
/* The next state event of batch r->batches[bi] from cursor c (*k: how many
 * were read of it) into *out: 1, 0 at the batch's end, < 0. */
int gt_an_v2_next_kept(struct v2run *r, struct gt_v2_cursor *c, size_t bi, uint32_t *k,
		       struct v2e *out);
/* The next state event of the generation in the order read: 1, 0 at the
 * end, < 0. */
int gt_an_v2_scan(struct v2run *r, struct v2scan *s, struct v2e *out);
/* A new generation: the last one's strings and stack ids are gone. */
void gt_an_v2_new_tables(struct v2run *r);
/* Copies the frames of the stacks this generation first gave (once its
 * strings are read); -ENOMEM. */
int gt_an_v2_name_stacks(struct v2run *r);
int gt_an_v2_on_string(struct v2run *r, const struct gt_v2_ev *e);
int gt_an_v2_on_stack(struct v2run *r, const struct gt_v2_ev *e, const struct gt_v2_batch *b);
/* The global id of this generation's stack id (0: none or unknown). */
uint64_t gt_an_v2_stk(struct v2run *r, uint64_t id);
/* Every frame's func and file string ids in this generation's strings
 * (Go's validateStackStrings), once the generation is decoded. */
int gt_an_v2_check_frames(struct v2run *r);
/* Every stack and string id the event names in its generation's tables
 * (Go's validateTableIDs). */
int gt_an_v2_check_ids(struct v2run *r, const struct v2e *e);

/* ---- the state machine (gt_analyze_v2_status.c, _go.c, _proc.c) ---- */
int gt_an_v2_on_status(struct v2run *r, const struct v2e *e);
/* The first generation: what a legacy runtime wrote at trace start. */
int gt_an_v2_start(struct v2run *r);
int gt_an_v2_on_go(struct v2run *r, const struct v2e *e, struct mstate *ms);
int gt_an_v2_on_proc(struct v2run *r, const struct v2e *e, struct mstate *ms);
/* g's sequence number is seq in this generation (GoStatus, GoCreate: 0;
 * GoStart, GoUnblock, GoSwitch: theirs). */
int gt_an_v2_set_seq(struct v2run *r, uint64_t g, uint64_t seq);
/* g's syscall blocks (GoSysBlock), once per syscall. */
int gt_an_v2_sys_block(struct v2run *r, uint64_t g, int64_t p, uint64_t ts);
/* The M's P into or out of a syscall (GoSyscallBegin, GoSyscallEnd,
 * GoDestroySyscall). */
int gt_an_v2_syscall_p(struct v2run *r, const struct v2e *e, struct mstate *ms);
/* Why a P event that waits cannot go (the generation is stuck on it). */
void gt_an_v2_p_stuck(struct v2run *r, const struct v2e *e, char *msg, size_t len);

/* ---- Go's other rules (gt_analyze_v2_rules.c) ---- */
/* What order.go requires of the event and its M's state before it (the
 * M's goroutine and P, the goroutine's status, ranges in flight, the GC's
 * sequence): a broken rule is an anomaly ("context"), for inspect an
 * error.  Updates the ranges and the GC's state. */
int gt_an_v2_rules(struct v2run *r, const struct v2e *e, const struct mstate *ms);
/* A GC event whose sequence number is not the GC's next: it waits. */
int gt_an_v2_gc_waits(const struct v2run *r, const struct v2e *e);
/* The wait key of the GC's sequence. */
#define GCKEY (1ull << 62)

/* ---- order (gt_analyze_v2_heads.c, gt_analyze_v2_order.c) ---- */
/* The generation's events grouped per M (each M's own order), one head
 * per M, each at its first event, all in the heap. */
int gt_an_v2_split(struct v2run *r);
/* Head h to its next event: 1, 0 (its M has no more), < 0. */
int gt_an_v2_head_next(struct v2run *r, size_t h);
void gt_an_v2_heap_push(struct v2run *r, size_t h);
size_t gt_an_v2_heap_pop(struct v2run *r);
/* The next head in order (see gt_analyze_v2_order.c). */
int gt_an_v2_next_head(struct v2run *r, size_t *out);
/* g (or PKEY of a P) changed: the heads waiting on it may go now. */
void gt_an_v2_wake(struct v2run *r, uint64_t key);

#endif
