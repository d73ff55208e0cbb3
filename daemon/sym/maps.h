/* Parsing one line of /proc/PID/maps (outside input: fuzzed). */
#ifndef GT_SYM_MAPS_H
#define GT_SYM_MAPS_H

#include <stddef.h>
#include <stdint.h>

struct gt_map_line {
	uint64_t start, end, offset;
	uint64_t inode;
	unsigned dev_major, dev_minor;
	int readable, writable, executable, shared;
	const char *path; /* into the line, not NUL-terminated; "" if none */
	size_t path_len;  /* without a trailing " (deleted)" */
	int deleted;      /* the file was unlinked since it was mapped */
};

/* Parses "start-end perms offset major:minor inode   path" (len bytes, a
 * trailing newline allowed).  Returns 0 or -EINVAL if malformed. */
int gt_map_line_parse(const char *line, size_t len, struct gt_map_line *out);

#endif
