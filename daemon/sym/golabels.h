/* A Go goroutine's pprof labels, read from the process's memory: the map
 * g.labels leads to (bpf/goid.bpf.h found its address), Go 1.19 to 1.23's
 * runtime.hmap of a map[string]string (Go 1.24's swiss tables are not
 * read).  docs/mapping.md, "Goroutines of Go programs". */
#ifndef GT_SYM_GOLABELS_H
#define GT_SYM_GOLABELS_H

#include <stddef.h>
#include <stdint.h>

/* What one read may take of the target's memory, which its owner writes:
 * buckets (with overflow buckets and the old array of a map still
 * growing), labels, and the bytes of one key or value (longer ones are cut,
 * ending in "..."). */
#define GT_GOLABELS_BUCKETS_MAX 32
#define GT_GOLABELS_MAX         64
#define GT_GOLABELS_STR_MAX     128

/* Reads the map at address map through memfd (/proc/PID/mem, open for
 * reading) and writes its labels, sorted by key, as "{key=value, ...}"
 * into out (len > 0; NUL-terminated, cut to fit).  Its header must still
 * have hash0 and count (else it is another map now).  A blocking read of
 * the target's memory: call it where a stall is allowed (it is a function
 * of its own so that it can run off the event loop, sym/loader.h).
 * Returns the text's length, -ESRCH when the map is not that one any more,
 * -EIO on a failed read, -E2BIG when the map is larger than the bounds. */
int gt_golabels_read(int memfd, uint64_t map, uint32_t hash0, uint32_t count, char *out,
		     size_t len);

#endif
