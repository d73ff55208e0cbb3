/* Off-CPU stacks grouped across threads (one stack of many threads is one
 * row, summed), and whether a stack lost its callers in libc. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "util/gt_hash.h"

#define HASH_FRAMES 64

/* The stack's frames by name, file and line (pc where unnamed): the same
 * code in two processes (other addresses) is one stack. */
static uint64_t stack_hash(const struct gt_analysis *a, uint64_t stk)
{
	struct gt_an_frame fr[HASH_FRAMES];
	size_t n = gt_an_stack(a, stk, fr, HASH_FRAMES);
	uint64_t h = 0;

	for (size_t i = 0; i < n; i++) {
		if (fr[i].fn_len) {
			h = gt_hash_more(h, fr[i].fn, fr[i].fn_len);
			h = gt_hash_more(h, fr[i].file, fr[i].file_len);
			h = gt_hash_more(h, &fr[i].line, sizeof(fr[i].line));
		} else {
			h = gt_hash_more(h, &fr[i].pc, sizeof(fr[i].pc));
		}
		h = gt_hash_more(h, "|", 1);
	}
	return n ? h : stk;
}

struct member {
	uint64_t hash, g, weight, count, stk;
};

static int by_hash_g(const void *x, const void *y)
{
	const struct member *a = x, *b = y;

	if (a->hash != b->hash)
		return a->hash < b->hash ? -1 : 1;
	if (a->g != b->g)
		return a->g < b->g ? -1 : 1;
	return a->weight > b->weight ? -1 : a->weight < b->weight;
}

static int by_group_weight(const void *x, const void *y)
{
	const struct report_sgroup *a = x, *b = y;

	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	return a->hash < b->hash ? -1 : a->hash > b->hash;
}

int report_stack_groups(const struct gt_analysis *a, const struct report_opts *o, int r,
			struct report_sgroup **out, size_t *np)
{
	const struct gt_an_stackagg **v = calloc(a->naggs + 1, sizeof(*v));
	struct member *m = calloc(a->naggs + 1, sizeof(*m));
	struct report_sgroup *g = calloc(a->naggs + 1, sizeof(*g));
	size_t n, k = 0;

	if (!v || !m || !g) {
		free(v), free(m), free(g);
		return -ENOMEM;
	}
	n = report_reason_stacks(a, o, r, v);
	for (size_t i = 0; i < n; i++)
		m[i] = (struct member){ stack_hash(a, v[i]->stk), v[i]->g, v[i]->weight,
					v[i]->count, v[i]->stk };
	qsort(m, n, sizeof(*m), by_hash_g);
	for (size_t i = 0, top = 0; i < n; i++) {
		struct report_sgroup *c = k ? &g[k - 1] : NULL;

		if (!c || c->hash != m[i].hash) {
			c = &g[k++];
			*c = (struct report_sgroup){ .hash = m[i].hash, .stk = m[i].stk, .g = m[i].g };
			top = 0;
		}
		/* the heaviest single member's stack and thread stand for it */
		if (m[i].weight > top) {
			top = m[i].weight;
			c->stk = m[i].stk;
			c->g = m[i].g;
		}
		if (!i || m[i - 1].hash != m[i].hash || m[i - 1].g != m[i].g)
			c->threads++;
		c->weight += m[i].weight;
		c->count += m[i].count;
	}
	qsort(g, k, sizeof(*g), by_group_weight);
	free(v);
	free(m);
	*out = g;
	*np = k;
	return 0;
}

/* A frame of libc (glibc's own source paths, or its module's name where
 * it has no debug info). */
static int libc_frame(const struct gt_an_frame *f)
{
	if (f->file_len >= 2 && !memcmp(f->file, "./", 2))
		return 1;
	if (f->file_len >= 3 && !memcmp(f->file, "../", 3))
		return 1;
	return memmem(f->file, f->file_len, "libc.so", 7) || memmem(f->fn, f->fn_len, "libc.so", 7);
}

/* The outermost frames of a whole stack. */
static int natural_root(const struct gt_an_frame *f)
{
	static const char *const roots[] = { "start_thread", "clone", "clone3", "__clone",
					     "__clone3", "__libc_start_main", "__libc_start_call_main",
					     "_start" };

	for (size_t i = 0; i < sizeof(roots) / sizeof(*roots); i++)
		if (f->fn_len == strlen(roots[i]) && !memcmp(f->fn, roots[i], f->fn_len))
			return 1;
	return 0;
}

int report_ends_in_libc(const struct gt_analysis *a, uint64_t stk)
{
	struct gt_an_frame fr[HASH_FRAMES];
	size_t n = gt_an_stack(a, stk, fr, HASH_FRAMES);

	/* a [thread] identity frame, if the producer put one at the root */
	while (n && fr[n - 1].file_len && fr[n - 1].file[0] == '[')
		n--;
	return n && n < HASH_FRAMES && libc_frame(&fr[n - 1]) && !natural_root(&fr[n - 1]);
}
