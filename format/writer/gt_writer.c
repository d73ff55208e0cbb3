/* Go execution-trace writer: per-P batches, delta times, interned
 * dictionaries dumped in the footer.  See gt_writer.h for the contract. */
#include "gt_writer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wire/gt_varint.h"
#include "gt_writer_intern.h"

/* Like the runtime's traceBuf: one 64 KiB batch per P, flushed when full. */
#define GT_PBUF_SIZE (64 * 1024)
/* Largest event but UserLog: type, length, 6 varints of 10 bytes. */
#define GT_EV_MAX_BYTES 64
/* Batch header: type byte, p, absolute ticks. */
#define GT_BATCH_HDR_MAX (1 + 2 * GT_UVARINT_MAX)
/* The readers refuse length-prefixed records longer than 2048 bytes; keep
 * stack records (type + 2-byte length + payload) clearly under it. */
#define GT_STACK_PAYLOAD_MAX 2040
/* Stack ids are counted in the payload as if 5 bytes long (ids < 2^35). */
#define GT_STACK_ID_RESERVE 5

/* Recently interned strings by address: symbolizers hand out the same
 * pointers again and again; a hit still compares the bytes, so a reused
 * buffer with new contents cannot return a stale id. */
#define GT_STRCACHE_BITS 12

struct gt_strcache_ent {
	const char *ptr;
	uint64_t id;
};

struct gt_pbuf {
	uint8_t *buf;     /* GT_PBUF_SIZE bytes, allocated on first use */
	size_t pos;       /* 0 = no batch open */
	uint64_t last_ts; /* time of the P's last event or batch start */
};

struct gt_writer {
	int fd;
	gt_writer_write_fn write_fn; /* NULL: write(2) */
	void *write_ctx;
	int version;
	int err;                /* first write/alloc error; poisons the writer */
	uint64_t freq;
	struct gt_pbuf *ps;
	int nps;
	uint64_t max_ts;        /* latest time of any P: the footer batch's time */
	struct gt_strset strs;
	struct gt_strset stks;
	uint64_t reserved_open; /* reserved stack ids not defined yet */
	struct gt_writer_stats st;
	uint8_t *out;           /* staging for the footer */
	size_t out_pos;
	struct gt_strcache_ent strcache[1 << GT_STRCACHE_BITS];
};

static int write_all(struct gt_writer *w, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t k = w->write_fn ? (ssize_t)w->write_fn(w->write_ctx, w->fd, p, n) :
					  write(w->fd, p, n);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			w->err = -errno;
			return w->err;
		}
		if (k == 0) {
			w->err = -EIO;
			return w->err;
		}
		p += k;
		n -= (size_t)k;
		w->st.bytes += (uint64_t)k;
	}
	return 0;
}

static int pbuf_flush(struct gt_writer *w, struct gt_pbuf *pb)
{
	int err;

	if (pb->pos == 0)
		return 0;
	err = write_all(w, pb->buf, pb->pos);
	pb->pos = 0;
	if (!err)
		w->st.batches++;
	return err;
}

/* Returns P p's buffer, growing the P table and allocating on first use. */
static struct gt_pbuf *gt_pbuf_get_slow(struct gt_writer *w, int p)
{
	if (p >= w->nps) {
		int n = w->nps ? w->nps : 8;
		struct gt_pbuf *ps;

		while (n <= p)
			n *= 2;
		ps = realloc(w->ps, (size_t)n * sizeof(*ps));
		if (!ps)
			goto nomem;
		memset(ps + w->nps, 0, (size_t)(n - w->nps) * sizeof(*ps));
		w->ps = ps;
		w->nps = n;
	}
	if (!w->ps[p].buf) {
		w->ps[p].buf = malloc(GT_PBUF_SIZE);
		if (!w->ps[p].buf)
			goto nomem;
	}
	return &w->ps[p];
nomem:
	w->err = -ENOMEM;
	return NULL;
}

static inline struct gt_pbuf *gt_pbuf_get(struct gt_writer *w, int p)
{
	if (p < w->nps && w->ps[p].buf)
		return &w->ps[p];
	return gt_pbuf_get_slow(w, p);
}

/* Makes room for `need` bytes in P's batch and returns the clamped time;
 * opens a batch (header [p, ts]) when none is open.  NULL on error. */
static inline uint8_t *gt_pbuf_begin(struct gt_writer *w, struct gt_pbuf *pb, int p,
				     uint64_t *ts, size_t need)
{
	uint8_t *d;

	if (pb->pos + need > GT_PBUF_SIZE && pbuf_flush(w, pb))
		return NULL;
	if (*ts < pb->last_ts) {
		*ts = pb->last_ts;
		w->st.clamped++;
	}
	if (pb->pos == 0) {
		/* The batch starts at this event's time, so its delta is 0 and
		 * the P's stream never goes backwards across batches. */
		d = pb->buf;
		*d++ = GT_EV_BATCH | 1 << 6;
		d += gt_uvarint_put(d, (uint64_t)p);
		d += gt_uvarint_put(d, *ts);
		pb->pos = (size_t)(d - pb->buf);
		pb->last_ts = *ts;
	}
	if (*ts > w->max_ts)
		w->max_ts = *ts;
	return pb->buf + pb->pos;
}

/* 1 if events of this type may be written by gt_writer_event in w's version. */
static inline int event_allowed(const struct gt_writer *w, int type, int nargs)
{
	const struct gt_event_desc *d;

	if ((unsigned)type >= GT_EV_COUNT)
		return 0;
	switch (type) {
	case GT_EV_NONE: case GT_EV_BATCH: case GT_EV_FREQUENCY:
	case GT_EV_STACK: case GT_EV_STRING: case GT_EV_USER_LOG:
		return 0;
	}
	d = &gt_event_descs[type];
	return d->min_version <= w->version && nargs == d->nargs + d->has_stack;
}

int gt_writer_event(struct gt_writer *w, int p, int type, uint64_t ts,
		    const uint64_t *args, int nargs)
{
	struct gt_pbuf *pb;
	uint8_t *d, *start, *lenp = NULL;
	uint64_t delta;

	if (w->err)
		return w->err;
	if (p < 0 || p > GT_MAX_P || !event_allowed(w, type, nargs) || (nargs && !args))
		return -EINVAL;
	pb = gt_pbuf_get(w, p);
	if (!pb)
		return w->err;
	start = d = gt_pbuf_begin(w, pb, p, &ts, GT_EV_MAX_BYTES + GT_BATCH_HDR_MAX);
	if (!d)
		return w->err;
	/* A CPUSample's time is its args' real ts: Go 1.19 adds its delta to
	 * the P's clock but Go 1.22+ skips it (oldtrace loadBatch), so any
	 * delta would put the P's later events at different times in each,
	 * out of order for 1.22+.  Delta 0 and the clock untouched: both
	 * readers agree. */
	if (type == GT_EV_CPU_SAMPLE) {
		delta = 0;
	} else {
		delta = ts - pb->last_ts;
		pb->last_ts = ts;
	}
	/* n = number of varints after the type byte minus one; 3 = length
	 * prefixed.  Six varints are at most 60 bytes, so the length fits in
	 * the one byte reserved for it. */
	if (nargs < 3) {
		*d++ = (uint8_t)(type | nargs << 6);
	} else {
		*d++ = (uint8_t)(type | 3 << 6);
		lenp = d++;
	}
	d += gt_uvarint_put(d, delta);
	for (int i = 0; i < nargs; i++)
		d += gt_uvarint_put(d, args[i]);
	if (lenp)
		*lenp = (uint8_t)(d - lenp - 1);
	pb->pos += (size_t)(d - start);
	w->st.events++;
	return 0;
}

int gt_writer_user_log(struct gt_writer *w, int p, uint64_t ts, uint64_t task,
		       uint64_t key_id, uint64_t stack_id, const char *value)
{
	size_t vlen = value ? strnlen(value, GT_MAX_USER_LOG_LEN) : 0;
	struct gt_pbuf *pb;
	uint8_t *d, *start, *lenp;
	uint64_t delta;

	if (w->err)
		return w->err;
	if (p < 0 || p > GT_MAX_P || w->version < GT_V1_11)
		return -EINVAL;
	pb = gt_pbuf_get(w, p);
	if (!pb)
		return w->err;
	start = d = gt_pbuf_begin(w, pb, p, &ts,
				  GT_EV_MAX_BYTES + GT_BATCH_HDR_MAX + GT_UVARINT_MAX + vlen);
	if (!d)
		return w->err;
	delta = ts - pb->last_ts;
	pb->last_ts = ts;
	*d++ = GT_EV_USER_LOG | 3 << 6;
	lenp = d++;
	d += gt_uvarint_put(d, delta);
	d += gt_uvarint_put(d, task);
	d += gt_uvarint_put(d, key_id);
	d += gt_uvarint_put(d, stack_id);
	*lenp = (uint8_t)(d - lenp - 1);
	/* The value follows the length-prefixed part as [len, bytes]. */
	d += gt_uvarint_put(d, vlen);
	memcpy(d, value ? value : "", vlen);
	d += vlen;
	pb->pos += (size_t)(d - start);
	w->st.events++;
	return 0;
}

/* Where to cut s (at least max + 1 bytes long) at most max bytes in without
 * splitting a UTF-8 sequence: back off over continuation bytes (10xxxxxx)
 * so the cut falls before a lead byte. */
static size_t utf8_cut(const char *s, size_t max)
{
	size_t cut = max;

	while (cut > 0 && max - cut < 3 && ((unsigned char)s[cut] & 0xc0) == 0x80)
		cut--;
	return cut ? cut : max;
}

uint64_t gt_writer_string(struct gt_writer *w, const char *s)
{
	struct gt_strcache_ent *c;
	size_t len;
	uint64_t id;
	int err;

	if (!s || !*s || w->err)
		return 0;
	c = &w->strcache[((uintptr_t)s * 0x9e3779b97f4a7c15ULL) >> (64 - GT_STRCACHE_BITS)];
	if (c->ptr == s) {
		const char *kept = gt_strtab_get(&w->strs, c->id, &len);

		if (kept && strcmp(kept, s) == 0)
			return c->id;
	}
	len = strnlen(s, GT_MAX_STRING_LEN + 1);
	if (len > GT_MAX_STRING_LEN)
		len = utf8_cut(s, GT_MAX_STRING_LEN);
	err = gt_strtab_intern(&w->strs, s, len, &id);
	if (err) {
		w->err = err;
		return 0;
	}
	c->ptr = s;
	c->id = id;
	w->st.strings = w->strs.n;
	return id;
}

/* Bytes of a stack record's payload: id, n, then 4 varints per frame. */
static size_t stack_payload(const uint64_t *words, int n)
{
	size_t sz = GT_STACK_ID_RESERVE + gt_uvarint_len((uint64_t)n);

	for (int i = 0; i < 4 * n; i++)
		sz += gt_uvarint_len(words[i]);
	return sz;
}

/* Converts frames to stack-table words (interning func and file), capped
 * to GT_MAX_STACK_FRAMES and trimmed until the record fits the readers'
 * limit.  Returns the frame count kept (0 on error: the writer is
 * poisoned); *cut says whether frames were dropped. */
static int stack_words(struct gt_writer *w, const struct gt_frame *frames, int n,
			  uint64_t *words, int *cut)
{
	size_t sz;

	*cut = 0;
	if (n > GT_MAX_STACK_FRAMES) {
		n = GT_MAX_STACK_FRAMES;
		*cut = 1;
	}
	for (int i = 0; i < n; i++) {
		words[4 * i + 0] = frames[i].pc;
		words[4 * i + 1] = gt_writer_string(w, frames[i].func);
		words[4 * i + 2] = gt_writer_string(w, frames[i].file);
		words[4 * i + 3] = frames[i].line;
	}
	if (w->err)
		return 0;
	/* Long symbol-less PCs can overflow the record: drop outer frames. */
	sz = stack_payload(words, n);
	while (sz > GT_STACK_PAYLOAD_MAX && n > 1) {
		n--;
		sz = stack_payload(words, n);
		*cut = 1;
	}
	return n;
}

uint64_t gt_writer_stack(struct gt_writer *w, const struct gt_frame *frames, int n)
{
	uint64_t words[4 * GT_MAX_STACK_FRAMES];
	uint64_t id;
	int err, cut;

	if (n <= 0 || !frames || w->err)
		return 0;
	n = stack_words(w, frames, n, words, &cut);
	if (n == 0)
		return 0;
	err = gt_stacktab_intern(&w->stks, words, (uint32_t)n, &id);
	if (err) {
		w->err = err;
		return 0;
	}
	if (cut && id == w->stks.n)
		w->st.trimmed++;
	w->st.stacks = w->stks.n;
	return id;
}

uint64_t gt_writer_stack_reserve(struct gt_writer *w)
{
	uint64_t id;
	int err;

	if (w->err)
		return 0;
	err = gt_stacktab_reserve(&w->stks, &id);
	if (err) {
		w->err = err;
		return 0;
	}
	w->reserved_open++;
	w->st.stacks = w->stks.n;
	return id;
}

/* 0 if id is reserved and still without frames, else -EINVAL (not
 * reserved) or -EALREADY (defined). */
static int stack_open(const struct gt_writer *w, uint64_t id)
{
	if (id == 0 || id > w->stks.n || !(w->stks.ents[id - 1].flags & GT_STRSET_RESERVED))
		return -EINVAL;
	if (w->stks.ents[id - 1].len)
		return -EALREADY;
	return 0;
}

/* Gives reserved stack id its n frames (words; cut: some were dropped). */
static int stack_fill(struct gt_writer *w, uint64_t id, const uint64_t *words, int n,
			 int cut)
{
	int err;

	if (n == 0)
		return w->err;
	err = gt_stacktab_define(&w->stks, id, words, (uint32_t)n);
	if (err) {
		if (err == -ENOMEM)
			w->err = err;
		return err;
	}
	if (cut)
		w->st.trimmed++;
	w->reserved_open--;
	return 0;
}

int gt_writer_stack_define(struct gt_writer *w, uint64_t id, const struct gt_frame *frames,
			   int n)
{
	uint64_t words[4 * GT_MAX_STACK_FRAMES];
	int err, cut;

	if (w->err)
		return w->err;
	if (n <= 0 || !frames)
		return -EINVAL;
	/* Refuse a bad id before interning any string for it. */
	err = stack_open(w, id);
	if (err)
		return err;
	n = stack_words(w, frames, n, words, &cut);
	return stack_fill(w, id, words, n, cut);
}

/* Base's frames (words) with root appended as the outermost frame: inner
 * frames of base are kept first, its outer ones dropped to stay within
 * the frame cap and the record limit, so the root always survives. */
static int rooted_words(struct gt_writer *w, uint64_t base, const struct gt_frame *root,
			   uint64_t *words, int *cut)
{
	uint32_t nb = 0;
	const uint64_t *bw = base ? gt_stacktab_get(&w->stks, base, &nb) : NULL;
	int n;

	*cut = 0;
	if (!bw)
		nb = 0;
	if (nb > GT_MAX_STACK_FRAMES - 1) {
		nb = GT_MAX_STACK_FRAMES - 1;
		*cut = 1;
	}
	/* Interning the root's strings may move the string arena, never the
	 * stack arena that bw points into. */
	uint64_t rw[4] = {root->pc, gt_writer_string(w, root->func),
			  gt_writer_string(w, root->file), root->line};
	if (w->err)
		return 0;
	if (nb)
		memcpy(words, bw, (size_t)nb * 4 * sizeof(*words));
	n = (int)nb;
	memcpy(words + 4 * n, rw, sizeof(rw));
	while (stack_payload(words, n + 1) > GT_STACK_PAYLOAD_MAX && n > 0) {
		n--;
		memcpy(words + 4 * n, rw, sizeof(rw));
		*cut = 1;
	}
	return n + 1;
}

int gt_writer_stack_define_rooted(struct gt_writer *w, uint64_t id, uint64_t base,
				  const struct gt_frame *root)
{
	uint64_t words[4 * GT_MAX_STACK_FRAMES];
	int err, cut, n;

	if (w->err)
		return w->err;
	if (!root)
		return -EINVAL;
	err = stack_open(w, id);
	if (err)
		return err;
	if (base && (base > w->stks.n || w->stks.ents[base - 1].len == 0))
		return -EINVAL; /* unknown, or reserved and not defined yet */
	n = rooted_words(w, base, root, words, &cut);
	return stack_fill(w, id, words, n, cut);
}

/* Every reserved id left without frames gets the fallback frame, so each
 * stack the events refer to exists and has a non-zero top PC. */
static int define_leftovers(struct gt_writer *w)
{
	static const struct gt_frame fallback = {
		.pc = GT_STACK_FALLBACK_PC, .func = GT_STACK_FALLBACK_FUNC,
		.file = GT_STACK_FALLBACK_FILE, .line = 0,
	};

	for (uint64_t id = 1; id <= w->stks.n && w->reserved_open > 0 && !w->err; id++) {
		const struct gt_strset_ent *e = &w->stks.ents[id - 1];

		if ((e->flags & GT_STRSET_RESERVED) && e->len == 0)
			gt_writer_stack_define(w, id, &fallback, 1);
	}
	return w->err;
}

void gt_writer_stats(const struct gt_writer *w, struct gt_writer_stats *st)
{
	*st = w->st;
	st->buffered = 0;
	for (int p = 0; p < w->nps; p++)
		st->buffered += w->ps[p].pos;
}

int gt_writer_open(struct gt_writer **out, int fd, int version, uint64_t freq)
{
	return gt_writer_open_with(out, fd, version, freq, NULL, NULL);
}

int gt_writer_open_with(struct gt_writer **out, int fd, int version, uint64_t freq,
			gt_writer_write_fn fn, void *ctx)
{
	struct gt_writer *w;
	char hdr[16] = {0};
	int err;

	*out = NULL;
	if (fd < 0 || freq == 0 || freq > INT64_MAX)
		return -EINVAL;
	if (version != GT_V1_11 && version != GT_V1_19 && version != GT_V1_21)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = fd;
	w->write_fn = fn;
	w->write_ctx = ctx;
	w->version = version;
	w->freq = freq;
	w->out = malloc(GT_PBUF_SIZE);
	if (!w->out) {
		free(w);
		return -ENOMEM;
	}
	/* "go 1.19 trace" padded with NULs to 16 bytes. */
	snprintf(hdr, sizeof(hdr), "go 1.%d trace", version % 1000);
	err = write_all(w, (const uint8_t *)hdr, sizeof(hdr));
	if (err) {
		gt_writer_free(w);
		return err;
	}
	*out = w;
	return 0;
}

/* Footer staging: appends n bytes, flushing the staging buffer as needed;
 * pieces larger than the buffer go straight to the fd. */
static int out_put(struct gt_writer *w, const void *p, size_t n)
{
	if (w->out_pos + n > GT_PBUF_SIZE) {
		int err = write_all(w, w->out, w->out_pos);

		w->out_pos = 0;
		if (err)
			return err;
		if (n > GT_PBUF_SIZE)
			return write_all(w, p, n);
	}
	memcpy(w->out + w->out_pos, p, n);
	w->out_pos += n;
	return 0;
}

static int footer_strings(struct gt_writer *w)
{
	for (uint64_t id = 1; id <= w->strs.n; id++) {
		size_t len;
		const char *s = gt_strtab_get(&w->strs, id, &len);
		uint8_t b[1 + 2 * GT_UVARINT_MAX], *d = b;

		*d++ = GT_EV_STRING;
		d += gt_uvarint_put(d, id);
		d += gt_uvarint_put(d, len);
		if (out_put(w, b, (size_t)(d - b)) || out_put(w, s, len))
			return w->err;
	}
	return 0;
}

static int footer_stacks(struct gt_writer *w)
{
	uint8_t rec[1 + GT_UVARINT_MAX + GT_STACK_PAYLOAD_MAX + 16];

	for (uint64_t id = 1; id <= w->stks.n; id++) {
		uint32_t n;
		const uint64_t *words = gt_stacktab_get(&w->stks, id, &n);
		uint8_t payload[GT_STACK_PAYLOAD_MAX], *d = payload;
		uint8_t *r = rec;

		d += gt_uvarint_put(d, id);
		d += gt_uvarint_put(d, n);
		for (uint32_t i = 0; i < 4 * n; i++)
			d += gt_uvarint_put(d, words[i]);
		*r++ = GT_EV_STACK | 3 << 6;
		r += gt_uvarint_put(r, (uint64_t)(d - payload));
		memcpy(r, payload, (size_t)(d - payload));
		r += d - payload;
		if (out_put(w, rec, (size_t)(r - rec)))
			return w->err;
	}
	return 0;
}

/* Batch(p=0, latest time), Frequency, strings, stacks. */
static int write_footer(struct gt_writer *w)
{
	uint8_t b[3 * GT_UVARINT_MAX + 2], *d = b;

	*d++ = GT_EV_BATCH | 1 << 6;
	d += gt_uvarint_put(d, 0);
	d += gt_uvarint_put(d, w->max_ts);
	*d++ = GT_EV_FREQUENCY;
	d += gt_uvarint_put(d, w->freq);
	if (out_put(w, b, (size_t)(d - b)) || footer_strings(w) || footer_stacks(w))
		return w->err;
	return write_all(w, w->out, w->out_pos);
}

int gt_writer_close(struct gt_writer *w)
{
	int err;

	if (!w)
		return -EINVAL;
	for (int p = 0; p < w->nps && !w->err; p++)
		pbuf_flush(w, &w->ps[p]);
	if (!w->err && !define_leftovers(w))
		write_footer(w);
	err = w->err;
	gt_writer_free(w);
	return err;
}

void gt_writer_free(struct gt_writer *w)
{
	if (!w)
		return;
	for (int p = 0; p < w->nps; p++)
		free(w->ps[p].buf);
	free(w->ps);
	gt_strset_free(&w->strs);
	gt_strset_free(&w->stks);
	free(w->out);
	free(w);
}
