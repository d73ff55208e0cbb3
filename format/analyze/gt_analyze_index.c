/* Pass 1 of the analysis: reads every record once and keeps only what the
 * merge needs to stream: the string and stack dictionaries (as offsets into
 * the input), where each P's batches lie, the frequency and the first
 * timestamp (Go's minTs, taken after syscall exits move to their real time). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gt_analyze_internal.h"
#include "wire/gt_events.h"

/* The proc record of P p, created on first sight. */
static int proc_of(struct gt_an_priv *pv, int64_t p, uint32_t *out)
{
	int64_t i = gt_an_map_get(&pv->pmap, (uint64_t)p, 0, 0);

	if (i < 0) {
		if (gt_grow(&pv->procs, &pv->capprocs, pv->nprocs + 1, sizeof(*pv->procs)) ||
		    gt_an_map_put(&pv->pmap, (uint64_t)p, 0, 0, (uint32_t)pv->nprocs))
			return -ENOMEM;
		i = (int64_t)pv->nprocs++;
		pv->procs[i].p = p;
		pv->procs[i].first = pv->procs[i].last = UINT32_MAX;
	}
	*out = (uint32_t)i;
	return 0;
}

/* A new run of records for P p, starting at off; st takes its clocks. */
static int add_segment(struct gt_an_priv *pv, int64_t p, uint64_t off, int64_t ts, int64_t seq,
		       struct gt_pstate *st)
{
	struct gt_an_proc *pr;
	uint32_t i;

	if (proc_of(pv, p, &i))
		return -ENOMEM;
	pr = &pv->procs[i];
	if (gt_psegs_add(&pv->segs, &pr->first, &pr->last, off, ts, seq))
		return -ENOMEM;
	*st = (struct gt_pstate){ .p = p, .ts = ts, .seq = seq };
	return 0;
}

static int on_dict(struct gt_an_priv *pv, const struct gt_raw_event *r)
{
	if (r->type == GT_EV_STRING) {
		if (gt_grow(&pv->strs, &pv->capstrs, pv->nstrs + 1, sizeof(*pv->strs)) ||
		    gt_an_map_put(&pv->strings, r->args[0], 0, 0, (uint32_t)pv->nstrs))
			return -ENOMEM;
		pv->strs[pv->nstrs++] = (struct gt_an_str){ (uint64_t)(r->str - pv->data),
							    (uint32_t)r->str_len };
		return 0;
	}
	/* Stack [id, n, frames]: Go keeps no entry for id 0 or no frames */
	if (r->nargs < 2 || r->args[0] == 0 || r->args[1] == 0)
		return 0;
	if (gt_grow(&pv->stks, &pv->capstks, pv->nstks + 1, sizeof(*pv->stks)) ||
	    gt_an_map_put(&pv->stacks, r->args[0], 0, 0, (uint32_t)pv->nstks))
		return -ENOMEM;
	pv->stks[pv->nstks++] = (struct gt_an_stk){ r->off, -1 };
	return 0;
}

/* The time Go sorts an event by: GoSysExit's real exit time when it has
 * one, a CPU sample's own clock reading. */
static int64_t sort_ts(const struct gt_raw_event *r, int version, int64_t ts)
{
	size_t k;

	/* the record's values: the time delta, then the table's arguments */
	if (version >= 1007 && r->type == GT_EV_GO_SYSEXIT) {
		k = 1 + (size_t)gt_event_arg(GT_EV_GO_SYSEXIT, "ts");
		if (r->nargs > k && r->args[k])
			return (int64_t)r->args[k];
	}
	if (r->type == GT_EV_CPU_SAMPLE) {
		k = 1 + (size_t)gt_event_arg(GT_EV_CPU_SAMPLE, "ts");
		if (r->nargs > k)
			return (int64_t)r->args[k];
	}
	return ts;
}

static int on_event(struct gt_analysis *a, const struct gt_raw_event *r, struct gt_pstate *st)
{
	struct gt_an_priv *pv = a->priv;
	int64_t ts;

	if (r->nargs < (a->version < 1007 ? 2u : 1u)) {
		snprintf(a->error, sizeof(a->error), "%s at offset %llu: no timestamp",
			 gt_event_descs[r->type].name, (unsigned long long)r->off);
		return -EINVAL;
	}
	gt_parse_clock(a->version, st, r);
	ts = sort_ts(r, a->version, st->ts);
	if (!pv->has_min || ts < pv->min_ts)
		pv->min_ts = ts;
	pv->has_min = 1;
	if (r->type == GT_EV_FUTILE_WAKEUP)
		a->futile++;
	return 0;
}

static int on_record(struct gt_analysis *a, const struct gt_raw_event *r, struct gt_pstate *st)
{
	struct gt_an_priv *pv = a->priv;
	int old = a->version < 1007;

	switch (r->type) {
	case GT_EV_STRING: case GT_EV_STACK:
		return on_dict(pv, r);
	case GT_EV_FREQUENCY:
		a->freq = r->nargs ? r->args[0] : 0;
		return 0;
	case GT_EV_TIMER_GOROUTINE:
		return 0;
	case GT_EV_BATCH:
		if (r->nargs < (old ? 3u : 2u))
			break;
		return add_segment(pv, (int64_t)r->args[0], r->end,
				   (int64_t)r->args[old ? 2 : 1], old ? (int64_t)r->args[1] : 0, st);
	default:
		return on_event(a, r, st);
	}
	snprintf(a->error, sizeof(a->error), "Batch at offset %llu: too few arguments",
		 (unsigned long long)r->off);
	return -EINVAL;
}

int gt_an_index(struct gt_analysis *a)
{
	struct gt_an_priv *pv = a->priv;
	struct gt_reader r = pv->rd;
	struct gt_pstate st = {0};
	int rc;

	/* Before any Batch, Go files events under P 0. */
	if (add_segment(pv, 0, r.pos, 0, 0, &st))
		return -ENOMEM;
	while ((rc = gt_reader_next(&r, pv->raw)) == 1) {
		rc = on_record(a, pv->raw, &st);
		if (rc)
			return rc;
	}
	if (rc < 0) {
		snprintf(a->error, sizeof(a->error), "%s", r.error);
		return -EINVAL;
	}
	if (!pv->has_min) {
		snprintf(a->error, sizeof(a->error), "trace is empty (no events)");
		return -EINVAL;
	}
	if (a->freq == 0 || (int64_t)a->freq < 0) {
		snprintf(a->error, sizeof(a->error), "no valid Frequency event (ticks per second)");
		return -EINVAL;
	}
	pv->ns_per_tick = 1e9 / (double)a->freq;
	return 0;
}
