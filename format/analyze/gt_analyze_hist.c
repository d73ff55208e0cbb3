/* The log-linear histogram of gt_analyze.h: 64 exact buckets, then 64
 * buckets per power of two, each power allocated on first use. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gt_analyze.h"

/* Chunk and bucket of v: chunk 0 holds 0..63 exactly; chunk k >= 1 holds
 * [2^(k+5), 2^(k+6)) in 64 steps of 2^(k-1). */
static void locate(uint64_t v, unsigned *chunk, unsigned *sub)
{
	unsigned e;

	if (v < GT_HIST_SUB) {
		*chunk = 0;
		*sub = (unsigned)v;
		return;
	}
	e = 63u - (unsigned)__builtin_clzll(v); /* 6..63 */
	*chunk = e - 5;
	*sub = (unsigned)((v >> (e - 6)) & (GT_HIST_SUB - 1));
}

/* The middle of a bucket (its only value in chunk 0). */
static uint64_t bucket_mid(unsigned chunk, unsigned sub)
{
	unsigned shift;

	if (chunk == 0)
		return sub;
	shift = chunk - 1;
	return ((uint64_t)(GT_HIST_SUB + sub) << shift) + ((1ull << shift) >> 1);
}

static uint64_t *chunk_of(struct gt_hist *h, unsigned c)
{
	if (!h->chunk[c]) {
		h->chunk[c] = calloc(GT_HIST_SUB, sizeof(uint64_t));
		if (!h->chunk[c])
			h->oom = 1;
	}
	return h->chunk[c];
}

void gt_hist_add(struct gt_hist *h, uint64_t v)
{
	unsigned c, s;
	uint64_t *b;

	locate(v, &c, &s);
	b = chunk_of(h, c);
	if (b)
		b[s]++;
	if (!h->count || v < h->min)
		h->min = v;
	if (!h->count || v > h->max)
		h->max = v;
	h->count++;
	h->sum += v;
}

uint64_t gt_hist_pct(const struct gt_hist *h, double p)
{
	uint64_t rank, seen = 0, v;

	if (!h->count)
		return 0;
	if (p <= 0)
		return h->min;
	if (p >= 100)
		return h->max;
	rank = (uint64_t)ceil(p / 100.0 * (double)h->count);
	if (rank < 1)
		rank = 1;
	for (unsigned c = 0; c < GT_HIST_CHUNKS; c++) {
		if (!h->chunk[c])
			continue;
		for (unsigned s = 0; s < GT_HIST_SUB; s++) {
			seen += h->chunk[c][s];
			if (seen < rank)
				continue;
			/* the extremes are known exactly: never report past them */
			v = bucket_mid(c, s);
			return v < h->min ? h->min : v > h->max ? h->max : v;
		}
	}
	return h->max; /* only when counts were lost to oom */
}

int gt_hist_merge(struct gt_hist *dst, const struct gt_hist *src)
{
	if (!src->count)
		return 0;
	for (unsigned c = 0; c < GT_HIST_CHUNKS; c++) {
		uint64_t *b;

		if (!src->chunk[c])
			continue;
		b = chunk_of(dst, c);
		if (!b)
			return -ENOMEM;
		for (unsigned s = 0; s < GT_HIST_SUB; s++)
			b[s] += src->chunk[c][s];
	}
	if (!dst->count || src->min < dst->min)
		dst->min = src->min;
	if (!dst->count || src->max > dst->max)
		dst->max = src->max;
	dst->count += src->count;
	dst->sum += src->sum;
	return 0;
}

void gt_hist_free(struct gt_hist *h)
{
	for (unsigned c = 0; c < GT_HIST_CHUNKS; c++)
		free(h->chunk[c]);
	memset(h, 0, sizeof(*h));
}
