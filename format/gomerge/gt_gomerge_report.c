/* A merged file read back for `report` (gt_gomerge.h): the merge's
 * "kernel: " regions per goroutine, and each goroutine's running time by
 * the runtime's events.  Two passes: the string tables (per generation),
 * then every M's events with its goroutine's state (as the merge tracks
 * it).  A region's begin and end are adjacent on one M (the merge writes
 * them so), which pairs them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gt_gomerge.h"
#include "util/gt_idmap.h"
#include "util/gt_strset.h"

#define PREFIX "kernel: "

struct mst {
	uint64_t g, since, begin;
	uint64_t name;   /* a pending region's string id, 0: none */
	uint64_t log;    /* its "kernel" log's message id, 0: none */
	int running;
	int seen;
};

/* Rows by goroutine or by thread: (g or m, name's id or 0 if empty) ->
 * index into *rows. */
struct rowset {
	struct gt_gm_row **rows;
	size_t *n, cap;
	struct gt_idmap idx;
};

struct rd {
	struct gt_idmap strs;   /* (gen, id) -> struct span */
	struct gt_idmap ms;     /* m -> struct mst */
	struct gt_idmap gs;     /* g -> struct gt_gm_goroutine */
	struct gt_strset names; /* a row's name bytes, as stored in it */
	struct rowset byg, bym;
	struct gt_gm_report *r;
	uint64_t tick_ns;
	void (*release)(void *arg, size_t end);
	void *arg;
};

struct span {
	const uint8_t *p;
	size_t n;
};

static int strings_pass(struct rd *d, struct gt_v2_file *f)
{
	struct gt_v2_batch b;
	struct gt_v2_cursor c;
	struct gt_v2_ev e;
	char err[200];
	int rc, isnew;

	while ((rc = gt_v2_next_batch(f, &b)) == 1) {
		if (d->release)
			d->release(d->arg, b.hdr);
		if (b.kind != GT_V2_K_STRINGS && b.kind != GT_V2_K_FREQ)
			continue;
		gt_v2_cursor_init(&c, f, &b);
		while ((rc = gt_v2_next_event(&c, &e, err, sizeof(err))) == 1) {
			uint64_t key[2] = { b.gen, e.args[0] };
			struct span *s;

			if (e.type == GT_V2_FREQUENCY && e.args[0])
				d->tick_ns = 1000000000ull / e.args[0];
			if (e.type != GT_V2_STRING)
				continue;
			if (!(s = gt_idmap_insert(&d->strs, key, &isnew)))
				return -ENOMEM;
			s->p = e.data;
			s->n = e.data_len;
		}
		if (rc < 0)
			return -EINVAL;
	}
	return rc;
}

static struct gt_gm_goroutine *gor(struct rd *d, uint64_t g)
{
	int isnew;
	struct gt_gm_goroutine *v = gt_idmap_put(&d->gs, g, &isnew);

	if (v && isnew)
		v->g = g;
	return v;
}

/* The row of (who, the name's id in names) in set, counted. */
#define STACK_MARK "; the preempter's stack ("

/* Where mark starts in s, or NULL. */
static const uint8_t *find(const struct span *s, const char *mark)
{
	size_t m = strlen(mark);

	for (size_t i = 0; s && s->n >= m && i <= s->n - m; i++)
		if (!memcmp(s->p + i, mark, m))
			return s->p + i;
	return NULL;
}

/* The culprit's stack the merge's log gives ("(how): f <- g"), of the
 * row's longest interval. */
static void note_stack(struct gt_gm_row *row, const struct span *log, uint64_t ns)
{
	const uint8_t *p = find(log, STACK_MARK);
	size_t n;

	if (!p || ns <= row->stack_ns)
		return;
	p += strlen(STACK_MARK) - 1;
	n = (size_t)(log->p + log->n - p);
	if (n > sizeof(row->stack) - 1)
		n = sizeof(row->stack) - 1;
	memcpy(row->stack, p, n);
	row->stack[n] = 0;
	row->stack_ns = ns;
}

static int count_row(struct rowset *set, uint64_t who, uint64_t nid, const uint8_t *name,
		     size_t n, uint64_t ns, const struct span *log)
{
	uint64_t key[2] = { who, n ? nid : 0 };
	struct gt_gm_row *row;
	size_t *idx;
	int isnew;

	if (!(idx = gt_idmap_insert(&set->idx, key, &isnew)))
		return -ENOMEM;
	if (!isnew) {
		row = &(*set->rows)[*idx];
		goto found;
	}
	*idx = *set->n;
	if (*set->n == set->cap) {
		size_t cap = set->cap ? 2 * set->cap : 64;
		struct gt_gm_row *nr = realloc(*set->rows, cap * sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		*set->rows = nr;
		set->cap = cap;
	}
	row = &(*set->rows)[(*set->n)++];
	memset(row, 0, sizeof(*row));
	row->g = who;
	memcpy(row->what, name, n);
found:
	row->n++;
	row->ns += ns;
	note_stack(row, log, ns);
	return 0;
}

static int add_row(struct rd *d, uint64_t g, uint64_t m, uint64_t gen, uint64_t id, uint64_t logid,
		   uint64_t ticks)
{
	uint64_t k2[2] = { gen, id }, k3[2] = { gen, logid }, nid = 0;
	const struct span *s = gt_idmap_find(&d->strs, k2);
	const struct span *log = logid ? gt_idmap_find(&d->strs, k3) : NULL;
	struct gt_gm_goroutine *gg;
	size_t n;
	int rc;

	if (!s || s->n < strlen(PREFIX) || memcmp(s->p, PREFIX, strlen(PREFIX)))
		return 0;
	/* the same name in another generation has another id: by name */
	n = s->n - strlen(PREFIX) < sizeof(d->r->rows->what) - 1 ? s->n - strlen(PREFIX)
								 : sizeof(d->r->rows->what) - 1;
	/* by (g, name) in an index: each region end scanned every row, and a
	 * name with a NUL never matched its own (strlen) and added another */
	if (n && gt_strset_add(&d->names, s->p + strlen(PREFIX), n, &nid, NULL))
		return -ENOMEM;
	if ((rc = count_row(&d->byg, g, nid, s->p + strlen(PREFIX), n, ticks * d->tick_ns, log)) ||
	    (rc = count_row(&d->bym, m, nid, s->p + strlen(PREFIX), n, ticks * d->tick_ns, log)))
		return rc;
	if (!(gg = gor(d, g)))
		return -ENOMEM;
	gg->kernel_ns += ticks * d->tick_ns;
	return 0;
}

/* The goroutine's running time: from the M taking it to its leaving. */
static int run_edge(struct rd *d, struct mst *m, int running, uint64_t g, uint64_t ts)
{
	struct gt_gm_goroutine *gg;

	if (m->running && (!running || g != m->g)) {
		if (!(gg = gor(d, m->g)))
			return -ENOMEM;
		gg->running_ns += (ts - m->since) * d->tick_ns;
	}
	if (running && (!m->running || g != m->g))
		m->since = ts;
	m->running = running;
	m->g = g;
	return 0;
}

static int on_event(struct rd *d, struct mst *m, uint64_t mid, uint64_t gen,
		    const struct gt_v2_ev *e)
{
	switch (e->type) {
	case GT_V2_GO_START: case GT_V2_GO_SWITCH: case GT_V2_GO_SWITCH_DESTROY:
		return run_edge(d, m, 1, e->args[1], e->ts);
	case GT_V2_GO_STOP: case GT_V2_GO_BLOCK: case GT_V2_GO_DESTROY:
	case GT_V2_GO_SYSCALL_BEGIN:
		return run_edge(d, m, 0, m->g, e->ts);
	case GT_V2_GO_SYSCALL_END:
		return run_edge(d, m, 1, m->g, e->ts);
	case GT_V2_GO_STATUS: case GT_V2_GO_STATUS_STACK:
		if (e->args[2] == mid && e->args[3] == GT_V2_G_RUNNING)
			return run_edge(d, m, 1, e->args[1], e->ts);
		if (e->args[2] == mid && e->args[3] == GT_V2_G_SYSCALL)
			return run_edge(d, m, 0, e->args[1], e->ts);
		return 0;
	case GT_V2_USER_REGION_BEGIN:
		m->name = e->args[2];
		m->begin = e->ts;
		m->log = 0;
		return 0;
	case GT_V2_USER_LOG:
		/* the merge writes a region's log at its begin */
		if (m->name && e->ts == m->begin && !m->log)
			m->log = e->args[3]; /* dt, task, key, value */
		return 0;
	case GT_V2_USER_REGION_END:
		if (m->name && m->name == e->args[2]) {
			m->name = 0;
			return add_row(d, m->g, mid, gen, e->args[2], m->log, e->ts - m->begin);
		}
		return 0;
	}
	return 0;
}

static int events_pass(struct rd *d, struct gt_v2_file *f)
{
	struct gt_v2_batch b;
	struct gt_v2_cursor c;
	struct gt_v2_ev e;
	char err[200];
	int rc, isnew;

	while ((rc = gt_v2_next_batch(f, &b)) == 1) {
		struct mst *m;

		if (d->release)
			d->release(d->arg, b.hdr);
		if (b.kind != GT_V2_K_EVENTS)
			continue;
		if (!(m = gt_idmap_put(&d->ms, b.m, &isnew)))
			return -ENOMEM;
		gt_v2_cursor_init(&c, f, &b);
		while ((rc = gt_v2_next_event(&c, &e, err, sizeof(err))) == 1)
			if ((rc = on_event(d, m, b.m, b.gen, &e)) < 0)
				return rc;
		if (rc < 0)
			return -EINVAL;
	}
	return rc;
}

static int by_ns(const void *a, const void *b)
{
	const struct gt_gm_row *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : (x->g > y->g) - (x->g < y->g);
}

static int by_who_ns(const void *a, const void *b)
{
	const struct gt_gm_row *x = a, *y = b;

	return x->g != y->g ? (x->g > y->g) - (x->g < y->g) : by_ns(a, b);
}

static int by_kernel(const void *a, const void *b)
{
	const struct gt_gm_goroutine *x = a, *y = b;

	return x->kernel_ns < y->kernel_ns ? 1 : x->kernel_ns > y->kernel_ns ? -1 : (x->g > y->g) - (x->g < y->g);
}

/* The goroutines with a row, as an array. */
static int collect(struct rd *d)
{
	size_t n = 0;

	d->r->gs = calloc(d->gs.count ? d->gs.count : 1, sizeof(*d->r->gs));
	if (!d->r->gs)
		return -ENOMEM;
	for (size_t i = 0; i < d->gs.cap; i++) {
		const struct gt_gm_goroutine *g = (const void *)(d->gs.vals + i * d->gs.vsize);

		if (d->gs.used[i] == 1 && g->kernel_ns)
			d->r->gs[n++] = *g;
	}
	d->r->ngs = n;
	qsort(d->r->gs, n, sizeof(*d->r->gs), by_kernel);
	if (d->r->nrows) /* none: rows is NULL, which qsort may not take */
		qsort(d->r->rows, d->r->nrows, sizeof(*d->r->rows), by_ns);
	if (d->r->nmrows)
		qsort(d->r->mrows, d->r->nmrows, sizeof(*d->r->mrows), by_who_ns);
	return 0;
}

int gt_gm_report_read(const uint8_t *data, size_t len, void (*release)(void *arg, size_t end),
		      void *arg, struct gt_gm_report *r, char *err, size_t errlen)
{
	struct rd d = { .r = r, .tick_ns = 1, .release = release, .arg = arg,
			.byg = { .rows = &r->rows, .n = &r->nrows },
			.bym = { .rows = &r->mrows, .n = &r->nmrows } };
	struct gt_v2_file f;
	int rc;

	memset(r, 0, sizeof(*r));
	gt_idmap_init(&d.strs, 2, sizeof(struct span));
	gt_idmap_init(&d.ms, 1, sizeof(struct mst));
	gt_idmap_init(&d.gs, 1, sizeof(struct gt_gm_goroutine));
	gt_idmap_init(&d.byg.idx, 2, sizeof(size_t));
	gt_idmap_init(&d.bym.idx, 2, sizeof(size_t));
	rc = gt_v2_open(&f, data, len);
	if (!rc && !(rc = strings_pass(&d, &f)) && !(rc = gt_v2_open(&f, data, len)) &&
	    !(rc = events_pass(&d, &f)))
		rc = collect(&d);
	if (rc == -EINVAL)
		snprintf(err, errlen, "%s", f.error[0] ? f.error : "unreadable events");
	gt_idmap_free(&d.strs);
	gt_idmap_free(&d.ms);
	gt_idmap_free(&d.gs);
	gt_idmap_free(&d.byg.idx);
	gt_idmap_free(&d.bym.idx);
	gt_strset_free(&d.names);
	if (rc)
		gt_gm_report_free(r);
	return rc;
}

void gt_gm_report_free(struct gt_gm_report *r)
{
	free(r->rows);
	free(r->mrows);
	free(r->gs);
	memset(r, 0, sizeof(*r));
}
