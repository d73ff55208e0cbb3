/* Perf record parser: every length is checked against the record's. */
#include "mmap_record.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The UAPI values (linux/perf_event.h), spelled out so the parser builds
 * and fuzzes without kernel headers. */
#define REC_MMAP 1
#define REC_LOST 2
#define REC_COMM 3
#define REC_MMAP2 10
#define MISC_COMM_EXEC (1u << 13)
#define MISC_MMAP_BUILD_ID (1u << 14)

#define HDR 8       /* u32 type, u16 misc, u16 size */
#define TRAILER 16  /* sample_id: u32 pid, tid; u64 time */
#define MMAP_FIXED (HDR + 8 + 24)          /* pid tid, addr len pgoff */
#define MMAP2_FIXED (MMAP_FIXED + 24 + 8)  /* maj min ino ino_gen, prot flags */

static uint32_t u32_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The string between off and the trailer: NUL-padded by the kernel, but
 * only the record's bounds are trusted. */
static void string_at(const uint8_t *r, size_t off, size_t len, struct gt_mmap_rec *out)
{
	const char *s = (const char *)r + off;
	const char *nul = memchr(s, 0, len - TRAILER - off);

	out->path = s;
	out->path_len = nul ? (size_t)(nul - s) : len - TRAILER - off;
}

static int parse_map(const uint8_t *r, size_t len, uint32_t type, uint32_t misc,
		     struct gt_mmap_rec *out)
{
	size_t fixed = type == REC_MMAP2 ? MMAP2_FIXED : MMAP_FIXED;
	uint64_t size;

	if (len < fixed + TRAILER)
		return -EINVAL;
	out->kind = GT_MMAP_MAP;
	out->start = u64_at(r + HDR + 8);
	size = u64_at(r + HDR + 16);
	out->pgoff = u64_at(r + HDR + 24);
	if (!size || out->start + size < out->start)
		return -EINVAL;
	out->end = out->start + size;
	if (type == REC_MMAP2 && !(misc & MISC_MMAP_BUILD_ID)) {
		uint32_t maj = u32_at(r + MMAP_FIXED), min = u32_at(r + MMAP_FIXED + 4);

		if (maj > 0xfffff || min > 0xfffff)
			return -EINVAL;
		out->dev_major = maj;
		out->dev_minor = min;
		out->inode = u64_at(r + MMAP_FIXED + 8);
	}
	string_at(r, fixed, len, out);
	return 0;
}

int gt_mmap_record_parse(const void *rec, size_t len, struct gt_mmap_rec *out)
{
	const uint8_t *r = rec;
	uint32_t type, misc;
	int err;

	memset(out, 0, sizeof(*out));
	out->path = "";
	if (len < HDR + TRAILER)
		return len < HDR ? -EINVAL : -ENOENT;
	type = u32_at(r);
	misc = (uint32_t)r[4] | (uint32_t)r[5] << 8;
	if ((size_t)((uint32_t)r[6] | (uint32_t)r[7] << 8) != len)
		return -EINVAL;
	switch (type) {
	case REC_MMAP:
	case REC_MMAP2:
		err = parse_map(r, len, type, misc, out);
		break;
	case REC_COMM:
		if (!(misc & MISC_COMM_EXEC))
			return -ENOENT; /* a rename (prctl): nothing changed */
		if (len < HDR + 8 + TRAILER)
			return -EINVAL;
		out->kind = GT_MMAP_EXEC;
		string_at(r, HDR + 8, len, out);
		err = 0;
		break;
	case REC_LOST:
		if (len < HDR + 16 + TRAILER)
			return -EINVAL;
		out->kind = GT_MMAP_LOST;
		out->lost = u64_at(r + HDR + 8);
		err = 0;
		break;
	default:
		return -ENOENT;
	}
	if (err)
		return err;
	if (type != REC_LOST) {
		out->pid = u32_at(r + HDR);
		out->tid = u32_at(r + HDR + 4);
	}
	out->ts = u64_at(r + len - 8);
	if (type == REC_LOST)
		out->pid = u32_at(r + len - TRAILER);
	return 0;
}

struct gt_mmap_held *gt_mmap_record_hold(const struct gt_mmap_rec *r)
{
	struct gt_mmap_held *h = malloc(sizeof(*h) + r->path_len);

	if (!h)
		return NULL;
	h->r = *r;
	memcpy(h->path, r->path, r->path_len);
	h->r.path = h->path;
	return h;
}

size_t gt_mmap_held_size(const struct gt_mmap_held *h)
{
	return sizeof(*h) + h->r.path_len;
}
