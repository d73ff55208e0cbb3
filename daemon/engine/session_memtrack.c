/* See memtrack_session.h. */
#include "session_memtrack.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "memtrack/memtrack.h"
#include "internal.h"
#include "testing.h"

static int user_stack(void *ctx, int32_t id, uint64_t *ips, int max)
{
	return gt_memtrack_user_stack(((struct gt_engine *)ctx)->mem, id, ips, max);
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
	if (!s->by_cgroup) {
		r.pids = o->pids;
		r.npids = o->npids;
	}
	if (!e->mem) {
		err = gt_memtrack_open(&e->mem, e->capture, why, sizeof(why));
		if (err)
			goto fail;
		/* allocation samples of --heap interpose: stacks taken in-process */
		e->resolver.user_stack = user_stack;
		e->resolver.user_ctx = e;
	}
	err = gt_memtrack_start(e->mem, &r, why, sizeof(why));
	if (!err) {
		s->mem_active = 1;
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

void gt_session_mem_stop(struct gt_session *s)
{
	struct gt_engine *e = s->engine;

	if (!s->mem_active || !e->mem)
		return;
	/* read now, stamped at the trace's end (before the probes' teardown) */
	gt_memtrack_final(e->mem, s->bit, s->end_ns, deliver, s);
	gt_memtrack_stop(e->mem, s->bit);
	s->mem_active = 0;
}

void gt_engine_mem_close(struct gt_engine *e)
{
	gt_memtrack_close(e->mem);
	e->mem = NULL;
}

void gt_engine_mem_event(struct gt_engine *e, const struct gt_kev_hdr *ev)
{
	char why[400];

	if (ev->type != GT_KEV_EXEC || !e->mem)
		return;
	/* a failure leaves the process in RSS mode or unprobed: the trace
	 * goes on (the message is kept for the user) */
	if (gt_memtrack_exec(e->mem, (pid_t)ev->tgid, why, sizeof(why)))
		snprintf(e->err, sizeof(e->err), "memory tracking after exec: %s", why);
}

/* How often the heap records of --heap interpose are read: each phase of a
 * program's heap that lasts longer shows in the trace. */
#define GT_INTERPOSE_TICK_MS 5

int gt_engine_mem_timeout(struct gt_engine *e, int timeout_ms)
{
	if (!e->mem || !gt_memtrack_ticks(e->mem))
		return timeout_ms;
	return timeout_ms < 0 || timeout_ms > GT_INTERPOSE_TICK_MS ? GT_INTERPOSE_TICK_MS
								  : timeout_ms;
}

void gt_engine_mem_tick(struct gt_engine *e)
{
	uint64_t now;

	if (!e->mem || !gt_memtrack_ticks(e->mem))
		return;
	/* stamped after the rings were drained up to now */
	now = gt_now_ns();
	for (int i = 0; i < GT_MAX_SESSIONS; i++) {
		struct gt_session *s = e->active[i];

		/* not before the trace begins (a held command's exec): the
		 * reader writes each value once, and the window would drop it */
		if (s && s->mem_active && !s->awaiting_exec.count && s->started_ns)
			gt_memtrack_tick(e->mem, i, now, deliver, s);
	}
}

struct gt_memtrack *gt_engine_memtrack(struct gt_engine *e)
{
	return e->mem;
}
