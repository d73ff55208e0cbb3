/* Wire-level decoding of a Go execution trace (legacy format, 1.5 to 1.21).
 *
 * Mirrors readTrace of Go 1.19's internal/trace (plus the 1.21 header): the
 * 16-byte header, then records `type | n<<6` followed by varints, long
 * records with a byte length, String records with their bytes, and the
 * value string that trails a UserLog.  It knows nothing of argument
 * meaning: gt_check does that.  It reads the buffer in place and never
 * allocates.
 *
 *   struct gt_reader r; struct gt_raw_event *ev = malloc(sizeof(*ev));
 *   if (gt_reader_open(&r, data, len) < 0) die(r.error);
 *   while ((rc = gt_reader_next(&r, ev)) == 1) use(ev);
 *   if (rc < 0) die(r.error);
 */
#ifndef GT_READER_H
#define GT_READER_H

#include <stddef.h>
#include <stdint.h>

/* The longest legal record is a Stack of 1000 frames: 2 + 4 * 1000 values.
 * Longer records are still measured (nargs) but only this many are kept. */
#define GT_READER_MAX_ARGS 4096

struct gt_reader {
	const uint8_t *data;
	size_t len;
	size_t pos;
	int version;      /* 1019 for "go 1.19 trace" */
	char error[256];  /* set when open or next fails */
	uint64_t error_offset;
};

struct gt_raw_event {
	uint8_t type;
	uint64_t off;          /* offset of the type byte */
	uint64_t end;          /* offset just past the record */
	size_t nargs;          /* values in the record (may exceed the array) */
	uint64_t args[GT_READER_MAX_ARGS];
	const uint8_t *str;    /* String bytes (args = id, len) or UserLog value */
	size_t str_len;
};

/* Parses the header.  0, or -EINVAL with r->error ("not a trace file",
 * "unsupported trace file version 1.N"). */
int gt_reader_open(struct gt_reader *r, const uint8_t *data, size_t len);

/* Decodes the next record: 1 when ev holds one, 0 at the end of the input,
 * -EINVAL with r->error (offset, record type, what was wrong). */
int gt_reader_next(struct gt_reader *r, struct gt_raw_event *ev);

/* Parses a 16-byte header as Go does: version as 1019, or -EINVAL. */
int gt_parse_header(const uint8_t *buf, size_t len);

#endif
