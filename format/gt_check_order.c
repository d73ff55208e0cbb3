/* Phase 2, as Go 1.19's order1007 / order1005: merge the
 * per-P batches into one stream that respects every goroutine's sequence
 * numbers, check that time then never goes backwards, and move syscall
 * exits to their real time.
 *
 * Go rescans every batch for each event it merges; here a batch whose head
 * waits for a goroutine's state sleeps on that goroutine's wait list and is
 * rescanned only when that goroutine moves, so merging stays O(n log P)
 * even on inputs with thousands of Ps. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gt_check_internal.h"

enum { ST_DEAD, ST_RUNNABLE, ST_RUNNING, ST_WAITING };

#define UNORDERED UINT64_MAX
#define GARBAGE (UINT64_MAX - 1)
#define NOSEQ UINT64_MAX
#define SEQINC (UINT64_MAX - 1)

struct gstate {
	uint64_t seq;
	int status;
};

struct ostate { /* value of the per-goroutine ordering map */
	struct gstate st;
	int64_t wait_head; /* first batch waiting on this goroutine, or -1 */
};

struct fentry { /* a frontier event */
	int64_t ts;
	uint64_t tie;
	uint32_t ev, batch;
	uint64_t g;
	struct gstate init, next;
};

/* Streaming: a P's position in its runs of records, and its next event. */
struct cursor {
	uint32_t seg;
	uint64_t pos;
	struct gt_decode_state st;
	struct gt_cev head;
	uint8_t has_head, done;
};

struct merge {
	struct gt_ctx *c;
	struct gt_reader rd;  /* streaming: opened on the input */
	struct cursor *cur;   /* streaming: per batch */
	struct gt_map gs;    /* g -> struct ostate */
	uint32_t *cursor;    /* per batch: events taken */
	uint8_t *selected;
	int64_t *wnext;      /* per batch: next on the same wait list */
	uint32_t *queue, nqueue;
	struct fentry *heap;
	uint32_t nheap;
	uint64_t tie;
};

/* order.go stateTransition. */
static void state_transition(const struct gt_cev *e, uint64_t *g,
			     struct gstate *init, struct gstate *next)
{
	*g = UNORDERED;
	*init = *next = (struct gstate){0, ST_DEAD};
	switch (e->type) {
	case GT_EV_GO_CREATE:
		*g = e->args[0];
		*init = (struct gstate){0, ST_DEAD};
		*next = (struct gstate){1, ST_RUNNABLE};
		break;
	case GT_EV_GO_WAITING: case GT_EV_GO_IN_SYSCALL:
		*g = e->g;
		*init = (struct gstate){1, ST_RUNNABLE};
		*next = (struct gstate){2, ST_WAITING};
		break;
	case GT_EV_GO_START: case GT_EV_GO_START_LABEL:
		*g = e->g;
		*init = (struct gstate){e->args[1], ST_RUNNABLE};
		*next = (struct gstate){e->args[1] + 1, ST_RUNNING};
		break;
	case GT_EV_GO_START_LOCAL:
		*g = e->g;
		*init = (struct gstate){NOSEQ, ST_RUNNABLE};
		*next = (struct gstate){SEQINC, ST_RUNNING};
		break;
	case GT_EV_GO_BLOCK: case GT_EV_GO_BLOCK_SEND: case GT_EV_GO_BLOCK_RECV:
	case GT_EV_GO_BLOCK_SELECT: case GT_EV_GO_BLOCK_SYNC: case GT_EV_GO_BLOCK_COND:
	case GT_EV_GO_BLOCK_NET: case GT_EV_GO_SLEEP: case GT_EV_GO_SYSBLOCK:
	case GT_EV_GO_BLOCK_GC:
		*g = e->g;
		*init = (struct gstate){NOSEQ, ST_RUNNING};
		*next = (struct gstate){NOSEQ, ST_WAITING};
		break;
	case GT_EV_GO_SCHED: case GT_EV_GO_PREEMPT:
		*g = e->g;
		*init = (struct gstate){NOSEQ, ST_RUNNING};
		*next = (struct gstate){NOSEQ, ST_RUNNABLE};
		break;
	case GT_EV_GO_UNBLOCK: case GT_EV_GO_SYSEXIT:
		*g = e->args[0];
		*init = (struct gstate){e->args[1], ST_WAITING};
		*next = (struct gstate){e->args[1] + 1, ST_RUNNABLE};
		break;
	case GT_EV_GO_UNBLOCK_LOCAL: case GT_EV_GO_SYSEXIT_LOCAL:
		*g = e->args[0];
		*init = (struct gstate){NOSEQ, ST_WAITING};
		*next = (struct gstate){SEQINC, ST_RUNNABLE};
		break;
	case GT_EV_GC_START:
		*g = GARBAGE;
		*init = (struct gstate){e->args[0], ST_DEAD};
		*next = (struct gstate){e->args[0] + 1, ST_DEAD};
		break;
	}
}

static int ready(uint64_t g, struct gstate cur, struct gstate init)
{
	return g == UNORDERED ||
	       ((init.seq == NOSEQ || init.seq == cur.seq) && init.status == cur.status);
}

static struct ostate *ostate_of(struct merge *m, uint64_t g)
{
	int isnew;
	struct ostate *o = gt_map_put(&m->gs, g, &isnew);

	if (o && isnew)
		o->wait_head = -1;
	return o;
}

static int fless(const struct fentry *a, const struct fentry *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->tie < b->tie);
}

static void heap_push(struct merge *m, struct fentry f)
{
	uint32_t i = m->nheap++;

	while (i > 0 && fless(&f, &m->heap[(i - 1) / 2])) {
		m->heap[i] = m->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	m->heap[i] = f;
}

static struct fentry heap_pop(struct merge *m)
{
	struct fentry top = m->heap[0], last = m->heap[--m->nheap];
	uint32_t i = 0;

	for (;;) {
		uint32_t l = 2 * i + 1, s = i;
		const struct fentry *best = &last;

		if (l < m->nheap && fless(&m->heap[l], best)) {
			s = l;
			best = &m->heap[l];
		}
		if (l + 1 < m->nheap && fless(&m->heap[l + 1], best))
			s = l + 1;
		if (s == i)
			break;
		m->heap[i] = m->heap[s];
		i = s;
	}
	if (m->nheap)
		m->heap[i] = last;
	return top;
}

/* Streaming: decodes P batch b's next event into its cursor's head. */
static void cursor_fill(struct merge *m, uint32_t b)
{
	struct cursor *k = &m->cur[b];
	struct gt_ctx *c = m->c;
	const struct gt_raw_event *raw = c->raw;
	struct gt_cev tmp;

	while (!k->has_head && !k->done) {
		if (k->seg == UINT32_MAX) {
			k->done = 1;
			break;
		}
		m->rd.pos = k->pos; /* one reader, moved from P to P */
		if (gt_reader_next(&m->rd, c->raw) <= 0 || raw->type == GT_EV_BATCH) {
			/* this run ends (decode read it all: no error here) */
			k->seg = c->segs[k->seg].next;
			if (k->seg != UINT32_MAX) {
				k->pos = c->segs[k->seg].off;
				k->st.last_ts = c->segs[k->seg].base_ts;
			}
			continue;
		}
		gt_check_release(c, raw->end - k->pos);
		k->pos = raw->end;
		if (raw->type == GT_EV_STRING || raw->type == GT_EV_STACK ||
		    raw->type == GT_EV_FREQUENCY || raw->type == GT_EV_TIMER_GOROUTINE)
			continue;
		gt_check_fill_event(c, &k->st, raw, gt_check_arg_num(c->version, raw), &tmp);
		k->st.last_ts = tmp.ts; /* a sample's delta moves the P's clock too */
		if (raw->type == GT_EV_CPU_SAMPLE)
			continue; /* merged from the sample batch */
		gt_check_fix_event(&k->st, &tmp);
		tmp.pidx = b;
		k->head = tmp;
		k->has_head = 1;
	}
}

static int streamed(const struct merge *m, uint32_t b)
{
	return m->cur && m->c->batches[b].p != GT_PROFILE_P;
}

/* Batch b's next event not yet merged, or NULL; *ev its index in c->ev. */
static struct gt_cev *head_of(struct merge *m, uint32_t b, uint32_t *ev)
{
	const struct gt_batch *bt = &m->c->batches[b];

	*ev = UINT32_MAX;
	if (streamed(m, b)) {
		cursor_fill(m, b);
		return m->cur[b].has_head ? &m->cur[b].head : NULL;
	}
	if (m->cursor[b] >= bt->n)
		return NULL;
	*ev = m->c->order[bt->first + m->cursor[b]];
	return &m->c->ev[*ev];
}

/* Looks at the head of batch b: into the frontier, or onto a wait list. */
static int scan_batch(struct merge *m, uint32_t b)
{
	struct gt_cev *e;
	struct fentry f;
	struct ostate *o;

	if (m->selected[b] || !(e = head_of(m, b, &f.ev)))
		return 0;
	state_transition(e, &f.g, &f.init, &f.next);
	if (f.g != UNORDERED) {
		o = ostate_of(m, f.g);
		if (!o)
			return -ENOMEM;
		if (!ready(f.g, o->st, f.init)) {
			m->wnext[b] = o->wait_head;
			o->wait_head = b;
			return 0;
		}
	}
	f.ts = e->ts;
	f.tie = m->tie++;
	f.batch = b;
	heap_push(m, f);
	m->cursor[b]++;
	m->selected[b] = 1;
	/* "Local" events only serve ordering. */
	if (e->type == GT_EV_GO_START_LOCAL)
		e->type = GT_EV_GO_START;
	else if (e->type == GT_EV_GO_UNBLOCK_LOCAL)
		e->type = GT_EV_GO_UNBLOCK;
	else if (e->type == GT_EV_GO_SYSEXIT_LOCAL)
		e->type = GT_EV_GO_SYSEXIT;
	return 0;
}

/* order.go transition, then wakes the batches waiting on g. */
static int apply(struct merge *m, const struct fentry *f, const struct gt_cev *e)
{
	struct ostate *o;
	struct gstate next = f->next;
	int64_t w;

	if (f->g == UNORDERED)
		return 0;
	o = ostate_of(m, f->g);
	if (!o)
		return -ENOMEM;
	if (!ready(f->g, o->st, f->init))
		return gt_ctx_fail(m->c, e->type, e->off,
				   "event sequences are broken for g %llu (Go 1.19 panics here)",
				   (unsigned long long)f->g);
	if (next.seq == NOSEQ)
		next.seq = o->st.seq;
	else if (next.seq == SEQINC)
		next.seq = o->st.seq + 1;
	o->st = next;
	for (w = o->wait_head; w >= 0; w = m->wnext[w])
		m->queue[m->nqueue++] = (uint32_t)w;
	o->wait_head = -1;
	return 0;
}

static int merge_alloc(struct merge *m, struct gt_ctx *c)
{
	uint32_t nb = c->nbatches;

	memset(m, 0, sizeof(*m));
	m->c = c;
	m->cursor = calloc(nb, sizeof(*m->cursor));
	m->selected = calloc(nb, 1);
	m->wnext = calloc(nb, sizeof(*m->wnext));
	/* A batch is queued at most once per wake-up, and is on at most
	 * one wait list: nb entries suffice for both. */
	m->queue = calloc(nb, sizeof(*m->queue));
	m->heap = calloc(nb, sizeof(*m->heap));
	if (!m->cursor || !m->selected || !m->wnext || !m->queue || !m->heap)
		return -ENOMEM;
	return gt_map_init(&m->gs, sizeof(struct ostate));
}

static void merge_free(struct merge *m)
{
	free(m->cur);
	free(m->cursor);
	free(m->selected);
	free(m->wnext);
	free(m->queue);
	free(m->heap);
	gt_map_free(&m->gs);
}

/* Merges every event: into out (indices into c->ev), or when streaming
 * to sink. */
static int merge_run(struct merge *m, uint32_t *out, gt_merge_sink sink, void *arg)
{
	struct gt_ctx *c = m->c;
	uint64_t done = 0, total = m->cur ? c->nall : c->nev;
	uint32_t idx;
	int rc;

	for (uint32_t b = 0; b < c->nbatches; b++)
		m->queue[m->nqueue++] = b;
	while (done < total) {
		uint32_t n = m->nqueue;
		struct gt_cev *e = NULL;
		struct fentry f;

		/* scan_batch may append to the queue only via apply, not here. */
		m->nqueue = 0;
		for (uint32_t i = 0; i < n; i++) {
			rc = scan_batch(m, m->queue[i]);
			if (rc)
				return rc;
		}
		if (m->nheap == 0) {
			for (uint32_t b = 0; b < c->nbatches && !e; b++)
				e = head_of(m, b, &idx);
			return gt_ctx_fail(c, e ? e->type : -1, e ? e->off : 0,
					   "no consistent ordering of events possible (sequence numbers or states across Ps do not fit; first stuck event g %llu)",
					   e ? (unsigned long long)e->g : 0ULL);
		}
		f = heap_pop(m);
		e = streamed(m, f.batch) ? &m->cur[f.batch].head : &c->ev[f.ev];
		rc = apply(m, &f, e);
		if (rc)
			return rc;
		done++;
		if (sink && (rc = sink(arg, e)))
			return rc;
		if (!sink)
			out[done - 1] = f.ev;
		if (streamed(m, f.batch))
			m->cur[f.batch].has_head = 0;
		m->selected[f.batch] = 0;
		m->queue[m->nqueue++] = f.batch;
	}
	return 0;
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
				const struct gt_cev *x = &c->ev[a[i]], *y = &c->ev[a[j]];
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

static int check_time_sorted(struct gt_ctx *c, const uint32_t *a, const char *when)
{
	for (uint32_t i = 1; i < c->nev; i++) {
		const struct gt_cev *p = &c->ev[a[i - 1]], *e = &c->ev[a[i]];

		if (e->ts < p->ts)
			return gt_ctx_fail(c, e->type, e->off,
					   "time stamps out of order %s: ts %lld after ts %lld (%s at offset %llu)",
					   when, (long long)e->ts, (long long)p->ts,
					   gt_event_descs[p->type].name, (unsigned long long)p->off);
	}
	return 0;
}

/* Gives GoSysExit its real exit time (order1007's last part). */
static int fix_sysexit_times(struct gt_ctx *c, const uint32_t *a)
{
	struct gt_map last_block;
	int rc = 0;

	if (gt_map_init(&last_block, sizeof(int64_t)) < 0)
		return -ENOMEM;
	for (uint32_t i = 0; i < c->nev && !rc; i++) {
		struct gt_cev *e = &c->ev[a[i]];
		int64_t *blk, ts;
		int isnew;

		if (e->type == GT_EV_GO_SYSBLOCK || e->type == GT_EV_GO_IN_SYSCALL) {
			blk = gt_map_put(&last_block, e->g, &isnew);
			if (!blk)
				rc = -ENOMEM;
			else
				*blk = e->ts;
			continue;
		}
		if (e->type != GT_EV_GO_SYSEXIT || e->args[2] == 0)
			continue;
		ts = (int64_t)e->args[2];
		blk = gt_map_get(&last_block, e->g);
		if (!blk || *blk == 0)
			rc = gt_ctx_fail(c, e->type, e->off, "stray syscall exit of g %llu (no GoSysBlock or GoInSyscall before)",
					 (unsigned long long)e->g);
		else if (ts < *blk)
			rc = gt_ctx_fail(c, e->type, e->off, "time stamps out of order: syscall exit at %lld before its block at %lld",
					 (long long)ts, (long long)*blk);
		else
			e->ts = ts;
	}
	gt_map_free(&last_block);
	return rc;
}

static int order1005(struct gt_ctx *c, uint32_t *out, uint32_t *tmp)
{
	memcpy(out, c->order, (size_t)c->nev * sizeof(*out));
	for (uint32_t i = 0; i < c->nev; i++) {
		struct gt_cev *e = &c->ev[i];

		if (e->type == GT_EV_GO_SYSEXIT) {
			e->seq = (int64_t)e->args[1];
			if (e->args[2])
				e->ts = (int64_t)e->args[2];
		}
	}
	sort_stable(c, out, tmp, c->nev, 1);
	return check_time_sorted(c, out, "after ordering by sequence");
}

static int order1007(struct gt_ctx *c, uint32_t *out, uint32_t *tmp)
{
	struct gt_batch *prof = NULL;
	struct merge m;
	uint32_t *pidx;
	int rc;

	pidx = gt_map_get(&c->batch_of, (uint64_t)GT_PROFILE_P);
	if (pidx)
		prof = &c->batches[*pidx];
	/* CPU samples are re-sorted by the time the signal handler took. */
	if (prof && prof->n > 1)
		sort_stable(c, c->order + prof->first, tmp, prof->n, 0);
	rc = merge_alloc(&m, c);
	if (!rc)
		rc = merge_run(&m, out, NULL, NULL);
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
int gt_check_merge_stream(struct gt_ctx *c, gt_merge_sink sink, void *arg)
{
	struct gt_batch *prof = NULL;
	uint32_t *pidx = gt_map_get(&c->batch_of, (uint64_t)GT_PROFILE_P);
	uint32_t *tmp = malloc(((size_t)c->nev + 1) * sizeof(*tmp));
	struct merge m;
	int rc;

	if (pidx)
		prof = &c->batches[*pidx];
	if (!tmp)
		return -ENOMEM;
	/* CPU samples are re-sorted by the time the signal handler took. */
	if (prof && prof->n > 1)
		sort_stable(c, c->order + prof->first, tmp, prof->n, 0);
	free(tmp);
	rc = merge_alloc(&m, c);
	if (!rc && !(m.cur = calloc(c->nbatches, sizeof(*m.cur))))
		rc = -ENOMEM;
	if (!rc && gt_reader_open(&m.rd, c->data, c->len) < 0)
		rc = -EINVAL; /* decode opened it already */
	for (uint32_t b = 0; !rc && b < c->nbatches; b++) {
		struct cursor *k = &m.cur[b];
		const struct gt_batch *bt = &c->batches[b];

		k->seg = bt->seg_first;
		k->st.last_p = bt->p;
		if (k->seg != UINT32_MAX) {
			k->pos = c->segs[k->seg].off;
			k->st.last_ts = c->segs[k->seg].base_ts;
		}
	}
	if (!rc)
		rc = merge_run(&m, NULL, sink, arg);
	merge_free(&m);
	return rc;
}
