// SPDX-License-Identifier: GPL-2.0
/* gotraced's memory and CPU-profile programs: allocator uprobes (live heap
 * bytes per process), the rss_stat tracepoint (resident bytes) and a
 * perf_event program (CPU samples).  A separate object from gotraced.bpf.c
 * so that none of it is loaded or attached unless a session asks for it.
 *
 * It writes into the SAME per-CPU ring buffers and uses the SAME filter and
 * stack maps, declared with the helpers in common.bpf.h: user space
 * (daemon/memtrack.c) points this object's copies at the capture's maps
 * with bpf_map__reuse_fd() before load.
 *
 * Heap accounting (malloc mode): every allocation's size is kept in `live`
 * keyed by (tgid, address), so a free subtracts exactly what was allocated.
 * A full map or a free of an unknown address is counted in mstats, never
 * fatal.  Coalescing policy: a GT_KEV_HEAP is emitted when
 * emit_interval_ns (10 us) has passed since the process's last one, or when
 * live bytes moved by emit_bytes (64 KiB) or more since the last emitted
 * value; user space writes the exact final value at session end.
 * GT_KEV_RSS follows the same rule with coarser steps (rss_interval_ns
 * 1 ms, rss_bytes 1 MiB): rss_stat fires on every page fault, so touching
 * 100 MiB would otherwise write ~25000 events. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "common.bpf.h" /* shared maps, filter, ring and stack helpers */
#include "memory.h"
#include "goid.bpf.h" /* the goroutine of a sampled Go thread */

char LICENSE[] SEC("license") = "GPL";

/* Configuration, written by user space through the skeleton's bss. */
volatile __u32 heap_mask = 0;       /* sessions that want malloc heap events */
volatile __u32 rss_mask = 0;        /* sessions that want RSS events */
volatile __u32 cpu_mask = 0;        /* sessions that want CPU samples */
volatile __u32 alloc_every = 0;     /* sample every Nth allocation, 0 = off */
volatile __u32 alloc_mask = 0;      /* sessions that want allocation samples */
volatile __u64 emit_interval_ns = 10000;
volatile __u64 emit_bytes = 65536;
volatile __u64 rss_interval_ns = 1000000;
volatile __u64 rss_bytes = 1048576;
volatile __u64 page_size = 4096;    /* sysconf(_SC_PAGESIZE) */

/* Not preallocated: the object is loaded for every session (RSS is the
 * default) and a preallocated 1 Mi-entry map would pin ~80 MiB for
 * nothing; preallocation saved only ~5% of the return program's time
 * (bench_malloc, 650 -> 615 ns on the test VM).  Before Linux 6.1 user
 * space preallocates it all the same (gt_capture_kernel_runtime_alloc_ok). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1 << 20);
	__type(key, struct gt_mem_live_key);
	__type(value, __u64); /* requested size */
} live SEC(".maps");

GT_MAP(procs, BPF_MAP_TYPE_HASH, 65536, __u32, struct gt_mem_proc);      /* by tgid */
GT_MAP(pending, BPF_MAP_TYPE_HASH, 65536, __u32, struct gt_mem_pending); /* by tid */
GT_PERCPU_SLOT(mstats, struct gt_mem_stats);

static __always_inline struct gt_mem_stats *mem_stats(void)
{
	return percpu_slot(&mstats);
}

#define MSTAT_INC(field)                                     \
	do {                                                 \
		struct gt_mem_stats *__s = mem_stats();      \
		if (__s)                                     \
			__s->field++;                        \
	} while (0)

static __always_inline __u32 current_mask(void)
{
	return task_mask(current_task());
}

static __always_inline struct gt_mem_proc *proc_of(__u32 tgid)
{
	struct gt_mem_proc *p = bpf_map_lookup_elem(&procs, &tgid);
	struct gt_mem_proc zero = {};

	if (p)
		return p;
	/* a process user space did not register (a child of a target) */
	bpf_map_update_elem(&procs, &tgid, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&procs, &tgid);
}

/* The coalescing rule of the header comment. */
static __always_inline int due(__u64 now, __u64 last_ts, __s64 value, __s64 last_value,
			       __u64 interval, __u64 step)
{
	__s64 moved = value - last_value;

	if (moved < 0)
		moved = -moved;
	return now - last_ts >= interval || (__u64)moved >= step;
}

/* ---- malloc family ---- */

static __always_inline void emit_heap(struct gt_mem_proc *p, __u32 mask)
{
	struct gt_kev_heap *e;
	__u64 now = bpf_ktime_get_ns();
	__s64 live_now = p->live;

	if (!due(now, p->heap_emit_ts, live_now, p->heap_emitted, emit_interval_ns, emit_bytes))
		return;
	e = reserve_event(sizeof(*e), GT_KEV_HEAP, current_task(), mask);
	if (!e)
		return;
	e->live_bytes = live_now > 0 ? live_now : 0;
	e->limit_bytes = p->limit;
	p->heap_emit_ts = now;
	p->heap_emitted = live_now;
	submit(e);
}

static __always_inline void alloc_sample(void *ctx, __u64 size, __u64 addr, __u32 mask)
{
	struct gt_kev_alloc_sample *e;

	e = reserve_event(sizeof(*e), GT_KEV_ALLOC_SAMPLE, current_task(), mask);
	if (!e)
		return;
	e->size = size;
	e->addr = addr;
	e->ustack = ustack_id(ctx, ctx); /* a uretprobe: ctx = the user registers */
	e->pad = 0;
	submit(e);
}

/* An allocation of size bytes at addr returned to the program. */
static __always_inline void account_alloc(void *ctx, __u64 addr, __u64 size)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct gt_mem_live_key k = { .tgid = id >> 32, .addr = addr };
	__u32 mask = current_mask();
	struct gt_mem_proc *p;

	if (!addr || !(mask & (heap_mask | alloc_mask)))
		return;
	p = proc_of(k.tgid);
	if (!p)
		return;
	if (bpf_map_update_elem(&live, &k, &size, BPF_ANY)) {
		MSTAT_INC(map_full); /* its free will be an unknown free */
		return;
	}
	__sync_fetch_and_add(&p->live, size);
	p->allocs++;
	if (mask & heap_mask)
		emit_heap(p, mask & heap_mask);
	if (alloc_every && (mask & alloc_mask) && p->allocs % alloc_every == 0)
		alloc_sample(ctx, size, addr, mask & alloc_mask);
}

static __always_inline void account_free(__u64 addr)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct gt_mem_live_key k = { .tgid = id >> 32, .addr = addr };
	__u32 mask;
	__u64 *size, sz;
	struct gt_mem_proc *p;

	if (!addr)
		return;
	size = bpf_map_lookup_elem(&live, &k);
	if (!size) {
		MSTAT_INC(unknown_free); /* allocated before we attached, or lost */
		return;
	}
	sz = *size;
	bpf_map_delete_elem(&live, &k);
	p = bpf_map_lookup_elem(&procs, &k.tgid);
	if (!p)
		return;
	__sync_fetch_and_add(&p->live, -(__s64)sz);
	p->frees++;
	mask = current_mask() & heap_mask;
	if (mask)
		emit_heap(p, mask);
}

/* Allocator entry: remembers the request unless this thread is already
 * inside an allocator (glibc's realloc and memalign call malloc; the
 * outermost call alone is accounted). */
static __always_inline void enter(__u32 kind, __u64 size, __u64 arg)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct gt_mem_pending *pd = bpf_map_lookup_elem(&pending, &tid);
	__u64 now = bpf_ktime_get_ns();
	struct gt_mem_pending n = { .depth = 1, .kind = kind, .size = size, .arg = arg,
				    .ts = now };

	if (pd) {
		if (pd->depth && now - pd->ts < GT_MEM_PENDING_STALE_NS) {
			pd->depth++;
			return;
		}
		*pd = n;
		return;
	}
	bpf_map_update_elem(&pending, &tid, &n, BPF_ANY);
}

/* Allocator return: the outermost call's pending request, or NULL. */
static __always_inline struct gt_mem_pending *leave(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct gt_mem_pending *pd = bpf_map_lookup_elem(&pending, &tid);

	if (!pd || !pd->depth)
		return NULL; /* entered before we attached */
	if (--pd->depth)
		return NULL;
	return pd;
}

static __always_inline int inside_allocator(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct gt_mem_pending *pd = bpf_map_lookup_elem(&pending, &tid);

	return pd && pd->depth;
}

SEC("uprobe")
int BPF_KPROBE(gt_malloc, __u64 size)
{
	enter(GT_MEM_MALLOC, size, 0);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(gt_calloc, __u64 n, __u64 size)
{
	enter(GT_MEM_MALLOC, n * size, 0);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(gt_realloc, __u64 ptr, __u64 size)
{
	enter(GT_MEM_REALLOC, size, ptr);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(gt_memalign, __u64 align, __u64 size)  /* memalign, aligned_alloc */
{
	enter(GT_MEM_MALLOC, size, 0);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(gt_valloc, __u64 size)  /* valloc, pvalloc */
{
	enter(GT_MEM_MALLOC, size, 0);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(gt_posix_memalign, __u64 memptr, __u64 align, __u64 size)
{
	enter(GT_MEM_POSIX_MEMALIGN, size, memptr);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(gt_alloc_ret, __u64 ret)
{
	struct gt_mem_pending *pd = leave();
	__u64 addr = ret, size, old;
	__u32 kind;

	if (!pd)
		return 0;
	kind = pd->kind;
	size = pd->size;
	old = pd->arg;
	if (kind == GT_MEM_POSIX_MEMALIGN) {
		if ((int)ret != 0 || !old)
			return 0;
		if (bpf_probe_read_user(&addr, sizeof(addr), (void *)old))
			return 0;
	} else if (kind == GT_MEM_REALLOC) {
		/* realloc(p, 0) frees and realloc fails leaving p alone */
		if (old && (addr || !size))
			account_free(old);
	}
	account_alloc(ctx, addr, size);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(gt_free, __u64 ptr)
{
	if (inside_allocator())
		return 0; /* realloc's own free: realloc accounts for it */
	account_free(ptr);
	return 0;
}

/* exec replaced the process's image: its heap is gone.  Reset the
 * accounting right here (user space re-decides the probes later, when it
 * sees the exec event; the limit stays). */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(gt_mem_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid, tid = p->pid;
	struct gt_mem_proc *pr = bpf_map_lookup_elem(&procs, &tgid);

	if (!pr)
		return 0;
	pr->live = 0;
	pr->allocs = pr->frees = 0;
	pr->heap_emitted = 0;
	bpf_map_delete_elem(&pending, &tid);
	return 0;
}

/* ---- resident memory ---- */

/* mm->rss_stat became an array of percpu_counter in Linux 6.2 (commit
 * f1a7941243c1, "mm: convert mm's rss stats into percpu_counter"); before,
 * it was struct mm_rss_stat { atomic_long_t count[NR_MM_COUNTERS]; }. */
struct mm_rss_stat___pre62 {
	atomic_long_t count[4];
};
struct mm_struct___pre62 {
	struct mm_rss_stat___pre62 rss_stat;
};

static __always_inline __s64 rss_pages(struct mm_struct *mm, int member)
{
	if (bpf_core_type_exists(struct mm_rss_stat___pre62))
		return BPF_CORE_READ((struct mm_struct___pre62 *)mm, rss_stat.count[member].counter);
	/* the shared count; per-CPU deltas of at most a batch are not in it */
	return BPF_CORE_READ(mm, rss_stat[member].count);
}

SEC("tp_btf/rss_stat")
int BPF_PROG(gt_rss_stat, struct mm_struct *mm, int member)
{
	struct task_struct *cur = current_task();
	__u32 mask, tgid;
	__s64 rss;
	__u64 now;
	struct gt_mem_proc *p;
	struct gt_kev_rss *e;

	if (!rss_mask || GT_TASK_FIELD(cur, mm) != mm)
		return 0; /* another process's mm (reclaim, exit of another) */
	mask = task_mask(cur) & rss_mask;
	if (!mask)
		return 0;
	rss = rss_pages(mm, 0) + rss_pages(mm, 1) + rss_pages(mm, 3);
	rss = (rss > 0 ? rss : 0) * page_size;
	tgid = gt_task_tgid(cur);
	p = proc_of(tgid);
	if (!p)
		return 0;
	p->rss = rss;
	now = bpf_ktime_get_ns();
	/* a reservation that fails leaves the last emitted value: retried next time */
	if (!due(now, p->rss_emit_ts, rss, p->rss_emitted, rss_interval_ns, rss_bytes) ||
	    !(e = reserve_event_at(sizeof(*e), now, GT_KEV_RSS, cur, mask)))
		return 0;
	e->rss_bytes = rss;
	submit(e);
	p->rss_emit_ts = now;
	p->rss_emitted = rss;
	return 0;
}

/* ---- CPU samples ---- */

SEC("perf_event")
int gt_cpu_sample(struct bpf_perf_event_data *ctx)
{
	__u32 mask = cpu_mask ? current_mask() & cpu_mask : 0;
	struct gt_kev_cpu_sample *e;

	if (!mask)
		return 0;
	/* its own record, just before the sample's */
	gt_go_note(bpf_ktime_get_ns(), current_task(), gt_current_user_regs(), mask, GT_GOID_SAMPLE);
	e = reserve_event(sizeof(*e), GT_KEV_CPU_SAMPLE, current_task(), mask);
	if (!e)
		return 0;
	e->ustack = ustack_id(ctx, gt_current_user_regs());
	e->kstack = stack_id(ctx, 0);
	submit(e);
	return 0;
}
