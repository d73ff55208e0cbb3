/* See perfmap.h. */
#include "perfmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* How many earlier entries a lookup looks at for code that still covers
 * the address (a longer one started before the nearest). */
#define OVERLAP_SCAN 8

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A hex number at *p (an optional 0x, at most 16 digits): 0 or -EINVAL. */
static int hex(const char **p, const char *end, uint64_t *out)
{
	const char *q = *p;
	int digits = 0, d;

	if (end - q > 2 && q[0] == '0' && (q[1] | 0x20) == 'x' && hexval(q[2]) >= 0)
		q += 2;
	*out = 0;
	for (; q < end && (d = hexval(*q)) >= 0; q++) {
		if (++digits > 16)
			return -EINVAL;
		*out = *out << 4 | (uint64_t)d;
	}
	*p = q;
	return digits ? 0 : -EINVAL;
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

int gt_perfmap_parse_line(const char *line, size_t len, uint64_t *start, uint64_t *size,
			  const char **name, size_t *name_len)
{
	const char *p = line, *end = line + len;

	while (end > p && (end[-1] == '\r' || end[-1] == '\n'))
		end--;
	p = skip_blanks(p, end);
	if (hex(&p, end, start) || p == end || (*p != ' ' && *p != '\t'))
		return -EINVAL;
	p = skip_blanks(p, end);
	if (hex(&p, end, size) || p == end || (*p != ' ' && *p != '\t'))
		return -EINVAL;
	p++; /* one separator: the name may begin with a blank, as perf keeps it */
	if (p == end || !*size || *start + *size < *start)
		return -EINVAL;
	*name = p;
	*name_len = (size_t)(end - p);
	return 0;
}

static int add(struct gt_perfmap *pm, uint64_t start, uint64_t size, const char *name,
	       size_t len, uint64_t seq)
{
	char shown[GT_PERFMAP_NAME_MAX];
	const char *copy;

	if (len > sizeof(shown))
		len = sizeof(shown);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		shown[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	if (pm->n == pm->cap) {
		size_t cap = pm->cap ? pm->cap * 2 : 256;
		struct gt_perfmap_entry *v = realloc(pm->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		pm->v = v;
		pm->cap = cap;
	}
	copy = gt_arena_strndup(&pm->names, shown, len);
	if (!copy)
		return -ENOMEM;
	pm->v[pm->n++] = (struct gt_perfmap_entry){ start, start + size, seq, copy };
	return 0;
}

static int by_start_seq(const void *a, const void *b)
{
	const struct gt_perfmap_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sorted, and of entries with one start only the last line's kept. */
static void finish(struct gt_perfmap *pm)
{
	size_t k = 0;

	if (pm->n > 1)
		qsort(pm->v, pm->n, sizeof(*pm->v), by_start_seq);
	for (size_t i = 0; i < pm->n; i++) {
		if (k && pm->v[k - 1].start == pm->v[i].start)
			k--;
		pm->v[k++] = pm->v[i];
	}
	pm->n = k;
}

int gt_perfmap_build(struct gt_perfmap *pm, const char *buf, size_t len, size_t *used)
{
	const char *p = buf, *end = buf + len, *nl;
	int err = 0;

	while (!err && p < end && (nl = memchr(p, '\n', (size_t)(end - p)))) {
		uint64_t start, size;
		const char *name;
		size_t name_len;

		if (!gt_perfmap_parse_line(p, (size_t)(nl - p), &start, &size, &name, &name_len))
			err = add(pm, start, size, name, name_len, pm->lines);
		pm->lines++;
		p = nl + 1;
	}
	*used = (size_t)(p - buf);
	finish(pm);
	return err;
}

int gt_perfmap_merge(struct gt_perfmap *pm, struct gt_perfmap *more)
{
	size_t n = pm->n + more->n, i = 0, k = 0, out = 0;
	struct gt_perfmap_entry *v = malloc((n ? n : 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	while (i < pm->n || k < more->n) { /* both sorted: one pass */
		if (k == more->n || (i < pm->n && by_start_seq(&pm->v[i], &more->v[k]) < 0))
			v[out] = pm->v[i++];
		else
			v[out] = more->v[k++];
		if (out && v[out - 1].start == v[out].start)
			v[out - 1] = v[out]; /* the later line */
		else
			out++;
	}
	free(pm->v);
	pm->v = v;
	pm->n = out;
	pm->cap = n ? n : 1;
	if (more->lines > pm->lines)
		pm->lines = more->lines;
	gt_arena_move(&pm->names, &more->names);
	free(more->v);
	memset(more, 0, sizeof(*more));
	return 0;
}

const char *gt_perfmap_find(const struct gt_perfmap *pm, uint64_t addr)
{
	size_t lo = 0, hi = pm->n;
	const struct gt_perfmap_entry *best = NULL;

	while (lo < hi) { /* lo: the first entry starting after addr */
		size_t mid = lo + (hi - lo) / 2;

		if (pm->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, k = 0; i > 0 && k < OVERLAP_SCAN; i--, k++) {
		const struct gt_perfmap_entry *e = &pm->v[i - 1];

		if (addr < e->end && (!best || e->seq > best->seq))
			best = e;
	}
	return best ? best->name : NULL;
}

void gt_perfmap_free(struct gt_perfmap *pm)
{
	free(pm->v);
	gt_arena_free(&pm->names);
	memset(pm, 0, sizeof(*pm));
}
