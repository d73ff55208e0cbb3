/* Phase 2, as Go 1.19's order1007 / order1005: merge the
 * per-P batches into one stream that respects every goroutine's sequence
 * numbers (gt_merge.c), check that time then never goes backwards, and
 * move syscall exits to their real time. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gt_check_internal.h"
#include "wire/gt_merge.h"

/* GoSysExit's argument of that name (its sequence number, its real exit
 * time), at the position the event table gives. */
static uint64_t sysexit_arg(const struct gt_pev *e, const char *name)
{
	return e->args[gt_event_arg(GT_EV_GO_SYSEXIT, name)];
}

/* The batches as the merge's streams: in memory (c->ev), or when
 * streaming read again from the input, all but the samples' batch. */
struct merge {
	struct gt_ctx *c;
	struct gt_reader rd;      /* streaming: opened on the input */
	struct gt_pcursor *cur;   /* streaming: per batch */
	struct gt_idmap gs;         /* g -> struct gt_merge_g */
	uint32_t *cursor;         /* per batch in memory: events taken */
	uint32_t *out, nout;      /* in memory: the merged order */
	gt_check_sink sink;       /* streaming: where merged events go */
	void *arg;
};

static int streamed(const struct merge *m, uint32_t b)
{
	return m->cur && m->c->batches[b].p != GT_PROFILE_P;
}

static int head_of(void *arg, uint32_t b, struct gt_pev **e)
{
	struct merge *m = arg;
	const struct gt_batch *bt = &m->c->batches[b];
	struct gt_pcursor *k;
	uint64_t nread;
	int rc;

	*e = NULL;
	if (!streamed(m, b)) {
		if (m->cursor[b] < bt->n)
			*e = &m->c->ev[m->c->order[bt->first + m->cursor[b]]];
		return 0;
	}
	k = &m->cur[b];
	nread = k->nread;
	/* samples are merged from their own batch, in memory */
	rc = gt_pcursor_fill(k, &m->c->segs, &m->rd, m->c->raw, NULL, NULL);
	gt_check_release(m->c, k->nread - nread);
	if (k->has_head)
		*e = &k->head;
	return rc;
}

static struct gt_merge_g *gstate_of(void *arg, uint64_t g)
{
	struct merge *m = arg;
	int isnew;
	struct gt_merge_g *o = gt_idmap_put(&m->gs, g, &isnew);

	if (o && isnew)
		o->wait_head = -1;
	return o;
}

static int take(void *arg, uint32_t b, struct gt_pev *e)
{
	struct merge *m = arg;

	if (streamed(m, b))
		m->cur[b].has_head = 0;
	else
		m->cursor[b]++;
	if (m->sink)
		return m->sink(m->arg, e);
	m->out[m->nout++] = (uint32_t)(e - m->c->ev);
	return 0;
}

static int merge_init(struct merge *m, struct gt_ctx *c)
{
	memset(m, 0, sizeof(*m));
	m->c = c;
	m->cursor = calloc(c->nbatches ? c->nbatches : 1, sizeof(*m->cursor));
	if (!m->cursor)
		return -ENOMEM;
	return gt_idmap_init(&m->gs, 1, sizeof(struct gt_merge_g));
}

static void merge_free(struct merge *m)
{
	free(m->cur);
	free(m->cursor);
	gt_idmap_free(&m->gs);
}

/* Merges every event (strictly, as Go: a goroutine moved on before its
 * event's turn is an error); the stops as Go words them. */
static int merge_run(struct merge *m)
{
	static const struct gt_merge_ops ops = { head_of, gstate_of, take };
	struct gt_ctx *c = m->c;
	struct gt_merge_cfg cfg = { .nsrc = c->nbatches, .strict = 1 };
	struct gt_merge_stop stop = { NULL, 0, 0 };
	uint64_t merged, total = m->cur ? c->nall : c->nev;
	int rc = gt_merge_run(&cfg, &ops, m, &merged, &stop);
	const struct gt_pev *e = stop.ev;

	if (rc == GT_MERGE_BROKEN)
		return gt_ctx_fail(c, e->type, e->off,
				   "event sequences are broken for g %llu (Go 1.19 panics here)",
				   (unsigned long long)stop.g);
	if (rc == GT_MERGE_STUCK || (!rc && merged < total))
		return gt_ctx_fail(c, e ? e->type : -1, e ? e->off : 0,
				   "no consistent ordering of events possible (sequence numbers or states across Ps do not fit; first stuck event g %llu)",
				   e ? (unsigned long long)e->g : 0ULL);
	return rc;
}

static int64_t key_of(const struct gt_ctx *c, uint32_t i, int by_seq)
{
	return by_seq ? c->ev[i].seq : c->ev[i].ts;
}

/* Stable merge sort of event indices by key.  The input is nearly always
 * sorted already: check that first. */
static void sort_stable(struct gt_ctx *c, uint32_t *a, uint32_t *tmp, uint32_t n, int by_seq)
{
	uint32_t i = 1;

	while (i < n && key_of(c, a[i - 1], by_seq) <= key_of(c, a[i], by_seq))
		i++;
	if (i >= n)
		return;
	for (uint32_t w = 1; w < n; w *= 2) {
		for (uint32_t lo = 0; lo < n; lo += 2 * w) {
			uint32_t mid = lo + w < n ? lo + w : n;
			uint32_t hi = lo + 2 * w < n ? lo + 2 * w : n;
			uint32_t i = lo, j = mid, k = lo;

			while (i < mid && j < hi) {
				const struct gt_pev *x = &c->ev[a[i]], *y = &c->ev[a[j]];
				int64_t kx = by_seq ? x->seq : x->ts, ky = by_seq ? y->seq : y->ts;

				tmp[k++] = ky < kx ? a[j++] : a[i++];
			}
			while (i < mid)
				tmp[k++] = a[i++];
			while (j < hi)
				tmp[k++] = a[j++];
		}
		memcpy(a, tmp, (size_t)n * sizeof(*a));
	}
}

int gt_check_later(struct gt_ctx *c, const struct gt_pev *prev, const struct gt_pev *e,
		   const char *when)
{
	if (e->ts >= prev->ts)
		return 0;
	return gt_ctx_fail(c, e->type, e->off,
			   "time stamps out of order %s: ts %lld after ts %lld (%s at offset %llu)",
			   when, (long long)e->ts, (long long)prev->ts,
			   gt_event_descs[prev->type].name, (unsigned long long)prev->off);
}

static int check_time_sorted(struct gt_ctx *c, const uint32_t *a, const char *when)
{
	int rc = 0;

	for (uint32_t i = 1; i < c->nev && !rc; i++)
		rc = gt_check_later(c, &c->ev[a[i - 1]], &c->ev[a[i]], when);
	return rc;
}

int gt_check_sysexit(struct gt_ctx *c, struct gt_idmap *last_block, struct gt_pev *e)
{
	int64_t *blk, ts;
	int isnew;

	if (e->type == GT_EV_GO_SYSBLOCK || e->type == GT_EV_GO_IN_SYSCALL) {
		if (!(blk = gt_idmap_put(last_block, e->g, &isnew)))
			return -ENOMEM;
		*blk = e->ts;
		return 0;
	}
	if (e->type != GT_EV_GO_SYSEXIT || sysexit_arg(e, "ts") == 0)
		return 0;
	ts = (int64_t)sysexit_arg(e, "ts");
	blk = gt_idmap_get(last_block, e->g);
	if (!blk || *blk == 0)
		return gt_ctx_fail(c, e->type, e->off, "stray syscall exit of g %llu (no GoSysBlock or GoInSyscall before)",
				   (unsigned long long)e->g);
	if (ts < *blk)
		return gt_ctx_fail(c, e->type, e->off, "time stamps out of order: syscall exit at %lld before its block at %lld",
				   (long long)ts, (long long)*blk);
	e->ts = ts;
	return 0;
}

/* Gives GoSysExit its real exit time (order1007's last part). */
static int fix_sysexit_times(struct gt_ctx *c, const uint32_t *a)
{
	struct gt_idmap last_block;
	int rc = 0;

	if (gt_idmap_init(&last_block, 1, sizeof(int64_t)) < 0)
		return -ENOMEM;
	for (uint32_t i = 0; i < c->nev && !rc; i++)
		rc = gt_check_sysexit(c, &last_block, &c->ev[a[i]]);
	gt_idmap_free(&last_block);
	return rc;
}

static int order1005(struct gt_ctx *c, uint32_t *out, uint32_t *tmp)
{
	memcpy(out, c->order, (size_t)c->nev * sizeof(*out));
	for (uint32_t i = 0; i < c->nev; i++) {
		struct gt_pev *e = &c->ev[i];

		if (e->type == GT_EV_GO_SYSEXIT) {
			e->seq = (int64_t)sysexit_arg(e, "seq");
			if (sysexit_arg(e, "ts"))
				e->ts = (int64_t)sysexit_arg(e, "ts");
		}
	}
	sort_stable(c, out, tmp, c->nev, 1);
	return check_time_sorted(c, out, "after ordering by sequence");
}

/* CPU samples are re-sorted by the time the signal handler took. */
static void sort_samples(struct gt_ctx *c, uint32_t *tmp)
{
	uint32_t *pidx = gt_idmap_get(&c->batch_of, (uint64_t)GT_PROFILE_P);
	struct gt_batch *prof = pidx ? &c->batches[*pidx] : NULL;

	if (prof && prof->n > 1)
		sort_stable(c, c->order + prof->first, tmp, prof->n, 0);
}

static int order1007(struct gt_ctx *c, uint32_t *out, uint32_t *tmp)
{
	struct merge m;
	int rc;

	sort_samples(c, tmp);
	rc = merge_init(&m, c);
	m.out = out;
	if (!rc)
		rc = merge_run(&m);
	merge_free(&m);
	if (!rc)
		rc = check_time_sorted(c, out, "after merging the Ps");
	if (!rc)
		rc = fix_sysexit_times(c, out);
	if (!rc)
		sort_stable(c, out, tmp, c->nev, 0);
	return rc;
}

int gt_check_order(struct gt_ctx *c)
{
	uint32_t *out = malloc(((size_t)c->nev + 1) * sizeof(*out));
	uint32_t *tmp = malloc(((size_t)c->nev + 1) * sizeof(*tmp));
	int rc = -ENOMEM;

	if (out && tmp)
		rc = c->version < 1007 ? order1005(c, out, tmp) : order1007(c, out, tmp);
	free(tmp);
	if (rc) {
		free(out);
		return rc;
	}
	free(c->order);
	c->order = out;
	c->norder = c->nev;
	c->rep->duration_ticks = (uint64_t)c->ev[out[c->nev - 1]].ts - (uint64_t)c->ev[out[0]].ts;
	return 0;
}

/* Streaming order1007: the Ps' runs are read again, one head each. */
int gt_check_merge_stream(struct gt_ctx *c, gt_check_sink sink, void *arg)
{
	uint32_t *tmp = malloc(((size_t)c->nev + 1) * sizeof(*tmp));
	struct merge m;
	int rc;

	if (!tmp)
		return -ENOMEM;
	sort_samples(c, tmp);
	free(tmp);
	rc = merge_init(&m, c);
	m.sink = sink;
	m.arg = arg;
	if (!rc && !(m.cur = calloc(c->nbatches ? c->nbatches : 1, sizeof(*m.cur))))
		rc = -ENOMEM;
	if (!rc && gt_reader_open(&m.rd, c->data, c->len) < 0)
		rc = -EINVAL; /* decode opened it already */
	for (uint32_t b = 0; !rc && b < c->nbatches; b++)
		gt_pcursor_start(&m.cur[b], &c->segs, c->batches[b].seg_first, c->batches[b].p, b);
	if (!rc)
		rc = merge_run(&m);
	merge_free(&m);
	return rc;
}
