/* Folder capture/: the BPF side of the daemon: loading, attaching, the in-
 * kernel filters, the per-CPU rings and their merge, the stack maps. It may
 * include common/, bpf/ (the event ABI and the skeletons) and nothing else
 * of daemon/.
 *
 * The capture layer: loads and attaches the CO-RE BPF programs
 * (bpf/gotraced.bpf.c), keeps the in-kernel filters (traced thread groups and
 * cgroups -> session bit masks), drains the per-CPU ring buffers and hands
 * events to the caller merged in global timestamp order.
 *
 * Events are the structs of bpf/gotraced.h; every one starts with
 * struct gt_kev_hdr whose `sessions` mask says which sessions (bits 0..31,
 * GT_MAX_SESSIONS) it belongs to.
 *
 * Return convention: 0 (or a count) on success, -errno on failure.  Functions
 * taking err/errlen write a message for the user there on failure.
 *
 * Not thread-safe: one thread drives a gt_capture.
 */
#ifndef GT_CAPTURE_H
#define GT_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gotraced.h"
#include "mmap_record.h"

struct gt_capture;

struct gt_capture_opts {
	unsigned ring_bytes_per_cpu;  /* 0 = default: 128 MiB / CPUs, within 4..16 MiB; rounded up to a power of 2 pages */
	unsigned stack_map_entries;   /* 0 = default 16384 */
	unsigned merge_lag_us;        /* 0 = default 2000: events younger than this wait for other CPUs */
	int verbose;                  /* libbpf debug output to stderr */
	int load_only;                /* 1: load, but attach only on gt_capture_attach() */
	int no_syscall_entries;       /* 1: gt_sys_enter is not loaded (its verification
				       * is a seventh of the load): no session of this
				       * capture will want every syscall entry */
	unsigned without;             /* GT_WITHOUT_* (bpf/gotraced.h): what no session
				       * of this capture will use, its code left out
				       * at load; a session that asks is refused */
	/* Called once, on the opening thread, while the programs load on
	 * others, the maps made: another object that shares them (memtrack's,
	 * gt_capture_shared_maps) can load beside instead of after.  c is not
	 * open yet: only shared_maps and ncpus may be asked of it. */
	void (*beside_load)(struct gt_capture *c, void *ctx);
	void *beside_ctx;
};

/* The ring size per CPU when none is asked: 128 MiB / CPUs, within
 * 4..16 MiB (before rounding up to a power of 2 pages). */
unsigned gt_capture_ring_default(int ncpus);

/* Loads everything and, unless o->load_only, attaches it.  Fails with a
 * clear message when not root / no CAP_BPF (-EPERM), no kernel BTF
 * (-ENOENT), or a kernel without a needed feature (-EOPNOTSUPP, named).  *out is set only on
 * success. */
int gt_capture_open(struct gt_capture **out, const struct gt_capture_opts *o,
		    char *err, size_t errlen);

/* Whether the running kernel has every BPF feature the programs need,
 * read from its BTF; on failure the message names the missing feature and
 * the Linux version that added it.  gt_capture_open() starts with it. */
int gt_capture_kernel_check(char *err, size_t errlen);
/* 1 when tracing programs may use hash maps allocated at run time (Linux
 * 6.1+); before, such maps must be preallocated. */
int gt_capture_kernel_runtime_alloc_ok(void);
void gt_capture_close(struct gt_capture *c);

/* Attaches every loaded program that attaches by itself (its tracepoint),
 * one link each.  An attached program runs on every context switch, wakeup
 * and syscall of the whole machine, traced or not: a long-lived daemon
 * attaches only while some session records.  All or nothing: on failure
 * no link is left.  Attaching an attached capture does nothing. */
int gt_capture_attach(struct gt_capture *c, char *err, size_t errlen);
/* Destroys the links (the programs and maps stay loaded). */
void gt_capture_detach(struct gt_capture *c);
/* The sessions (bit mask) that record every syscall entry; the others get
 * GoSysCall only for syscalls that block.  With none, the sys_enter
 * program is detached: it would run at every syscall of the machine.
 * Default all. */
int gt_capture_syscall_entries(struct gt_capture *c, uint32_t sessions, char *err, size_t errlen);

/* How long the capture's own steps took, in ns (`gotracectl record -v`
 * prints them; make bench's startstop step reads them). */
#define GT_CAPTURE_LOAD_GROUPS 2 /* programs verified on this many threads at once */
struct gt_capture_timing {
	uint64_t kernel_check_ns;  /* gt_capture_kernel_check: the kernel's BTF read */
	uint64_t open_ns;          /* the object opened, per-CPU offsets from BTF, rings made */
	uint64_t load_ns;          /* CO-RE relocation against the kernel's BTF, the
				    * verifier, the rings installed */
	uint64_t maps_ns;          /* ...of which the maps created (the object without programs) */
	uint64_t group_ns[GT_CAPTURE_LOAD_GROUPS]; /* ...and each group of programs
				    * loaded (CO-RE and verifier), side by side */
	uint64_t beside_ns;        /* ...and the opts' beside_load, meanwhile */
	uint64_t rings_ns;         /* ...and the rings installed, meanwhile */
	uint64_t verified_insns;   /* the instructions the verifier processed, all
				    * programs (its work; 0 before Linux 5.16) */
	uint64_t probe_ns;         /* the mmap perf events tried once (and closed) */
	uint64_t links_ns;         /* the last attach: one link per tracepoint */
	uint64_t perf_events_ns;   /* the last attach: the mmap perf events opened */
	uint64_t detach_ns;        /* the last detach: links and perf events closed */
};
void gt_capture_timing(const struct gt_capture *c, struct gt_capture_timing *t);

/* An epoll descriptor that becomes readable when some ring has data. */
int gt_capture_fd(struct gt_capture *c);
/* Number of possible CPUs (= number of rings, = P count). */
int gt_capture_ncpus(struct gt_capture *c);

/* Filters.  session_bit is 0..GT_MAX_SESSIONS-1.  on=1 adds the bit, on=0
 * removes it (the map entry goes when its mask becomes 0).  A traced process
 * that forks a new process passes its mask to the child in BPF; those
 * auto-added tgids are removed by gt_capture_forget_session(). */
int gt_capture_trace_tgid(struct gt_capture *c, uint32_t tgid, int session_bit, int on);
/* Where the goroutine of Go process tgid's threads is (NULL: not Go, or no
 * longer); BPF forgets it when the process ends (bpf/goid.bpf.h). */
int gt_capture_go_proc(struct gt_capture *c, uint32_t tgid, const struct gt_go_proc *gp);
/* cgroup_id = the inode number of a cgroup v2 directory (stat st_ino);
 * the whole subtree is traced, including processes started later. */
int gt_capture_trace_cgroup(struct gt_capture *c, uint64_t cgroup_id, int session_bit, int on);
/* Every process of the machine (record -a): the session's bit is ORed into
 * every task's mask; kernel threads only with kthreads. */
int gt_capture_trace_all(struct gt_capture *c, int session_bit, int kthreads, int on);
/* ... but not process tgid (the client that asked for the session): its
 * tasks do not get the session's bit from trace_all.  Cleared by
 * gt_capture_forget_session(). */
int gt_capture_all_except(struct gt_capture *c, uint32_t tgid, int session_bit, int on);
/* Processes that exec a program whose comm is `name` (at most 15 bytes
 * compared, as the kernel keeps comm) join the session at that exec; the
 * tgids so added are removed by gt_capture_forget_session(). */
int gt_capture_trace_name(struct gt_capture *c, const char *name, int session_bit, int on);
/* Clears session_bit from every tgid, cgroup and name entry and from the
 * all-processes masks (session end). */
int gt_capture_forget_session(struct gt_capture *c, int session_bit);
/* Whether the session's blocking switch-outs carry a kernel stack even
 * inside a syscall (cleared by gt_capture_forget_session). */
int gt_capture_kernel_stacks(struct gt_capture *c, int session_bit, int on);
/* --call-graph=dwarf: the session's user stacks are copies of `bytes` of
 * stack (a multiple of 8 up to GT_DWARF_STACK_MAX; 0 = frame-pointer
 * walks, also what gt_capture_forget_session restores).  BPF copies the
 * most any session asks for.  Needs gt_capture_set_ustack_cb. */
int gt_capture_dwarf_stacks(struct gt_capture *c, int session_bit, unsigned bytes);
/* Told every copied user stack (GT_KEV_USTACK) as the rings are read, before
 * the records that name it (stack: u->size bytes, valid during the call):
 * returns the stack id those records get instead, or -1 (no stack). */
typedef int32_t (*gt_capture_ustack_cb)(void *ctx, const struct gt_kev_ustack *u,
					const uint8_t *stack);
/* Told every exec record (GT_KEV_EXEC) as the rings are read, in each
 * ring's order with the copies: the process's later copies are another
 * image's.  The merged record leaves later, seconds later when the rings
 * are read behind (a slow machine), when the process may be gone. */
typedef void (*gt_capture_exec_cb)(void *ctx, uint32_t tgid, uint64_t ts);
void gt_capture_set_ustack_cb(struct gt_capture *c, gt_capture_ustack_cb cb,
			      gt_capture_exec_cb exec_cb, void *ctx);
/* Python frames (bpf/python.bpf.h): process tgid is CPython laid out as
 * p says (NULL: forget it; its stacks are native only).  0 or -errno. */
int gt_capture_python_proc(struct gt_capture *c, uint32_t tgid, const struct gt_py_proc *p);
/* Told every CPython thread's frames (GT_KEV_PYSTACK) as the rings are
 * read, before the records that name them, with the native stack's id
 * (a copy's already replaced): returns the stack id those records get
 * instead, or native to keep it. */
typedef int32_t (*gt_capture_pystack_cb)(void *ctx, const struct gt_kev_pystack *r, int32_t native);
void gt_capture_set_pystack_cb(struct gt_capture *c, gt_capture_pystack_cb cb, void *ctx);
/* Told every goroutine record with labels (GT_KEV_GOID, labels != 0) as
 * the rings are read, a merge lag or more before it is delivered: 1 asks
 * that nothing from its ts on be delivered until gt_capture_hold says
 * otherwise (engine/golabels.h: its map's read has time to answer). */
typedef int (*gt_capture_goid_cb)(void *ctx, const struct gt_kev_goid *e);
void gt_capture_set_goid_cb(struct gt_capture *c, gt_capture_goid_cb cb, void *ctx);
/* Poll delivers nothing stamped at or after ts (UINT64_MAX: no hold; the
 * callback above lowers it) unless a queue is full; flush ignores it. */
void gt_capture_hold(struct gt_capture *c, uint64_t ts);

/* A non-root session (uid != 0) follows a process only while uid could
 * ptrace it: same real, effective and saved uid and gid, and dumpable.
 * BPF drops a process that stops qualifying from the session at once
 * (GT_KEV_LEAVE).  Set before the session's first tgid; uid 0 = root,
 * unrestricted (also what gt_capture_forget_session restores). */
int gt_capture_session_owner(struct gt_capture *c, int session_bit, uid_t uid, gid_t gid);

/* Called once per event, in non-decreasing hdr.ts order.  `ev` points into
 * the merge buffer (valid only during the call; len is the record length,
 * at least sizeof(struct gt_kev_hdr)).  A non-zero return stops delivery
 * (that event counts as delivered) and is returned by poll/flush. */
typedef int (*gt_capture_cb)(void *ctx, const struct gt_kev_hdr *ev, size_t len);

/* Waits up to timeout_ms for data, drains the rings, delivers the events
 * old enough to be in order (older than now - merge lag, and than every
 * busy ring's newest event).  Returns the number delivered, or -errno;
 * -EINTR (signal) is a clean exit for the caller's loop. */
int gt_capture_poll(struct gt_capture *c, int timeout_ms, gt_capture_cb cb, void *ctx);
/* What a poll would deliver now, without waiting: everything older than
 * now - merge lag.  Before a flight dump freezes what was delivered: a
 * poll sleeps a 10 ms tick while records wait in the merge, and a signal
 * (SIGUSR1's dump) interrupts it before it drains, so records up to a tick
 * and the lag old would be missing from the dump's end. */
int gt_capture_deliver_due(struct gt_capture *c, gt_capture_cb cb, void *ctx);
/* Delivers everything buffered and everything in the rings now. */
int gt_capture_flush(struct gt_capture *c, gt_capture_cb cb, void *ctx);

/* The executable mappings and execs of the whole machine, from the
 * kernel's perf records (mmap_record.h), written synchronously at each
 * mmap: a process that exits before its /proc/PID/maps can be read keeps
 * its mappings.  cb gets every record read while the capture is attached,
 * from poll and flush, merged with the events in one (ts, arrival) order:
 * a mapping reaches cb before any event stamped after it (a stack taken
 * then may lie in it), an exec after every event stamped before it.  cb
 * owns h (free() it, or keep it: the capture made the one copy there is).
 * Without perf events (no permission, perf_event_paranoid, no kernel
 * support) there are none: gt_capture_mmap_unavailable says why (NULL
 * when they work). */
typedef void (*gt_capture_mmap_cb)(void *ctx, struct gt_mmap_held *h);
void gt_capture_on_mmap(struct gt_capture *c, gt_capture_mmap_cb cb, void *ctx);
const char *gt_capture_mmap_unavailable(struct gt_capture *c);

/* Frames of a stack id, innermost first (user or kernel addresses; kernel
 * ones are >= 0xffff800000000000 on x86-64).  Returns the frame count,
 * -ENOENT if the id is unknown, -EINVAL for a negative id. */
int gt_capture_stack(struct gt_capture *c, int32_t stack_id, uint64_t *ips, int max);
/* Empties the stack map (call when no session is active: ids are never
 * reused otherwise, and the map would fill up in a long-lived daemon). */
int gt_capture_clear_stacks(struct gt_capture *c);

/* Added by ha (memtrack): descriptors of the maps another BPF object shares
 * with bpf_map__reuse_fd() before its load (bpf/common.bpf.h declares
 * them for both objects).  Owned by the capture: do not close them. */
struct gt_capture_maps {
	int tgids, cgroups, rings, stacks, stacks_spill, stats;
	int ustack_ids, filter;  /* filter: the maybe_tgid section (bpf/common.bpf.h) */
	int session_drops;
	int go_procs;            /* bpf/goid.bpf.h: the CPU samples' goroutines */
	uint64_t wakeup_bytes;   /* the rings' wakeup threshold, to set before load */
	uint32_t without;        /* GT_WITHOUT_*: the same loaded_without, before load */
};
void gt_capture_shared_maps(struct gt_capture *c, struct gt_capture_maps *m);

struct gt_capture_stats {
	uint64_t events;          /* delivered to callbacks */
	uint64_t drops;           /* ring reservations that failed, all CPUs */
	uint64_t stack_errors;    /* bpf_get_stackid failures (map full, no user stack) */
	uint64_t out_of_order;    /* events that arrived older than one already delivered */
	uint64_t max_buffered;    /* peak events held in the merge buffer */
	uint64_t bad_records;     /* records of an impossible length (skipped) */
	uint64_t mmap_records;    /* perf records parsed (mmap, exec, lost) */
	uint64_t mmap_lost;       /* perf records lost: a ring or the merge full, memory */
	uint64_t mmap_bad;        /* malformed perf records (skipped) */
	uint64_t uwalk_checks;    /* user stack walks compared (GT_PARTS_UWALK_CHECK, tests) */
	uint64_t uwalk_mismatches; /* ... whose block and per-frame keys differed */
};
void gt_capture_stats(struct gt_capture *c, struct gt_capture_stats *st);
/* Failed ring reservations: total, or of one CPU with gt_capture_drops_cpu. */
uint64_t gt_capture_drops(struct gt_capture *c);
uint64_t gt_capture_drops_cpu(struct gt_capture *c, int cpu);
/* Failed reservations of records session_bit wanted, since the capture
 * was loaded (a session subtracts the count it found at its start). */
uint64_t gt_capture_session_drops(struct gt_capture *c, int session_bit);

#endif
