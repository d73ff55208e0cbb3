/* The control protocol: every message round-trips, every malformed input is
 * refused with a reason, and nothing reads past what it was given. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gt_test.h"
#include "common/protocol.h"

static unsigned char buf[GT_PROTO_MAX_MSG + 64];
static struct gt_msg msg;
static char why[256];

static struct gt_msg_record sample_record(void)
{
	struct gt_msg_record r;

	memset(&r, 0, sizeof(r));
	r.flags = GT_REC_PROGRESS;
	r.duration_ns = 2000000000ull;
	r.heap = 2;
	r.cpu_profile_hz = 99;
	r.alloc_stack_every = 7;
	r.npids = 3;
	r.pids[0] = 1;
	r.pids[1] = 4242;
	r.pids[2] = 0x7fffffff;
	strcpy(r.label, "my label");
	return r;
}

/* Decodes a copy of exactly len bytes on the heap so ASan sees any overread. */
static int decode_exact(const void *src, size_t len)
{
	unsigned char *copy = malloc(len ? len : 1);
	int rc;

	memcpy(copy, src, len);
	rc = gt_proto_decode(copy, len, &msg, why, sizeof(why));
	free(copy);
	return rc;
}

static void test_record_round_trip(void)
{
	struct gt_msg_record r = sample_record();
	int n = gt_proto_encode_record(buf, sizeof(buf), &r);

	GT_REQUIRE(n > GT_PROTO_HDR_SIZE, "encode returned %d", n);
	GT_REQUIRE(decode_exact(buf, (size_t)n) == 0, "decode: %s", why);
	GT_CHECK(msg.hdr.type == GT_MSG_RECORD, "type %u", msg.hdr.type);
	GT_CHECK(msg.u.record.flags == GT_REC_PROGRESS, "flags");
	GT_CHECK(msg.u.record.duration_ns == 2000000000ull, "duration");
	GT_CHECK(msg.u.record.heap == 2 && msg.u.record.cpu_profile_hz == 99 &&
		 msg.u.record.alloc_stack_every == 7, "options");
	GT_CHECK(msg.u.record.npids == 3 && msg.u.record.pids[1] == 4242 &&
		 msg.u.record.pids[2] == 0x7fffffff, "pids");
	GT_CHECK(!strcmp(msg.u.record.label, "my label"), "label '%s'", msg.u.record.label);
	GT_CHECK(msg.u.record.cgroup[0] == '\0', "cgroup '%s'", msg.u.record.cgroup);
}

static void test_record_cgroup_round_trip(void)
{
	struct gt_msg_record r;
	int n;

	memset(&r, 0, sizeof(r));
	memset(r.cgroup, 'a', GT_PROTO_MAX_PATH);
	r.cgroup[0] = '/';
	r.cgroup[GT_PROTO_MAX_PATH] = '\0';
	n = gt_proto_encode_record(buf, sizeof(buf), &r);
	GT_REQUIRE(n > 0, "encode returned %d", n);
	GT_REQUIRE(decode_exact(buf, (size_t)n) == 0, "decode: %s", why);
	GT_CHECK(strlen(msg.u.record.cgroup) == GT_PROTO_MAX_PATH, "path length %zu",
		 strlen(msg.u.record.cgroup));
}

static void test_small_messages_round_trip(void)
{
	int n;

	n = gt_proto_encode_status(buf, sizeof(buf));
	GT_REQUIRE(n == GT_PROTO_HDR_SIZE, "status is %d bytes", n);
	GT_CHECK(decode_exact(buf, (size_t)n) == 0 && msg.hdr.type == GT_MSG_STATUS, "%s", why);
	n = gt_proto_encode_stop(buf, sizeof(buf), 17);
	GT_CHECK(decode_exact(buf, (size_t)n) == 0 && msg.hdr.type == GT_MSG_STOP &&
		 msg.u.id == 17, "stop: %s", why);
	n = gt_proto_encode_ok(buf, sizeof(buf), 0xfffffffeu);
	GT_CHECK(decode_exact(buf, (size_t)n) == 0 && msg.hdr.type == GT_MSG_OK &&
		 msg.u.id == 0xfffffffeu, "ok: %s", why);
	n = gt_proto_encode_error(buf, sizeof(buf), -EPERM, "pid %d is not yours", 12);
	GT_CHECK(decode_exact(buf, (size_t)n) == 0 && msg.hdr.type == GT_MSG_ERROR &&
		 msg.u.error.code == EPERM && !strcmp(msg.u.error.text, "pid 12 is not yours"),
		 "error: %s / '%s'", why, msg.u.error.text);
}

static struct gt_msg_stats sample_stats(uint32_t id)
{
	struct gt_msg_stats s = {
		.id = id, .state = 1, .owner_uid = 1000, .elapsed_ns = 1ull << 40,
		.kernel_events = 11, .trace_events = 22, .bytes = 33, .drops = 44,
		.threads = 55, .repairs = 66,
	};
	return s;
}

static int stats_equal(const struct gt_msg_stats *a, const struct gt_msg_stats *b)
{
	return a->id == b->id && a->state == b->state && a->owner_uid == b->owner_uid &&
	       a->elapsed_ns == b->elapsed_ns && a->kernel_events == b->kernel_events &&
	       a->trace_events == b->trace_events && a->bytes == b->bytes &&
	       a->drops == b->drops && a->threads == b->threads && a->repairs == b->repairs;
}

static void test_progress_done_round_trip(void)
{
	struct gt_msg_stats s = sample_stats(5);
	struct gt_msg_done d = {.stats = sample_stats(6), .error = -EIO};
	int n;

	n = gt_proto_encode_progress(buf, sizeof(buf), &s);
	GT_REQUIRE(decode_exact(buf, (size_t)n) == 0, "progress: %s", why);
	GT_CHECK(stats_equal(&msg.u.progress, &s), "progress stats differ");
	strcpy(d.reason, "targets exited");
	n = gt_proto_encode_done(buf, sizeof(buf), &d);
	GT_REQUIRE(decode_exact(buf, (size_t)n) == 0, "done: %s", why);
	GT_CHECK(stats_equal(&msg.u.done.stats, &d.stats), "done stats differ");
	GT_CHECK(msg.u.done.error == -EIO, "error %d", msg.u.done.error);
	GT_CHECK(!strcmp(msg.u.done.reason, "targets exited"), "reason '%s'", msg.u.done.reason);
}

static void test_status_reply_full(void)
{
	static struct gt_msg_status_reply r;
	int n;

	memset(&r, 0, sizeof(r));
	r.count = GT_PROTO_MAX_SESSIONS;
	for (int i = 0; i < GT_PROTO_MAX_SESSIONS; i++) {
		r.sessions[i].stats = sample_stats((uint32_t)i);
		memset(r.sessions[i].targets, 't', GT_PROTO_MAX_TARGETS);
		memset(r.sessions[i].label, 'l', GT_PROTO_MAX_LABEL);
		memset(r.sessions[i].flight, 'f', GT_PROTO_MAX_FLIGHT);
	}
	n = gt_proto_encode_status_reply(buf, sizeof(buf), &r);
	GT_REQUIRE(n > 0 && n <= GT_PROTO_MAX_MSG, "a full status reply encodes to %d", n);
	GT_REQUIRE(decode_exact(buf, (size_t)n) == 0, "decode: %s", why);
	GT_CHECK(msg.u.status.count == GT_PROTO_MAX_SESSIONS, "count %u", msg.u.status.count);
	GT_CHECK(msg.u.status.sessions[31].stats.id == 31, "last id");
	GT_CHECK(strlen(msg.u.status.sessions[31].label) == GT_PROTO_MAX_LABEL, "label");
	GT_CHECK(strlen(msg.u.status.sessions[31].flight) == GT_PROTO_MAX_FLIGHT, "flight line");
	r.count = GT_PROTO_MAX_SESSIONS + 1;
	GT_CHECK(gt_proto_encode_status_reply(buf, sizeof(buf), &r) == -EINVAL,
		 "too many sessions accepted");
}

static void test_encode_bounds(void)
{
	struct gt_msg_record r = sample_record();

	GT_CHECK(gt_proto_encode_record(buf, 20, &r) == -EMSGSIZE, "small buffer accepted");
	GT_CHECK(gt_proto_encode_status(buf, 8) == -EMSGSIZE, "small buffer accepted");
	r.npids = GT_PROTO_MAX_PIDS + 1;
	GT_CHECK(gt_proto_encode_record(buf, sizeof(buf), &r) == -EINVAL, "too many pids");
}

/* Every prefix of a valid message is refused, never read past. */
static void test_every_truncation_refused(void)
{
	struct gt_msg_record r = sample_record();
	int n = gt_proto_encode_record(buf, sizeof(buf), &r);

	for (int len = 0; len < n; len++) {
		int rc = decode_exact(buf, (size_t)len);

		GT_CHECK(rc < 0, "prefix of %d bytes accepted", len);
		GT_CHECK(why[0] != '\0', "prefix of %d bytes refused without a reason", len);
	}
}

static void set_u32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void test_bad_headers(void)
{
	int n = gt_proto_encode_stop(buf, sizeof(buf), 1);
	unsigned char m[64];

	memcpy(m, buf, (size_t)n);
	m[0] ^= 1;
	GT_CHECK(decode_exact(m, (size_t)n) == -EPROTO && strstr(why, "magic"), "magic: %s", why);
	memcpy(m, buf, (size_t)n);
	m[4] = 2;
	GT_CHECK(decode_exact(m, (size_t)n) == -EPROTO && strstr(why, "version"), "version: %s", why);
	memcpy(m, buf, (size_t)n);
	m[6] = 99;
	GT_CHECK(decode_exact(m, (size_t)n) == -EPROTO && strstr(why, "type"), "type: %s", why);
	memcpy(m, buf, (size_t)n);
	m[12] = 1;
	GT_CHECK(decode_exact(m, (size_t)n) == -EPROTO && strstr(why, "reserved"), "reserved: %s", why);
	memcpy(m, buf, (size_t)n);
	set_u32(m + 8, GT_PROTO_MAX_PAYLOAD + 1);
	GT_CHECK(decode_exact(m, (size_t)n) == -EMSGSIZE, "oversized: %s", why);
	GT_CHECK(gt_proto_decode_hdr(m, (size_t)n, &msg.hdr) == -EMSGSIZE, "hdr oversized");
	GT_CHECK(gt_proto_decode_hdr(m, 15, &msg.hdr) == -EAGAIN, "short header");
	memcpy(m, buf, (size_t)n);
	set_u32(m + 8, 8); /* says 8 payload bytes, has 4 */
	GT_CHECK(decode_exact(m, (size_t)n) == -EBADMSG, "length mismatch: %s", why);
}

static void test_trailing_bytes_refused(void)
{
	int n = gt_proto_encode_stop(buf, sizeof(buf), 1);

	set_u32(buf + 8, 5);
	buf[n] = 0;
	GT_CHECK(decode_exact(buf, (size_t)n + 1) == -EBADMSG && strstr(why, "unexpected"),
		 "trailing byte: %s", why);
	n = gt_proto_encode_status(buf, sizeof(buf));
	set_u32(buf + 8, 1);
	GT_CHECK(decode_exact(buf, (size_t)n + 1) == -EBADMSG, "status with payload: %s", why);
}

static int encode_raw_record(struct gt_msg_record *r)
{
	return gt_proto_encode_record(buf, sizeof(buf), r);
}

static void test_record_semantics_refused(void)
{
	struct gt_msg_record r = sample_record();
	int n;

	strcpy(r.cgroup, "/sys/fs/cgroup/unified/x");
	n = encode_raw_record(&r);
	GT_CHECK(decode_exact(buf, (size_t)n) == -EBADMSG && strstr(why, "several"), "both: %s", why);
	r.npids = 0;
	r.cgroup[0] = '\0';
	n = encode_raw_record(&r);
	GT_CHECK(decode_exact(buf, (size_t)n) == -EBADMSG && strstr(why, "neither"), "neither: %s", why);
	strcpy(r.cgroup, "relative/x");
	n = encode_raw_record(&r);
	GT_CHECK(decode_exact(buf, (size_t)n) == -EBADMSG && strstr(why, "absolute"), "relative: %s", why);
	r = sample_record();
	r.pids[1] = -5;
	n = encode_raw_record(&r);
	GT_CHECK(decode_exact(buf, (size_t)n) == -EBADMSG && strstr(why, "-5"), "negative pid: %s", why);
	r.pids[1] = 0;
	n = encode_raw_record(&r);
	GT_CHECK(decode_exact(buf, (size_t)n) == -EBADMSG, "pid 0: %s", why);
	r = sample_record();
	r.flags |= 0x80;
	n = encode_raw_record(&r);
	GT_CHECK(decode_exact(buf, (size_t)n) == -EBADMSG && strstr(why, "unknown recording flags 0x80"),
		 "unknown flag: %s", why);
}

/* The daemon holds every numeric option to the bounds the CLI applies
 * (it took a CPU profile rate of 4294967295 Hz). */
static void test_option_bounds_refused(void)
{
	struct gt_msg_record r = sample_record();
	int n;

	r.cpu_profile_hz = 4294967295u;
	n = encode_raw_record(&r);
	GT_CHECK(decode_exact(buf, (size_t)n) == -EBADMSG && strstr(why, "CPU profile rate") &&
		 strstr(why, "100000"), "cpu rate: %s", why);
	r = sample_record();
	r.cpu_profile_hz = GT_MAX_CPU_HZ;
	n = encode_raw_record(&r);
	GT_CHECK(decode_exact(buf, (size_t)n) == 0, "cpu rate at the bound: %s", why);
	r = sample_record();
	r.heap = (enum gt_heap_mode)7;
	n = encode_raw_record(&r);
	GT_CHECK(decode_exact(buf, (size_t)n) == -EBADMSG && strstr(why, "heap mode 7"), "heap: %s", why);
	r = sample_record();
	r.go_version = 1015;
	n = encode_raw_record(&r);
	GT_CHECK(decode_exact(buf, (size_t)n) == -EBADMSG && strstr(why, "version 1015"),
		 "go version: %s", why);
	r = sample_record();
	r.duration_ns = UINT64_MAX;
	n = encode_raw_record(&r);
	GT_CHECK(decode_exact(buf, (size_t)n) == -EBADMSG && strstr(why, "duration"), "duration: %s", why);
	r = sample_record();
	r.alloc_stack_every = GT_MAX_ALLOC_EVERY + 1;
	n = encode_raw_record(&r);
	GT_CHECK(decode_exact(buf, (size_t)n) == -EBADMSG && strstr(why, "allocation"), "alloc: %s", why);
}

/* The switches travel as flag bits and come back as the same options. */
static void test_switches_round_trip(void)
{
	struct gt_session_opts o, back;
	struct gt_msg_record r;
	pid_t pid = 77;
	int n;

	memset(&o, 0, sizeof(o));
	o.pids = &pid;
	o.npids = 1;
	o.kernel_stacks = 1;
	o.cpu_profile_hz = 99;
	GT_REQUIRE(gt_proto_record_from_opts(&r, &o, 0, why, sizeof(why)) == 0, "%s", why);
	n = encode_raw_record(&r);
	GT_REQUIRE(decode_exact(buf, (size_t)n) == 0, "decode: %s", why);
	GT_CHECK(msg.u.record.flags == 0, "flags after decode %#x (switches are fields)",
		 msg.u.record.flags);
	gt_proto_opts_from_record(&back, &msg.u.record);
	GT_CHECK(back.kernel_stacks == 1 && back.all_syscalls == 0 &&
		 back.cpu_profile_hz == 99 && back.npids == 1 && back.pids[0] == 77,
		 "options after the trip");
	o.cpu_profile_hz = GT_MAX_CPU_HZ + 1;
	GT_CHECK(gt_proto_record_from_opts(&r, &o, 0, why, sizeof(why)) == -EINVAL &&
		 strstr(why, "CPU profile rate"), "client side refuses too: %s", why);
}

/* Hand-built payloads that lie about their inner lengths. */
static void test_inner_lengths_refused(void)
{
	struct gt_msg_record r = sample_record();
	int n = encode_raw_record(&r);
	/* flags, then the numeric options (session_opts.h), then the pids */
#define WIDTH_(type, name, wire, max, what) + sizeof(wire##_t_)
	typedef uint32_t u32_t_;
	typedef uint64_t u64_t_;
	size_t pidcount_off = GT_PROTO_HDR_SIZE + 4 GT_SESSION_NUMBERS(WIDTH_);
#undef WIDTH_
	size_t cg_off = pidcount_off + 4 + 4 * 3;

	set_u32(buf + pidcount_off, GT_PROTO_MAX_PIDS + 1);
	GT_CHECK(decode_exact(buf, (size_t)n) == -EBADMSG && strstr(why, "limit"), "pids: %s", why);
	set_u32(buf + pidcount_off, 1000);
	GT_CHECK(decode_exact(buf, (size_t)n) == -EBADMSG, "pid count past the end: %s", why);
	n = encode_raw_record(&r);
	buf[cg_off] = 0xff; /* cgroup length 0x00ff, nothing there */
	GT_CHECK(decode_exact(buf, (size_t)n) == -EBADMSG, "string past the end: %s", why);
	buf[cg_off] = 0xff;
	buf[cg_off + 1] = 0xff; /* 65535 > limit */
	GT_CHECK(decode_exact(buf, (size_t)n) == -EBADMSG && strstr(why, "limit"), "long string: %s", why);
	/* a NUL inside the label */
	r = sample_record();
	n = encode_raw_record(&r);
	buf[n - 4 - 3] = '\0'; /* before the name count */
	GT_CHECK(decode_exact(buf, (size_t)n) == -EBADMSG && strstr(why, "NUL"), "NUL: %s", why);
}

/* record -n: the names travel; -a: the switch alone is a target. */
static void test_names_and_all_round_trip(void)
{
	static const char *names[] = {"nginx", "a-name-longer-than-a-comm"};
	struct gt_session_opts o, back;
	struct gt_msg_record r;
	int n;

	memset(&o, 0, sizeof(o));
	o.names = names;
	o.nnames = 2;
	GT_REQUIRE(gt_proto_record_from_opts(&r, &o, 0, why, sizeof(why)) == 0, "%s", why);
	n = encode_raw_record(&r);
	GT_REQUIRE(decode_exact(buf, (size_t)n) == 0, "decode names: %s", why);
	gt_proto_opts_from_record(&back, &msg.u.record);
	GT_CHECK(back.nnames == 2 && !strcmp(back.names[0], "nginx") &&
		 !strcmp(back.names[1], names[1]) && back.npids == 0, "names after the trip");
	memset(&o, 0, sizeof(o));
	o.all_processes = 1;
	o.kernel_threads = 1;
	GT_REQUIRE(gt_proto_record_from_opts(&r, &o, 0, why, sizeof(why)) == 0, "%s", why);
	n = encode_raw_record(&r);
	GT_REQUIRE(decode_exact(buf, (size_t)n) == 0, "decode -a: %s", why);
	gt_proto_opts_from_record(&back, &msg.u.record);
	GT_CHECK(back.all_processes && back.kernel_threads && !back.nnames, "-a after the trip");
	/* -a and names together: two targets */
	r.nnames = 1;
	strcpy(r.names[0], "x");
	n = encode_raw_record(&r);
	GT_CHECK(decode_exact(buf, (size_t)n) == -EBADMSG && strstr(why, "several"), "-a and -n: %s", why);
	/* a name with a '/' (a path) or too many names */
	memset(&o, 0, sizeof(o));
	names[0] = "/usr/sbin/nginx";
	o.names = names;
	o.nnames = 1;
	GT_CHECK(gt_proto_record_from_opts(&r, &o, 0, why, sizeof(why)) == -EINVAL &&
		 strstr(why, "'/'"), "path refused: %s", why);
	names[0] = "nginx";
	r.all_processes = 0;
	r.nnames = GT_MAX_NAMES + 1;
	GT_CHECK(encode_raw_record(&r) == -EINVAL, "encoder refuses too many names");
}

static void test_status_reply_lies_refused(void)
{
	static struct gt_msg_status_reply r;
	int n;

	memset(&r, 0, sizeof(r));
	r.count = 1;
	n = gt_proto_encode_status_reply(buf, sizeof(buf), &r);
	set_u32(buf + GT_PROTO_HDR_SIZE, 2);
	GT_CHECK(decode_exact(buf, (size_t)n) == -EBADMSG, "count 2 with one entry: %s", why);
	set_u32(buf + GT_PROTO_HDR_SIZE, 1000);
	GT_CHECK(decode_exact(buf, (size_t)n) == -EBADMSG && strstr(why, "limit"), "count: %s", why);
}

static struct gt_msg_record flight_record(void)
{
	struct gt_msg_record r = sample_record();
	struct gt_flight_trigger *t = &r.flight.triggers[0];

	r.flags |= GT_REC_FLIGHT | GT_REC_DETACH;
	r.flight.window_ns = 3000000000ull;
	r.flight.size_bytes = 8ull << 20;
	r.flight.after_ns = 5;
	r.flight.holdoff_set = 1;
	r.flight.max_dumps = 3;
	r.flight.ntriggers = 2;
	t->kind = GT_FLIGHT_SYSCALL;
	t->sysnr = 74;
	t->threshold_ns = 50000000;
	strcpy(t->name, "worker");
	strcpy(t->spec, "syscall:fsync>50ms@worker");
	t[1].kind = GT_FLIGHT_OFFCPU;
	t[1].sysnr = -1;
	t[1].threshold_ns = 1;
	strcpy(t[1].spec, "offcpu>1ns");
	return r;
}

/* A flight recording's options ride after the names (GT_REC_FLIGHT); a
 * detach without flight, and out-of-range options, are refused; every
 * prefix is refused too. */
static void test_flight_record(void)
{
	struct gt_msg_record r = flight_record();
	const struct gt_flight_opts *f = &msg.u.record.flight;
	int n = encode_raw_record(&r);

	GT_REQUIRE(n > 0 && decode_exact(buf, (size_t)n) == 0, "decode: %s", why);
	GT_CHECK(msg.u.record.flags == (GT_REC_PROGRESS | GT_REC_FLIGHT | GT_REC_DETACH), "flags %#x",
		 msg.u.record.flags);
	GT_CHECK(f->window_ns == 3000000000ull && f->size_bytes == (8ull << 20) && f->after_ns == 5 &&
		 f->holdoff_set && f->max_dumps == 3 && f->ntriggers == 2, "options");
	GT_CHECK(f->triggers[0].kind == GT_FLIGHT_SYSCALL && f->triggers[0].sysnr == 74 &&
		 f->triggers[0].threshold_ns == 50000000 && !strcmp(f->triggers[0].name, "worker") &&
		 !strcmp(f->triggers[0].spec, "syscall:fsync>50ms@worker"), "trigger 0");
	GT_CHECK(f->triggers[1].sysnr == -1 && f->triggers[1].kind == GT_FLIGHT_OFFCPU, "trigger 1");
	for (int len = 0; len < n; len++)
		GT_CHECK(decode_exact(buf, (size_t)len) < 0, "prefix of %d bytes accepted", len);
	r.flags &= ~GT_REC_FLIGHT;
	n = encode_raw_record(&r);
	GT_CHECK(decode_exact(buf, (size_t)n) == -EBADMSG && strstr(why, "detach"), "detach: %s", why);
	r = flight_record();
	r.flight.triggers[1].threshold_ns = 0;
	n = encode_raw_record(&r);
	GT_CHECK(decode_exact(buf, (size_t)n) == -EBADMSG && strstr(why, "threshold"), "0: %s", why);
	r = flight_record();
	r.flight.size_bytes = 5;
	n = encode_raw_record(&r);
	GT_CHECK(decode_exact(buf, (size_t)n) == -EBADMSG && strstr(why, "flight-size"), "size: %s", why);
	r = flight_record();
	r.flight.triggers[0].kind = (enum gt_flight_kind)7;
	n = encode_raw_record(&r);
	GT_CHECK(decode_exact(buf, (size_t)n) == -EBADMSG && strstr(why, "kind"), "kind: %s", why);
}

static void test_dump_round_trip(void)
{
	struct gt_msg_dumped d = {.id = 9, .bytes = 123456789012ull};
	int n = gt_proto_encode_dump(buf, sizeof(buf), 7);

	GT_REQUIRE(n > 0 && decode_exact(buf, (size_t)n) == 0, "DUMP: %s", why);
	GT_CHECK(msg.hdr.type == GT_MSG_DUMP && msg.u.id == 7, "DUMP id");
	strcpy(d.name, "flight-9-20260101-000000.trace");
	n = gt_proto_encode_dumped(buf, sizeof(buf), &d);
	GT_REQUIRE(n > 0 && decode_exact(buf, (size_t)n) == 0, "DUMPED: %s", why);
	GT_CHECK(msg.u.dumped.id == 9 && msg.u.dumped.bytes == 123456789012ull &&
		 !strcmp(msg.u.dumped.name, d.name), "DUMPED fields");
	GT_CHECK(!strcmp(gt_proto_type_name(GT_MSG_DUMPED), "DUMPED"), "name");
}

static void test_type_names(void)
{
	GT_CHECK(!strcmp(gt_proto_type_name(GT_MSG_RECORD), "RECORD"), "record");
	GT_CHECK(!strcmp(gt_proto_type_name(GT_MSG_STATUS_REPLY), "STATUS_REPLY"), "reply");
	GT_CHECK(!strcmp(gt_proto_type_name(0), "?"), "0");
}

int main(void)
{
	GT_RUN(test_record_round_trip);
	GT_RUN(test_record_cgroup_round_trip);
	GT_RUN(test_small_messages_round_trip);
	GT_RUN(test_progress_done_round_trip);
	GT_RUN(test_status_reply_full);
	GT_RUN(test_encode_bounds);
	GT_RUN(test_every_truncation_refused);
	GT_RUN(test_bad_headers);
	GT_RUN(test_trailing_bytes_refused);
	GT_RUN(test_record_semantics_refused);
	GT_RUN(test_option_bounds_refused);
	GT_RUN(test_switches_round_trip);
	GT_RUN(test_inner_lengths_refused);
	GT_RUN(test_names_and_all_round_trip);
	GT_RUN(test_status_reply_lies_refused);
	GT_RUN(test_type_names);
	GT_RUN(test_flight_record);
	GT_RUN(test_dump_round_trip);
	return gt_test_done();
}
