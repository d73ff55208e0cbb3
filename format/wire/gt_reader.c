#include "gt_reader.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gt_events.h"

/* Go's readers refuse longer strings (String records and UserLog values). */
#define GT_STRING_MAX 1000000u

static int fail(struct gt_reader *r, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct gt_reader *r, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->error, sizeof(r->error), fmt, ap);
	va_end(ap);
	r->error_offset = off;
	return -EINVAL;
}

/* Go's readVal, not gt_uvarint_get: Go reads at most 10 bytes and lets
 * the high bits of a 10th byte fall off instead of rejecting them; to give
 * Go's verdict we must do the same.  Returns 0 or -1 (truncated or more
 * than 10 bytes). */
static inline int read_val(struct gt_reader *r, uint64_t *v)
{
	const uint8_t *p = r->data + r->pos;
	size_t left = r->len - r->pos;
	uint64_t x = 0;

	for (size_t i = 0; i < 10; i++) {
		if (i >= left)
			return -1;
		x |= (uint64_t)(p[i] & 0x7f) << (i * 7);
		if (!(p[i] & 0x80)) {
			r->pos += i + 1;
			*v = x;
			return 0;
		}
	}
	return -1;
}

static int val_error(struct gt_reader *r, const char *what, uint64_t off0)
{
	if (r->pos >= r->len || r->len - r->pos < 10)
		return fail(r, off0, "%s at offset %llu: truncated varint at offset %zu (file ends)",
			    what, (unsigned long long)off0, r->pos);
	return fail(r, off0, "%s at offset %llu: bad varint at offset %zu (more than 10 bytes)",
		    what, (unsigned long long)off0, r->pos);
}

int gt_parse_header(const uint8_t *buf, size_t len)
{
	static const char tail[] = " trace\0\0\0\0";
	int ver, i = 0;

	if (len < 16)
		return -EINVAL;
	if (buf[0] != 'g' || buf[1] != 'o' || buf[2] != ' ' || buf[3] < '1' ||
	    buf[3] > '9' || buf[4] != '.' || buf[5] < '1' || buf[5] > '9')
		return -EINVAL;
	ver = buf[5] - '0';
	for (; i < 2 && buf[6 + i] >= '0' && buf[6 + i] <= '9'; i++)
		ver = ver * 10 + (buf[6 + i] - '0');
	ver += (buf[3] - '0') * 1000;
	if (memcmp(buf + 6 + i, tail, (size_t)(10 - i)) != 0)
		return -EINVAL;
	return ver;
}

int gt_reader_open(struct gt_reader *r, const uint8_t *data, size_t len)
{
	int ver;

	memset(r, 0, sizeof(*r));
	r->data = data;
	r->len = len;
	if (len < 16)
		return fail(r, 0, "header: file too short (%zu bytes, need 16)", len);
	ver = gt_parse_header(data, 16);
	if (ver < 0)
		return fail(r, 0, "header: not a trace file (no \"go 1.N trace\" header)");
	if (!gt_version_known(ver))
		return fail(r, 0, "header: unsupported trace file version %d.%d (readers accept 1.5, 1.7-1.11, 1.19, 1.21)",
			    ver / 1000, ver % 1000);
	r->version = ver;
	r->pos = 16;
	return 0;
}

/* Reads a length-prefixed byte string of at most GT_STRING_MAX bytes. */
static int read_bytes(struct gt_reader *r, const char *what, uint64_t off0,
		      uint64_t n, struct gt_raw_event *ev)
{
	if (n > GT_STRING_MAX)
		return fail(r, off0, "%s at offset %llu: string too long (%llu bytes, limit 1000000)",
			    what, (unsigned long long)off0, (unsigned long long)n);
	if (n > r->len - r->pos)
		return fail(r, off0, "%s at offset %llu: truncated string (%llu bytes, %zu left)",
			    what, (unsigned long long)off0, (unsigned long long)n, r->len - r->pos);
	ev->str = r->data + r->pos;
	ev->str_len = n;
	r->pos += n;
	return 0;
}

static int read_string_record(struct gt_reader *r, struct gt_raw_event *ev)
{
	uint64_t id, n;

	if (read_val(r, &id) < 0)
		return val_error(r, "String", ev->off);
	if (id == 0)
		return fail(r, ev->off, "String at offset %llu: invalid id 0 (0 is the empty string)",
			    (unsigned long long)ev->off);
	if (read_val(r, &n) < 0)
		return val_error(r, "String", ev->off);
	if (n == 0)
		return fail(r, ev->off, "String at offset %llu: invalid length 0",
			    (unsigned long long)ev->off);
	ev->args[0] = id;
	ev->args[1] = n;
	ev->nargs = 2;
	return read_bytes(r, "String", ev->off, n, ev);
}

static void keep_arg(struct gt_raw_event *ev, uint64_t v)
{
	if (ev->nargs < GT_READER_MAX_ARGS)
		ev->args[ev->nargs] = v;
	ev->nargs++;
}

/* The n<<6 == 3<<6 form: a byte length, then values filling it exactly. */
static int read_long_args(struct gt_reader *r, struct gt_raw_event *ev,
			  const char *name)
{
	uint64_t evlen, v;
	size_t start;

	if (read_val(r, &evlen) < 0)
		return val_error(r, name, ev->off);
	start = r->pos;
	while (evlen > r->pos - start) {
		if (read_val(r, &v) < 0)
			return val_error(r, name, ev->off);
		keep_arg(ev, v);
	}
	if (evlen != r->pos - start)
		return fail(r, ev->off, "%s at offset %llu: wrong record length: says %llu bytes, values take %zu",
			    name, (unsigned long long)ev->off, (unsigned long long)evlen,
			    r->pos - start);
	return 0;
}

int gt_reader_next(struct gt_reader *r, struct gt_raw_event *ev)
{
	unsigned typ, narg, inline_args = 4;
	const char *name;
	uint8_t b;
	uint64_t v;

	if (r->pos >= r->len)
		return 0;
	ev->off = r->pos;
	ev->nargs = 0;
	ev->str = NULL;
	ev->str_len = 0;
	b = r->data[r->pos++];
	typ = b & 0x3f;
	narg = (b >> 6) + 1u;
	if (r->version < 1007) {
		narg++;
		inline_args++;
	}
	if (typ == GT_EV_NONE || typ >= GT_EV_COUNT ||
	    gt_event_descs[typ].min_version > r->version)
		return fail(r, ev->off, "unknown event type %u at offset %llu (byte 0x%02x, version %d.%d)",
			    typ, (unsigned long long)ev->off, b, r->version / 1000,
			    r->version % 1000);
	ev->type = (uint8_t)typ;
	name = gt_event_descs[typ].name;
	if (typ == GT_EV_STRING) {
		if (read_string_record(r, ev) < 0)
			return -EINVAL;
		ev->end = r->pos;
		return 1;
	}
	if (narg < inline_args) {
		for (unsigned i = 0; i < narg; i++) {
			if (read_val(r, &v) < 0)
				return val_error(r, name, ev->off);
			keep_arg(ev, v);
		}
	} else if (read_long_args(r, ev, name) < 0) {
		return -EINVAL;
	}
	if (typ == GT_EV_USER_LOG) {
		/* The value string trails the record; length 0 means "". */
		if (read_val(r, &v) < 0)
			return val_error(r, name, ev->off);
		if (v && read_bytes(r, name, ev->off, v, ev) < 0)
			return -EINVAL;
	}
	ev->end = r->pos;
	return 1;
}
