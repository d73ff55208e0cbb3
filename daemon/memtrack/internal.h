/* Private state of memtrack (daemon/memtrack*.c only). */
#ifndef GT_MEMTRACK_INTERNAL_H
#define GT_MEMTRACK_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

#include "alloc_syms.h"
#include "cpu_sample.h"
#include "interpose.h"
#include "memtrack.h"

struct memory_bpf;
struct bpf_link;

/* per library: an entry probe per function, a return probe per function
 * but free (perf-event links; uprobe_multi needs 8 per library) */
#define GT_MT_MAX_LINKS (GT_ALLOC_MAX_LIBS * (2 * GT_AF_COUNT - 1))
/* Processes of one session that get allocator uprobes: each costs up to
 * GT_MT_MAX_LINKS links (descriptors) and their teardown is slow (an RCU
 * grace period or two per link, 100-700 ms each on a 6.18 VM), so a
 * request cannot make the daemon attach thousands. */
#define GT_MT_MAX_PROBED_PROCS 64

/* One attachment: a libbpf perf-event link (one function), or the
 * descriptor of a uprobe_multi link (one program on several functions of
 * one binary, uprobe_multi.h). */
struct gt_mt_link {
	struct bpf_link *bl;         /* NULL for a uprobe_multi link */
	int fd;                      /* the uprobe_multi link */
	unsigned char is_ret;
};

struct gt_mt_proc {
	pid_t pid;
	enum gt_heap_mode mode;      /* GT_HEAP_MALLOC, _RSS, _INTERPOSE or _OFF */
	int ever_malloc;             /* was in GT_HEAP_MALLOC: may have `live` entries */
	int nlinks;                  /* links[0..nlinks) are attached */
	int nuprobes, nuretprobes;   /* functions probed (not links) */
	struct gt_mt_link links[GT_MT_MAX_LINKS];
	int nlibs;                   /* binaries probed (exec compares them) */
	char libs[GT_ALLOC_MAX_LIBS][256];
};

struct gt_mt_session {
	int active;
	enum gt_heap_mode heap;      /* as asked */
	unsigned cpu_hz, alloc_every;
	int by_cgroup;
	struct gt_mt_proc *procs;
	int nprocs;
	int nprobed;                 /* procs in GT_HEAP_MALLOC mode */
	struct gt_mt_interpose *ip;  /* --heap interpose: the command's record,
				      * until gt_memtrack_take_record */
};

struct gt_memtrack {
	struct memory_bpf *skel;
	int multi;                   /* allocator programs loaded for uprobe_multi */
	int no_probes, no_cpu;       /* the allocator probes, the CPU sampler not loaded */
	int live_used;               /* a process was probed since `live` was last emptied */
	int ncpus;
	struct gt_mt_session s[GT_MAX_SESSIONS];
	struct bpf_link *rss_link;   /* rss_stat, attached while rss_mask != 0 */
	struct bpf_link *exec_link;  /* sched_process_exec (accounting reset), while
				      * some session is active */
	struct gt_cpu_sampler cpu;   /* open while cpu_mask != 0 */
};

/* attach.c: one process's uprobes */
int gt_mt_attach_process(struct gt_memtrack *m, struct gt_mt_proc *p,
			 const struct gt_alloc_target *t, char *err, size_t errlen);
/* Drops a process's accounting (procs entry, live allocations). */
void gt_mt_forget_process(struct gt_memtrack *m, pid_t pid, int walk_live);

/* detach.c: the probes of n processes at once, on several threads (each
 * link's teardown waits for the kernel's grace periods: together they
 * overlap), entry probes before return probes; or of one process. */
void gt_mt_detach_procs(struct gt_mt_proc *procs, int n);
void gt_mt_detach_process(struct gt_mt_proc *p);

/* memtrack_limit.c: the tightest memory.max on the process's cgroup path,
 * 0 if none ("max" everywhere) or unknown. */
uint64_t gt_mt_cgroup_limit(pid_t pid);

#endif
