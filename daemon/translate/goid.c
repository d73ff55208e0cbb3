/* The goroutine a Go thread runs (bpf/goid.bpf.h), as a UserLog on the
 * thread, message "goroutine N" or "goroutine N {key=value, ...}" with its
 * pprof labels (docs/mapping.md, "Goroutines of Go programs"):
 *  - category "goroutine": at a switch-out, just before its stop event
 *    (GoPreempt, GoBlock*, ...) and after the GoSysCall of a call that
 *    blocks there, so the viewer shows it on the slice that ends there and
 *    `report` names the goroutine each stop was;
 *  - "goroutine.wake": the waker's, just before the GoUnblock it writes;
 *  - "goroutine.sample": at a CPU sample, just before its CPUSample.
 * Only the first category is a stop's: report reads no other. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define GT_GO_LOG_MAX 1100 /* "goroutine " + 20 digits + " " + labels */
#define GT_GO_LABELS_MAX 1024

static void write_log(struct gt_translator *t, int p, const char *category, uint32_t tgid,
		      const struct gt_go_held *g)
{
	char value[GT_GO_LOG_MAX], labels[GT_GO_LABELS_MAX];
	int r = 0, n;

	n = snprintf(value, sizeof(value), "goroutine %" PRIu64, g->goid);
	if (g->labels && t->golabels)
		r = t->golabels->labels(t->golabels->ctx, tgid, g->labels, g->hash0, g->count,
					labels, sizeof(labels));
	if (r > 0)
		snprintf(value + n, sizeof(value) - (size_t)n, " %s", labels);
	else if (r == -EAGAIN) /* it has labels: say that they are missing */
		snprintf(value + n, sizeof(value) - (size_t)n, " (labels not read in time)");
	r = gt_tr_out_user_log(t, p, category, 0, value);
	if (r < 0)
		t->err = r;
	else
		t->st.events_out++, t->survivors++;
}

void gt_tr_goid_log(struct gt_translator *t, int p, struct gt_thread *th, uint64_t goid,
		    uint64_t ts)
{
	struct gt_go_held g = th->go_held;

	memset(&th->go_held, 0, sizeof(th->go_held));
	if (g.ts != ts)
		memset(&g, 0, sizeof(g)); /* another switch's (its own was lost) */
	if (goid) {
		memset(&g, 0, sizeof(g));
		g.goid = goid;
	}
	if (t->err || !g.goid)
		return;
	/* a GoSysCall held for this block goes first, at its own time: after
	 * the log, the writer would clamp it to the switch-out's (the call's
	 * time before it blocked lost) */
	gt_tr_flush_syscall(t, p);
	if (t->err)
		return;
	write_log(t, p, "goroutine", th->tgid, &g);
}

void gt_tr_on_goid(struct gt_translator *t, const struct gt_kev_goid *e)
{
	struct gt_go_held g = {e->goid, e->labels, e->labels_hash0, e->labels_count, e->hdr.ts};
	struct gt_thread *th;

	if (e->hdr.cpu >= t->ncpus || !e->goid)
		return;
	th = gt_tr_current(t, &e->hdr, NULL);
	if (t->err || !th || th->state != GT_TH_RUNNING || th->cpu != e->hdr.cpu)
		return;
	if (e->why == GT_GOID_SWITCH)
		th->go_held = g; /* for its switch record, next */
	else if (e->why == GT_GOID_WAKE || e->why == GT_GOID_SAMPLE)
		write_log(t, e->hdr.cpu, e->why == GT_GOID_WAKE ? "goroutine.wake" : "goroutine.sample",
			  th->tgid, &g);
}
