/* Encoding and validation of gotraced control messages (see protocol.h). */
#include "protocol.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- little-endian writer with a bound ------------------------------------ */

struct wbuf {
	unsigned char *p;
	size_t cap, len;
	int overflow;
};

static void put_bytes(struct wbuf *w, const void *src, size_t n)
{
	if (w->overflow || n > w->cap - w->len) {
		w->overflow = 1;
		return;
	}
	memcpy(w->p + w->len, src, n);
	w->len += n;
}

static void put_u(struct wbuf *w, uint64_t v, int bytes)
{
	unsigned char b[8];

	for (int i = 0; i < bytes; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	put_bytes(w, b, (size_t)bytes);
}

static void put_u16(struct wbuf *w, uint16_t v) { put_u(w, v, 2); }
static void put_u32(struct wbuf *w, uint32_t v) { put_u(w, v, 4); }
static void put_u64(struct wbuf *w, uint64_t v) { put_u(w, v, 8); }

/* A string of at most max bytes (NUL-terminated in memory; no NUL on the wire). */
static void put_str(struct wbuf *w, const char *s, size_t max)
{
	size_t n = strnlen(s, max + 1);

	if (n > max)
		n = max;
	put_u16(w, (uint16_t)n);
	put_bytes(w, s, n);
}

static void begin(struct wbuf *w, void *buf, size_t cap, unsigned type)
{
	w->p = buf;
	w->cap = cap;
	w->len = 0;
	w->overflow = 0;
	put_u32(w, GT_PROTO_MAGIC);
	put_u16(w, GT_PROTO_VERSION);
	put_u16(w, (uint16_t)type);
	put_u32(w, 0); /* length, patched by finish() */
	put_u32(w, 0);
}

static int finish(struct wbuf *w)
{
	size_t payload;

	if (w->overflow)
		return -EMSGSIZE;
	payload = w->len - GT_PROTO_HDR_SIZE;
	if (payload > GT_PROTO_MAX_PAYLOAD)
		return -EMSGSIZE;
	for (int i = 0; i < 4; i++)
		w->p[8 + i] = (unsigned char)(payload >> (8 * i));
	return (int)w->len;
}

/* ---- encoders --------------------------------------------------------------- */

/* The on/off options as RECORD flag bits. */
static uint32_t switch_flags(const struct gt_msg_record *r)
{
	uint32_t f = 0;
#define SWITCH_BIT_(name, bit, what) f |= r->name ? (bit) : 0;
	GT_SESSION_SWITCHES(SWITCH_BIT_)
#undef SWITCH_BIT_
	return f;
}

/* The flight block of a RECORD (GT_REC_FLIGHT; protocol.h). */
static void put_flight(struct wbuf *w, const struct gt_flight_opts *f)
{
	put_u64(w, f->window_ns);
	put_u64(w, f->size_bytes);
	put_u64(w, f->after_ns);
	put_u64(w, f->holdoff_ns);
	put_u32(w, (uint32_t)f->holdoff_set);
	put_u32(w, f->max_dumps);
	put_u32(w, (uint32_t)f->ntriggers);
	for (int i = 0; i < f->ntriggers && i < GT_FLIGHT_MAX_TRIGGERS; i++) {
		const struct gt_flight_trigger *t = &f->triggers[i];

		put_u32(w, (uint32_t)t->kind);
		put_u64(w, (uint64_t)t->sysnr);
		put_u64(w, t->threshold_ns);
		put_str(w, t->name, sizeof(t->name) - 1);
		put_str(w, t->spec, sizeof(t->spec) - 1);
	}
}

int gt_proto_encode_record(void *buf, size_t cap, const struct gt_msg_record *r)
{
	struct wbuf w;

	if (r->npids > GT_PROTO_MAX_PIDS || strnlen(r->cgroup, GT_PROTO_MAX_PATH + 1) > GT_PROTO_MAX_PATH ||
	    r->nnames > GT_MAX_NAMES)
		return -EINVAL;
	for (uint32_t i = 0; i < r->nnames; i++)
		if (strnlen(r->names[i], GT_MAX_NAME_LEN + 1) > GT_MAX_NAME_LEN)
			return -EINVAL;
	if ((r->flags & GT_REC_FLIGHT) &&
	    (r->flight.ntriggers < 0 || r->flight.ntriggers > GT_FLIGHT_MAX_TRIGGERS))
		return -EINVAL;
	begin(&w, buf, cap, GT_MSG_RECORD);
	put_u32(&w, r->flags | switch_flags(r));
#define PUT_NUMBER_(type, name, wire, max, what) put_##wire(&w, (uint64_t)r->name);
	GT_SESSION_NUMBERS(PUT_NUMBER_)
#undef PUT_NUMBER_
	put_u32(&w, r->npids);
	for (uint32_t i = 0; i < r->npids; i++)
		put_u32(&w, (uint32_t)r->pids[i]);
	put_str(&w, r->cgroup, GT_PROTO_MAX_PATH);
	put_str(&w, r->label, GT_PROTO_MAX_LABEL);
	put_u32(&w, r->nnames);
	for (uint32_t i = 0; i < r->nnames; i++)
		put_str(&w, r->names[i], GT_MAX_NAME_LEN);
	if (r->flags & GT_REC_FLIGHT)
		put_flight(&w, &r->flight);
	return finish(&w);
}

int gt_proto_encode_status(void *buf, size_t cap)
{
	struct wbuf w;

	begin(&w, buf, cap, GT_MSG_STATUS);
	return finish(&w);
}

static int encode_id(void *buf, size_t cap, unsigned type, uint32_t id)
{
	struct wbuf w;

	begin(&w, buf, cap, type);
	put_u32(&w, id);
	return finish(&w);
}

int gt_proto_encode_stop(void *buf, size_t cap, uint32_t id)
{
	return encode_id(buf, cap, GT_MSG_STOP, id);
}

int gt_proto_encode_ok(void *buf, size_t cap, uint32_t id)
{
	return encode_id(buf, cap, GT_MSG_OK, id);
}

int gt_proto_encode_dump(void *buf, size_t cap, uint32_t id)
{
	return encode_id(buf, cap, GT_MSG_DUMP, id);
}

int gt_proto_encode_dumped(void *buf, size_t cap, const struct gt_msg_dumped *d)
{
	struct wbuf w;

	begin(&w, buf, cap, GT_MSG_DUMPED);
	put_u32(&w, d->id);
	put_u64(&w, d->bytes);
	put_str(&w, d->name, GT_PROTO_MAX_NAME);
	return finish(&w);
}

static void put_stats(struct wbuf *w, const struct gt_msg_stats *s)
{
	put_u32(w, s->id);
	put_u32(w, s->state);
	put_u32(w, s->owner_uid);
#define PUT_COUNTER_(name, what) put_u64(w, s->name);
	GT_SESSION_COUNTERS(PUT_COUNTER_)
#undef PUT_COUNTER_
}

int gt_proto_encode_progress(void *buf, size_t cap, const struct gt_msg_stats *s)
{
	struct wbuf w;

	begin(&w, buf, cap, GT_MSG_PROGRESS);
	put_stats(&w, s);
	return finish(&w);
}

int gt_proto_encode_done(void *buf, size_t cap, const struct gt_msg_done *d)
{
	struct wbuf w;

	begin(&w, buf, cap, GT_MSG_DONE);
	put_stats(&w, &d->stats);
	put_u32(&w, (uint32_t)d->error);
	put_str(&w, d->reason, GT_PROTO_MAX_TEXT);
	return finish(&w);
}

int gt_proto_encode_error(void *buf, size_t cap, int code, const char *fmt, ...)
{
	char text[GT_PROTO_MAX_TEXT + 1];
	struct wbuf w;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	begin(&w, buf, cap, GT_MSG_ERROR);
	/* -INT_MIN does not exist: negate in unsigned arithmetic. */
	put_u32(&w, code < 0 ? 0u - (uint32_t)code : (uint32_t)code);
	put_str(&w, text, GT_PROTO_MAX_TEXT);
	return finish(&w);
}

int gt_proto_encode_status_reply(void *buf, size_t cap, const struct gt_msg_status_reply *r)
{
	struct wbuf w;

	if (r->count > GT_PROTO_MAX_SESSIONS)
		return -EINVAL;
	begin(&w, buf, cap, GT_MSG_STATUS_REPLY);
	put_u32(&w, r->count);
	for (uint32_t i = 0; i < r->count; i++) {
		put_stats(&w, &r->sessions[i].stats);
		put_str(&w, r->sessions[i].targets, GT_PROTO_MAX_TARGETS);
		put_str(&w, r->sessions[i].label, GT_PROTO_MAX_LABEL);
		put_str(&w, r->sessions[i].flight, GT_PROTO_MAX_FLIGHT);
	}
	return finish(&w);
}

/* ---- decoding ----------------------------------------------------------------- */

struct rbuf {
	const unsigned char *p;
	size_t len, off;
	const char *bad; /* first field that did not fit, for the error message */
};

static uint64_t get_u(struct rbuf *r, int bytes, const char *field)
{
	uint64_t v = 0;

	if (r->bad || r->len - r->off < (size_t)bytes) {
		if (!r->bad)
			r->bad = field;
		return 0;
	}
	for (int i = 0; i < bytes; i++)
		v |= (uint64_t)r->p[r->off + (size_t)i] << (8 * i);
	r->off += (size_t)bytes;
	return v;
}

static uint32_t get_u32(struct rbuf *r, const char *f) { return (uint32_t)get_u(r, 4, f); }
static uint64_t get_u64(struct rbuf *r, const char *f) { return get_u(r, 8, f); }

/* Returns 0, or -EBADMSG if the string is cut short, too long or holds a NUL. */
static int get_str(struct rbuf *r, char *dst, size_t max, const char *field,
		   char *why, size_t whylen)
{
	size_t n = (size_t)get_u(r, 2, field);

	dst[0] = '\0';
	if (r->bad)
		return -EBADMSG;
	if (n > max) {
		snprintf(why, whylen, "%s is %zu bytes, limit %zu", field, n, max);
		return -EBADMSG;
	}
	if (r->len - r->off < n) {
		r->bad = field;
		return -EBADMSG;
	}
	if (memchr(r->p + r->off, '\0', n)) {
		snprintf(why, whylen, "%s contains a NUL byte", field);
		return -EBADMSG;
	}
	memcpy(dst, r->p + r->off, n);
	dst[n] = '\0';
	r->off += n;
	return 0;
}

static void get_stats(struct rbuf *r, struct gt_msg_stats *s)
{
	s->id = get_u32(r, "session id");
	s->state = get_u32(r, "state");
	s->owner_uid = get_u32(r, "owner");
#define GET_COUNTER_(name, what) s->name = get_u64(r, what);
	GT_SESSION_COUNTERS(GET_COUNTER_)
#undef GET_COUNTER_
}

static int decode_names(struct rbuf *r, struct gt_msg_record *rec, char *why, size_t whylen)
{
	rec->nnames = get_u32(r, "name count");
	if (r->bad)
		return -EBADMSG;
	if (rec->nnames > GT_MAX_NAMES) {
		snprintf(why, whylen, "%u names, limit %d", rec->nnames, GT_MAX_NAMES);
		return -EBADMSG;
	}
	for (uint32_t i = 0; i < rec->nnames; i++) {
		if (get_str(r, rec->names[i], GT_MAX_NAME_LEN, "name", why, whylen))
			return -EBADMSG;
		rec->name_ptrs[i] = rec->names[i];
	}
	return 0;
}

static int decode_flight(struct rbuf *r, struct gt_flight_opts *f, char *why, size_t whylen)
{
	uint32_t n;

	f->window_ns = get_u64(r, "flight window");
	f->size_bytes = get_u64(r, "flight size");
	f->after_ns = get_u64(r, "--after");
	f->holdoff_ns = get_u64(r, "--holdoff");
	n = get_u32(r, "--holdoff given");
	f->holdoff_set = (int)n;
	f->max_dumps = get_u32(r, "--max-dumps");
	if (!r->bad && n > 1) {
		snprintf(why, whylen, "--holdoff given is %u, not 0 or 1", n);
		return -EBADMSG;
	}
	n = get_u32(r, "trigger count");
	if (r->bad)
		return -EBADMSG;
	if (n > GT_FLIGHT_MAX_TRIGGERS) {
		snprintf(why, whylen, "%u triggers, limit %d", n, GT_FLIGHT_MAX_TRIGGERS);
		return -EBADMSG;
	}
	f->ntriggers = (int)n;
	for (uint32_t i = 0; i < n; i++) {
		struct gt_flight_trigger *t = &f->triggers[i];
		uint32_t kind = get_u32(r, "trigger kind");

		t->kind = kind > GT_FLIGHT_SYSCALL ? (enum gt_flight_kind)99 : (enum gt_flight_kind)kind;
		t->sysnr = (int64_t)get_u64(r, "trigger syscall");
		t->threshold_ns = get_u64(r, "trigger threshold");
		if (get_str(r, t->name, sizeof(t->name) - 1, "trigger name", why, whylen) ||
		    get_str(r, t->spec, sizeof(t->spec) - 1, "trigger spec", why, whylen))
			return -EBADMSG;
	}
	return gt_flight_opts_check(f, why, whylen) ? -EBADMSG : 0;
}

static int target_kinds(const struct gt_msg_record *rec)
{
	return (rec->npids > 0) + (rec->cgroup[0] != '\0') + (rec->nnames > 0) +
	       !!rec->all_processes;
}

static int decode_record(struct rbuf *r, struct gt_msg_record *rec, char *why, size_t whylen)
{
	struct gt_session_opts o;
	uint64_t v;

	rec->flags = get_u32(r, "flags");
	/* Read at the wire's width, then checked against the option's bound, so
	 * a value that does not fit the field is refused rather than cut. */
#define GET_NUMBER_(type, name, wire, max, what)                                             	v = get_##wire(r, what);                                                             	if (!r->bad && v > (uint64_t)(max)) {                                                		snprintf(why, whylen, "%s %llu is out of range (at most %llu)", what,        			 (unsigned long long)v, (unsigned long long)(max));                  		return -EBADMSG;                                                             	}                                                                                    	rec->name = (type)v;
	GT_SESSION_NUMBERS(GET_NUMBER_)
#undef GET_NUMBER_
	rec->npids = get_u32(r, "pid count");
	if (r->bad)
		return -EBADMSG;
	if (rec->flags & ~GT_REC_KNOWN_FLAGS) {
		snprintf(why, whylen, "unknown recording flags %#x (a newer gotracectl than this daemon?)",
			 rec->flags & ~GT_REC_KNOWN_FLAGS);
		return -EBADMSG;
	}
#define GET_SWITCH_(name, bit, what) rec->name = !!(rec->flags & (bit));
	GT_SESSION_SWITCHES(GET_SWITCH_)
#undef GET_SWITCH_
	rec->flags &= GT_REC_PROGRESS | GT_REC_FLIGHT | GT_REC_DETACH;
	if ((rec->flags & GT_REC_DETACH) && !(rec->flags & GT_REC_FLIGHT)) {
		snprintf(why, whylen, "only a flight recording may detach from its client");
		return -EBADMSG;
	}
	if (rec->npids > GT_PROTO_MAX_PIDS) {
		snprintf(why, whylen, "%u pids, limit %d", rec->npids, GT_PROTO_MAX_PIDS);
		return -EBADMSG;
	}
	for (uint32_t i = 0; i < rec->npids; i++) {
		rec->pids[i] = (int32_t)get_u32(r, "pid list");
		if (!r->bad && rec->pids[i] <= 0) {
			snprintf(why, whylen, "pid %d is not a process id", rec->pids[i]);
			return -EBADMSG;
		}
	}
	if (get_str(r, rec->cgroup, GT_PROTO_MAX_PATH, "cgroup path", why, whylen) ||
	    get_str(r, rec->label, GT_PROTO_MAX_LABEL, "label", why, whylen) ||
	    decode_names(r, rec, why, whylen))
		return -EBADMSG;
	memset(&rec->flight, 0, sizeof(rec->flight));
	if ((rec->flags & GT_REC_FLIGHT) && decode_flight(r, &rec->flight, why, whylen))
		return -EBADMSG;
	if (target_kinds(rec) != 1) {
		snprintf(why, whylen, "a recording needs one of pids, a cgroup, names or all "
			 "processes, not %s", target_kinds(rec) ? "several" : "neither of them");
		return -EBADMSG;
	}
	if (rec->cgroup[0] && rec->cgroup[0] != '/') {
		snprintf(why, whylen, "cgroup path '%s' is not absolute", rec->cgroup);
		return -EBADMSG;
	}
	gt_proto_opts_from_record(&o, rec);
	return gt_session_opts_check(&o, why, whylen) ? -EBADMSG : 0;
}

static int decode_status_reply(struct rbuf *r, struct gt_msg_status_reply *s,
			       char *why, size_t whylen)
{
	s->count = get_u32(r, "session count");
	if (r->bad)
		return -EBADMSG;
	if (s->count > GT_PROTO_MAX_SESSIONS) {
		snprintf(why, whylen, "%u sessions, limit %d", s->count, GT_PROTO_MAX_SESSIONS);
		return -EBADMSG;
	}
	for (uint32_t i = 0; i < s->count; i++) {
		get_stats(r, &s->sessions[i].stats);
		if (get_str(r, s->sessions[i].targets, GT_PROTO_MAX_TARGETS, "targets", why, whylen) ||
		    get_str(r, s->sessions[i].label, GT_PROTO_MAX_LABEL, "label", why, whylen) ||
		    get_str(r, s->sessions[i].flight, GT_PROTO_MAX_FLIGHT, "flight", why, whylen))
			return -EBADMSG;
	}
	return 0;
}

static int decode_payload(struct rbuf *r, struct gt_msg *m, char *why, size_t whylen)
{
	switch (m->hdr.type) {
	case GT_MSG_RECORD:
		return decode_record(r, &m->u.record, why, whylen);
	case GT_MSG_STATUS:
		return 0;
	case GT_MSG_STOP:
	case GT_MSG_OK:
	case GT_MSG_DUMP:
		m->u.id = get_u32(r, "session id");
		return 0;
	case GT_MSG_DUMPED:
		m->u.dumped.id = get_u32(r, "session id");
		m->u.dumped.bytes = get_u64(r, "bytes");
		return get_str(r, m->u.dumped.name, GT_PROTO_MAX_NAME, "file name", why, whylen);
	case GT_MSG_PROGRESS:
		get_stats(r, &m->u.progress);
		return 0;
	case GT_MSG_DONE:
		get_stats(r, &m->u.done.stats);
		m->u.done.error = (int32_t)get_u32(r, "error");
		return get_str(r, m->u.done.reason, GT_PROTO_MAX_TEXT, "reason", why, whylen);
	case GT_MSG_ERROR:
		m->u.error.code = (int32_t)get_u32(r, "error code");
		return get_str(r, m->u.error.text, GT_PROTO_MAX_TEXT, "error text", why, whylen);
	case GT_MSG_STATUS_REPLY:
		return decode_status_reply(r, &m->u.status, why, whylen);
	}
	snprintf(why, whylen, "unknown message type %u", m->hdr.type);
	return -EPROTO;
}

const char *gt_proto_type_name(unsigned type)
{
	switch (type) {
	case GT_MSG_RECORD: return "RECORD";
	case GT_MSG_STATUS: return "STATUS";
	case GT_MSG_STOP: return "STOP";
	case GT_MSG_DUMP: return "DUMP";
	case GT_MSG_DUMPED: return "DUMPED";
	case GT_MSG_OK: return "OK";
	case GT_MSG_PROGRESS: return "PROGRESS";
	case GT_MSG_DONE: return "DONE";
	case GT_MSG_ERROR: return "ERROR";
	case GT_MSG_STATUS_REPLY: return "STATUS_REPLY";
	}
	return "?";
}

int gt_proto_decode_hdr(const void *buf, size_t len, struct gt_msg_hdr *hdr)
{
	struct rbuf r = {.p = buf, .len = len};

	if (len < GT_PROTO_HDR_SIZE)
		return -EAGAIN;
	hdr->magic = get_u32(&r, "magic");
	hdr->version = (uint16_t)get_u(&r, 2, "version");
	hdr->type = (uint16_t)get_u(&r, 2, "type");
	hdr->length = get_u32(&r, "length");
	hdr->reserved = get_u32(&r, "reserved");
	if (hdr->magic != GT_PROTO_MAGIC || hdr->version != GT_PROTO_VERSION ||
	    hdr->reserved != 0 || !strcmp(gt_proto_type_name(hdr->type), "?"))
		return -EPROTO;
	if (hdr->length > GT_PROTO_MAX_PAYLOAD)
		return -EMSGSIZE;
	return 0;
}

static int explain_hdr(const struct gt_msg_hdr *h, int rc, char *why, size_t whylen)
{
	if (rc == -EAGAIN)
		snprintf(why, whylen, "message shorter than its %d-byte header", GT_PROTO_HDR_SIZE);
	else if (rc == -EMSGSIZE)
		snprintf(why, whylen, "message of %u bytes, limit %d", h->length, GT_PROTO_MAX_PAYLOAD);
	else if (h->magic != GT_PROTO_MAGIC)
		snprintf(why, whylen, "bad magic 0x%08x: not a gotraced client", h->magic);
	else if (h->version != GT_PROTO_VERSION)
		snprintf(why, whylen, "protocol version %u, this daemon speaks %d",
			 h->version, GT_PROTO_VERSION);
	else if (h->reserved)
		snprintf(why, whylen, "reserved header field is not zero");
	else
		snprintf(why, whylen, "unknown message type %u", h->type);
	return rc;
}

int gt_proto_decode(const void *buf, size_t len, struct gt_msg *msg, char *why, size_t whylen)
{
	struct rbuf r = {.p = buf, .len = len, .off = GT_PROTO_HDR_SIZE};
	int rc;

	why[0] = '\0';
	rc = gt_proto_decode_hdr(buf, len, &msg->hdr);
	if (rc)
		return explain_hdr(&msg->hdr, rc, why, whylen);
	if (len - GT_PROTO_HDR_SIZE != msg->hdr.length) {
		snprintf(why, whylen, "message length %u but %zu payload bytes",
			 msg->hdr.length, len - GT_PROTO_HDR_SIZE);
		return -EBADMSG;
	}
	rc = decode_payload(&r, msg, why, whylen);
	if (!rc && r.bad)
		rc = -EBADMSG;
	if (rc) {
		if (!why[0])
			snprintf(why, whylen, "%s message cut short in its %s",
				 gt_proto_type_name(msg->hdr.type), r.bad ? r.bad : "payload");
		return rc;
	}
	if (r.off != len) {
		snprintf(why, whylen, "%zu unexpected bytes after the %s message",
			 len - r.off, gt_proto_type_name(msg->hdr.type));
		return -EBADMSG;
	}
	return 0;
}

/* ---- between session options and RECORD ------------------------------------ */

int gt_proto_record_from_opts(struct gt_msg_record *m, const struct gt_session_opts *o,
			      int want_progress, char *why, size_t whylen)
{
	if (o->npids < 0 || o->npids > GT_PROTO_MAX_PIDS) {
		snprintf(why, whylen, "%d processes: the daemon takes at most %d", o->npids,
			 GT_PROTO_MAX_PIDS);
		return -EINVAL;
	}
	if (o->cgroup_path && strlen(o->cgroup_path) > GT_PROTO_MAX_PATH) {
		snprintf(why, whylen, "cgroup path is too long (at most %d bytes)", GT_PROTO_MAX_PATH);
		return -ENAMETOOLONG;
	}
	if (gt_session_opts_check(o, why, whylen))
		return -EINVAL;
	if (o->flight && gt_flight_opts_check(o->flight, why, whylen))
		return -EINVAL;
	if (o->detach && !o->flight) {
		snprintf(why, whylen, "only a flight recording may detach from its client");
		return -EINVAL;
	}
	memset(m, 0, sizeof(*m));
	m->flags = want_progress ? GT_REC_PROGRESS : 0;
	if (o->flight) {
		m->flags |= GT_REC_FLIGHT | (o->detach ? GT_REC_DETACH : 0);
		m->flight = *o->flight;
	}
	GT_SESSION_OPTIONS_COPY(m, o);
	m->npids = (uint32_t)o->npids;
	for (int i = 0; i < o->npids; i++)
		m->pids[i] = o->pids[i];
	snprintf(m->cgroup, sizeof(m->cgroup), "%s", o->cgroup_path ? o->cgroup_path : "");
	m->nnames = (uint32_t)o->nnames; /* bounds checked by gt_session_opts_check */
	for (int i = 0; i < o->nnames; i++) {
		snprintf(m->names[i], sizeof(m->names[i]), "%s", o->names[i]);
		m->name_ptrs[i] = m->names[i];
	}
	return 0;
}

void gt_proto_opts_from_record(struct gt_session_opts *o, const struct gt_msg_record *r)
{
	memset(o, 0, sizeof(*o));
	o->names = r->nnames ? r->name_ptrs : NULL;
	o->nnames = (int)r->nnames;
	GT_SESSION_OPTIONS_COPY(o, r);
	o->pids = r->npids ? r->pids : NULL;
	o->npids = (int)r->npids;
	o->cgroup_path = r->cgroup[0] ? r->cgroup : NULL;
	o->out_fd = -1;
	o->flight = (r->flags & GT_REC_FLIGHT) ? &r->flight : NULL;
	o->detach = !!(r->flags & GT_REC_DETACH);
}
