/* The check in bounded memory: decode (pass 1) keeps the dictionaries and
 * where each P's runs of records start, not the events; the merge (pass 2)
 * reads each P's next event again from the input and hands the merged
 * stream through the later phases one event at a time: the time order of
 * the merge, GoSysExit's real time, the state machine, Go 1.22+'s
 * conversion.  Memory grows with goroutines, Ps, stacks, strings, batches
 * and CPU samples, not with events.
 *
 * In memory, each phase ran over the whole trace before the next began, so
 * the error reported is the first phase's first error.  Here the phases run
 * side by side, each keeping its own first error, and the earliest phase
 * with an error speaks: the same verdict and message.
 *
 * Three cases go back to the in-memory check (gt_check_run_mem), exact and
 * small in practice: 1.5 and 1.6 files (merged by a global sort on
 * sequence numbers), files with FutileWakeup records (removeFutile drops
 * events already passed), and a GoSysExit whose real time moves it back
 * past more than REORDER_MAX events. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gt_check_internal.h"

/* Events held to re-sort GoSysExits by their real time (Go sorts the
 * whole merged stream by time once the exits are moved). */
#define REORDER_MAX (1u << 18)

enum { ST_MERGE, ST_TIME, ST_SYSEXIT, ST_STATE, ST_GO122, ST_N };

struct stream {
	struct gt_ctx sc[ST_N];            /* per phase: shared tables, own report */
	struct gt_check_report srep[ST_N];
	struct gt_pev prev;                /* the previous merged event */
	int has_prev;
	struct gt_idmap last_block;          /* g -> ts of GoSysBlock/GoInSyscall */
	struct gt_pev *ring;               /* held events, sorted by time */
	uint32_t head, nheld, window;      /* ring: window + 1 slots */
	int64_t out_ts;                    /* time of the last event let out */
	uint64_t nout;
	int64_t first_ts;
	struct gt_state *state;
	struct gt_conv *conv;
	int go122;
	gt_goroutine_fn fn;
	void *arg;
};

static int ok(const struct stream *s, int upto)
{
	for (int i = 0; i <= upto; i++)
		if (!s->srep[i].ok)
			return 0;
	return 1;
}

/* Holds e in time order.  Events come sorted but for GoSysExits moved
 * back to their real time: those go before the held events that are
 * later (ties keep the merged order, as Go's stable sort). */
static void hold(struct stream *s, const struct gt_pev *e)
{
	uint32_t i = s->nheld++;

	for (; i > 0; i--) {
		const struct gt_pev *prev = &s->ring[(s->head + i - 1) % (s->window + 1)];

		if (prev->ts <= e->ts)
			break;
		s->ring[(s->head + i) % (s->window + 1)] = *prev;
	}
	s->ring[(s->head + i) % (s->window + 1)] = *e;
}

static void release(struct stream *s, struct gt_pev *out)
{
	*out = s->ring[s->head];
	s->head = (s->head + 1) % (s->window + 1);
	s->nheld--;
}

/* The state pass and the conversion open on the first event's time. */
static int open_passes(struct stream *s, int64_t min_ts)
{
	int rc = gt_state_open(&s->sc[ST_STATE], min_ts, &s->state);

	if (!rc && s->go122)
		rc = gt_go122_open(&s->sc[ST_GO122], min_ts, &s->conv);
	return rc;
}

/* One event in the final order (after GoSysExits moved). */
static int deliver(struct stream *s, struct gt_pev *e)
{
	int rc;

	if (s->nout++ == 0) {
		s->first_ts = e->ts;
		if ((rc = open_passes(s, e->ts)))
			return rc;
	}
	s->out_ts = e->ts;
	if (!ok(s, ST_STATE))
		return 0;
	/* the state pass moves some events to Go's fake Ps first */
	if ((rc = gt_state_event(s->state, e)) < 0)
		return rc;
	if (s->conv && ok(s, ST_GO122) && ok(s, ST_STATE))
		return gt_go122_event(s->conv, e) < 0 ? -ENOMEM : 0;
	return 0;
}

/* order1007's check that the merged stream's time never goes back. */
static void check_time(struct stream *s, const struct gt_pev *e)
{
	if (s->has_prev)
		gt_check_later(&s->sc[ST_TIME], &s->prev, e, "after merging the Ps");
	s->prev = *e;
	s->has_prev = 1;
}

/* The merge's sink: every phase after the merge, for one event. */
static int on_merged(void *arg, struct gt_pev *ev)
{
	struct stream *s = arg;
	struct gt_pev x = *ev;
	int rc;

	check_time(s, ev);
	if (!ok(s, ST_TIME))
		return 0; /* the merge goes on: an error of its own comes first */
	if ((rc = gt_check_sysexit(&s->sc[ST_SYSEXIT], &s->last_block, &x)) < 0)
		return rc;
	if (!ok(s, ST_SYSEXIT))
		return 0;
	if (s->nout && x.ts < s->out_ts)
		return -E2BIG; /* moves back past what was let out already */
	hold(s, &x);
	if (s->nheld <= s->window)
		return 0;
	release(s, &x);
	return deliver(s, &x);
}

static int drain(struct stream *s)
{
	struct gt_pev x;
	int rc = 0;

	while (s->nheld && !rc) {
		release(s, &x);
		rc = deliver(s, &x);
	}
	if (!rc && !s->state)
		rc = open_passes(s, 0);
	return rc;
}

/* The verdict: the first phase with an error, as if they ran in turn. */
static void conclude(struct stream *s, struct gt_check_report *rep, int64_t last_ts)
{
	/* in memory the state pass never began if an earlier phase failed */
	if (ok(s, ST_SYSEXIT)) {
		rep->goroutines = s->srep[ST_STATE].goroutines;
		rep->events = s->nout;
		rep->duration_ticks = (uint64_t)last_ts - (uint64_t)s->first_ts;
	}
	for (int i = 0; i < ST_N; i++) {
		if (s->srep[i].ok)
			continue;
		memcpy(rep->error, s->srep[i].error, sizeof(rep->error));
		rep->error_offset = s->srep[i].error_offset;
		rep->ok = 0;
		return;
	}
}

static int stream_close(struct stream *s, struct gt_ctx *c, int rc)
{
	int viewer = gt_ctx_viewer_rules(c);
	int rc2;

	if (s->state) {
		/* the report only if the phases before the state pass passed */
		rc2 = gt_state_close(s->state, !rc && viewer && ok(s, ST_STATE),
				     !rc && ok(s, ST_SYSEXIT) ? s->fn : NULL, s->arg);
		if (!rc && rc2 < 0)
			rc = rc2;
	}
	if (s->conv) {
		rc2 = gt_go122_close(s->conv, !rc && s->nout && ok(s, ST_GO122));
		if (!rc && rc2 < 0)
			rc = rc2;
	}
	gt_idmap_free(&s->last_block);
	free(s->ring);
	return rc;
}

/* Pass 2 and every later phase; c->rep gets the verdict.  0, or -errno
 * (-E2BIG: the reorder window is too small for this file). */
static int stream_run(struct gt_ctx *c, gt_goroutine_fn fn, void *arg)
{
	struct stream *s = calloc(1, sizeof(*s));
	int rc;

	if (!s)
		return -ENOMEM;
	for (int i = 0; i < ST_N; i++) {
		s->sc[i] = *c;
		s->sc[i].rep = &s->srep[i];
		s->srep[i].ok = 1;
	}
	s->fn = fn;
	s->arg = arg;
	s->go122 = gt_ctx_viewer_rules(c) && c->version >= 1011;
	s->window = c->window;
	s->ring = malloc(((size_t)s->window + 1) * sizeof(*s->ring));
	rc = s->ring ? gt_idmap_init(&s->last_block, 1, sizeof(int64_t)) : -ENOMEM;
	if (!rc)
		rc = gt_check_merge_stream(&s->sc[ST_MERGE], on_merged, s);
	if (rc == 1)
		rc = 0; /* the merge's own error, in its report */
	if (!rc && ok(s, ST_MERGE))
		rc = drain(s);
	rc = stream_close(s, c, rc);
	if (!rc)
		conclude(s, c->rep, s->out_ts);
	free(s);
	return rc;
}

/* What only the in-memory check does exactly. */
static int needs_memory(const struct gt_ctx *c)
{
	return c->version < 1007 || c->rep->count_by_type[GT_EV_FUTILE_WAKEUP] > 0;
}

int gt_check_run_window(const uint8_t *data, size_t len, unsigned flags, int mapped,
			uint32_t window, struct gt_check_report *rep, gt_goroutine_fn fn, void *arg)
{
	struct gt_ctx c;
	int rc, mem = 0;

	memset(rep, 0, sizeof(*rep));
	rep->bytes = len;
	rep->ok = 1;
	rc = gt_check_ctx_init(&c, data, len, flags, rep);
	c.stream = 1;
	c.mapped = mapped;
	c.window = window ? window : 1;
	if (!rc)
		rc = gt_check_decode(&c);
	if (!rc && needs_memory(&c))
		mem = 1;
	else if (!rc)
		rc = stream_run(&c, fn, arg);
	gt_check_ctx_free(&c);
	if (mem || rc == -E2BIG)
		return gt_check_run_mem(data, len, flags, rep, fn, arg);
	if (rc < 0) {
		snprintf(rep->error, sizeof(rep->error), "checker: %s", strerror(-rc));
		rep->ok = 0;
		return rc;
	}
	return rep->ok ? 0 : 1;
}

int gt_check_run(const uint8_t *data, size_t len, unsigned flags,
		 struct gt_check_report *rep, gt_goroutine_fn fn, void *arg)
{
	return gt_check_run_mapped(data, len, flags, 0, rep, fn, arg);
}

int gt_check_run_mapped(const uint8_t *data, size_t len, unsigned flags, int mapped,
			struct gt_check_report *rep, gt_goroutine_fn fn, void *arg)
{
	return gt_check_run_window(data, len, flags, mapped, REORDER_MAX, rep, fn, arg);
}
