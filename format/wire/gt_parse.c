/* parseEvents, one record at a time (see gt_parse.h). */
#include <string.h>

#include "gt_events.h"
#include "gt_parse.h"

void gt_parse_clock(int version, struct gt_pstate *st, const struct gt_raw_event *raw)
{
	/* Go's int64 sums wrap; so do these, in unsigned arithmetic (a
	 * signed overflow is undefined in C: hostile files reach it) */
	if (version < 1007) {
		st->seq = (int64_t)((uint64_t)st->seq + raw->args[0]);
		st->ts = (int64_t)((uint64_t)st->ts + raw->args[1]);
	} else {
		st->ts = (int64_t)((uint64_t)st->ts + raw->args[0]);
	}
}

void gt_parse_event(int version, struct gt_pstate *st, const struct gt_raw_event *raw,
		    struct gt_pev *e)
{
	size_t base = version < 1007 ? 2 : 1;
	/* a record may say more values than the reader keeps */
	size_t n = raw->nargs < GT_READER_MAX_ARGS ? raw->nargs : GT_READER_MAX_ARGS;

	gt_parse_clock(version, st, raw);
	memset(e, 0, sizeof(*e));
	e->off = raw->off;
	e->type = raw->type;
	e->ts = st->ts;
	e->seq = st->seq;
	e->p = st->p;
	e->g = st->g;
	if (gt_event_descs[raw->type].has_stack && n > base)
		e->stk = raw->args[--n];
	for (size_t i = base; i < n && i - base < 3; i++)
		e->args[i - base] = raw->args[i];
}

int gt_parse_stops(int type)
{
	switch (type) {
	case GT_EV_GO_END: case GT_EV_GO_STOP: case GT_EV_GO_SCHED:
	case GT_EV_GO_PREEMPT: case GT_EV_GO_SLEEP: case GT_EV_GO_BLOCK:
	case GT_EV_GO_BLOCK_SEND: case GT_EV_GO_BLOCK_RECV:
	case GT_EV_GO_BLOCK_SELECT: case GT_EV_GO_BLOCK_SYNC:
	case GT_EV_GO_BLOCK_COND: case GT_EV_GO_BLOCK_NET:
	case GT_EV_GO_SYSBLOCK: case GT_EV_GO_BLOCK_GC:
		return 1;
	}
	return 0;
}

void gt_parse_fix(struct gt_pstate *st, struct gt_pev *e)
{
	if (gt_parse_stops(e->type)) {
		st->g = 0;
		return;
	}
	switch (e->type) {
	case GT_EV_GO_START: case GT_EV_GO_START_LOCAL: case GT_EV_GO_START_LABEL:
		st->g = e->args[0];
		e->g = st->g;
		break;
	case GT_EV_GC_START: case GT_EV_GC_DONE: case GT_EV_GC_STW_START: case GT_EV_GC_STW_DONE:
		e->g = 0;
		break;
	case GT_EV_GO_SYSEXIT: case GT_EV_GO_WAITING: case GT_EV_GO_IN_SYSCALL:
		e->g = e->args[0];
		break;
	case GT_EV_CPU_SAMPLE:
		/* [real ts, p, g]: the sample's own, not the batch's */
		e->ts = (int64_t)e->args[0];
		e->p = (int64_t)e->args[1];
		e->g = e->args[2];
		e->args[0] = 0;
		break;
	}
}
