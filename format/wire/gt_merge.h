/* Go 1.19's order1007 (internal/trace/order.go): merges the Ps' event
 * streams into one that respects every goroutine's sequence numbers and
 * states, earliest first.  The checker and the analysis both merge
 * through it; each brings its own streams (callbacks), keeps the
 * goroutines' ordering state where it likes, and chooses what a head
 * that lost its turn means.  Not a public API.
 *
 * Go rescans every stream for each event it merges; here a stream whose
 * head waits for a goroutine's state sleeps on that goroutine's wait list
 * and is looked at again only when that goroutine moves, and the heads
 * that may go wait in a heap: O(events * log Ps) even with thousands of
 * Ps.  Memory is per stream, not per event. */
#ifndef GT_MERGE_H
#define GT_MERGE_H

#include <stdint.h>

#include "gt_parse.h"

/* order.go's pseudo-goroutines: events that order nothing, and GCStart's
 * (keyed by the GC's sequence number). */
#define GT_MERGE_UNORDERED UINT64_MAX
#define GT_MERGE_GARBAGE (UINT64_MAX - 1)

/* order.go's gStatus. */
enum { GT_MERGE_DEAD, GT_MERGE_RUNNABLE, GT_MERGE_RUNNING, GT_MERGE_WAITING };

/* One goroutine's ordering state; a new one is {0, GT_MERGE_DEAD, -1}. */
struct gt_merge_g {
	uint64_t seq;
	int status;
	int64_t wait_head; /* first stream whose head waits on it, or -1 */
};

struct gt_merge_ops {
	/* *e = stream s's next event not merged yet (it stays valid, and
	 * is the one returned, until taken), or NULL when s has no more.
	 * 0 or what stops the merge (< 0). */
	int (*head)(void *arg, uint32_t s, struct gt_pev **e);
	/* Goroutine g's ordering state (g may be GT_MERGE_GARBAGE), new
	 * ones as above; NULL if memory ran out.  The pointer is used
	 * before any other call. */
	struct gt_merge_g *(*gstate)(void *arg, uint64_t g);
	/* e, the head of stream s, is the next event in merged order ("Local"
	 * types made plain).  0 or what stops the merge (< 0). */
	int (*take)(void *arg, uint32_t s, struct gt_pev *e);
};

struct gt_merge_cfg {
	uint32_t nsrc;   /* streams 0..nsrc-1 */
	int by_seq;      /* 1.5: by sequence number alone, no states */
	int tie_by_src;  /* equal times: the lower stream first (else the
			  * head that became ready first) */
	int strict;      /* a head whose goroutine moved on before its turn
			  * is an error (Go 1.19 panics); else it waits again */
};

/* Where the merge stopped short. */
struct gt_merge_stop {
	struct gt_pev *ev;
	uint32_t src;
	uint64_t g;      /* GT_MERGE_BROKEN: the goroutine */
};

#define GT_MERGE_BROKEN 1 /* strict: ev's goroutine g moved on before its turn */
#define GT_MERGE_STUCK 2  /* heads left that can never be ready (ev: the
			   * first stream's) */

/* Merges every stream, each event handed to take in order.  0 (*merged:
 * how many), GT_MERGE_BROKEN or GT_MERGE_STUCK (*stop says where), -ENOMEM,
 * or what a callback returned. */
int gt_merge_run(const struct gt_merge_cfg *cfg, const struct gt_merge_ops *ops, void *arg,
		 uint64_t *merged, struct gt_merge_stop *stop);

#endif
