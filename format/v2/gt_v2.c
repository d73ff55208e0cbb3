/* The v2 decoder: header, batch headers, events (gt_v2.h).  Every length
 * read from the input is checked against the bytes that are there before
 * anything is read past it. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gt_v2.h"
#include "wire/gt_varint.h"

#define GT_V2_X_DESC(e, n, name, nargs, timed) [n] = { name, nargs, timed },
const struct gt_v2_desc gt_v2_descs[GT_V2_NTYPES] = { GT_V2_EVENT_LIST(GT_V2_X_DESC) };
#undef GT_V2_X_DESC

const char *gt_v2_name(unsigned type)
{
	return type < GT_V2_NTYPES ? gt_v2_descs[type].name : "Invalid";
}

static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int gt_v2_is(const uint8_t *data, size_t len)
{
	return len >= GT_V2_HEADER_LEN &&
	       (!memcmp(data, "go 1.22 trace\0\0\0", GT_V2_HEADER_LEN) ||
		!memcmp(data, "go 1.23 trace\0\0\0", GT_V2_HEADER_LEN));
}

int gt_v2_open(struct gt_v2_file *f, const uint8_t *data, size_t len)
{
	memset(f, 0, sizeof(*f));
	f->data = data;
	f->len = len;
	if (!gt_v2_is(data, len))
		return fail(f->error, sizeof(f->error),
			    "header: not a Go 1.22 or 1.23 trace (\"go 1.2N trace\" and 3 NULs)");
	f->version = data[6] == '2' ? 22 : 23;
	f->pos = GT_V2_HEADER_LEN;
	return 0;
}

static int uv(const uint8_t *d, size_t end, size_t *pos, uint64_t *v)
{
	int n = *pos < end ? gt_uvarint_get(d + *pos, end - *pos, v) : -1;

	if (n < 0)
		return -1;
	*pos += (size_t)n;
	return 0;
}

static int kind_of(const struct gt_v2_file *f, const struct gt_v2_batch *b)
{
	if (b->off == b->end)
		return GT_V2_K_EVENTS;
	switch (f->data[b->off]) {
	case GT_V2_STRINGS: return GT_V2_K_STRINGS;
	case GT_V2_STACKS: return GT_V2_K_STACKS;
	case GT_V2_CPU_SAMPLES: return GT_V2_K_SAMPLES;
	case GT_V2_FREQUENCY: return GT_V2_K_FREQ;
	}
	return GT_V2_K_EVENTS;
}

int gt_v2_next_batch(struct gt_v2_file *f, struct gt_v2_batch *b)
{
	size_t pos = f->pos;
	uint64_t size;
	int exp = 0;

	if (pos >= f->len)
		return 0;
	memset(b, 0, sizeof(*b));
	b->hdr = pos;
	if (f->data[pos] == GT_V2_EXPERIMENTAL_BATCH) {
		exp = 1;
		pos++; /* and the experiment's number */
	} else if (f->data[pos] != GT_V2_EVENT_BATCH) {
		return fail(f->error, sizeof(f->error),
			    "batch at offset %zu: expected a batch, got %s (rule: batch header)", pos,
			    gt_v2_name(f->data[pos]));
	}
	pos++;
	if (pos > f->len || uv(f->data, f->len, &pos, &b->gen) ||
	    uv(f->data, f->len, &pos, &b->m) || uv(f->data, f->len, &pos, &b->time) ||
	    uv(f->data, f->len, &pos, &size))
		return fail(f->error, sizeof(f->error),
			    "batch at offset %zu: header cut short (rule: batch header)", b->hdr);
	if (size > GT_V2_MAX_BATCH)
		return fail(f->error, sizeof(f->error),
			    "batch at offset %zu: size %llu above Go's maximum %u (rule: batch size)",
			    b->hdr, (unsigned long long)size, GT_V2_MAX_BATCH);
	if (size > f->len - pos)
		return fail(f->error, sizeof(f->error),
			    "batch at offset %zu: %llu bytes announced, %zu left in the file (rule: batch size)",
			    b->hdr, (unsigned long long)size, f->len - pos);
	b->off = pos;
	b->end = pos + (size_t)size;
	b->kind = exp ? GT_V2_K_EXPERIMENTAL : kind_of(f, b);
	f->pos = b->end;
	return 1;
}

void gt_v2_cursor_init(struct gt_v2_cursor *c, const struct gt_v2_file *f,
		       const struct gt_v2_batch *b)
{
	c->f = f;
	c->b = b;
	c->pos = b->off;
	c->ts = b->time;
}

/* 1 if a batch of kind k may hold type t. */
static int allowed(int k, unsigned t)
{
	switch (k) {
	case GT_V2_K_STRINGS: return t == GT_V2_STRINGS || t == GT_V2_STRING;
	case GT_V2_K_STACKS: return t == GT_V2_STACKS || t == GT_V2_STACK;
	case GT_V2_K_SAMPLES: return t == GT_V2_CPU_SAMPLES || t == GT_V2_CPU_SAMPLE;
	case GT_V2_K_FREQ: return t == GT_V2_FREQUENCY;
	}
	return gt_v2_descs[t].timed;
}

/* A String's bytes or a Stack's frames, checked against the batch. */
static int payload(struct gt_v2_cursor *c, struct gt_v2_ev *e, char *err, size_t errlen)
{
	const uint8_t *d = c->f->data;
	size_t end = c->b->end;
	uint64_t len, v;

	if (e->type == GT_V2_STRING) {
		if (uv(d, end, &c->pos, &len))
			return fail(err, errlen, "String at offset %zu: length past its batch (rule: lengths)", e->off);
		if (len > GT_V2_MAX_STRING)
			return fail(err, errlen, "String at offset %zu: %llu bytes, Go's maximum is %u (rule: string size)",
				    e->off, (unsigned long long)len, GT_V2_MAX_STRING);
		if (len > end - c->pos)
			return fail(err, errlen, "String at offset %zu: %llu bytes past its batch (rule: lengths)",
				    e->off, (unsigned long long)len);
		e->data = d + c->pos;
		e->data_len = (size_t)len;
		c->pos += (size_t)len;
		return 0;
	}
	if (e->args[1] > GT_V2_MAX_FRAMES)
		return fail(err, errlen, "Stack at offset %zu: %llu frames, Go's maximum is %u (rule: stack size)",
			    e->off, (unsigned long long)e->args[1], GT_V2_MAX_FRAMES);
	e->data = d + c->pos;
	e->data_len = (size_t)e->args[1];
	for (size_t k = 0; k < 4 * e->data_len; k++)
		if (uv(d, end, &c->pos, &v))
			return fail(err, errlen, "Stack at offset %zu: frames past its batch (rule: lengths)", e->off);
	return 0;
}

int gt_v2_next_event(struct gt_v2_cursor *c, struct gt_v2_ev *e, char *err, size_t errlen)
{
	const uint8_t *d = c->f->data;
	unsigned t;

	if (c->pos >= c->b->end)
		return 0;
	if (c->b->kind == GT_V2_K_EXPERIMENTAL) {
		c->pos = c->b->end; /* extra data (heap experiments): skipped */
		return 0;
	}
	memset(e, 0, sizeof(*e));
	e->off = c->pos;
	t = d[c->pos++];
	if (t >= GT_V2_NTYPES || t == GT_V2_EVENT_BATCH || t == GT_V2_EXPERIMENTAL_BATCH)
		return fail(err, errlen, "event at offset %zu: unknown type %u (rule: known event types)",
			    e->off, t);
	/* a table batch's marker is its first byte, and only that (Go's
	 * addStrings, addStacks, addCPUSamples) */
	if (!allowed(c->b->kind, t) ||
	    ((t == GT_V2_STRINGS || t == GT_V2_STACKS || t == GT_V2_CPU_SAMPLES) &&
	     e->off != c->b->off))
		return fail(err, errlen, "%s at offset %zu: not allowed in this batch (rule: batch kinds)",
			    gt_v2_name(t), e->off);
	e->type = (uint8_t)t;
	e->nargs = gt_v2_descs[t].nargs;
	for (unsigned i = 0; i < e->nargs; i++)
		if (uv(d, c->b->end, &c->pos, &e->args[i]))
			return fail(err, errlen, "%s at offset %zu: argument %u past its batch (rule: lengths)",
				    gt_v2_name(t), e->off, i);
	if (gt_v2_descs[t].timed) {
		c->ts += e->args[0];
		e->ts = c->ts;
	} else if (t == GT_V2_CPU_SAMPLE) {
		e->ts = e->args[0];
	}
	if ((t == GT_V2_STRING || t == GT_V2_STACK) && payload(c, e, err, errlen))
		return -EINVAL;
	return 1;
}

size_t gt_v2_frames(const struct gt_v2_ev *e, uint64_t (*out)[4], size_t max)
{
	const uint8_t *p = e->data;
	size_t n = e->data_len < max ? e->data_len : max;

	for (size_t k = 0; k < n; k++)
		for (int j = 0; j < 4; j++) {
			int r = gt_uvarint_get(p, GT_UVARINT_MAX, &out[k][j]);

			if (r < 0)
				return k;
			p += r;
		}
	return n;
}
