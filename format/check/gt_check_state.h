/* Shared by gt_check_state.c (the state machine) and gt_check_end.c (the
 * end-of-trace rules and the per-goroutine report).  Not a public API. */
#ifndef GT_CHECK_STATE_H
#define GT_CHECK_STATE_H

#include <stdint.h>

#include "gt_check_internal.h"

/* postProcessTrace's goroutine states (same order as enum gt_gstate). */
enum { G_DEAD, G_RUNNABLE, G_RUNNING, G_WAITING };

/* Go's gdesc (event pointers reduced to what the checks need), plus the
 * statistics inspect reports. */
struct gt_gdesc {
	int state;
	uint8_t ev_type;      /* g.ev: what made it waiting/runnable (0 = nil) */
	uint8_t has_start;    /* g.evStart != nil */
	uint8_t has_create;   /* g.evCreate != nil */
	uint8_t mark_assist;  /* g.evMarkAssist != nil */
	uint8_t created, ended, runnable_known;
	uint64_t create_stk;  /* new-goroutine stack id from GoCreate */
	uint64_t start_off;   /* offset of the last GoStart */
	int64_t region_top;   /* innermost active region, or -1 */
	/* statistics */
	uint64_t starts, unblocks, blocks[GT_BLK_COUNT];
	int64_t running_since, runnable_since; /* ns */
	uint64_t running_ns, runnable_ns;
};

/* Go's pdesc, plus where things opened for the end-of-trace errors. */
struct gt_pdesc {
	int running;
	uint64_t g;
	uint64_t start_off; /* offset of the last ProcStart */
	uint64_t open_off;  /* offset of the unfinished sweep or per-P STW */
	uint8_t stw, sweep;
};

/* An open user region; a goroutine's regions form a stack through prev. */
struct gt_region {
	uint64_t task, name;
	int64_t prev;
};

/* Everything the state pass carries from event to event. */
struct gt_state {
	struct gt_ctx *c;
	struct gt_idmap gs, ps, tasks;
	struct gt_region *regions;
	int64_t nregions, capregions;
	uint8_t gc;
	int stw;
	uint64_t gc_off, stw_off;
	int64_t min_ts;
	double ns_per_tick;
	int64_t now;
};

/* End-of-trace rules (viewer and docs/format.md): 0 or 1 (error set). */
int gt_state_check_end(struct gt_state *s);
/* Calls fn for each goroutine, in id order: 0 or -ENOMEM. */
int gt_state_report(struct gt_state *s, gt_goroutine_fn fn, void *arg);

#endif
