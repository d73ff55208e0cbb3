/* The analysis of a Go 1.22+ (v2) trace: one generation at a time (its
 * tables read, then its events merged by time, decoded one at a time per
 * M: a generation costs its file bytes, let go once it is done through
 * gt_analyze_opts.release), every state transition handed to the analysis
 * as the legacy event that means the same (docs/format.md, "Go 1.22+ native format (v2)"):
 *
 *   GoCreate -> GoCreate            GoStart -> GoStart (P: its M's)
 *   GoDestroy -> GoEnd              GoUnblock -> GoUnblock (waker: the M's G)
 *   GoStop "runtime.Gosched" -> GoSched, any other reason -> GoPreempt
 *   GoBlock by reason, as Go 1.23's oldtrace.go maps the other way:
 *     "chan send" GoBlockSend, "chan receive" GoBlockRecv, "select"
 *     GoBlockSelect, "sync" GoBlockSync, "sync.(*Cond).Wait" GoBlockCond,
 *     "network" GoBlockNet, "sleep" GoSleep, "forever" GoStop, "GC mark
 *     assist wait for work" GoBlockGC, any other (system goroutine wait,
 *     GC waits, unspecified) GoBlock
 *   GoSyscallBegin -> GoSysCall; GoSyscallEnd ends the call there;
 *   ProcSteal of an M in a syscall -> GoSysBlock of its G;
 *   GoSyscallEndBlocked -> (GoSysBlock if no steal was seen) GoSysExit
 *   GoStatus of the first generation -> what a legacy runtime wrote at
 *     trace start: GoCreate without stacks, GoWaiting / GoInSyscall /
 *     GoStart by status, then Gomaxprocs; in later generations a status
 *     restates what is known (a mismatch is an anomaly).
 *
 * The order the events go in: gt_analyze_v2_order.c; stacks and strings:
 * gt_analyze_v2_tables.c; which file holds what: gt_analyze_v2_run.h.
 * This file: the entry, a generation's loop, the dispatch of an event, the
 * errors, and the legacy events handed to the analysis. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "gt_analyze_v2_run.h"
#include "wire/gt_events.h"

int gt_an_v2_fail(struct v2run *r, const char *rule, const char *fmt, unsigned long long x)
{
	char what[160];

	snprintf(what, sizeof(what), fmt, x);
	snprintf(r->a->error, sizeof(r->a->error), "generation %llu: %s (rule: %s)",
		 (unsigned long long)r->gen, what, rule);
	return -EINVAL;
}

int gt_an_v2_anomaly(struct v2run *r, const char *rule, const char *fmt, unsigned long long x)
{
	if (r->a->priv->opts.strict)
		return gt_an_v2_fail(r, rule, fmt, x);
	r->a->anomalies++;
	return 0;
}

int gt_an_v2_anomaly_msg(struct v2run *r, const char *rule, const char *msg)
{
	if (!r->a->priv->opts.strict) {
		r->a->anomalies++;
		return 0;
	}
	snprintf(r->a->error, sizeof(r->a->error), "generation %llu: %s (rule: %s)",
		 (unsigned long long)r->gen, msg, rule);
	return -EINVAL;
}

int gt_an_v2_emit(struct v2run *r, int type, uint64_t g, int64_t p, uint64_t a0, uint64_t a1,
		  uint64_t stk, uint64_t ts)
{
	int rc;

	struct gt_pev e = { .ts = (int64_t)ts, .g = g, .args = { a0, a1, 0 }, .stk = stk,
			    .p = p, .type = (uint8_t)type };
	int64_t ns = gt_an_ns(r->a, (int64_t)ts);

	if (type >= 0 && type < GT_EV_COUNT)
		r->a->v1_counts[type]++;

	/* Generations overlap in time (an M flushes a generation's batch
	 * after another M began the next one): time going back across a
	 * boundary is the format, not an anomaly.  Go's reader then moves
	 * such events to the previous event's time + 1 ns; here they keep
	 * their own (the analysis counts a negative interval as 0). */
	rc = gt_an_event(r->a, &e, ns);
	/* at trace start (GoStatus running) the status's own time counts */
	if (!rc && type == GT_EV_GO_START && r->started)
		rc = gt_an_viewers_started(r->a, g, ns);
	return rc;
}

static int on_sample(struct v2run *r, const struct v2e *e)
{
	/* CPUSample [time, m, p, g, stack] (time is args[0] here: untimed) */
	struct gt_pev s = { .ts = (int64_t)e->args[0], .p = (int64_t)e->args[2],
			    .g = e->args[3], .stk = gt_an_v2_stk(r, e->args[4]),
			    .type = GT_EV_CPU_SAMPLE };

	r->a->events--; /* gt_an_sample counts it */
	return gt_an_sample(r->a, &s);
}

/* The trace ends at its last event of any kind, as Go's reader's last
 * event does (a GC or STW event no v1 event stands for included). */
static void end_at(struct v2run *r, uint64_t ts)
{
	int64_t ns = gt_an_ns(r->a, (int64_t)ts);

	if (ns > r->a->end_ns)
		r->a->end_ns = ns;
}

/* A UserLog (task, key string, value string, stack) of goroutine g. */
static void mark_log(struct v2run *r, const struct v2e *e, uint64_t g)
{
	size_t klen = 0, vlen = 0;
	const char *k, *v;

	if (!r->a->priv->opts.mark_key)
		return;
	k = gt_an_string_v2(r->a, e->args[1], r->genidx, &klen);
	v = gt_an_string_v2(r->a, e->args[2], r->genidx, &vlen);
	gt_an_user_log(r->a, g, gt_an_ns(r->a, (int64_t)e->ts), k, klen, v, vlen);
}

/* A UserLog that names the Go goroutine of g's next stop (gotraced's). */
static int user_log(struct v2run *r, const struct v2e *e, uint64_t g)
{
	size_t klen = 0, vlen = 0;
	const char *key = gt_an_string_v2(r->a, e->args[1], r->genidx, &klen);
	const char *val = gt_an_string_v2(r->a, e->args[2], r->genidx, &vlen);

	return gt_an_goid_log(r->a, g, key, klen, val, vlen);
}

static int process(struct v2run *r, const struct v2e *e)
{
	struct mstate *ms;
	uint64_t g;
	int64_t p;
	int rc;

	r->a->events++;
	if ((rc = gt_an_v2_check_ids(r, e)))
		return rc;
	end_at(r, e->type == GT_V2_CPU_SAMPLE ? e->args[0] : e->ts);
	if (e->type == GT_V2_CPU_SAMPLE)
		return on_sample(r, e);
	if (!(ms = mst(r, e->m)))
		return -ENOMEM;
	ms->pre |= M_SEEN;
	if (e->type == GT_V2_GO_STATUS || e->type == GT_V2_GO_STATUS_STACK) {
		rc = gt_an_v2_rules(r, e, ms);
		return rc ? rc : gt_an_v2_on_status(r, e);
	}
	if ((rc = gt_an_v2_rules(r, e, ms)))
		return rc;
	g = ms->g, p = ms->p;
	if (e->type == GT_V2_USER_LOG) { /* [task, key, value, stack]: the M's goroutine's */
		mark_log(r, e, g);
		return user_log(r, e, g);
	}
	if (e->type >= GT_V2_PROCS_CHANGE && e->type <= GT_V2_PROC_STATUS)
		rc = gt_an_v2_on_proc(r, e, ms);
	else
		rc = gt_an_v2_on_go(r, e, ms);
	/* a G or P the event gave or took is the M's for order.go too (the
	 * handlers may have grown the map: look the M up again) */
	if ((ms = gt_idmap_find(&r->ms, &e->m)) && (ms->g != g || ms->p != p))
		ms->pre &= (uint8_t)~((ms->g != g ? PRE_G : 0) | (ms->p != p ? PRE_P : 0));
	return rc;
}

static int generation(struct v2run *r)
{
	int rc;

	for (size_t i = 0; i < r->nbatches; i++)
		if ((rc = gt_an_v2_decode_batch(r, &r->batches[i])))
			return rc;
	/* each generation has its own (Go's readGeneration) */
	if (r->nfreq != 1)
		return gt_an_v2_fail(r, "frequency", "%llu Frequency batches, not one",
				     (unsigned long long)r->nfreq);
	if ((rc = gt_an_v2_check_frames(r)))
		return rc;
	r->a->priv->ns_per_tick = 1e9 / (double)r->a->freq;
	if ((rc = gt_an_v2_name_stacks(r)))
		return rc;
	/* Go's reader: "frontier is empty" */
	if (!r->nev)
		return gt_an_v2_fail(r, "generations", "%llu events or CPU samples in the generation", 0);
	if ((rc = gt_an_v2_split(r)))
		return rc;
	if (!r->started && (rc = gt_an_v2_start(r)))
		return rc;
	while (r->nheap || r->nwaiting) {
		size_t h;

		if ((rc = gt_an_v2_next_head(r, &h)))
			return rc;
		if ((rc = process(r, &r->heads[h].ev)))
			return rc;
		if ((rc = gt_an_v2_head_next(r, h)) < 0)
			return rc;
		if (rc)
			gt_an_v2_heap_push(r, h);
	}
	return 0;
}

static void run_free(struct v2run *r)
{
	free(r->batches);
	free(r->order);
	free(r->heads);
	free(r->heap);
	gt_idmap_free(&r->waits);
	gt_idmap_free(&r->ms);
	gt_idmap_free(&r->gs);
	gt_idmap_free(&r->ps);
	gt_idmap_free(&r->content);
	gt_idmap_free(&r->pcs);
	gt_idmap_free(&r->ranges);
	gt_idmap_free(&r->regions);
	gt_an_map_free(&r->lstk);
}

/* The file's bytes before the next generation (or all) are not read
 * again: the caller may let them go. */
static void release(struct v2run *r, const struct gt_v2_batch *next, int have)
{
	const struct gt_analyze_opts *o = &r->a->priv->opts;

	if (o->release)
		o->release(o->release_arg, have ? next->hdr : r->f.len);
}

/* Every generation of the opened file, then: was there one? */
static int generations(struct v2run *r)
{
	struct gt_v2_batch next;
	int have, rc;

	rc = gt_v2_next_batch(&r->f, &next);
	if (rc < 0) {
		snprintf(r->a->error, sizeof(r->a->error), "%s", r->f.error);
		return rc;
	}
	have = rc;
	while ((rc = gt_an_v2_read_gen(r, &next, &have)) == 1) {
		if ((rc = generation(r)))
			break;
		release(r, &next, have);
	}
	if (!rc && !r->started) {
		snprintf(r->a->error, sizeof(r->a->error), "trace is empty (no events)");
		rc = -EINVAL;
	}
	return rc;
}

int gt_an_v2(struct gt_analysis *a)
{
	struct v2run r = { .a = a };
	int rc;

	gt_idmap_init(&r.ms, 1, sizeof(struct mstate));
	gt_idmap_init(&r.gs, 1, sizeof(struct gstate));
	gt_idmap_init(&r.ps, 1, sizeof(struct pstate));
	gt_idmap_init(&r.content, 3, sizeof(uint64_t));
	gt_idmap_init(&r.pcs, 1, 2 * sizeof(uint64_t));
	gt_idmap_init(&r.ranges, 2, sizeof(uint64_t));
	gt_idmap_init(&r.regions, 2, 3 * sizeof(uint64_t));
	gt_idmap_init(&r.waits, 1, sizeof(uint64_t));
	a->priv->v2 = 1;
	if (gt_v2_open(&r.f, a->priv->data, a->priv->len)) {
		snprintf(a->error, sizeof(a->error), "%s", r.f.error);
		rc = -EINVAL;
	} else {
		a->version = 1000 + r.f.version; /* 1022, 1023 */
		rc = generations(&r);
	}
	run_free(&r);
	return rc;
}
