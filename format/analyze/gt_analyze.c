/* gt_analyze: the two passes, the thread and aggregate tables, and the
 * lookups the report's printer uses afterwards. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gt_analyze_internal.h"
#include "v2/gt_v2.h"

int64_t gt_an_ns(const struct gt_analysis *a, int64_t ts)
{
	/* Go 1.19's parser: int64(float64(ts-minTs) * (1e9/freq)), its int64
	 * difference wrapping.  Hostile files reach absurd times: they are
	 * held within +-2^62 ns (146 years), so that a difference of two times
	 * never overflows (undefined in C) and real traces are untouched. */
	int64_t d = (int64_t)((uint64_t)ts - (uint64_t)a->priv->min_ts);
	double ns = (double)d * a->priv->ns_per_tick;
	const double lim = 4611686018427387904.0; /* 2^62 */

	if (ns != ns)
		return 0; /* NaN: a frequency that is not one */
	if (ns >= lim)
		return INT64_C(1) << 62;
	if (ns <= -lim)
		return -(INT64_C(1) << 62);
	return (int64_t)ns;
}

struct gt_an_thread *gt_an_thread_get(struct gt_analysis *a, uint64_t g)
{
	struct gt_an_priv *pv = a->priv;
	int64_t i = gt_an_map_get(&pv->gs, g, 0, 0);
	struct gt_an_thread *t;

	if (i >= 0)
		return &a->threads[i];
	if (gt_grow(&a->threads, &pv->capthreads, a->nthreads + 1, sizeof(*a->threads)) ||
	    gt_an_map_put(&pv->gs, g, 0, 0, (uint32_t)a->nthreads))
		return NULL;
	t = &a->threads[a->nthreads++];
	memset(t, 0, sizeof(*t));
	t->id = g;
	t->last_p = -1;
	t->stop_sys = -1;
	t->woken_ns = t->last_stop_ns = -1;
	return t;
}

int gt_an_agg_add(struct gt_analysis *a, uint64_t g, uint64_t kind, uint64_t stk,
		  uint64_t weight)
{
	struct gt_an_priv *pv = a->priv;
	int64_t i = gt_an_map_get(&pv->aggmap, g, kind, stk);

	if (i < 0) {
		if (gt_grow(&a->aggs, &pv->capaggs, a->naggs + 1, sizeof(*a->aggs)) ||
		    gt_an_map_put(&pv->aggmap, g, kind, stk, (uint32_t)a->naggs))
			return -ENOMEM;
		i = (int64_t)a->naggs++;
		a->aggs[i] = (struct gt_an_stackagg){ .g = g, .kind = kind, .stk = stk };
	}
	a->aggs[i].weight += weight;
	a->aggs[i].count++;
	return 0;
}

const char *gt_an_string(const struct gt_analysis *a, uint64_t id, size_t *len)
{
	int64_t i = gt_an_map_get(&a->priv->strings, id, 0, 0);

	if (i < 0)
		return NULL;
	*len = a->priv->strs[i].len;
	return (const char *)a->priv->data + a->priv->strs[i].off;
}

size_t gt_an_stack(const struct gt_analysis *a, uint64_t stk, struct gt_an_frame *out, size_t max)
{
	struct gt_an_priv *pv = a->priv;
	int64_t i = stk ? gt_an_map_get(&pv->stacks, stk, 0, 0) : -1;
	struct gt_reader r = pv->rd;
	const struct gt_raw_event *raw = pv->raw;
	size_t n, per = a->version >= 1007 ? 4 : 1;

	if (i < 0)
		return 0;
	if (pv->v2)
		return gt_an_stack_v2(a, i, out, max);
	r.pos = pv->stks[i].off;
	if (gt_reader_next(&r, pv->raw) != 1)
		return 0;
	n = raw->args[1];
	if (n > (raw->nargs - 2) / per)
		n = (raw->nargs - 2) / per;
	if (n > (GT_READER_MAX_ARGS - 2) / per)
		n = (GT_READER_MAX_ARGS - 2) / per;
	if (n > max)
		n = max;
	for (size_t k = 0; k < n; k++) {
		const uint64_t *f = &raw->args[2 + k * per];
		struct gt_an_frame *o = &out[k];

		memset(o, 0, sizeof(*o));
		o->pc = f[0];
		if (per == 4) {
			o->fn = gt_an_string(a, f[1], &o->fn_len);
			o->file = gt_an_string(a, f[2], &o->file_len);
			o->line = f[3];
		}
		if (!o->fn)
			o->fn = "", o->fn_len = 0;
		if (!o->file)
			o->file = "", o->file_len = 0;
	}
	return n;
}

/* Index of name in a->names, added if new; -1 if memory ran out. */
static int32_t name_index(struct gt_analysis *a, const char *name)
{
	char *dup;

	for (size_t i = 0; i < a->nnames; i++)
		if (!strcmp(a->names[i], name))
			return (int32_t)i;
	dup = strdup(name);
	if (!dup || gt_grow(&a->names, &a->priv->capnames, a->nnames + 1, sizeof(*a->names))) {
		free(dup);
		return -1;
	}
	a->names[a->nnames] = dup;
	return (int32_t)a->nnames++;
}

/* name as the syscall list spells it (or its "new" or "64" form), or
 * NULL if the list lacks it. */
static const char *listed(const struct gt_analyze_opts *o, const char *name)
{
	if (!o->nsysnames)
		return name;
	for (size_t i = 0; i < o->nsysnames; i++)
		if (!strcmp(o->sysnames[i], name))
			return o->sysnames[i];
	for (size_t i = 0; i < o->nsysnames; i++)
		if (!strncmp(o->sysnames[i], "new", 3) && !strcmp(o->sysnames[i] + 3, name))
			return o->sysnames[i];
	/* libc's large-file wrappers drop the kernel's "64": pread is pread64 */
	size_t n = strlen(name);
	for (size_t i = 0; i < o->nsysnames; i++)
		if (strlen(o->sysnames[i]) == n + 2 && !strncmp(o->sysnames[i], name, n) &&
		    !strcmp(o->sysnames[i] + n, "64"))
			return o->sysnames[i];
	return NULL;
}

int32_t gt_an_stack_sysname(struct gt_analysis *a, uint64_t stk)
{
	struct gt_an_priv *pv = a->priv;
	int64_t i = stk ? gt_an_map_get(&pv->stacks, stk, 0, 0) : -1;
	struct gt_an_frame top;
	const char *name = NULL;
	char buf[64];

	if (i >= 0 && pv->stks[i].sys >= 0)
		return pv->stks[i].sys;
	if (i >= 0 && gt_an_stack(a, stk, &top, 1) == 1)
		name = gt_an_syscall_name(&top, buf, sizeof(buf));
	if (name)
		name = listed(&pv->opts, name);
	int32_t n = name_index(a, name ? name : "syscall");
	if (i >= 0)
		pv->stks[i].sys = n;
	return n;
}

const char *gt_an_thread_name(const struct gt_analysis *a, const struct gt_an_thread *t,
			      size_t *len, int64_t *tid)
{
	struct gt_an_frame f, all[128];
	size_t n;

	*tid = -1;
	*len = 0;
	if (!t->name_stk && t->root_stk &&
	    (n = gt_an_stack(a, t->root_stk, all, sizeof(all) / sizeof(all[0]))) > 0 &&
	    all[n - 1].file_len == 8 && !memcmp(all[n - 1].file, "[thread]", 8)) {
		*tid = (int64_t)all[n - 1].line;
		*len = all[n - 1].fn_len;
		return all[n - 1].fn;
	}
	if (!t->name_stk || gt_an_stack(a, t->name_stk, &f, 1) != 1)
		return "";
	if (f.file_len == 8 && !memcmp(f.file, "[thread]", 8))
		*tid = (int64_t)f.line;
	*len = f.fn_len;
	return f.fn;
}

static int by_id(const void *x, const void *y)
{
	const struct gt_an_thread *a = x, *b = y;

	return a->id < b->id ? -1 : a->id > b->id;
}

const struct gt_an_thread *gt_an_thread_of(const struct gt_analysis *a, uint64_t id)
{
	struct gt_an_thread key = { .id = id };

	return a->nthreads ? bsearch(&key, a->threads, a->nthreads, sizeof(key), by_id) : NULL;
}

static int setup(struct gt_analysis *a, const uint8_t *data, size_t len,
		 const struct gt_analyze_opts *o)
{
	struct gt_an_priv *pv;

	memset(a, 0, sizeof(*a));
	a->priv = pv = calloc(1, sizeof(*pv));
	if (!pv || !(pv->raw = malloc(sizeof(*pv->raw))))
		return -ENOMEM;
	pv->data = data;
	pv->len = len;
	pv->opts = o ? *o : (struct gt_analyze_opts){ 0, -1, NULL, 0 };
	if (gt_v2_is(data, len))
		return name_index(a, "syscall") < 0 ? -ENOMEM : 0;
	if (gt_reader_open(&pv->rd, data, len) < 0) {
		snprintf(a->error, sizeof(a->error), "%s", pv->rd.error);
		return -EINVAL;
	}
	a->version = pv->rd.version;
	if (name_index(a, "syscall") < 0)
		return -ENOMEM;
	return 0;
}

int gt_analyze(struct gt_analysis *a, const uint8_t *data, size_t len,
	       const struct gt_analyze_opts *o)
{
	int rc = setup(a, data, len, o);

	if (!rc && gt_v2_is(data, len)) {
		rc = gt_an_v2(a);
	} else {
		if (!rc)
			rc = gt_an_index(a);
		if (!rc)
			rc = gt_an_merge(a);
	}
	if (rc == -ENOMEM && !a->error[0])
		snprintf(a->error, sizeof(a->error), "out of memory");
	if (rc)
		return rc;
	gt_an_finish(a);
	if (a->nthreads) /* qsort of NULL is undefined even for 0 items */
		qsort(a->threads, a->nthreads, sizeof(*a->threads), by_id);
	for (size_t i = 0; i < a->nthreads; i++)
		if (a->threads[i].delay.oom || a->threads[i].wdelay.oom ||
		    a->threads[i].pdelay.oom) {
			snprintf(a->error, sizeof(a->error), "out of memory in a histogram");
			return -ENOMEM;
		}
	return 0;
}

void gt_analysis_free(struct gt_analysis *a)
{
	struct gt_an_priv *pv = a->priv;

	for (size_t i = 0; i < a->nthreads; i++) {
		gt_hist_free(&a->threads[i].delay);
		gt_hist_free(&a->threads[i].wdelay);
		gt_hist_free(&a->threads[i].pdelay);
		free(a->threads[i].sys);
		free(a->threads[i].wak);
	}
	free(a->threads);
	free(a->aggs);
	free(a->goros);
	free(a->throttles);
	for (size_t i = 0; i < a->nnames; i++)
		free(a->names[i]);
	free(a->names);
	if (pv) {
		gt_an_map_free(&pv->strings);
		gt_an_map_free(&pv->stacks);
		gt_an_map_free(&pv->gs);
		gt_an_map_free(&pv->aggmap);
		gt_an_map_free(&pv->pmap);
		free(pv->strs);
		free(pv->stks);
		free(pv->frames);
		gt_strset_free(&pv->fnames);
		gt_psegs_free(&pv->segs);
		free(pv->procs);
		free(pv->raw);
		free(pv);
	}
	a->priv = NULL;
	a->threads = NULL;
	a->aggs = NULL;
	a->names = NULL;
	a->nthreads = a->naggs = a->nnames = 0;
}
