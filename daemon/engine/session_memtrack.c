/* See session_memtrack.h.  A session's heap record (--heap interpose) is
 * taken from memtrack once its start succeeded: from then on the engine's
 * thread alone reads it (every few ms, and once at the end), and so it
 * does the table of its samples' stacks. */
#include "session_memtrack.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "memtrack/memtrack.h"
#include "internal.h"
#include "testing.h"

static int user_stack(void *ctx, int32_t id, uint64_t *ips, int max)
{
	return gt_memtrack_stacks_get(((struct gt_engine *)ctx)->mem_stacks, id, ips, max);
}

/* Allocation samples of --heap interpose carry stacks the interposer took
 * in the process: the table they are interned in, on first need. */
static int want_stacks(struct gt_engine *e, const struct gt_session_opts *o)
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

static int explicit_request(const struct gt_session_opts *o)
{
	return o->heap == GT_HEAP_MALLOC || o->heap == GT_HEAP_RSS ||
	       o->heap == GT_HEAP_INTERPOSE || o->cpu_profile_hz || o->alloc_stack_every;
}

int gt_session_mem_start(struct gt_session *s, const struct gt_session_opts *o)
{
	struct gt_engine *e = s->engine;
	struct gt_memtrack_req r = {
		.bit = s->bit, .heap = o->heap, .cpu_hz = o->cpu_profile_hz,
		.alloc_every = o->alloc_stack_every, .by_cgroup = s->by_cgroup,
	};
	char why[400];
	int err;

	if (!gt_memtrack_wanted(o->heap, o->cpu_profile_hz, o->alloc_stack_every))
		return 0;
	err = want_stacks(e, o);
	if (err)
		return err;
	if (!s->by_cgroup) {
		r.pids = o->pids;
		r.npids = o->npids;
	}
	if (!e->mem) {
		err = gt_memtrack_open(&e->mem, e->capture, why, sizeof(why));
		if (err)
			goto fail;
	}
	err = gt_memtrack_start(e->mem, &r, why, sizeof(why));
	if (!err) {
		s->mem_active = 1;
		s->heap_record = gt_memtrack_take_record(e->mem, s->bit);
		return 0;
	}
fail:
	if (!explicit_request(o))
		return 0; /* the default heap mode is best effort */
	snprintf(e->err, sizeof(e->err), "memory/CPU tracking: %s", why);
	return err;
}

static int deliver(void *ctx, const struct gt_kev_hdr *ev, size_t len)
{
	return gt_session_deliver(ctx, ev, len);
}

/* The record's last values, stamped at the trace's end (what changed since
 * the last tick: the translator has the rest); then it is closed. */
static void close_record(struct gt_session *s)
{
	if (!s->heap_record)
		return;
	gt_memtrack_record_poll(s->heap_record, s->engine->mem_stacks, s->bit, s->end_ns,
				deliver, s);
	gt_memtrack_record_close(s->heap_record);
	s->heap_record = NULL;
}

/* After pid's exec, memtrack decided its mode again in each session: the
 * records hear whether they still count its heap. */
static void tell_records(struct gt_engine *e, pid_t pid, const enum gt_heap_mode *modes)
{
	for (int i = 0; i < GT_MAX_SESSIONS; i++)
		if (e->active[i] && e->active[i]->heap_record)
			gt_memtrack_record_mode(e->active[i]->heap_record, pid, modes[i]);
}

void gt_session_mem_stop(struct gt_session *s)
{
	struct gt_engine *e = s->engine;

	if (!s->mem_active || !e->mem)
		return;
	/* read now, stamped at the trace's end (before the probes' teardown) */
	gt_memtrack_final(e->mem, s->bit, s->end_ns, deliver, s);
	close_record(s);
	gt_memtrack_stop(e->mem, s->bit);
	s->mem_active = 0;
}

void gt_engine_mem_close(struct gt_engine *e)
{
	gt_memtrack_close(e->mem);
	e->mem = NULL;
	gt_memtrack_stacks_free(e->mem_stacks);
	e->mem_stacks = NULL;
}

void gt_engine_mem_event(struct gt_engine *e, const struct gt_kev_hdr *ev)
{
	enum gt_heap_mode modes[GT_MAX_SESSIONS];
	pid_t pid = (pid_t)ev->tgid;
	char why[400];

	if (ev->type != GT_KEV_EXEC || !e->mem)
		return;
	/* a failure leaves the process in RSS mode or unprobed: the trace
	 * goes on (the message is kept for the user) */
	if (gt_memtrack_exec(e->mem, pid, why, sizeof(why)))
		snprintf(e->err, sizeof(e->err), "memory tracking after exec: %s", why);
	for (int i = 0; i < GT_MAX_SESSIONS; i++)
		modes[i] = gt_memtrack_mode(e->mem, i, pid);
	tell_records(e, pid, modes);
}

/* How often the heap records of --heap interpose are read: each phase of a
 * program's heap that lasts longer shows in the trace. */
#define GT_INTERPOSE_TICK_MS 5

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

struct gt_memtrack *gt_engine_memtrack(struct gt_engine *e)
{
	return e->mem;
}
