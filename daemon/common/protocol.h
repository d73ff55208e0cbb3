/* The gotraced control protocol: messages between gotracectl and the daemon
 * over a Unix stream socket.
 *
 * Every message is a 16-byte header followed by `length` payload bytes:
 *
 *   u32 magic  'GTRD' (GT_PROTO_MAGIC)     u16 version (GT_PROTO_VERSION)
 *   u16 type   (enum gt_msg_type)          u32 length (<= GT_PROTO_MAX_PAYLOAD)
 *   u32 reserved, must be 0
 *
 * All integers are little-endian.  Strings are u16 length + bytes (no NUL),
 * each with its own bound.  A decoder never trusts a length: every field is
 * checked against what is left, and trailing bytes are an error.
 *
 * Conversation (requests from the client, replies from the daemon):
 *   RECORD (+ the output descriptor by SCM_RIGHTS; with a cgroup, the
 *          cgroup directory the client opened as a second one: a client
 *          other than root must send it, the daemon resolves cgroup paths
 *          for root only) -> OK{id}, then PROGRESS*
 *          (if asked), then DONE{summary, reason}; or ERROR.  A client that
 *          half-closes (shutdown SHUT_WR) or disconnects stops its session;
 *          after a half-close it still receives DONE.
 *   With GT_REC_FLIGHT the RECORD is a flight recording and its first
 *          descriptor is the directory for its triggered dumps (opened
 *          O_PATH by the client); with GT_REC_DETACH too, the session
 *          outlives its connection: after OK the connection is free again
 *          and the session ends only by STOP (or its targets, -d, the
 *          daemon's end).
 *   STATUS -> STATUS_REPLY{sessions}
 *   STOP{id} -> OK{id} (the session's own client gets DONE) or ERROR.
 *   DUMP{id} (+ optionally a regular file open for writing, by
 *          SCM_RIGHTS) -> DUMPED{id, bytes, name}: a flight session's
 *          window written now, to that file, or (without one) to a new
 *          file in the session's directory, `name` in it; or ERROR.
 * A RECORD is accepted once per connection; further requests on a recording
 * connection are refused with ERROR (out of order).  A connection refused at
 * accept (a limit) gets one ERROR saying why, then is closed; so is one that
 * sends no whole request in time, or stays idle without a session. 
 *
 * Return convention: 0 or -errno (-EBADMSG malformed, -EMSGSIZE too big,
 * -EPROTO wrong magic/version/type, -EAGAIN need more bytes).
 */
#ifndef GT_PROTOCOL_H
#define GT_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "session_opts.h"

/* Where gotraced listens and gotracectl connects unless told otherwise. */
#define GT_DEFAULT_SOCKET "/run/gotraced/gotraced.sock"

#define GT_PROTO_MAGIC 0x44525447u /* "GTRD" little-endian */
#define GT_PROTO_VERSION 1
#define GT_PROTO_HDR_SIZE 16
#define GT_PROTO_MAX_PAYLOAD 65536
#define GT_PROTO_MAX_MSG (GT_PROTO_HDR_SIZE + GT_PROTO_MAX_PAYLOAD)
#define GT_PROTO_MAX_PIDS 1024
#define GT_PROTO_MAX_PATH 4096
#define GT_PROTO_MAX_LABEL 256
#define GT_PROTO_MAX_TEXT 1024     /* error messages, end reasons */
#define GT_PROTO_MAX_TARGETS 200   /* targets description in status */
#define GT_PROTO_MAX_SESSIONS 32   /* = GT_MAX_SESSIONS of bpf/gotraced.h */
#define GT_PROTO_MAX_FLIGHT 400    /* a flight session's line in status */
#define GT_PROTO_MAX_NAME 255      /* a dump's file name in its directory */

enum gt_msg_type {
	GT_MSG_RECORD = 1,
	GT_MSG_STATUS = 2,
	GT_MSG_STOP = 3,
	GT_MSG_DUMP = 4,
	GT_MSG_OK = 16,
	GT_MSG_PROGRESS = 17,
	GT_MSG_DONE = 18,
	GT_MSG_ERROR = 19,
	GT_MSG_STATUS_REPLY = 20,
	GT_MSG_DUMPED = 21,
};

struct gt_msg_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t length;
	uint32_t reserved;
};

#define GT_REC_PROGRESS 0x1u      /* flags: send PROGRESS about once a second */
#define GT_REC_FLIGHT 0x10000u    /* a flight recording: its options follow */
#define GT_REC_DETACH 0x20000u    /* (with FLIGHT) outlives its connection */
#define GT_REC_SWITCH_BIT_(name, bit, what) | (bit)
/* Every flag this side knows (progress, flight, detach, and one bit per
 * on/off option of GT_SESSION_SWITCHES): a RECORD with any other is
 * refused (a newer client asking an older daemon for something it cannot
 * do). */
#define GT_REC_KNOWN_FLAGS (GT_REC_PROGRESS | GT_REC_FLIGHT | GT_REC_DETACH \
			    GT_SESSION_SWITCHES(GT_REC_SWITCH_BIT_))

/* RECORD: exactly one of pids (npids > 0), cgroup (absolute path), names
 * (nnames > 0) or the all_processes switch.  On the wire: flags (u32), the
 * numeric options in GT_SESSION_NUMBERS' order and widths (the switches
 * travel as flag bits), the pids, cgroup, label, then u32 nnames and the
 * names (strings of at most GT_MAX_NAME_LEN bytes); then, with
 * GT_REC_FLIGHT only: u64 window, size, after, holdoff (ns, bytes), u32
 * holdoff_set, max_dumps, ntriggers, and per trigger u32 kind, u64 sysnr
 * (-1 any), u64 threshold, the name and the spec (strings). */
struct gt_msg_record {
	uint32_t flags;             /* GT_REC_PROGRESS, _FLIGHT, _DETACH
				       (switches: their fields) */
	GT_SESSION_OPTION_FIELDS
	uint32_t npids;
	int32_t pids[GT_PROTO_MAX_PIDS];
	char cgroup[GT_PROTO_MAX_PATH + 1];  /* "" = none */
	char label[GT_PROTO_MAX_LABEL + 1];
	uint32_t nnames;
	char names[GT_MAX_NAMES][GT_MAX_NAME_LEN + 1];
	/* not on the wire: names[i], set by the decoder and
	 * gt_proto_record_from_opts (so a copied record must not be used) */
	const char *name_ptrs[GT_MAX_NAMES];
	struct gt_flight_opts flight; /* with GT_REC_FLIGHT */
};

/* Statistics of one session, as in PROGRESS, DONE and STATUS_REPLY: id,
 * state, owner, then GT_SESSION_COUNTERS as u64 in the list's order. */
struct gt_msg_stats {
	uint32_t id;
	uint32_t state;             /* enum gt_session_state */
	uint32_t owner_uid;
	GT_SESSION_COUNTER_FIELDS
};

struct gt_msg_done {
	struct gt_msg_stats stats;
	int32_t error;              /* 0, or the -errno that spoiled the file */
	char reason[GT_PROTO_MAX_TEXT + 1];
};

struct gt_msg_error {
	int32_t code;               /* positive errno */
	char text[GT_PROTO_MAX_TEXT + 1];
};

struct gt_msg_session_info {
	struct gt_msg_stats stats;
	char targets[GT_PROTO_MAX_TARGETS + 1];  /* "pid 12,13" or "cgroup /x" */
	char label[GT_PROTO_MAX_LABEL + 1];
	char flight[GT_PROTO_MAX_FLIGHT + 1];    /* "" or what a flight session
						    keeps, wrote, waits for */
};

/* DUMPED: what a DUMP wrote. */
struct gt_msg_dumped {
	uint32_t id;
	uint64_t bytes;
	char name[GT_PROTO_MAX_NAME + 1];   /* "" (the client's file) or its
					       name in the session's directory */
};

struct gt_msg_status_reply {
	uint32_t count;
	struct gt_msg_session_info sessions[GT_PROTO_MAX_SESSIONS];
};

/* One decoded message (the union member is selected by hdr.type). */
struct gt_msg {
	struct gt_msg_hdr hdr;
	union {
		struct gt_msg_record record;
		uint32_t id;                 /* STOP, OK, DUMP */
		struct gt_msg_stats progress;
		struct gt_msg_done done;
		struct gt_msg_error error;
		struct gt_msg_status_reply status;
		struct gt_msg_dumped dumped;
	} u;
};

/* Encoders write a whole message (header + payload) into buf and return its
 * length, or -EMSGSIZE if cap is too small, or -EINVAL for a value out of
 * bounds (too many pids, over-long strings: strings are truncated only where
 * said: error text, reason, targets, label). */
int gt_proto_encode_record(void *buf, size_t cap, const struct gt_msg_record *r);
int gt_proto_encode_status(void *buf, size_t cap);
int gt_proto_encode_stop(void *buf, size_t cap, uint32_t id);
int gt_proto_encode_ok(void *buf, size_t cap, uint32_t id);
int gt_proto_encode_dump(void *buf, size_t cap, uint32_t id);
int gt_proto_encode_dumped(void *buf, size_t cap, const struct gt_msg_dumped *d);
int gt_proto_encode_progress(void *buf, size_t cap, const struct gt_msg_stats *s);
int gt_proto_encode_done(void *buf, size_t cap, const struct gt_msg_done *d);
int gt_proto_encode_error(void *buf, size_t cap, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int gt_proto_encode_status_reply(void *buf, size_t cap,
				 const struct gt_msg_status_reply *r);

/* The RECORD that asks for the session o describes (pids, cgroup and every
 * option, o->flight and o->detach included; want_progress sets
 * GT_REC_PROGRESS; no label: the daemon shows
 * the client's pid): 0, or -EINVAL /
 * -ENAMETOOLONG with why saying what does not fit. */
int gt_proto_record_from_opts(struct gt_msg_record *m, const struct gt_session_opts *o,
			      int want_progress, char *why, size_t whylen);
/* The session options a decoded RECORD asks for; o points into r (pids,
 * cgroup, names, flight), so r must outlive o.  out_fd and owner_uid are
 * left 0. */
void gt_proto_opts_from_record(struct gt_session_opts *o, const struct gt_msg_record *r);

/* Checks the first GT_PROTO_HDR_SIZE bytes of buf: 0 and *hdr filled, or
 * -EAGAIN (len < header), -EPROTO (magic, version, reserved, unknown type),
 * -EMSGSIZE (length over the bound). */
int gt_proto_decode_hdr(const void *buf, size_t len, struct gt_msg_hdr *hdr);

/* Decodes one complete message of exactly len bytes (header included).
 * On error writes a reason for the peer into why. */
int gt_proto_decode(const void *buf, size_t len, struct gt_msg *msg,
		    char *why, size_t whylen);

/* Name of a message type for logs ("RECORD", ..., "?"). */
const char *gt_proto_type_name(unsigned type);

#endif
