/* What memtrack lets tests see of its state; no layer above uses it. */
#ifndef GT_MEMTRACK_TESTING_H
#define GT_MEMTRACK_TESTING_H

#include <sys/types.h>

#include "memtrack.h"

/* Bookkeeping of attached probes: uprobes and uretprobes now attached to
 * pid (all sessions), or in total when pid is 0. */
void gt_memtrack_probe_count(const struct gt_memtrack *m, pid_t pid, int *uprobes,
			     int *uretprobes);

/* 1 if the allocator probes are uprobe_multi links (one per program and
 * binary), 0 if perf-event links (one per function). */
int gt_memtrack_uses_multi(const struct gt_memtrack *m);

#endif
