/* The v2 encoder's file side (gt_v2enc.h): the header, per-M batches, the
 * per-generation string and stack tables and the frequency batch, written
 * at each generation's end.  The scheduling model is gt_v2enc_sched.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "v2/gt_v2.h"
#include "v2/gt_v2enc.h"
#include "wire/gt_varint.h"

/* A batch header: type, gen, m, time, size. */
#define HDR_MAX (1 + 4 * 10)

int gt_v2enc_fail(struct gt_v2enc *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->error, sizeof(e->error), fmt, ap);
	va_end(ap);
	e->failed = 1;
	return -EINVAL;
}

static int out(struct gt_v2enc *e, const void *p, size_t n)
{
	int rc;

	if (e->stage) {
		if (e->nstaged + n > e->capstaged) {
			size_t cap = (e->nstaged + n) * 2;
			uint8_t *b = realloc(e->staged, cap);

			if (!b)
				return gt_v2enc_fail(e, "staged generation: out of memory");
			e->staged = b;
			e->capstaged = cap;
		}
		memcpy(e->staged + e->nstaged, p, n);
		e->nstaged += n;
		return 0;
	}
	rc = e->write(e->ctx, p, n);
	e->written += n;

	if (rc) {
		e->failed = 1;
		snprintf(e->error, sizeof(e->error), "write: %s", strerror(-rc));
	}
	return rc;
}

/* Writes one batch: header (m, time) and data. */
static int batch(struct gt_v2enc *e, uint64_t m, uint64_t time, const uint8_t *data, size_t n)
{
	uint8_t h[HDR_MAX];
	size_t hn = 0;
	int rc;

	h[hn++] = GT_V2_EVENT_BATCH;
	hn += gt_uvarint_put(h + hn, e->gen);
	hn += gt_uvarint_put(h + hn, m);
	hn += gt_uvarint_put(h + hn, time);
	hn += gt_uvarint_put(h + hn, n);
	if ((rc = out(e, h, hn)))
		return rc;
	return out(e, data, n);
}

int gt_v2enc_init(struct gt_v2enc *e, int version, uint64_t freq, gt_v2enc_write_fn write,
		  void *ctx)
{
	char hdr[GT_V2_HEADER_LEN] = { 0 };
	int rc;

	memset(e, 0, sizeof(*e));
	gt_idmap_init(&e->ms, 1, sizeof(struct gt_v2enc_m));
	gt_idmap_init(&e->ps, 1, sizeof(struct gt_v2enc_p));
	gt_idmap_init(&e->gs, 1, sizeof(struct gt_v2enc_g));
	gt_idmap_init(&e->pcs, 1, 2 * sizeof(uint64_t));
	e->write = write;
	e->ctx = ctx;
	e->freq = freq;
	e->version = version;
	e->gen = 1;
	if (version != 22 && version != 23)
		return gt_v2enc_fail(e, "version 1.%d: only 1.22 and 1.23 are written", version);
	if (!freq)
		return gt_v2enc_fail(e, "frequency 0");
	snprintf(hdr, sizeof(hdr), "go 1.%d trace", version);
	rc = out(e, hdr, sizeof(hdr));
	e->complete = e->written;
	return rc;
}

void gt_v2enc_stage(struct gt_v2enc *e)
{
	e->stage = 1;
}

/* The generation's staged bytes, in one write. */
static int unstage(struct gt_v2enc *e)
{
	int rc = 0;

	if (e->stage && e->nstaged) {
		e->stage = 0;
		rc = out(e, e->staged, e->nstaged);
		e->stage = 1;
		e->nstaged = 0;
	}
	if (!rc)
		e->complete = e->written;
	return rc;
}

static void free_m(uint64_t key, void *val, void *arg)
{
	(void)key;
	(void)arg;
	free(((struct gt_v2enc_m *)val)->buf);
}

void gt_v2enc_free(struct gt_v2enc *e)
{
	gt_idmap_each(&e->ms, free_m, NULL);
	gt_idmap_free(&e->ms);
	gt_idmap_free(&e->ps);
	gt_idmap_free(&e->gs);
	gt_idmap_free(&e->pcs);
	gt_strset_free(&e->strings);
	gt_strset_free(&e->stacks);
	free(e->staged);
	free(e->samples);
}

struct gt_v2enc_m *gt_v2enc_mstate(struct gt_v2enc *e, uint64_t m)
{
	int isnew = 0;
	struct gt_v2enc_m *s = gt_idmap_put(&e->ms, m, &isnew);

	if (!s) {
		gt_v2enc_fail(e, "out of memory");
		return NULL;
	}
	if (isnew) {
		s->p = GT_V2ENC_NONE;
		s->g = GT_V2ENC_NONE;
	}
	return s;
}

uint64_t gt_v2enc_string(struct gt_v2enc *e, const char *s)
{
	size_t n = strlen(s);
	uint64_t id = 0;

	if (e->failed || !n)
		return 0;
	if (n > GT_V2_MAX_STRING)
		n = GT_V2_MAX_STRING; /* Go's limit: the name is cut */
	if (gt_strset_add(&e->strings, s, n, &id, NULL)) {
		gt_v2enc_fail(e, "string table: out of memory");
		return 0;
	}
	return id;
}

/* A stack's frames as table words (pc, func, file, line; names interned)
 * into w: how many frames, 0 for none or on error. */
static size_t stack_words(struct gt_v2enc *e, const struct gt_v2enc_frame *f, size_t n,
			  uint64_t *w)
{
	if (e->failed || !n)
		return 0;
	if (n > GT_V2_MAX_FRAMES)
		n = GT_V2_MAX_FRAMES; /* Go's limit: the outermost are cut */
	for (size_t i = 0; i < n; i++) {
		int isnew;
		uint64_t *ids = gt_idmap_put(&e->pcs, f[i].pc, &isnew);

		if (!ids) {
			gt_v2enc_fail(e, "stack table: out of memory");
			return 0;
		}
		if (isnew) {
			ids[0] = gt_v2enc_string(e, f[i].func ? f[i].func : "");
			ids[1] = gt_v2enc_string(e, f[i].file ? f[i].file : "");
		}
		w[4 * i] = f[i].pc;
		w[4 * i + 1] = ids[0];
		w[4 * i + 2] = ids[1];
		w[4 * i + 3] = f[i].line;
	}
	return e->failed ? 0 : n;
}

uint64_t gt_v2enc_stack(struct gt_v2enc *e, const struct gt_v2enc_frame *f, size_t n)
{
	uint64_t w[GT_V2_MAX_FRAMES * 4], id = 0;

	if (!(n = stack_words(e, f, n, w)))
		return 0;
	if (gt_strset_add(&e->stacks, w, n * 4 * sizeof(w[0]), &id, NULL)) {
		gt_v2enc_fail(e, "stack table: out of memory");
		return 0;
	}
	return id;
}

uint64_t gt_v2enc_stack_reserve(struct gt_v2enc *e)
{
	uint64_t id = 0;

	if (e->failed)
		return 0;
	if (gt_strset_reserve(&e->stacks, &id)) {
		gt_v2enc_fail(e, "stack table: out of memory");
		return 0;
	}
	return id;
}

int gt_v2enc_stack_define(struct gt_v2enc *e, uint64_t id, const struct gt_v2enc_frame *f,
			  size_t n)
{
	uint64_t w[GT_V2_MAX_FRAMES * 4];
	int rc;

	if (!(n = stack_words(e, f, n, w)))
		return e->failed ? -EINVAL : gt_v2enc_fail(e, "stack %llu defined with no frame",
							 (unsigned long long)id);
	rc = gt_strset_define(&e->stacks, id, w, n * 4 * sizeof(w[0]));
	if (rc)
		return gt_v2enc_fail(e, "stack %llu: not reserved in this generation, or defined "
				     "already", (unsigned long long)id);
	return 0;
}

static int flush_m(struct gt_v2enc *e, uint64_t m, struct gt_v2enc_m *s)
{
	int rc;

	if (!s->len)
		return 0;
	rc = batch(e, m, s->time, s->buf, s->len);
	s->len = 0;
	return rc;
}

int gt_v2enc_emit(struct gt_v2enc *e, uint64_t m, uint64_t ts, unsigned type,
		  const uint64_t *args, unsigned nargs)
{
	struct gt_v2enc_m *s;
	uint8_t ev[1 + (GT_V2_MAX_ARGS + 1) * 10];
	size_t n = 1;
	int rc;

	if (e->failed)
		return -EINVAL;
	if (type >= GT_V2_NTYPES || !gt_v2_descs[type].timed ||
	    nargs + 1 != gt_v2_descs[type].nargs)
		return gt_v2enc_fail(e, "event type %u with %u arguments: not a timed event of "
				     "Go 1.%d", type, nargs, e->version);
	if (e->version == 22 && type > GT_V2_USER_LOG)
		return gt_v2enc_fail(e, "%s is Go 1.23's: not in a go 1.22 trace", gt_v2_name(type));
	if (!(s = gt_v2enc_mstate(e, m)))
		return -ENOMEM;
	if (!s->buf && !(s->buf = malloc(GT_V2_MAX_BATCH)))
		return gt_v2enc_fail(e, "batch of M %llu: out of memory", (unsigned long long)m);
	if (ts < s->last)
		ts = s->last; /* within a generation an M's time never goes back */
	ev[0] = (uint8_t)type;
	n += gt_uvarint_put(ev + n, s->len ? ts - s->last : 0);
	for (unsigned i = 0; i < nargs; i++)
		n += gt_uvarint_put(ev + n, args[i]);
	if (s->len + n > GT_V2_MAX_BATCH) {
		if ((rc = flush_m(e, m, s)))
			return rc;
		/* the first of a new batch: its time is the batch's, its
		 * delta 0 (one from the last batch would move this event and
		 * every later one of the batch that much late) */
		n = 1 + gt_uvarint_put(ev + 1, 0);
		for (unsigned i = 0; i < nargs; i++)
			n += gt_uvarint_put(ev + n, args[i]);
	}
	if (!s->len)
		s->time = ts;
	memcpy(s->buf + s->len, ev, n);
	s->len += n;
	s->last = ts;
	e->events++;
	return 0;
}

int gt_v2enc_raw(struct gt_v2enc *e, uint64_t m, uint64_t ts, unsigned type,
		 const uint64_t *args, unsigned nargs)
{
	if (type >= GT_V2_PROC_START && type <= GT_V2_GO_STATUS)
		return gt_v2enc_fail(e, "%s: a scheduling event goes through its own call",
				     gt_v2_name(type));
	if (type >= GT_V2_GO_SWITCH && type <= GT_V2_GO_STATUS_STACK)
		return gt_v2enc_fail(e, "%s: not written (no model of it here)", gt_v2_name(type));
	return gt_v2enc_emit(e, m, ts, type, args, nargs);
}

/* A table batch (strings or stacks): the marker, then entries, cut into
 * batches under Go's limit. */
struct tab {
	struct gt_v2enc *e;
	uint8_t *buf;
	size_t len;
	uint8_t marker;
};

static int tab_add(struct tab *t, const uint8_t *ent, size_t n, const uint8_t *tail, size_t tn)
{
	int rc;

	if (t->len + n + tn > GT_V2_MAX_BATCH) {
		if ((rc = batch(t->e, 0, 0, t->buf, t->len)))
			return rc;
		t->len = 0;
	}
	if (!t->len)
		t->buf[t->len++] = t->marker;
	memcpy(t->buf + t->len, ent, n);
	if (tn)
		memcpy(t->buf + t->len + n, tail, tn);
	t->len += n + tn;
	return 0;
}

static int tab_end(struct tab *t)
{
	return t->len ? batch(t->e, 0, 0, t->buf, t->len) : 0;
}

static int write_strings(struct gt_v2enc *e, uint8_t *buf)
{
	struct tab t = { e, buf, 0, GT_V2_STRINGS };
	uint8_t h[1 + 20];
	int rc = 0;

	for (uint64_t id = 1; id <= e->strings.n && !rc; id++) {
		size_t len, n = 0;
		const uint8_t *s = gt_strset_get(&e->strings, id, &len);

		h[n++] = GT_V2_STRING;
		n += gt_uvarint_put(h + n, id);
		n += gt_uvarint_put(h + n, len);
		rc = tab_add(&t, h, n, s, len);
	}
	return rc ? rc : tab_end(&t);
}

static int write_stacks(struct gt_v2enc *e, uint8_t *buf)
{
	struct tab t = { e, buf, 0, GT_V2_STACKS };
	uint8_t h[1 + 20 + GT_V2_MAX_FRAMES * 40];
	int rc = 0;

	for (uint64_t id = 1; id <= e->stacks.n && !rc; id++) {
		size_t len, n = 0;
		const uint64_t *w = gt_strset_get(&e->stacks, id, &len);

		if (!w)
			continue; /* reserved, never defined: no event uses it */
		h[n++] = GT_V2_STACK;
		n += gt_uvarint_put(h + n, id);
		n += gt_uvarint_put(h + n, len / (4 * sizeof(*w)));
		for (size_t i = 0; i < len / sizeof(*w); i++)
			n += gt_uvarint_put(h + n, w[i]);
		rc = tab_add(&t, h, n, NULL, 0);
	}
	return rc ? rc : tab_end(&t);
}

int gt_v2enc_cpu_sample(struct gt_v2enc *e, uint64_t ts, uint64_t m, uint64_t p, uint64_t g,
			uint64_t stack)
{
	if (e->failed)
		return -EINVAL;
	if (e->nsamples == e->capsamples) {
		size_t cap = e->capsamples ? 2 * e->capsamples : 64;
		void *s = realloc(e->samples, cap * sizeof(*e->samples));

		if (!s)
			return gt_v2enc_fail(e, "CPU samples: out of memory");
		e->samples = s;
		e->capsamples = cap;
	}
	/* Go's reader: goroutine 0 is none */
	e->samples[e->nsamples][0] = ts;
	e->samples[e->nsamples][1] = m;
	e->samples[e->nsamples][2] = p;
	e->samples[e->nsamples][3] = g == GT_V2ENC_NONE ? 0 : g;
	e->samples[e->nsamples][4] = stack;
	e->nsamples++;
	e->events++;
	return 0;
}

static int write_samples(struct gt_v2enc *e, uint8_t *buf)
{
	struct tab t = { e, buf, 0, GT_V2_CPU_SAMPLES };
	uint8_t h[1 + 5 * 10];
	int rc = 0;

	for (size_t i = 0; i < e->nsamples && !rc; i++) {
		size_t n = 0;

		h[n++] = GT_V2_CPU_SAMPLE;
		for (int k = 0; k < 5; k++)
			n += gt_uvarint_put(h + n, e->samples[i][k]);
		rc = tab_add(&t, h, n, NULL, 0);
	}
	e->nsamples = 0;
	return rc ? rc : tab_end(&t);
}

struct flush_arg {
	struct gt_v2enc *e;
	int rc;
};

static void flush_one(uint64_t key, void *val, void *arg)
{
	struct flush_arg *a = arg;

	if (!a->rc)
		a->rc = flush_m(a->e, key, val);
	((struct gt_v2enc_m *)val)->last = 0; /* the next generation's own */
}

/* Writes the open generation's batches, frequency and tables. */
static int end_generation(struct gt_v2enc *e)
{
	struct flush_arg a = { e, 0 };
	uint8_t freq[1 + 10], *buf;
	size_t n = 0;
	int rc;

	if (e->failed)
		return -EINVAL;
	gt_idmap_each(&e->ms, flush_one, &a);
	if (a.rc)
		return a.rc;
	freq[n++] = GT_V2_FREQUENCY;
	n += gt_uvarint_put(freq + n, e->freq);
	if ((rc = batch(e, 0, 0, freq, n)))
		return rc;
	if (!(buf = malloc(GT_V2_MAX_BATCH)))
		return gt_v2enc_fail(e, "tables: out of memory");
	rc = write_strings(e, buf);
	if (!rc)
		rc = write_stacks(e, buf);
	if (!rc)
		rc = write_samples(e, buf);
	if (!rc)
		rc = unstage(e);
	free(buf);
	gt_strset_free(&e->strings);
	gt_strset_free(&e->stacks);
	memset(&e->strings, 0, sizeof(e->strings));
	memset(&e->stacks, 0, sizeof(e->stacks));
	gt_idmap_free(&e->pcs);
	gt_idmap_init(&e->pcs, 1, 2 * sizeof(uint64_t));
	return rc;
}

int gt_v2enc_generation(struct gt_v2enc *e, uint64_t ts)
{
	int rc = end_generation(e);

	if (rc)
		return rc;
	e->gen++;
	return gt_v2enc_restate(e, ts);
}

int gt_v2enc_finish(struct gt_v2enc *e)
{
	return end_generation(e);
}
