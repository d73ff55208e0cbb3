/* Structs shared by bpf/memory.bpf.c and daemon/memtrack*.c (the maps of the
 * memory object that user space reads or seeds).  Fixed-width fields only. */
#ifndef GOTRACED_BPF_MEMORY_H
#define GOTRACED_BPF_MEMORY_H

#include "gotraced.h"

/* key of the `live` map: one live allocation */
struct gt_mem_live_key {
	__u32 tgid;
	__u32 pad;
	__u64 addr;
};

/* value of the `procs` map: one process's accounting (key: tgid).  User
 * space seeds `limit` (cgroup memory.max) at attach. */
struct gt_mem_proc {
	__s64 live;           /* live heap bytes (malloc mode) */
	__u64 allocs, frees;  /* accounted calls */
	__u64 heap_emit_ts;   /* last GT_KEV_HEAP time and value */
	__s64 heap_emitted;
	__s64 rss;            /* latest resident bytes seen (rss mode) */
	__u64 rss_emit_ts;
	__s64 rss_emitted;
	__u64 limit;          /* cgroup memory limit, 0 = none */
};

/* value of the `pending` map: an allocator call in progress (key: tid) */
enum { GT_MEM_MALLOC = 1, GT_MEM_REALLOC, GT_MEM_POSIX_MEMALIGN };
struct gt_mem_pending {
	__u32 depth;   /* nesting: allocators calling allocators */
	__u32 kind;
	__u64 size;
	__u64 arg;     /* realloc: old pointer; posix_memalign: memptr */
	__u64 ts;      /* entry time of the outermost call */
};

/* A call older than this is stale (its return was never seen: a probe
 * detached in between, a longjmp): forget it rather than ignore every
 * later call of the thread as nested. */
#define GT_MEM_PENDING_STALE_NS 1000000000ull

/* per-CPU counters of the memory object (mstats, key 0) */
struct gt_mem_stats {
	__u64 map_full;      /* allocations not tracked: `live` full */
	__u64 unknown_free;  /* frees of addresses we never saw allocated */
};

#endif
