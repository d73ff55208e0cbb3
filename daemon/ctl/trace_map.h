/* A trace file mapped read-only and read once from start to end (report,
 * inspect): the analysis says which bytes it will not read again
 * (gt_analyze_opts.release, after each generation of a Go 1.22+ file) and
 * their pages leave the process's memory, so that reading a file costs
 * one generation's bytes, not the whole file's. */
#ifndef GT_TRACE_MAP_H
#define GT_TRACE_MAP_H

#include <stddef.h>
#include <stdint.h>

struct trace_map {
	const uint8_t *data;
	size_t len;
	size_t gone; /* bytes [0, gone) were let go */
};

/* gt_analyze_opts.release for a struct trace_map (arg): the pages before
 * end leave memory (they stay in the page cache; read again, they come
 * back: nothing is lost if the analysis was wrong). */
void trace_map_release(void *arg, size_t end);

#endif
