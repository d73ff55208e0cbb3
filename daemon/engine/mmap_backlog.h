/* The recent executable mappings of processes the engine does not follow
 * yet.  A process maps its program, its loader and its libraries before
 * the engine hears of it (its exec or fork event is still in a BPF ring
 * when the perf records are drained), so the records of unknown processes
 * wait here, and are applied when the process becomes followed.  A record
 * is the capture's held copy (capture/mmap_record.h), kept as it came.
 *
 * Bounded in records and bytes, the oldest dropped first: the daemon sees
 * the mmap traffic of the whole machine (builds, shells) and runs forever. */
#ifndef GT_ENGINE_MMAP_BACKLOG_H
#define GT_ENGINE_MMAP_BACKLOG_H

#include <stddef.h>
#include <stdint.h>

#include "capture/capture.h"
#include "util/gt_idmap.h"

#define GT_MMAP_BACKLOG_RECORDS 4096u       /* a power of 2 */
#define GT_MMAP_BACKLOG_BYTES (512u * 1024) /* the records and their paths */

struct gt_mmap_backlog {
	struct gt_mmap_held **ring;  /* GT_MMAP_BACKLOG_RECORDS, on first use;
				      * NULL slots: taken or dropped */
	uint32_t head, count;        /* free-running; count includes NULLs */
	size_t bytes;
	struct gt_idmap pids;        /* pid -> its records held (uint32_t) */
	uint64_t dropped;            /* records pushed out by newer ones */
};

/* Keeps a GT_MMAP_MAP record of h->r.pid, and owns h from then on (freed
 * on failure too).  0, -ENOMEM, or -EINVAL if h alone exceeds the bound. */
int gt_mmap_backlog_push(struct gt_mmap_backlog *b, struct gt_mmap_held *h);
/* pid exec'd: what it mapped before is gone. */
void gt_mmap_backlog_exec(struct gt_mmap_backlog *b, uint32_t pid);
/* Hands pid's records to fn, oldest first (r->path valid during the call
 * only), and forgets them.  Returns how many. */
int gt_mmap_backlog_take(struct gt_mmap_backlog *b, uint32_t pid,
			 void (*fn)(void *ctx, const struct gt_mmap_rec *r), void *ctx);
void gt_mmap_backlog_free(struct gt_mmap_backlog *b);

#endif
