/* Pass 2 of the analysis: one cursor per P walks that P's runs of records
 * again (gt_pcursor.c), and Go 1.19's order1007 merges their heads
 * (gt_merge.c; 1.5 traces by sequence number, as order1005): only the
 * heads are decoded, so memory is per P, not per event.  Unlike the
 * checker it tolerates what Go would refuse: a head whose goroutine moved
 * on before its turn waits again, time going back is counted
 * (a->anomalies); only heads that can never go stop it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "gt_analyze_internal.h"
#include "wire/gt_events.h"
#include "wire/gt_merge.h"

struct amerge {
	struct gt_analysis *a;
	struct gt_reader rd;      /* opened on the input; moved from P to P */
	struct gt_merge_g gc;     /* GCStart's pseudo-goroutine */
	struct gt_merge_g *ord;   /* per thread (index into a->threads) */
	size_t nord, capord;
	int64_t last;             /* time of the latest event merged */
};

/* CPU samples go straight to the analysis: their order does not matter. */
static int on_sample(void *arg, const struct gt_pev *e)
{
	return gt_an_sample(arg, e);
}

static int head_of(void *arg, uint32_t p, struct gt_pev **e)
{
	struct amerge *m = arg;
	struct gt_an_priv *pv = m->a->priv;
	struct gt_pcursor *k = &pv->procs[p].cur;
	int rc = gt_pcursor_fill(k, &pv->segs, &m->rd, pv->raw, on_sample, m->a);

	*e = k->has_head ? &k->head : NULL;
	return rc;
}

/* The ordering state of g, kept beside its thread (created if new). */
static struct gt_merge_g *gstate_of(void *arg, uint64_t g)
{
	struct amerge *m = arg;
	struct gt_an_thread *t;
	size_t i;

	if (g == GT_MERGE_GARBAGE)
		return &m->gc;
	t = gt_an_thread_get(m->a, g);
	if (!t)
		return NULL;
	i = (size_t)(t - m->a->threads);
	if (gt_grow(&m->ord, &m->capord, i + 1, sizeof(*m->ord)))
		return NULL;
	for (; m->nord <= i; m->nord++)
		m->ord[m->nord] = (struct gt_merge_g){ 0, GT_MERGE_DEAD, -1 };
	return &m->ord[i];
}

/* The next event in merged order, to the state machine. */
static int take(void *arg, uint32_t p, struct gt_pev *head)
{
	struct amerge *m = arg;
	struct gt_analysis *a = m->a;
	struct gt_pev e = *head;
	int64_t ns;

	a->priv->procs[p].cur.has_head = 0;
	if (a->version >= 1007 && e.type == GT_EV_GO_SYSEXIT && e.args[2])
		e.ts = (int64_t)e.args[2];
	ns = gt_an_ns(a, e.ts);
	if (ns < m->last && e.type != GT_EV_GO_SYSEXIT)
		a->anomalies++; /* Go: "time stamps out of order" */
	if (ns > m->last)
		m->last = ns;
	a->events++;
	return gt_an_event(a, &e, ns);
}

static int run(struct amerge *m)
{
	static const struct gt_merge_ops ops = { head_of, gstate_of, take };
	struct gt_an_priv *pv = m->a->priv;
	struct gt_merge_cfg cfg = { .nsrc = (uint32_t)pv->nprocs, .by_seq = m->a->version < 1007,
				    .tie_by_src = 1 };
	struct gt_merge_stop stop;
	uint64_t merged;
	int rc;

	for (uint32_t k = 0; k < pv->nprocs; k++)
		gt_pcursor_start(&pv->procs[k].cur, &pv->segs, pv->procs[k].first,
				 pv->procs[k].p, k);
	rc = gt_merge_run(&cfg, &ops, m, &merged, &stop);
	if (rc != GT_MERGE_STUCK)
		return rc;
	snprintf(m->a->error, sizeof(m->a->error),
		 "no consistent ordering of events possible (sequence numbers or states across Ps do not fit; first stuck: %s of g %llu on p %lld)",
		 gt_event_descs[stop.ev->type].name, (unsigned long long)stop.ev->g,
		 (long long)pv->procs[stop.src].p);
	return -EINVAL;
}

int gt_an_merge(struct gt_analysis *a)
{
	struct amerge m = { .a = a, .rd = a->priv->rd, .gc = { 0, GT_MERGE_DEAD, -1 },
			    .last = INT64_MIN };
	int rc = run(&m);

	free(m.ord);
	return rc;
}
