/* Go 1.19's parseEvents, one record at a time: the event a record of the
 * legacy format (1.5 to 1.21) stands for, with its absolute time, its
 * sequence number (1.5), and the P and goroutine it belongs to.  The
 * checker (gt_check*.c) and the analysis (gt_analyze*.c) both read the Ps'
 * streams through it.  Not a public API. */
#ifndef GT_PARSE_H
#define GT_PARSE_H

#include <stdint.h>

#include "gt_reader.h"

/* One event as parseEvents builds it (Go's Event), compact. */
struct gt_pev {
	int64_t ts;       /* ticks; after ordering, GoSysExit may take args[2] */
	int64_t seq;      /* 1.5 only: batch seq + delta */
	uint64_t g;
	uint64_t args[3];
	uint64_t stk;
	int64_t p;
	uint64_t off;     /* byte offset of the record */
	uint32_t src;     /* the batch (P) it was read from, as the reader numbers them */
	uint8_t type;
};

/* What parseEvents carries from one record of a P to the next. */
struct gt_pstate {
	int64_t p;        /* the P of the current batch */
	int64_t ts, seq;  /* the P's clocks: last event's time and sequence */
	uint64_t g;       /* lastGs[p]: the goroutine running on the P */
};

/* Adds raw's time delta (and before 1.7 its sequence delta) to st's
 * clocks, wrapping as Go's int64 sums do.  raw is an event record with
 * its timestamp (and sequence) present. */
void gt_parse_clock(int version, struct gt_pstate *st, const struct gt_raw_event *raw);

/* The event of raw, read at st (clocks advanced): values past the time go
 * to args (at most 3), the last to stk if the type has a stack.  No rule
 * checked, no per-type fixup yet (gt_parse_fix). */
void gt_parse_event(int version, struct gt_pstate *st, const struct gt_raw_event *raw,
		    struct gt_pev *e);

/* parseEvents' per-type fixups: the goroutine an event is about (and the
 * one left running on the P), a CPU sample's own time, P and goroutine. */
void gt_parse_fix(struct gt_pstate *st, struct gt_pev *e);

/* 1 if the event takes the running goroutine off its P (GoEnd, GoStop,
 * GoSched, GoPreempt, GoSleep, GoBlock*, GoSysBlock). */
int gt_parse_stops(int type);

#endif
