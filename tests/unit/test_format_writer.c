/* Unit tests of the Go trace writer (format/writer/gt_writer.c).
 *
 * Byte-level cases decode the output with an independent decoder written
 * here from the wire rules (not from the writer); the scenario cases hold
 * whole files to Go's own reader (gt_test_gocheck) and to our checker.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check/gt_check.h"
#include "gt_test.h"
#include "wire/gt_varint.h"
#include "writer/gt_writer.h"

#define EV(w, p, type, ts, ...)                                                   \
	gt_writer_event((w), (p), (type), (ts), (const uint64_t[]){__VA_ARGS__},  \
			(int)(sizeof((uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t)))
#define EV0(w, p, type, ts) gt_writer_event((w), (p), (type), (ts), NULL, 0)

/* ---- helpers ------------------------------------------------------------ */

static char tmpdir[] = "/tmp/gt_writer_test.XXXXXX";

static int tmp_open(const char *name, char *path, size_t len)
{
	snprintf(path, len, "%s/%s", tmpdir, name);
	return open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0)
		return NULL;
	buf = malloc((size_t)st.st_size + 1);
	*len = (size_t)read(fd, buf, (size_t)st.st_size);
	close(fd);
	return buf;
}

/* One decoded record. */
struct rec {
	int type;
	int p;            /* batch the record sits in (-1 before any batch) */
	uint64_t ts;      /* absolute time (batch start + deltas) */
	uint64_t args[8]; /* the first 8 varints after the type byte */
	int nargs;        /* all varints after the type byte (time delta included) */
	size_t off, size; /* byte offset and size of the whole record */
	size_t lenfield;  /* length prefix value, if any */
	const uint8_t *str;
	size_t slen;
};

struct decoded {
	struct rec *r;
	int n;
	char err[200];
};

static int get(const uint8_t *d, size_t n, size_t *o, uint64_t *v)
{
	int k = gt_uvarint_get(d + *o, n - *o, v);

	if (k < 0)
		return -1;
	*o += (size_t)k;
	return 0;
}

/* Decodes data after the 16-byte header; 0 or -1 with dec->err set. */
static int decode(const uint8_t *d, size_t n, struct decoded *dec)
{
	size_t o = 16;
	int p = -1;
	uint64_t last = 0;

	int cap = 1024;

	dec->r = malloc((size_t)cap * sizeof(struct rec));
	dec->n = 0;
	while (o < n) {
		struct rec *r;
		uint8_t b = d[o];
		size_t start = o++;

		if (dec->n == cap) {
			cap *= 2;
			dec->r = realloc(dec->r, (size_t)cap * sizeof(struct rec));
		}
		r = &dec->r[dec->n];
		memset(r, 0, sizeof(*r));
		r->type = b & 0x3f;
		r->off = start;
		if (r->type == GT_EV_STRING) {
			if (get(d, n, &o, &r->args[0]) || get(d, n, &o, &r->args[1]) ||
			    o + r->args[1] > n)
				goto bad;
			r->nargs = 2;
			r->str = d + o;
			r->slen = r->args[1];
			o += r->slen;
		} else if ((b >> 6) < 3) {
			r->nargs = (b >> 6) + 1;
			for (int i = 0; i < r->nargs; i++)
				if (get(d, n, &o, &r->args[i]))
					goto bad;
		} else {
			uint64_t len;
			size_t end;

			if (get(d, n, &o, &len))
				goto bad;
			r->lenfield = len;
			end = o + len;
			while (o < end) {
				uint64_t v;

				if (get(d, n, &o, &v))
					goto bad;
				if (r->nargs < 8)
					r->args[r->nargs] = v;
				r->nargs++;
			}
			if (o != end)
				goto bad;
			if (r->type == GT_EV_USER_LOG) {
				uint64_t sl;

				if (get(d, n, &o, &sl))
					goto bad;
				r->str = d + o;
				r->slen = sl;
				o += sl;
			}
		}
		if (r->type == GT_EV_BATCH) {
			p = (int)r->args[0];
			last = r->args[1];
			r->ts = last;
		} else if (r->type != GT_EV_STRING && r->type != GT_EV_STACK &&
			   r->type != GT_EV_FREQUENCY) {
			last += r->args[0];
			r->ts = last;
		}
		r->p = p;
		r->size = o - start;
		dec->n++;
	}
	return o == n ? 0 : -1;
bad:
	snprintf(dec->err, sizeof(dec->err), "bad record at offset %zu", o);
	return -1;
}

static int decode_file(const char *path, struct decoded *dec, uint8_t **data, size_t *len)
{
	*data = slurp(path, len);
	if (!*data || *len < 16) {
		snprintf(dec->err, sizeof(dec->err), "cannot read %s", path);
		dec->r = NULL;
		return -1;
	}
	return decode(*data, *len, dec);
}

static const struct rec *find_type(const struct decoded *dec, int type, int nth)
{
	for (int i = 0; i < dec->n; i++)
		if (dec->r[i].type == type && nth-- == 0)
			return &dec->r[i];
	return NULL;
}

/* A test's trace file: a writer (Go 1.19, 1 GHz) on tmpdir/NAME, then the
 * records it wrote. */
struct wfile {
	char path[128];
	int fd;
	struct gt_writer *w;
	struct decoded dec;
	uint8_t *data;
	size_t len;
};

/* Opens the file and a writer on it: 0, or -1 with dec.err saying why. */
static int wf_open(struct wfile *f, const char *name)
{
	memset(f, 0, sizeof(*f));
	f->fd = tmp_open(name, f->path, sizeof(f->path));
	if (f->fd < 0) {
		snprintf(f->dec.err, sizeof(f->dec.err), "open %s: %s", f->path, strerror(errno));
		return -1;
	}
	if (gt_writer_open(&f->w, f->fd, GT_V1_19, 1000000000) != 0) {
		snprintf(f->dec.err, sizeof(f->dec.err), "gt_writer_open on %s failed", f->path);
		return -1;
	}
	return 0;
}

/* Closes the writer, then decodes the file: 0, or -1 with dec.err. */
static int wf_close(struct wfile *f)
{
	int err = gt_writer_close(f->w);

	f->w = NULL;
	if (err) {
		snprintf(f->dec.err, sizeof(f->dec.err), "close: %s", strerror(-err));
		return -1;
	}
	return decode_file(f->path, &f->dec, &f->data, &f->len);
}

static void wf_free(struct wfile *f)
{
	free(f->dec.r);
	free(f->data);
	if (f->fd >= 0)
		close(f->fd);
}

/* ---- varints -------------------------------------------------------------- */

static void test_varint_edges(void)
{
	const uint64_t vals[] = {0, 1, 127, 128, 255, 16383, 16384, (1ULL << 32) - 1,
				 1ULL << 35, (1ULL << 63) - 1, 1ULL << 63, UINT64_MAX};
	const size_t lens[] = {1, 1, 1, 2, 2, 2, 3, 5, 6, 9, 10, 10};
	uint8_t buf[GT_UVARINT_MAX + 2];

	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		uint64_t v = 0;
		size_t n = gt_uvarint_put(buf, vals[i]);

		GT_CHECK(n == lens[i], "%llu took %zu bytes, want %zu",
			 (unsigned long long)vals[i], n, lens[i]);
		GT_CHECK(gt_uvarint_len(vals[i]) == n, "len disagrees for %llu",
			 (unsigned long long)vals[i]);
		GT_CHECK(gt_uvarint_get(buf, n, &v) == (int)n && v == vals[i],
			 "round trip of %llu gave %llu", (unsigned long long)vals[i],
			 (unsigned long long)v);
		if (n > 1)
			GT_CHECK(gt_uvarint_get(buf, n - 1, &v) == -1, "truncated varint accepted");
	}
	/* 128 encodes as 0x80 0x01. */
	gt_uvarint_put(buf, 128);
	GT_CHECK(buf[0] == 0x80 && buf[1] == 0x01, "128 -> %02x %02x", buf[0], buf[1]);
	/* 11 bytes, and a 10th byte above 1, overflow 64 bits. */
	memset(buf, 0x80, sizeof(buf));
	buf[10] = 0;
	GT_CHECK(gt_uvarint_get(buf, 11, &(uint64_t){0}) == -1, "11-byte varint accepted");
	memset(buf, 0xff, 9);
	buf[9] = 0x02;
	GT_CHECK(gt_uvarint_get(buf, 10, &(uint64_t){0}) == -1, "varint over 2^64 accepted");
	GT_CHECK(gt_uvarint_get(buf, 0, &(uint64_t){0}) == -1, "empty input accepted");
}

/* ---- header, encoding ----------------------------------------------------- */

static void test_header_per_version(void)
{
	const int vers[] = {GT_V1_11, GT_V1_19, GT_V1_21};
	const char *want[] = {"go 1.11 trace", "go 1.19 trace", "go 1.21 trace"};
	struct gt_writer *w;
	char path[256];

	for (int i = 0; i < 3; i++) {
		int fd = tmp_open("hdr", path, sizeof(path));
		uint8_t hdr[16] = {0}, exp[16] = {0};

		GT_REQUIRE(fd >= 0, "open %s: %s", path, strerror(errno));
		GT_REQUIRE(gt_writer_open(&w, fd, vers[i], 1000000000) == 0, "open v%d", vers[i]);
		gt_writer_free(w);
		GT_CHECK(pread(fd, hdr, 16, 0) == 16, "header not written");
		memcpy(exp, want[i], strlen(want[i]));
		GT_CHECK(memcmp(hdr, exp, 16) == 0, "header for %d is '%.16s'", vers[i], hdr);
		close(fd);
	}
	GT_CHECK(gt_writer_open(&w, 1, GT_V1_10, 1) == -EINVAL, "1.10 accepted");
	GT_CHECK(gt_writer_open(&w, 1, 1020, 1) == -EINVAL, "1.20 accepted");
	GT_CHECK(gt_writer_open(&w, 1, GT_V1_19, 0) == -EINVAL, "frequency 0 accepted");
	GT_CHECK(gt_writer_open(&w, -1, GT_V1_19, 1) == -EINVAL, "fd -1 accepted");
}

/* While a recording runs, its events sit in open batches: the stats say
 * how many bytes (status showed BYTES 16, the header, beside 4647
 * events). */
static void test_stats_count_open_batches(void)
{
	struct gt_writer *w;
	struct gt_writer_stats st;
	char path[256];
	int fd = tmp_open("stats", path, sizeof(path));

	GT_REQUIRE(fd >= 0, "open %s: %s", path, strerror(errno));
	GT_REQUIRE(gt_writer_open(&w, fd, GT_V1_19, 1000000000) == 0, "open");
	for (uint64_t i = 0; i < 100; i++)
		EV(w, 0, GT_EV_GOMAXPROCS, 1000 + i, 2, 0);
	gt_writer_stats(w, &st);
	GT_CHECK(st.events == 100, "%llu events", (unsigned long long)st.events);
	GT_CHECK(st.bytes + st.buffered > 16 + 100 * 3, "%llu bytes written + %llu buffered "
		 "for 100 events", (unsigned long long)st.bytes, (unsigned long long)st.buffered);
	gt_writer_free(w);
	close(fd);
}

static void test_arg_count_encoding(void)
{
	struct wfile tf;
	const struct rec *r;

	GT_REQUIRE(wf_open(&tf, "enc") == 0, "%s", tf.dec.err);
	GT_CHECK(EV0(tf.w, 0, GT_EV_PROC_STOP, 1000) == 0, "ProcStop");           /* 1 varint */
	GT_CHECK(EV(tf.w, 0, GT_EV_PROC_START, 1005, 77) == 0, "ProcStart");     /* 2 */
	GT_CHECK(EV(tf.w, 0, GT_EV_GO_START, 1300, 5, 1) == 0, "GoStart");       /* 3 */
	GT_CHECK(EV(tf.w, 0, GT_EV_GO_UNBLOCK, 1400, 6, 2, 0) == 0, "GoUnblock"); /* 4: length */
	GT_CHECK(EV(tf.w, 0, GT_EV_GO_SYSEXIT, 1500, 6, 3, 0) == 0, "GoSysExit"); /* 4: length */
	GT_REQUIRE(wf_close(&tf) == 0, "%s", tf.dec.err);
	GT_REQUIRE(tf.dec.n >= 8, "only %d records", tf.dec.n);
	/* Batch [p, ticks] with n = 1, first, absolute time of the first event. */
	GT_CHECK(tf.data[16] == (GT_EV_BATCH | 1 << 6), "batch byte %02x", tf.data[16]);
	GT_CHECK(tf.dec.r[0].args[0] == 0 && tf.dec.r[0].args[1] == 1000, "batch [%llu %llu]",
		 (unsigned long long)tf.dec.r[0].args[0], (unsigned long long)tf.dec.r[0].args[1]);
	r = &tf.dec.r[1];
	GT_CHECK(tf.data[r->off] == GT_EV_PROC_STOP && r->args[0] == 0, "ProcStop: %02x delta %llu",
		 tf.data[r->off], (unsigned long long)r->args[0]);
	r = &tf.dec.r[2];
	GT_CHECK(tf.data[r->off] == (GT_EV_PROC_START | 1 << 6) && r->args[0] == 5 && r->args[1] == 77,
		 "ProcStart encoded as %02x", tf.data[r->off]);
	r = &tf.dec.r[3];
	GT_CHECK(tf.data[r->off] == (GT_EV_GO_START | 2 << 6) && r->args[0] == 295 && r->nargs == 3,
		 "GoStart encoded as %02x delta %llu", tf.data[r->off], (unsigned long long)r->args[0]);
	/* 295 needs two bytes: 0xa7 0x02. */
	GT_CHECK(tf.data[r->off + 1] == 0xa7 && tf.data[r->off + 2] == 0x02, "delta bytes %02x %02x",
		 tf.data[r->off + 1], tf.data[r->off + 2]);
	r = &tf.dec.r[4];
	GT_CHECK(tf.data[r->off] == (GT_EV_GO_UNBLOCK | 3 << 6) && r->lenfield == 4 && r->nargs == 4,
		 "GoUnblock %02x len %zu nargs %d", tf.data[r->off], r->lenfield, r->nargs);
	GT_CHECK(r->args[1] == 6 && r->args[2] == 2 && r->args[3] == 0, "GoUnblock args");
	r = &tf.dec.r[5];
	GT_CHECK(r->type == GT_EV_GO_SYSEXIT && r->nargs == 4 && r->args[3] == 0, "GoSysExit");
	/* Footer: Batch p=0 at the latest time, then Frequency. */
	r = &tf.dec.r[6];
	GT_CHECK(r->type == GT_EV_BATCH && r->args[0] == 0 && r->args[1] == 1500,
		 "footer batch [%llu %llu]", (unsigned long long)r->args[0], (unsigned long long)r->args[1]);
	GT_CHECK(tf.dec.r[7].type == GT_EV_FREQUENCY && tf.dec.r[7].args[0] == 1000000000, "frequency");
	wf_free(&tf);
}

/* ---- batching and time ----------------------------------------------------- */

/* Time of event i: growing, with jumps every 1000 events so deltas take
 * 1 to 4 bytes. */
static uint64_t batch_test_time(uint64_t i)
{
	return 1000 + i * 7 + ((i / 1000) << 20) + i * (i >> 12);
}

static void test_batches_across_buffers(void)
{
	struct wfile tf;
	enum { N = 200000 };
	struct gt_writer_stats st;
	int batches[3] = {0}, seen[3] = {0};
	uint64_t last[3] = {0};
	int bad = 0;

	GT_REQUIRE(wf_open(&tf, "batches") == 0, "%s", tf.dec.err);
	/* Three Ps interleaved; times with big jumps so deltas vary in size. */
	for (int i = 0; i < N; i++) {
		int p = i % 3;
		uint64_t ts = batch_test_time((uint64_t)i);

		GT_REQUIRE(EV(tf.w, p, GT_EV_HEAP_ALLOC, ts, (uint64_t)i) == 0, "event %d", i);
	}
	gt_writer_stats(tf.w, &st);
	GT_CHECK(st.events == N, "events %llu", (unsigned long long)st.events);
	GT_CHECK(st.batches > 3, "only %llu batches flushed before close",
		 (unsigned long long)st.batches);
	GT_CHECK(st.bytes < 16 + (uint64_t)N * 16, "bytes %llu", (unsigned long long)st.bytes);
	GT_REQUIRE(wf_close(&tf) == 0, "%s", tf.dec.err);
	/* Streaming: all but the last 64 KiB batch of each P (and the footer)
	 * reached the file before close, so memory does not grow with length. */
	GT_CHECK(st.bytes + 3 * 65536 + 64 >= tf.len, "only %llu of %zu bytes written before close",
		 (unsigned long long)st.bytes, tf.len);
	for (int i = 0; i < tf.dec.n; i++) {
		const struct rec *r = &tf.dec.r[i];
		int p = r->p;

		if (r->type == GT_EV_FREQUENCY)
			break; /* footer */
		if (p < 0 || p > 2) {
			bad++;
			continue;
		}
		if (r->ts < last[p])
			bad++;
		last[p] = r->ts;
		if (r->type == GT_EV_BATCH) {
			batches[p]++;
			GT_CHECK(r->off == 16 || tf.dec.r[i - 1].type != GT_EV_BATCH, "empty batch");
			continue;
		}
		/* Event k of P p carries value k*3+p: order and content kept. */
		if (r->args[1] != (uint64_t)seen[p] * 3 + (uint64_t)p)
			bad++;
		if (r->ts != batch_test_time(r->args[1]))
			bad++;
		seen[p]++;
	}
	GT_CHECK(bad == 0, "%d records out of order, misplaced or mistimed", bad);
	for (int p = 0; p < 3; p++) {
		GT_CHECK(batches[p] >= 2, "P%d has %d batches", p, batches[p]);
		GT_CHECK(seen[p] == (N + 2 - p) / 3, "P%d has %d events", p, seen[p]);
	}
	wf_free(&tf);
}

static void test_time_clamped_forward(void)
{
	struct wfile tf;
	struct gt_writer_stats st;
	const uint64_t in[] = {5000, 4000, 6000, 5999, 1, 7000};
	const uint64_t want[] = {5000, 5000, 6000, 6000, 6000, 7000};
	int k = 0;

	GT_REQUIRE(wf_open(&tf, "clamp") == 0, "%s", tf.dec.err);
	for (int i = 0; i < 6; i++)
		GT_CHECK(EV(tf.w, 1, GT_EV_HEAP_GOAL, in[i], 1) == 0, "event %d", i);
	/* Another P is independent: its early time is not clamped. */
	GT_CHECK(EV(tf.w, 2, GT_EV_HEAP_GOAL, 10, 1) == 0, "P2 event");
	gt_writer_stats(tf.w, &st);
	GT_CHECK(st.clamped == 3, "clamped %llu, want 3", (unsigned long long)st.clamped);
	GT_REQUIRE(wf_close(&tf) == 0, "%s", tf.dec.err);
	for (int i = 0; i < tf.dec.n; i++) {
		if (tf.dec.r[i].type != GT_EV_HEAP_GOAL)
			continue;
		if (tf.dec.r[i].p == 1) {
			GT_CHECK(k < 6 && tf.dec.r[i].ts == want[k], "event %d at %llu, want %llu", k,
				 (unsigned long long)tf.dec.r[i].ts, (unsigned long long)want[k]);
			k++;
		} else {
			GT_CHECK(tf.dec.r[i].p == 2 && tf.dec.r[i].ts == 10, "P2 event at %llu",
				 (unsigned long long)tf.dec.r[i].ts);
		}
	}
	GT_CHECK(k == 6, "%d P1 events", k);
	/* The footer batch (P0's stream) is not earlier than anything. */
	GT_CHECK(find_type(&tf.dec, GT_EV_BATCH, 2) && find_type(&tf.dec, GT_EV_BATCH, 2)->ts == 7000,
		 "footer batch time");
	wf_free(&tf);
}

/* ---- dictionaries ------------------------------------------------------------- */

static void test_string_interning(void)
{
	struct wfile tf;
	struct gt_writer_stats st;
	char *big = malloc(GT_MAX_STRING_LEN + 100);
	char *utf = malloc(GT_MAX_STRING_LEN + 100);
	uint64_t a, b, a2, idbig, idutf;
	int nstr = 0;

	GT_REQUIRE(big && utf, "setup");
	GT_REQUIRE(wf_open(&tf, "strings") == 0, "%s", tf.dec.err);
	memset(big, 'x', GT_MAX_STRING_LEN + 99);
	big[GT_MAX_STRING_LEN + 99] = 0;
	/* A 3-byte character straddling the 1e6 cut must go whole. */
	memset(utf, 'y', GT_MAX_STRING_LEN + 99);
	utf[GT_MAX_STRING_LEN + 99] = 0;
	memcpy(utf + GT_MAX_STRING_LEN - 2, "\xe2\x82\xac", 3);
	a = gt_writer_string(tf.w, "main");
	b = gt_writer_string(tf.w, "worker");
	a2 = gt_writer_string(tf.w, "main");
	GT_CHECK(a > 0 && b > 0 && a != b, "ids %llu %llu", (unsigned long long)a, (unsigned long long)b);
	GT_CHECK(a == a2, "same string got %llu then %llu", (unsigned long long)a, (unsigned long long)a2);
	GT_CHECK(gt_writer_string(tf.w, "") == 0 && gt_writer_string(tf.w, NULL) == 0, "empty string id");
	idbig = gt_writer_string(tf.w, big);
	idutf = gt_writer_string(tf.w, utf);
	GT_CHECK(idbig > b && idutf > idbig, "big ids %llu %llu", (unsigned long long)idbig,
		 (unsigned long long)idutf);
	/* Many strings force the table to grow; ids stay stable. */
	for (int i = 0; i < 5000; i++) {
		char s[32];

		snprintf(s, sizeof(s), "sym%d", i);
		GT_CHECK(gt_writer_string(tf.w, s) == idutf + 1 + (uint64_t)i, "id of %s", s);
	}
	GT_CHECK(gt_writer_string(tf.w, "sym17") == idutf + 18, "re-intern after growth");
	/* The same buffer with new contents is a new string (the writer caches
	 * by address but must compare contents). */
	{
		char buf[16];
		uint64_t x, y;

		strcpy(buf, "alpha");
		x = gt_writer_string(tf.w, buf);
		strcpy(buf, "alphabet");
		y = gt_writer_string(tf.w, buf);
		GT_CHECK(x != y && y == x + 1, "reused buffer: ids %llu %llu", (unsigned long long)x,
			 (unsigned long long)y);
		strcpy(buf, "alpha");
		GT_CHECK(gt_writer_string(tf.w, buf) == x, "reused buffer back to alpha");
		GT_CHECK(gt_writer_string(tf.w, "alphabet") == y, "other address, same string");
	}
	gt_writer_stats(tf.w, &st);
	GT_CHECK(st.strings == 5006, "strings %llu", (unsigned long long)st.strings);
	GT_CHECK(EV(tf.w, 0, GT_EV_HEAP_ALLOC, 1, 1) == 0, "event");
	GT_REQUIRE(wf_close(&tf) == 0, "%s", tf.dec.err);
	for (int i = 0; i < tf.dec.n; i++) {
		const struct rec *r = &tf.dec.r[i];

		if (r->type != GT_EV_STRING)
			continue;
		nstr++;
		GT_CHECK(r->args[0] == (uint64_t)nstr, "string %d has id %llu", nstr,
			 (unsigned long long)r->args[0]);
		GT_CHECK(r->slen > 0 && r->slen <= 1000000, "string length %zu", r->slen);
		if (r->args[0] == a)
			GT_CHECK(r->slen == 4 && memcmp(r->str, "main", 4) == 0, "main stored wrong");
		if (r->args[0] == idbig)
			GT_CHECK(r->slen == GT_MAX_STRING_LEN, "big string kept %zu bytes", r->slen);
		if (r->args[0] == idutf)
			GT_CHECK(r->slen == GT_MAX_STRING_LEN - 2, "utf string cut at %zu", r->slen);
		/* Strings come after the footer batch, never before events. */
		GT_CHECK(find_type(&tf.dec, GT_EV_FREQUENCY, 0)->off < r->off, "string before footer");
	}
	GT_CHECK(nstr == 5006, "%d strings in footer", nstr);
	wf_free(&tf);
	free(big);
	free(utf);
}

static void test_stack_interning_and_caps(void)
{
	struct wfile tf;
	struct gt_writer_stats st;
	struct gt_frame fr[300];
	uint64_t s1, s1b, s2, sdeep, swide;
	int nstk = 0;

	GT_REQUIRE(wf_open(&tf, "stacks") == 0, "%s", tf.dec.err);
	for (int i = 0; i < 300; i++)
		fr[i] = (struct gt_frame){0x400000 + (uint64_t)i * 16, "fn", "file.c", (uint64_t)i};
	s1 = gt_writer_stack(tf.w, fr, 3);
	s1b = gt_writer_stack(tf.w, fr, 3);
	s2 = gt_writer_stack(tf.w, fr + 1, 3);
	GT_CHECK(s1 > 0 && s1 == s1b && s2 != s1, "ids %llu %llu %llu", (unsigned long long)s1,
		 (unsigned long long)s1b, (unsigned long long)s2);
	GT_CHECK(gt_writer_stack(tf.w, fr, 0) == 0, "empty stack got an id");
	/* 300 frames: capped to 128. */
	sdeep = gt_writer_stack(tf.w, fr, 300);
	/* Frames with 10-byte PCs and lines: trimmed under 2048 bytes. */
	for (int i = 0; i < 128; i++)
		fr[i] = (struct gt_frame){UINT64_MAX - (uint64_t)i, "f", "g", UINT64_MAX - 1};
	swide = gt_writer_stack(tf.w, fr, 128);
	GT_CHECK(sdeep > s2 && swide > sdeep, "ids %llu %llu", (unsigned long long)sdeep,
		 (unsigned long long)swide);
	gt_writer_stats(tf.w, &st);
	GT_CHECK(st.stacks == 4 && st.trimmed == 2, "stacks %llu trimmed %llu",
		 (unsigned long long)st.stacks, (unsigned long long)st.trimmed);
	/* Many stacks force the table to grow. */
	for (int i = 0; i < 3000; i++) {
		struct gt_frame f = {0x1000 + (uint64_t)i, "loop", NULL, 1};

		GT_CHECK(gt_writer_stack(tf.w, &f, 1) == swide + 1 + (uint64_t)i, "stack %d id", i);
	}
	GT_CHECK(EV(tf.w, 0, GT_EV_GO_CREATE, 10, 1, s1, s2) == 0, "GoCreate");
	GT_REQUIRE(wf_close(&tf) == 0, "%s", tf.dec.err);
	for (int i = 0; i < tf.dec.n; i++) {
		const struct rec *r = &tf.dec.r[i];

		if (r->type != GT_EV_STACK)
			continue;
		nstk++;
		GT_CHECK(r->args[0] == (uint64_t)nstk, "stack %d has id %llu", nstk,
			 (unsigned long long)r->args[0]);
		GT_CHECK((uint64_t)r->nargs == 2 + 4 * r->args[1], "stack %d: %d args for %llu frames",
			 nstk, r->nargs, (unsigned long long)r->args[1]);
		GT_CHECK(r->size < 2048 && r->lenfield <= 2048, "stack %d record is %zu bytes", nstk,
			 r->size);
		GT_CHECK(r->args[1] <= 128, "stack %d has %llu frames", nstk,
			 (unsigned long long)r->args[1]);
		if (r->args[0] == s1)
			GT_CHECK(r->args[1] == 3 && r->args[2] == 0x400000 && r->args[5] == 0 &&
				 r->args[6] == 0x400010, "stack 1 content");
		if (r->args[0] == sdeep)
			GT_CHECK(r->args[1] == 128, "deep stack kept %llu frames",
				 (unsigned long long)r->args[1]);
		if (r->args[0] == swide)
			GT_CHECK(r->args[1] < 128 && r->args[1] > 40, "wide stack kept %llu frames",
				 (unsigned long long)r->args[1]);
	}
	GT_CHECK(nstk == 3004, "%d stacks in footer", nstk);
	wf_free(&tf);
}

/* ---- reserved stacks ------------------------------------------------------ */

struct gnames {
	int n;
	char name[4][32];
	int64_t tid[4];
};

static void collect_gname(const struct gt_goroutine_stats *g, void *arg)
{
	struct gnames *nm = arg;

	if (nm->n >= 4)
		return;
	snprintf(nm->name[nm->n], sizeof(nm->name[0]), "%.*s", (int)g->name_len, g->name);
	nm->tid[nm->n++] = g->tid;
}

/* The footer's stack record with id, or NULL. */
static const struct rec *find_stack(const struct decoded *dec, uint64_t id)
{
	for (int i = 0; i < dec->n; i++)
		if (dec->r[i].type == GT_EV_STACK && dec->r[i].args[0] == id)
			return &dec->r[i];
	return NULL;
}

/* The footer's string with id, as a C string in buf. */
static const char *find_string(const struct decoded *dec, uint64_t id, char *buf, size_t len)
{
	for (int i = 0; i < dec->n; i++)
		if (dec->r[i].type == GT_EV_STRING && dec->r[i].args[0] == id) {
			snprintf(buf, len, "%.*s", (int)dec->r[i].slen, (const char *)dec->r[i].str);
			return buf;
		}
	return "";
}

/* Goroutines created with reserved identity stacks whose frames are given
 * after the events (one after GoEnd, one capped, one never): ids are kept
 * apart from interned ones, bad defines are refused, the undefined one
 * gets the fallback frame, and Go and our checker read the names. */
static void test_stack_reserve_define(void)
{
	struct wfile tf;
	struct gt_writer_stats st;
	char sbuf[64], why[2048];
	struct gt_frame alpha = {0x1234, "alpha", "[thread]", 7}, deep[300];
	uint64_t r1, r2, r3, s1, s1b, extra[2000];
	struct gt_check_report rep;
	struct gnames nm = {0};
	const struct rec *r;

	GT_REQUIRE(wf_open(&tf, "reserve") == 0, "%s", tf.dec.err);
	r1 = gt_writer_stack_reserve(tf.w);
	r2 = gt_writer_stack_reserve(tf.w);
	r3 = gt_writer_stack_reserve(tf.w);
	GT_CHECK(r1 == 1 && r2 == 2 && r3 == 3, "ids %llu %llu %llu", (unsigned long long)r1,
		 (unsigned long long)r2, (unsigned long long)r3);
	GT_CHECK(EV(tf.w, 0, GT_EV_GO_CREATE, 10, 1, r1, 0) == 0, "create 1");
	GT_CHECK(EV(tf.w, 0, GT_EV_GO_CREATE, 11, 2, r2, 0) == 0, "create 2");
	GT_CHECK(EV(tf.w, 0, GT_EV_GO_CREATE, 12, 3, r3, 0) == 0, "create 3");
	GT_CHECK(EV(tf.w, 0, GT_EV_GOMAXPROCS, 13, 2, 0) == 0, "gomaxprocs");
	GT_CHECK(EV(tf.w, 0, GT_EV_PROC_START, 20, 101) == 0, "procstart");
	GT_CHECK(EV(tf.w, 0, GT_EV_GO_START, 21, 1, 1) == 0, "start");
	GT_CHECK(EV0(tf.w, 0, GT_EV_GO_END, 30) == 0, "end");
	GT_CHECK(EV0(tf.w, 0, GT_EV_PROC_STOP, 31) == 0, "procstop");
	/* Frames given after the events that use the id. */
	GT_CHECK(gt_writer_stack_define(tf.w, r1, &alpha, 1) == 0, "define r1");
	GT_CHECK(gt_writer_stack_define(tf.w, r1, &alpha, 1) == -EALREADY, "define r1 twice");
	/* Equal frames interned normally never return the reserved id. */
	s1 = gt_writer_stack(tf.w, &alpha, 1);
	s1b = gt_writer_stack(tf.w, &alpha, 1);
	GT_CHECK(s1 > r3 && s1 == s1b, "interned %llu %llu", (unsigned long long)s1,
		 (unsigned long long)s1b);
	GT_CHECK(gt_writer_stack_define(tf.w, s1, &alpha, 1) == -EINVAL, "defined an interned id");
	GT_CHECK(gt_writer_stack_define(tf.w, 0, &alpha, 1) == -EINVAL, "defined id 0");
	GT_CHECK(gt_writer_stack_define(tf.w, 9999, &alpha, 1) == -EINVAL, "defined a future id");
	GT_CHECK(gt_writer_stack_define(tf.w, r2, &alpha, 0) == -EINVAL, "defined 0 frames");
	GT_CHECK(gt_writer_stack_define(tf.w, r2, NULL, 1) == -EINVAL, "defined NULL frames");
	for (int i = 0; i < 300; i++)
		deep[i] = (struct gt_frame){0x500000 + (uint64_t)i, "deep", "d.c", (uint64_t)i};
	GT_CHECK(gt_writer_stack_define(tf.w, r2, deep, 300) == 0, "define r2");
	/* Enough reserved and interned stacks to grow the tables: reserved
	 * entries must stay out of the rebuilt hash slots. */
	for (int i = 0; i < 2000; i++) {
		struct gt_frame f = {0x9000 + (uint64_t)i, "grow", NULL, 1};

		extra[i] = gt_writer_stack_reserve(tf.w);
		GT_CHECK(gt_writer_stack_define(tf.w, extra[i], &f, 1) == 0, "define extra %d", i);
		GT_CHECK(gt_writer_stack(tf.w, &f, 1) != extra[i], "interned got reserved id %d", i);
	}
	GT_CHECK(gt_writer_stack(tf.w, &alpha, 1) == s1, "interned id changed after growth");
	gt_writer_stats(tf.w, &st);
	GT_CHECK(st.stacks == 3 + 1 + 4000, "stacks %llu", (unsigned long long)st.stacks);
	GT_CHECK(st.trimmed == 1, "trimmed %llu", (unsigned long long)st.trimmed);
	GT_REQUIRE(wf_close(&tf) == 0, "%s", tf.dec.err);
	r = find_stack(&tf.dec, r1);
	GT_CHECK(r && r->args[1] == 1 && r->args[2] == 0x1234 && r->args[5] == 7 &&
		 !strcmp(find_string(&tf.dec, r->args[3], sbuf, sizeof(sbuf)), "alpha"),
		 "r1 record");
	r = find_stack(&tf.dec, r2);
	GT_CHECK(r && r->args[1] == 128 && r->args[2] == 0x500000, "r2 record");
	r = find_stack(&tf.dec, r3);
	GT_CHECK(r && r->args[1] == 1 && r->args[2] == GT_STACK_FALLBACK_PC &&
		 !strcmp(find_string(&tf.dec, r->args[3], sbuf, sizeof(sbuf)), GT_STACK_FALLBACK_FUNC),
		 "r3 fallback record");
	GT_CHECK(gt_check_file_run(tf.path, 0, &rep, collect_gname, &nm) == 0, "checker: %s",
		 rep.error);
	GT_CHECK(nm.n == 3 && !strcmp(nm.name[0], "alpha") && nm.tid[0] == 7 &&
		 !strcmp(nm.name[1], "deep") && !strcmp(nm.name[2], GT_STACK_FALLBACK_FUNC),
		 "names %d: %s %s %s", nm.n, nm.name[0], nm.name[1], nm.name[2]);
	GT_CHECK(gt_test_gocheck(tf.path, why, sizeof(why)) == 0, "go rejects: %s", why);
	wf_free(&tf);
}

/* A reserved id defined as an interned stack plus a root frame: the
 * base's frames first, the root outermost; with no base, the root alone;
 * a base of 128 frames gives up its outermost one for the root. */
static void test_stack_define_rooted(void)
{
	struct wfile tf;
	char sbuf[64];
	struct gt_frame base[2] = {{0x401000, "read", "io.c", 7}, {0x402000, "main", "main.c", 9}};
	struct gt_frame root = {0x77, "worker", "[thread]", 42}, deep[128];
	uint64_t b, bdeep, r1, r2, r3, r4;
	const struct rec *r;

	GT_REQUIRE(wf_open(&tf, "rooted") == 0, "%s", tf.dec.err);
	for (int i = 0; i < 128; i++)
		deep[i] = (struct gt_frame){0x500000 + (uint64_t)i, "deep", "d.c", (uint64_t)i};
	b = gt_writer_stack(tf.w, base, 2);
	bdeep = gt_writer_stack(tf.w, deep, 128);
	r1 = gt_writer_stack_reserve(tf.w);
	r2 = gt_writer_stack_reserve(tf.w);
	r3 = gt_writer_stack_reserve(tf.w);
	r4 = gt_writer_stack_reserve(tf.w);
	GT_CHECK(EV(tf.w, 0, GT_EV_HEAP_ALLOC, 10, 1) == 0, "event");
	GT_CHECK(gt_writer_stack_define_rooted(tf.w, r1, b, &root) == 0, "define r1");
	GT_CHECK(gt_writer_stack_define_rooted(tf.w, r1, b, &root) == -EALREADY, "define r1 twice");
	GT_CHECK(gt_writer_stack_define_rooted(tf.w, r2, 0, &root) == 0, "define r2 (no base)");
	GT_CHECK(gt_writer_stack_define_rooted(tf.w, r3, bdeep, &root) == 0, "define r3");
	GT_CHECK(gt_writer_stack_define_rooted(tf.w, b, b, &root) == -EINVAL, "defined an interned id");
	GT_CHECK(gt_writer_stack_define_rooted(tf.w, r4, r4, &root) == -EINVAL, "undefined base");
	GT_CHECK(gt_writer_stack_define_rooted(tf.w, r4, 9999, &root) == -EINVAL, "unknown base");
	GT_CHECK(gt_writer_stack_define_rooted(tf.w, r4, b, NULL) == -EINVAL, "no root");
	GT_REQUIRE(wf_close(&tf) == 0, "%s", tf.dec.err);
	r = find_stack(&tf.dec, r1);
	GT_CHECK(r && r->args[1] == 3 && r->args[2] == 0x401000 && r->args[6] == 0x402000,
		 "r1: base frames first");
	GT_CHECK(r && tf.data[r->off + r->size - 1] == 42,
		 "r1: root frame last (line 42)");
	r = find_stack(&tf.dec, r2);
	GT_CHECK(r && r->args[1] == 1 && r->args[2] == 0x77 &&
		 !strcmp(find_string(&tf.dec, r->args[3], sbuf, sizeof(sbuf)), "worker"),
		 "r2: the root alone");
	r = find_stack(&tf.dec, r3);
	GT_CHECK(r && r->args[1] == 128 && r->args[2] == 0x500000 &&
		 tf.data[r->off + r->size - 1] == 42, "r3: 127 base frames and the root");
	wf_free(&tf);
}

/* A CPUSample's time is in its args: its delta is 0 and leaves the P's
 * clock alone, so Go 1.19 (which adds it) and Go 1.22+ (which skips it)
 * put the P's next event at the same time. */
static void test_cpu_sample_no_delta(void)
{
	struct wfile tf;
	const struct rec *s, *h;

	GT_REQUIRE(wf_open(&tf, "sample") == 0, "%s", tf.dec.err);
	GT_CHECK(EV(tf.w, 0, GT_EV_HEAP_ALLOC, 1000, 1) == 0, "heap 1");
	GT_CHECK(EV(tf.w, 0, GT_EV_CPU_SAMPLE, 1500, 1500, 0, 0, 0) == 0, "sample");
	GT_CHECK(EV(tf.w, 0, GT_EV_HEAP_GOAL, 1600, 2) == 0, "heap goal");
	GT_REQUIRE(wf_close(&tf) == 0, "%s", tf.dec.err);
	s = find_type(&tf.dec, GT_EV_CPU_SAMPLE, 0);
	h = find_type(&tf.dec, GT_EV_HEAP_GOAL, 0);
	GT_CHECK(s && s->ts == 1000 && s->args[1] == 1500, "sample: delta 0, real ts 1500");
	GT_CHECK(h && h->ts == 1600, "next event at %llu, want 1600",
		 h ? (unsigned long long)h->ts : 0ULL);
	wf_free(&tf);
}

/* ---- errors --------------------------------------------------------------- */

/* Writes events until one fails; returns that error (0 if none did). */
static int fill_until_error(struct gt_writer *w, int max)
{
	for (int i = 0; i < max; i++) {
		int err = EV(w, i % 2, GT_EV_HEAP_ALLOC, (uint64_t)i, (uint64_t)i * 1000);

		if (err)
			return err;
	}
	return 0;
}

/* A poisoned writer (disk full) refuses reserve and define with its error;
 * close reports it and writes no footer for the leftover id. */
static void test_stack_reserve_poisoned(void)
{
	struct gt_writer *w;
	struct gt_frame f = {0x42, "late", "[thread]", 1};
	char path[256];
	int full = open("/dev/full", O_WRONLY);
	int fd = tmp_open("reserve_full", path, sizeof(path));
	uint64_t id;

	GT_REQUIRE(full >= 0 && fd >= 0, "open: %s", strerror(errno));
	GT_REQUIRE(gt_writer_open(&w, fd, GT_V1_19, 1000000000) == 0, "open");
	id = gt_writer_stack_reserve(w);
	GT_CHECK(id == 1, "id %llu", (unsigned long long)id);
	GT_REQUIRE(dup2(full, fd) == fd, "dup2");
	GT_CHECK(fill_until_error(w, 1000000) == -ENOSPC, "fill");
	GT_CHECK(gt_writer_stack_define(w, id, &f, 1) == -ENOSPC, "define after error");
	GT_CHECK(gt_writer_stack_reserve(w) == 0, "reserve after error");
	GT_CHECK(gt_writer_close(w) == -ENOSPC, "close after error");
	close(full);
	close(fd);
}

static void test_dev_full(void)
{
	struct gt_writer *w;
	char path[256];
	int full = open("/dev/full", O_WRONLY);
	int fd = tmp_open("full", path, sizeof(path));
	struct gt_writer_stats st;
	int err;

	GT_REQUIRE(full >= 0 && fd >= 0, "open /dev/full: %s", strerror(errno));
	/* The header itself cannot be written. */
	GT_CHECK(gt_writer_open(&w, full, GT_V1_19, 1000000000) == -ENOSPC, "open on /dev/full");
	/* The disk fills up mid-recording. */
	GT_REQUIRE(gt_writer_open(&w, fd, GT_V1_19, 1000000000) == 0, "open");
	GT_REQUIRE(dup2(full, fd) == fd, "dup2");
	err = fill_until_error(w, 1000000);
	GT_CHECK(err == -ENOSPC, "fill returned %d", err);
	/* Poisoned: everything returns the error, nothing more is written. */
	gt_writer_stats(w, &st);
	GT_CHECK(EV(w, 0, GT_EV_HEAP_ALLOC, 1ULL << 40, 1) == -ENOSPC, "event after error");
	GT_CHECK(gt_writer_user_log(w, 0, 1ULL << 40, 0, 0, 0, "x") == -ENOSPC, "log after error");
	GT_CHECK(gt_writer_string(w, "late") == 0, "string after error");
	GT_CHECK(gt_writer_close(w) == -ENOSPC, "close did not report ENOSPC");
	GT_CHECK(st.bytes == 16, "bytes %llu", (unsigned long long)st.bytes);
	close(full);
	close(fd);
}

static void test_epipe(void)
{
	struct gt_writer *w;
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	int fds[2], err;

	GT_REQUIRE(pipe(fds) == 0, "pipe: %s", strerror(errno));
	GT_REQUIRE(gt_writer_open(&w, fds[1], GT_V1_19, 1000000000) == 0, "open on pipe");
	close(fds[0]);
	err = fill_until_error(w, 1000000);
	GT_CHECK(err == -EPIPE, "fill returned %d", err);
	GT_CHECK(EV0(w, 0, GT_EV_PROC_STOP, 1ULL << 40) == -EPIPE, "event after EPIPE");
	GT_CHECK(gt_writer_close(w) == -EPIPE, "close did not report EPIPE");
	close(fds[1]);
	/* A reader that is gone before the header: open fails. */
	GT_REQUIRE(pipe(fds) == 0, "pipe");
	close(fds[0]);
	GT_CHECK(gt_writer_open(&w, fds[1], GT_V1_19, 1) == -EPIPE, "open on closed pipe");
	close(fds[1]);
	signal(SIGPIPE, old);
}

static void test_poisoned_close_has_no_footer(void)
{
	struct gt_writer *w;
	char path[256];
	int fd = tmp_open("poison", path, sizeof(path));
	int full = open("/dev/full", O_WRONLY), saved;
	struct stat stb;

	GT_REQUIRE(fd >= 0 && full >= 0, "setup");
	saved = dup(fd);
	GT_REQUIRE(gt_writer_open(&w, fd, GT_V1_19, 1000000000) == 0, "open");
	GT_CHECK(EV(w, 0, GT_EV_HEAP_ALLOC, 5, 1) == 0, "event");
	/* The close's flush fails; then the disk "frees up" under the same
	 * fd: the poisoned writer must not go on to write a footer. */
	GT_REQUIRE(dup2(full, fd) == fd, "dup2");
	GT_CHECK(gt_writer_close(w) == -ENOSPC, "close returned success on a failed flush");
	GT_REQUIRE(fstat(saved, &stb) == 0, "fstat");
	GT_CHECK(stb.st_size == 16, "file has %lld bytes, want the header only",
		 (long long)stb.st_size);
	close(full);
	close(saved);
	close(fd);
}

static void test_reject_bad_events(void)
{
	struct gt_writer *w, *w11;
	char path[256], path11[256];
	int fd = tmp_open("reject", path, sizeof(path));
	int fd11 = tmp_open("reject11", path11, sizeof(path11));
	const int writer_owned[] = {GT_EV_NONE, GT_EV_BATCH, GT_EV_FREQUENCY, GT_EV_STACK,
				    GT_EV_STRING, GT_EV_USER_LOG};
	uint64_t args[8] = {0};

	GT_REQUIRE(fd >= 0 && fd11 >= 0, "open");
	GT_REQUIRE(gt_writer_open(&w, fd, GT_V1_19, 1000000000) == 0, "open");
	GT_REQUIRE(gt_writer_open(&w11, fd11, GT_V1_11, 1000000000) == 0, "open 1.11");
	for (size_t i = 0; i < sizeof(writer_owned) / sizeof(int); i++)
		for (int n = 0; n < 5; n++)
			GT_CHECK(gt_writer_event(w, 0, writer_owned[i], 1, args, n) == -EINVAL,
				 "%s with %d args accepted", gt_event_descs[writer_owned[i]].name, n);
	GT_CHECK(gt_writer_event(w, 0, GT_EV_COUNT, 1, args, 0) == -EINVAL, "type 50");
	GT_CHECK(gt_writer_event(w, 0, -1, 1, args, 0) == -EINVAL, "type -1");
	GT_CHECK(gt_writer_event(w, 0, GT_EV_GO_START, 1, args, 1) == -EINVAL, "GoStart 1 arg");
	GT_CHECK(gt_writer_event(w, 0, GT_EV_GO_UNBLOCK, 1, args, 2) == -EINVAL, "GoUnblock no stack");
	GT_CHECK(gt_writer_event(w, -1, GT_EV_GO_END, 1, args, 0) == -EINVAL, "p -1");
	GT_CHECK(gt_writer_event(w, GT_MAX_P + 1, GT_EV_GO_END, 1, args, 0) == -EINVAL, "p too big");
	GT_CHECK(gt_writer_event(w, 0, GT_EV_GO_START, 1, NULL, 2) == -EINVAL, "NULL args");
	/* CPUSample came with 1.19: not in a 1.11 file. */
	GT_CHECK(gt_writer_event(w11, 0, GT_EV_CPU_SAMPLE, 1, args, 4) == -EINVAL, "CPUSample in 1.11");
	GT_CHECK(gt_writer_event(w, 0, GT_EV_CPU_SAMPLE, 1, args, 4) == 0, "CPUSample in 1.19");
	/* A rejected event does not poison the writer. */
	GT_CHECK(gt_writer_event(w11, 0, GT_EV_HEAP_ALLOC, 1, args, 1) == 0, "after reject");
	GT_CHECK(gt_writer_close(w) == 0, "close");
	GT_CHECK(gt_writer_close(w11) == 0, "close 1.11");
	close(fd);
	close(fd11);
}

/* No events: close still writes a well-formed footer (Go rejects the file
 * for having no events; stats tell the caller). */
static void test_empty_trace_footer(void)
{
	struct wfile tf;
	struct gt_writer_stats st;

	GT_REQUIRE(wf_open(&tf, "empty") == 0, "%s", tf.dec.err);
	gt_writer_stats(tf.w, &st);
	GT_CHECK(st.events == 0, "events %llu", (unsigned long long)st.events);
	GT_REQUIRE(wf_close(&tf) == 0, "%s", tf.dec.err);
	GT_CHECK(tf.dec.n == 2 && tf.dec.r[0].type == GT_EV_BATCH && tf.dec.r[1].type == GT_EV_FREQUENCY,
		 "%d records", tf.dec.n);
	wf_free(&tf);
}

/* ---- every event kind in a legal scenario, held to Go ---------------------- */

/* Writes a small history using every event kind the translator needs:
 * the initial snapshot (GoCreate by G0, GoWaiting, GoInSyscall, ProcStart,
 * GoStart, Gomaxprocs), then blocking of every kind, syscalls that block
 * and that do not, wakeups from a running G and from G0 on an idle P,
 * heap counters, user annotations, CPU samples (1.19+), exits, and the
 * final deschedule and ProcStops. */
static int write_scenario(const char *path, int version, char *why, size_t whylen)
{
	struct gt_writer *w;
	uint64_t t = 1000, sid[7], screate, swake, ssys, kname, region;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), err = 0;

	if (fd < 0 || gt_writer_open(&w, fd, version, 1000000000) != 0) {
		snprintf(why, whylen, "cannot open writer on %s", path);
		return -1;
	}
	for (int g = 1; g <= 6; g++) {
		char name[32];
		struct gt_frame f = {0x1000 + (uint64_t)g, name, "[thread]", 4000 + (uint64_t)g};

		snprintf(name, sizeof(name), "thread-%d", g);
		sid[g] = gt_writer_stack(w, &f, 1);
	}
	{
		struct gt_frame fc[2] = {{0x401000, "pthread_create", "pthread.c", 10},
					 {0x402000, "main", "main.c", 20}};
		struct gt_frame fw[1] = {{0x403000, "futex_wake", "futex.c", 5}};
		struct gt_frame fs[1] = {{0x404000, "read", "io.c", 7}};

		screate = gt_writer_stack(w, fc, 2);
		swake = gt_writer_stack(w, fw, 1);
		ssys = gt_writer_stack(w, fs, 1);
	}
	kname = gt_writer_string(w, "phase");
	region = gt_writer_string(w, "work");
#define E(p, type, ...) err |= EV(w, p, type, t += 10, __VA_ARGS__)
#define E0(p, type) err |= EV0(w, p, type, t += 10)
	/* Initial snapshot on P0 by G0. */
	for (int g = 1; g <= 4; g++)
		E(0, GT_EV_GO_CREATE, (uint64_t)g, sid[g], 0);
	E(0, GT_EV_GO_WAITING, 4);                  /* g4 c=1 */
	E(2, GT_EV_PROC_START, 103);                /* g3's thread, for Go 1.22+ */
	E(2, GT_EV_GO_IN_SYSCALL, 3);               /* g3 c=1 */
	E0(2, GT_EV_PROC_STOP);
	E(0, GT_EV_PROC_START, 101);
	E(0, GT_EV_GO_START, 1, 1);                 /* g1 c=1 */
	E(1, GT_EV_PROC_START, 102);
	E(1, GT_EV_GO_START, 2, 1);                 /* g2 c=1 */
	E(0, GT_EV_GOMAXPROCS, 2, 0);
	/* Recording proper. */
	E(0, GT_EV_HEAP_ALLOC, 1 << 20);
	E(0, GT_EV_HEAP_GOAL, 64 << 20);
	E(0, GT_EV_GO_SYSCALL, ssys);               /* returns at once */
	E(0, GT_EV_GO_SYSCALL, ssys);
	E0(0, GT_EV_GO_SYSBLOCK);                   /* g1 blocked in a syscall */
	E0(0, GT_EV_PROC_STOP);                     /* releases its P (Go 1.22+) */
	E(1, GT_EV_GO_UNBLOCK, 4, 2, swake);        /* g4 c=2, by running g2 */
	E(1, GT_EV_GO_PREEMPT, 0);
	E(1, GT_EV_GO_START, 4, 3);                 /* g4 c=3 */
	E(1, GT_EV_USER_REGION, 0, 0, region, 0);
	err |= gt_writer_user_log(w, 1, t += 10, 0, kname, swake, "step one");
	E(1, GT_EV_USER_REGION, 0, 1, region, 0);
	E(1, GT_EV_GO_SCHED, 0);
	E(1, GT_EV_GO_START, 2, 2);                 /* g2 c=2 */
	E(1, GT_EV_GO_SLEEP, 0);
	E(1, GT_EV_GO_START, 4, 4);                 /* g4 c=4 */
	E(1, GT_EV_GO_BLOCK_SYNC, 0);
	E(0, GT_EV_GO_UNBLOCK, 2, 3, 0);            /* g2 c=3, by G0 on idle P0 */
	E(0, GT_EV_GO_SYSEXIT, 1, 2, 0);            /* g1 c=2 */
	E(0, GT_EV_PROC_START, 101);
	E(0, GT_EV_GO_START, 1, 3);                 /* g1 c=3 */
	E(0, GT_EV_GO_UNBLOCK, 4, 5, swake);        /* g4 c=5 */
	E(0, GT_EV_GO_BLOCK_SELECT, 0);
	E(1, GT_EV_GO_START, 2, 4);                 /* g2 c=4 */
	E(1, GT_EV_GO_BLOCK_NET, 0);
	E(1, GT_EV_GO_START, 4, 6);                 /* g4 c=6 */
	E(1, GT_EV_GO_BLOCK, 0);
	E(0, GT_EV_GO_SYSEXIT, 3, 2, 0);            /* g3 c=2 (after GoInSyscall) */
	E(0, GT_EV_GO_START, 3, 3);                 /* g3 c=3 */
	if (version >= GT_V1_19) {
		uint64_t now = t + 10; /* the sample's real time is its own */

		E(0, GT_EV_CPU_SAMPLE, now, 0, 3, ssys);
	}
	E(0, GT_EV_GO_CREATE, 5, sid[5], screate);  /* g5 c=0 */
	E(0, GT_EV_GO_UNBLOCK, 1, 4, swake);        /* g1 c=4 */
	E(0, GT_EV_GO_UNBLOCK, 2, 5, swake);        /* g2 c=5 */
	E(0, GT_EV_GO_UNBLOCK, 4, 7, swake);        /* g4 c=7 */
	E0(0, GT_EV_GO_END);
	E(0, GT_EV_GO_START, 5, 1);                 /* g5 c=1 */
	E0(0, GT_EV_GO_END);
	E(1, GT_EV_GO_START, 1, 5);                 /* g1 c=5 */
	E0(1, GT_EV_GO_END);
	E(0, GT_EV_GO_START, 2, 6);                 /* g2 c=6 */
	E(0, GT_EV_GO_PREEMPT, 0);
	E0(0, GT_EV_PROC_STOP);
	E0(1, GT_EV_PROC_STOP);
#undef E
#undef E0
	if (err) {
		gt_writer_free(w);
		snprintf(why, whylen, "an event was refused: %d", err);
		close(fd);
		return -1;
	}
	err = gt_writer_close(w);
	close(fd);
	if (err) {
		snprintf(why, whylen, "close: %s", strerror(-err));
		return -1;
	}
	return 0;
}

static void check_scenario(int version, int go_reads_it)
{
	char path[256], why[4096];
	struct gt_check_report rep;
	int rc;

	snprintf(path, sizeof(path), "%s/scenario_%d.trace", tmpdir, version);
	GT_REQUIRE(write_scenario(path, version, why, sizeof(why)) == 0, "%s", why);
	memset(&rep, 0, sizeof(rep));
	rc = gt_check_file(path, &rep);
	GT_CHECK(rc == 0, "our checker: rc %d: %s", rc, rep.error);
	GT_CHECK(rc != 0 || rep.version == version, "checker read version %d", rep.version);
	if (go_reads_it)
		GT_CHECK(gt_test_gocheck(path, why, sizeof(why)) == 0, "Go rejects %s: %s", path, why);
}

static void test_every_event_kind_go119(void)
{
	check_scenario(GT_V1_19, 1);
}

static void test_every_event_kind_go111(void)
{
	check_scenario(GT_V1_11, 1);
}

/* Go 1.19's reader does not know 1.21; our checker holds it to the same
 * rules (the 1.21 byte layout equals 1.19's for these events). */
static void test_every_event_kind_go121_checker(void)
{
	check_scenario(GT_V1_21, 0);
}

/* ---- the event table ---- */

/* The table names each argument and says which are stack and string ids;
 * the columns every reader used before (a trailing stack id, the count of
 * the other arguments) derive from it unchanged: these are Go 1.19's
 * runtime/trace.go layouts, type by type. */
static void test_event_table_args(void)
{
	static const struct { int has_stack, nargs; } was[GT_EV_COUNT] = {
		{0, 0}, {0, 2}, {0, 1}, {0, 2}, {1, 1}, {0, 1}, {0, 0}, {1, 1}, {0, 0}, {0, 1},
		{0, 0}, {1, 0}, {0, 2}, {1, 2}, {0, 2}, {0, 0}, {1, 0}, {1, 0}, {1, 0}, {1, 0},
		{1, 0}, {1, 2}, {1, 0}, {1, 0}, {1, 0}, {1, 0}, {1, 0}, {1, 0}, {1, 0}, {0, 3},
		{0, 0}, {0, 1}, {0, 1}, {0, 1}, {0, 1}, {0, 1}, {0, 0}, {0, 0}, {0, 1}, {1, 1},
		{0, 2}, {0, 3}, {1, 0}, {1, 0}, {0, 0}, {1, 3}, {1, 1}, {1, 3}, {1, 2}, {1, 3},
	};

	for (int t = 0; t < GT_EV_COUNT; t++) {
		const struct gt_event_desc *d = &gt_event_descs[t];
		int n = 0;

		while (n < GT_EVENT_MAX_ARGS && d->args[n])
			n++;
		GT_CHECK(d->has_stack == was[t].has_stack && d->nargs == was[t].nargs,
			 "%s: stack %d, %d args; runtime/trace.go says %d, %d", d->name,
			 d->has_stack, d->nargs, was[t].has_stack, was[t].nargs);
		GT_CHECK(n == d->nargs + d->has_stack, "%s: %d names for %d arguments", d->name, n,
			 d->nargs + d->has_stack);
		GT_CHECK(!((d->stack_args | d->string_args) >> n) && !(d->stack_args & d->string_args),
			 "%s: id positions 0x%x / 0x%x outside its %d arguments or shared", d->name,
			 d->stack_args, d->string_args, n);
		for (int i = 0; i < n; i++)
			GT_CHECK(!strstr(d->args[i], "stack") == !(d->stack_args >> i & 1),
				 "%s: argument %d '%s' named against its stack-id bit", d->name, i,
				 d->args[i]);
	}
	GT_CHECK(gt_event_arg(GT_EV_GO_CREATE, "new_stack") == 1 &&
		 gt_event_arg(GT_EV_USER_REGION, "name") == 2 &&
		 gt_event_arg(GT_EV_GO_SYSEXIT, "ts") == 2 && gt_event_arg(GT_EV_GO_END, "g") == -1,
		 "gt_event_arg finds the wrong positions");
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		printf("FAIL setup: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	GT_RUN(test_varint_edges);
	GT_RUN(test_header_per_version);
	GT_RUN(test_arg_count_encoding);
	GT_RUN(test_batches_across_buffers);
	GT_RUN(test_time_clamped_forward);
	GT_RUN(test_string_interning);
	GT_RUN(test_stack_interning_and_caps);
	GT_RUN(test_stack_reserve_define);
	GT_RUN(test_stack_define_rooted);
	GT_RUN(test_cpu_sample_no_delta);
	GT_RUN(test_dev_full);
	GT_RUN(test_stack_reserve_poisoned);
	GT_RUN(test_stats_count_open_batches);
	GT_RUN(test_epipe);
	GT_RUN(test_poisoned_close_has_no_footer);
	GT_RUN(test_reject_bad_events);
	GT_RUN(test_empty_trace_footer);
	GT_RUN(test_every_event_kind_go119);
	GT_RUN(test_every_event_kind_go111);
	GT_RUN(test_every_event_kind_go121_checker);
	GT_RUN(test_event_table_args);
	if (!getenv("GT_KEEP_TMP")) {
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			printf("note: could not remove %s\n", tmpdir);
	}
	return gt_test_done();
}
