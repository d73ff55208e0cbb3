/* Parsing the kernel's perf records of executable mappings (MMAP, MMAP2),
 * exec'd programs (COMM with the exec flag) and losses (LOST), as written
 * by the dummy events of mmap_events.c: sample_id_all with sample_type
 * TID | TIME, so every record ends with {u32 pid, tid; u64 time}.
 *
 * The bytes come from a ring the kernel writes: they are outside input,
 * parsed defensively (fuzzed: tests/fuzz/fuzz_mmap_record.c).  Pure C, no
 * system calls. */
#ifndef GT_CAPTURE_MMAP_RECORD_H
#define GT_CAPTURE_MMAP_RECORD_H

#include <stddef.h>
#include <stdint.h>

enum gt_mmap_kind {
	GT_MMAP_MAP = 1,   /* an executable mapping: start..end, pgoff, path */
	GT_MMAP_EXEC,      /* pid exec'd: what it mapped before is gone */
	GT_MMAP_LOST,      /* the kernel dropped `lost` records (ring full) */
};

struct gt_mmap_rec {
	enum gt_mmap_kind kind;
	uint32_t pid, tid;         /* pid = the process (thread group) id */
	uint64_t ts;               /* CLOCK_MONOTONIC ns (attr.clockid) */
	uint64_t start, end, pgoff;
	unsigned dev_major, dev_minor;
	uint64_t inode;            /* 0: unknown (MMAP, or a build-id MMAP2) */
	const char *path;          /* into the record, not NUL-terminated */
	size_t path_len;
	uint64_t lost;
};

/* Parses one record of len bytes (its header's size).  Returns 0, -ENOENT
 * for a record of another type (to skip), -EINVAL if malformed. */
int gt_mmap_record_parse(const void *rec, size_t len, struct gt_mmap_rec *out);

/* A parsed record that owns its path (r.path points at path[]): the one
 * copy made of a record, taken out of the kernel's ring, handed down the
 * merge to whoever keeps it, and released with free(). */
struct gt_mmap_held {
	struct gt_mmap_rec r;
	char path[];
};

/* A held copy of r (NULL: out of memory); its size is gt_mmap_held_size. */
struct gt_mmap_held *gt_mmap_record_hold(const struct gt_mmap_rec *r);
size_t gt_mmap_held_size(const struct gt_mmap_held *h);

#endif
