/* --heap interpose on the engine's thread: a session's heap record (the
 * command's own counts) is built by memtrack on the engine's worker and
 * handed over with the attach's completion (session_memtrack.c).  From
 * then on only the engine's thread touches it: read every few ms while
 * the session records, a last time at its end, then closed before the
 * session's stop is posted to the worker.  The table of the records'
 * sample stacks is the engine's thread's too (the stack resolver reads
 * it), so no memtrack state is shared between the two threads. */
#include "session_memtrack.h"

#include <errno.h>
#include <stdio.h>

#include "memtrack/memtrack.h"
#include "internal.h"

/* How often the heap records are read: each phase of a program's heap
 * that lasts longer shows in the trace. */
#define GT_INTERPOSE_TICK_MS 5

static int user_stack(void *ctx, int32_t id, uint64_t *ips, int max)
{
	return gt_memtrack_stacks_get(((struct gt_engine *)ctx)->mem_stacks, id, ips, max);
}

int gt_engine_record_stacks(struct gt_engine *e, const struct gt_session_opts *o)
{
	if (o->heap != GT_HEAP_INTERPOSE || !o->alloc_stack_every || e->mem_stacks)
		return 0;
	e->mem_stacks = gt_memtrack_stacks_new();
	if (!e->mem_stacks) {
		snprintf(e->err, sizeof(e->err), "memory/CPU tracking: out of memory for "
			 "allocation stacks");
		return -ENOMEM;
	}
	e->resolver.user_stack = user_stack;
	e->resolver.user_ctx = e;
	return 0;
}

static int deliver(void *ctx, const struct gt_kev_hdr *ev, size_t len)
{
	return gt_session_deliver(ctx, ev, len);
}

void gt_session_record_close(struct gt_session *s)
{
	if (!s->heap_record)
		return;
	/* what changed since the last tick, stamped at the trace's end (the
	 * translator has the rest) */
	gt_memtrack_record_poll(s->heap_record, s->engine->mem_stacks, s->bit, s->end_ns,
				deliver, s);
	gt_memtrack_record_close(s->heap_record);
	s->heap_record = NULL;
}

void gt_session_record_before_exit(struct gt_session *s, const struct gt_kev_hdr *ev)
{
	/* as the tick: not before the trace begins */
	if (ev->type == GT_KEV_EXIT && s->heap_record && !s->awaiting_exec.count && s->started_ns)
		gt_memtrack_record_samples(s->heap_record, s->engine->mem_stacks, s->bit, deliver, s);
}

void gt_engine_records_exec(struct gt_engine *e, pid_t pid, const enum gt_heap_mode *modes)
{
	for (int i = 0; i < GT_MAX_SESSIONS; i++)
		if (e->active[i] && e->active[i]->heap_record)
			gt_memtrack_record_mode(e->active[i]->heap_record, pid, modes[i]);
}

static int any_record(const struct gt_engine *e)
{
	for (int i = 0; i < GT_MAX_SESSIONS; i++)
		if (e->active[i] && e->active[i]->heap_record)
			return 1;
	return 0;
}

int gt_engine_mem_timeout(struct gt_engine *e, int timeout_ms)
{
	if (!any_record(e))
		return timeout_ms;
	return timeout_ms < 0 || timeout_ms > GT_INTERPOSE_TICK_MS ? GT_INTERPOSE_TICK_MS
								  : timeout_ms;
}

void gt_engine_mem_tick(struct gt_engine *e)
{
	uint64_t now;

	if (!any_record(e))
		return;
	/* stamped after the rings were drained up to now */
	now = gt_now_ns();
	for (int i = 0; i < GT_MAX_SESSIONS; i++) {
		struct gt_session *s = e->active[i];

		/* not before the trace begins (a held command's exec): the
		 * reader writes each value once, and the window would drop it */
		if (s && s->heap_record && !s->awaiting_exec.count && s->started_ns)
			gt_memtrack_record_poll(s->heap_record, e->mem_stacks, i, now, deliver, s);
	}
}
