/* Fuzzes the control-protocol decoder with arbitrary bytes: it must refuse
 * or accept without reading out of bounds, and whatever it accepts must
 * re-encode to the very same bytes (no silent reinterpretation).
 */
// fuzz-links: daemon/common/protocol.c daemon/common/session_opts.c daemon/common/flight_opts.c
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/protocol.h"

static unsigned char again[GT_PROTO_MAX_MSG];

static int reencode(const struct gt_msg *m)
{
	switch (m->hdr.type) {
	case GT_MSG_RECORD: return gt_proto_encode_record(again, sizeof(again), &m->u.record);
	case GT_MSG_STATUS: return gt_proto_encode_status(again, sizeof(again));
	case GT_MSG_STOP: return gt_proto_encode_stop(again, sizeof(again), m->u.id);
	case GT_MSG_OK: return gt_proto_encode_ok(again, sizeof(again), m->u.id);
	case GT_MSG_DUMP: return gt_proto_encode_dump(again, sizeof(again), m->u.id);
	case GT_MSG_DUMPED: return gt_proto_encode_dumped(again, sizeof(again), &m->u.dumped);
	case GT_MSG_PROGRESS: return gt_proto_encode_progress(again, sizeof(again), &m->u.progress);
	case GT_MSG_DONE: return gt_proto_encode_done(again, sizeof(again), &m->u.done);
	case GT_MSG_ERROR:
		return gt_proto_encode_error(again, sizeof(again), m->u.error.code, "%s",
					     m->u.error.text);
	case GT_MSG_STATUS_REPLY:
		return gt_proto_encode_status_reply(again, sizeof(again), &m->u.status);
	}
	return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gt_msg m;
	char why[256];

	if (gt_proto_decode(data, size, &m, why, sizeof(why)) != 0) {
		if (!why[0])
			__builtin_trap(); /* every refusal must say why */
		return 0;
	}
	int n = reencode(&m);
	/* ERROR codes are sent as positive errnos; a negative one on the wire
	 * re-encodes as its absolute value, which is the only allowed change. */
	if (m.hdr.type == GT_MSG_ERROR && m.u.error.code < 0)
		return 0;
	if (n != (int)size || memcmp(again, data, size) != 0)
		__builtin_trap();
	return 0;
}
