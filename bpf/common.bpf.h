/* What gotraced.bpf.c (capture) and memory.bpf.c (heap, RSS, CPU samples)
 * share: the filter maps and state, the per-CPU rings, the stack maps, the
 * counters, and the helpers that filter a task, reserve/fill/submit a
 * record and take a stack id.  Both objects include this file, so both
 * filter and take stacks the same way.
 *
 * Each object gets its own definition of every map below (they are static
 * to the object); user space creates them with the capture object and
 * points the memory object's at the same maps with bpf_map__reuse_fd()
 * before its load (daemon/memtrack.c, gt_capture_shared_maps).  So the
 * map names, types and sizes here are a contract with user space. */
#ifndef GOTRACED_COMMON_BPF_H
#define GOTRACED_COMMON_BPF_H

#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "gotraced.h"
#include "compat.bpf.h"

#define GT_CGROUP_MAX_DEPTH 32

/* GT_WITHOUT_* (gotraced.h): what no session of this load will use, set
 * before load; a read-only constant, so the verifier drops the code that
 * tests it (nothing of it is verified, nothing left in the JIT image). */
const volatile __u32 loaded_without = 0;

static __always_inline bool loaded_with(__u32 what)
{
	return !(loaded_without & what);
}

/* Number of cgroup entries this object's sessions use; the cgroup walk is
 * skipped while 0.  Each object's own .bss, written by its user space. */
volatile __u32 n_cgroup_sessions = 0;

/* Sessions that record every process of the machine (record -a), and of
 * those the ones that want kernel threads too: ORed into every task's mask
 * (no map lookup).  Each object's own .bss, written by its user space. */
volatile __u32 all_sessions = 0;
volatile __u32 all_kthread_sessions = 0;
/* The recorder's own process (gotraced, or gotracectl in embedded mode),
 * set before load: "every process" means every other one. */
const volatile __u32 self_tgid = 0;
/* And not the client that asked (gotracectl, waiting on gotraced's socket):
 * all_except maps its tgid to the all-process sessions that leave it out,
 * looked up only while all_except_sessions (those sessions) is not 0. */
volatile __u32 all_except_sessions = 0;
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64); /* one client per session */
	__type(key, __u32);   /* tgid */
	__type(value, __u32); /* session mask */
} all_except SEC(".maps");

#define GT_PF_KTHREAD 0x00200000 /* include/linux/sched.h PF_KTHREAD */

/* A cheap negative filter in front of the tgids hash, so that bystanders
 * (every other process on the machine, at every syscall and switch) pay one
 * byte load instead of a hash lookup: maybe_tgid[tgid % GT_MAYBE_SLOTS] is
 * set before a tgid enters `tgids` (by user space or at fork) and cleared
 * only while `tgids` is empty.  A set byte just means "look in the hash".
 * In a section of its own (a map of its own) so that the memory object can
 * share the capture's copy by fd, like the maps. */
#define GT_MAYBE_SLOTS 65536
__u8 maybe_tgid[GT_MAYBE_SLOTS] SEC(".data.filter");

/* Bytes waiting in a ring that wake user space (set before load). */
const volatile __u64 wakeup_bytes = 1;

/* The shapes of the BTF map declarations, one line a map: entries of
 * types K and V, or (for the maps the kernel sizes by bytes: stack
 * traces, maps of maps) of K_BYTES and V_BYTES. */
#define GT_MAP(name, map_type, entries, K, V)  \
	struct {                               \
		__uint(type, map_type);        \
		__uint(max_entries, entries);  \
		__type(key, K);                \
		__type(value, V);              \
	} name SEC(".maps")
#define GT_MAP_BYTES(name, map_type, entries, K_BYTES, V_BYTES) \
	struct {                                                \
		__uint(type, map_type);                         \
		__uint(max_entries, entries);                   \
		__uint(key_size, K_BYTES);                      \
		__uint(value_size, V_BYTES);                    \
	} name SEC(".maps")
/* A per-CPU slot of type V: this CPU's, with percpu_slot(&name). */
#define GT_PERCPU_SLOT(name, V) GT_MAP(name, BPF_MAP_TYPE_PERCPU_ARRAY, 1, __u32, V)

static __always_inline void *percpu_slot(void *map)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(map, &zero);
}

/* tgid -> session mask */
GT_MAP(tgids, BPF_MAP_TYPE_HASH, 65536, __u32, __u32);
/* cgroup v2 id (directory inode) -> session mask */
GT_MAP(cgroups, BPF_MAP_TYPE_HASH, 1024, __u64, __u32);

/* One ring buffer per CPU; user space creates them and sets the inner map
 * template before load, and the outer size to the number of possible CPUs. */
GT_MAP_BYTES(rings, BPF_MAP_TYPE_ARRAY_OF_MAPS, 1, sizeof(__u32), sizeof(__u32));

/* No BPF_F_REUSE_STACKID: an id's content never changes while it lives. */
GT_MAP_BYTES(stacks, BPF_MAP_TYPE_STACK_TRACE, 16384, sizeof(__u32),
	     GT_STACK_DEPTH * sizeof(__u64));

/* Where a stack goes when its bucket in `stacks` is taken by another one:
 * a stack-trace map has one stack per hash bucket, so without this a hot
 * stack that collides with one stored earlier would be lost for the whole
 * recording.  Another bucket count, so another bucket.  Sized by user
 * space. */
GT_MAP_BYTES(stacks_spill, BPF_MAP_TYPE_STACK_TRACE, 4096, sizeof(__u32),
	     GT_STACK_DEPTH * sizeof(__u64));

/* User stack ids by the key of ustack_key(): a thread that enters the
 * same syscall from the same place again (a loop) reuses the id instead of
 * walking its stack again.  Emptied with `stacks` (ids are only valid
 * until then); sized like it by user space. */
GT_MAP(ustack_ids, BPF_MAP_TYPE_LRU_HASH, 16384, __u64, __s32);

GT_PERCPU_SLOT(stats, struct gt_bpf_stats);

/* Failed reservations per session bit: a session's drops are the events
 * it wanted and lost, not the machine's (an idle session beside a busy one
 * reported the busy one's losses as its own).  User space reads a bit's
 * sum when a session starts and again when it ends. */
GT_PERCPU_SLOT(session_drops, struct gt_bpf_session_drops);

static __always_inline struct gt_bpf_stats *my_stats(void)
{
	return percpu_slot(&stats);
}

static __always_inline struct task_struct *current_task(void)
{
	return gt_current_task(); /* a number before 5.11: see compat.bpf.h */
}

/* The sessions of the cgroups of the task at address `task` and of their
 * ancestors.  A global function, verified once per program on its own:
 * inlined, its walk was verified again at every task_mask() of a program
 * and on every path to it (docs/design.md, "Cost"); hence an address. */
__noinline __u32 gt_cgroup_mask(__u64 task)
{
	struct task_struct *t = (struct task_struct *)task;
	struct cgroup *cg = BPF_CORE_READ(t, cgroups, dfl_cgrp);
	__u32 mask = 0;

	for (int i = 0; i < GT_CGROUP_MAX_DEPTH && cg; i++) {
		__u64 id = gt_cgroup_id(cg);
		__u32 *m = bpf_map_lookup_elem(&cgroups, &id);

		if (m)
			mask |= *m;
		cg = gt_cgroup_parent(cg);
	}
	return mask;
}

/* Non-root sessions follow only what their owner could ptrace: bit i of
 * owner_sessions is set (by user space, before the session's first tgid)
 * when session i belongs to uid owner_uid[i], gid owner_gid[i].  In
 * .data.filter with maybe_tgid, so both objects see the same values. */
__u32 owner_sessions SEC(".data.filter");
__u32 owner_uid[GT_MAX_SESSIONS] SEC(".data.filter");
__u32 owner_gid[GT_MAX_SESSIONS] SEC(".data.filter");

#define GT_SUID_DUMP_USER 1 /* include/linux/sched/coredump.h */
#define GT_CRED_OFF(f) bpf_core_field_offset(struct cred, f)
#define GT_MMF_DUMPABLE_MASK 3

/* The non-root sessions among `want` whose owner may not ptrace t: the
 * rule of daemon/common/ptrace_rule.h (ptrace_may_access): real,
 * effective, saved and filesystem ids all the owner's, dumpable, and no
 * permitted capability (the owner counts as holding none); *why gets
 * GT_LEAVE_*.  Yama's scope needs nothing here: under scope 1 a session
 * follows only descendants of its client, and children of those are too.
 * CO-RE reads: cred is an RCU pointer. */
static __always_inline __u32 unfollowable(struct task_struct *t, __u32 want, __u32 *why)
{
	const struct cred *cr = BPF_CORE_READ(t, cred);
	struct mm_struct *mm = BPF_CORE_READ(t, mm);
	unsigned long mmf = GT_SUID_DUMP_USER;
	__u32 ids[8] = {}, lost = 0;
	__u64 caps = 0;

	/* mm->flags is an unsigned long before 6.17, a bitmap of them since:
	 * the dumpable bits are in its first word either way.  No mm: a
	 * thread past exit_mm, judged by its ids alone. */
	if (mm)
		mmf = gt_mm_flags_word(mm);
	if ((mmf & GT_MMF_DUMPABLE_MASK) != GT_SUID_DUMP_USER) {
		*why = GT_LEAVE_UNDUMPABLE;
		return want;
	}
	/* kernel_cap_t is one u64 since 6.3, two u32 words before: 8 bytes
	 * either way, the low word first (little-endian) */
	bpf_core_read(&caps, sizeof(caps), &cr->cap_permitted);
	if (caps) {
		*why = GT_LEAVE_CAPS;
		return want;
	}
	/* uid, gid, suid, sgid, euid, egid, fsuid, fsgid: one read of the
	 * eight words, where they follow each other as in every kernel since
	 * 2.6.29 (each read is a helper call: eight of them cost more than
	 * the rest of the check), else one read each */
	if (GT_CRED_OFF(gid) == GT_CRED_OFF(uid) + 4 && GT_CRED_OFF(suid) == GT_CRED_OFF(uid) + 8 &&
	    GT_CRED_OFF(sgid) == GT_CRED_OFF(uid) + 12 && GT_CRED_OFF(euid) == GT_CRED_OFF(uid) + 16 &&
	    GT_CRED_OFF(egid) == GT_CRED_OFF(uid) + 20 && GT_CRED_OFF(fsuid) == GT_CRED_OFF(uid) + 24 &&
	    GT_CRED_OFF(fsgid) == GT_CRED_OFF(uid) + 28) {
		bpf_core_read(ids, sizeof(ids), &cr->uid);
	} else {
		ids[0] = BPF_CORE_READ(cr, uid.val);
		ids[1] = BPF_CORE_READ(cr, gid.val);
		ids[2] = BPF_CORE_READ(cr, suid.val);
		ids[3] = BPF_CORE_READ(cr, sgid.val);
		ids[4] = BPF_CORE_READ(cr, euid.val);
		ids[5] = BPF_CORE_READ(cr, egid.val);
		ids[6] = BPF_CORE_READ(cr, fsuid.val);
		ids[7] = BPF_CORE_READ(cr, fsgid.val);
	}
	/* branch-free: a branch per session would double the verifier's
	 * paths at each of them */
#pragma unroll
	for (int i = 0; i < GT_MAX_SESSIONS; i++) {
		__u32 u = owner_uid[i], g = owner_gid[i];
		__u64 d = (ids[0] ^ u) | (ids[2] ^ u) | (ids[4] ^ u) | (ids[6] ^ u) |
			  (ids[1] ^ g) | (ids[3] ^ g) | (ids[5] ^ g) | (ids[7] ^ g);

		/* the compiler would turn a comparison back into a branch: it
		 * may not know d < 2^32 after the barrier, so it cannot */
		asm volatile("" : "+r"(d));
		lost |= (__u32)(((d + 0xffffffffull) >> 32) & 1) << i; /* d != 0 */
	}
	*why = GT_LEAVE_CREDS;
	return lost & want;
}

__noinline __u32 gt_leave_if_privileged(__u64 task, __u32 mask, __u32 tell_cgroups);

/* Session mask of a task; 0 = untraced.  The idle tasks (pid 0) never are.
 * Task pointers here are BTF pointers (tracepoint arguments, current), read
 * by plain loads: a bpf_probe_read per field would cost a helper call, on
 * every event of every process.  Root sessions and untraced tasks pay one
 * load of owner_sessions for the privilege rule.  tell_cgroups: at an exec
 * or exit, the cgroup sessions that may not follow t are told so
 * (gt_leave_if_privileged). */
static __always_inline __u32 task_mask_at(struct task_struct *t, __u32 tell_cgroups)
{
	__u32 tgid = gt_task_tgid(t);
	__u32 mask = 0, *m;

	if (!gt_task_pid(t))
		return 0;
	if (maybe_tgid[tgid % GT_MAYBE_SLOTS]) {
		m = bpf_map_lookup_elem(&tgids, &tgid);
		if (m)
			mask = *m;
	}
	if (loaded_with(GT_WITHOUT_CGROUPS) && n_cgroup_sessions) {
		__u64 addr = 0; /* a global function takes scalars: the address, copied */

		bpf_probe_read_kernel(&addr, sizeof(addr), &t);
		mask |= gt_cgroup_mask(addr);
	}
	if (loaded_with(GT_WITHOUT_ALL) && all_sessions && tgid != self_tgid) {
		/* GT_TASK_FIELD: no BTF task pointer before 5.11 */
		__u32 all = (GT_TASK_FIELD(t, flags) & GT_PF_KTHREAD) ? all_kthread_sessions : all_sessions;

		if (all & all_except_sessions) {
			m = bpf_map_lookup_elem(&all_except, &tgid);
			if (m)
				all &= ~*m;
		}
		mask |= all;
	}
	if (loaded_with(GT_WITHOUT_OWNERS) && (mask & owner_sessions)) {
		/* a global function takes scalars: the address, copied */
		__u64 addr = 0;

		bpf_probe_read_kernel(&addr, sizeof(addr), &t);
		mask = gt_leave_if_privileged(addr, mask, tell_cgroups);
	}
	return mask;
}

static __always_inline __u32 task_mask(struct task_struct *t)
{
	return task_mask_at(t, 0);
}

/* Counts a lost record of the sessions in mask, one per session.  One
 * lookup and no loop left to the verifier: a loop whose counter is the
 * key of a lookup lives on the stack, where Linux 5.10 to 6.12 lose its
 * value and refuse the program ("infinite loop detected").  Atomic: a
 * wakeup's program in an interrupt may run inside another on this CPU.
 * The branches join with nothing live that differs: the verifier prunes
 * them, one path per session, not two per session. */
static __always_inline void count_drop(__u32 mask)
{
	__u32 zero = 0;
	struct gt_bpf_session_drops *d = bpf_map_lookup_elem(&session_drops, &zero);

	if (!d)
		return;
#pragma unroll
	for (int i = 0; i < GT_MAX_SESSIONS; i++)
		if (mask & (1u << i))
			__sync_fetch_and_add(&d->n[i], 1);
}

/* Reserves `size` bytes in this CPU's ring for a record of the sessions in
 * mask; counts a drop on failure (all CPUs' total, and each session's). */
static __always_inline void *reserve(__u32 size, __u32 mask)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct gt_bpf_stats *st;
	void *ring = bpf_map_lookup_elem(&rings, &cpu);
	void *e = NULL;

	if (ring)
		e = bpf_ringbuf_reserve(ring, size, 0);
	if (!e) {
		st = my_stats();
		if (st)
			__sync_fetch_and_add(&st->drops, 1);
		count_drop(mask);
	}
	return e;
}

/* Commits a record.  User space is woken only once wakeup_bytes are
 * waiting (it also polls on a short tick while tracing): one wakeup per
 * event would cost the consumer more than the event itself.  Records are
 * counted where they are read, not here: in a VM without PCID every page
 * an event touches costs a TLB miss after each kernel entry. */
static __always_inline void submit(void *e)
{
	__u32 cpu = bpf_get_smp_processor_id();
	void *ring = bpf_map_lookup_elem(&rings, &cpu);
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (ring && bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(e, flags);
}

/* The common header of a record about task t (the thread that did it),
 * timed at ts: a handler that walks stacks before it reserves its record
 * reads the clock on entry, as perf's own tracepoint handler does, so that
 * the time of the walk (or of an interrupt, or of a vCPU the host took
 * away, in the middle of it) is not added to the event's time. */
static __always_inline void fill_hdr_at(struct gt_kev_hdr *h, __u64 ts, __u16 type,
					struct task_struct *t, __u32 sessions)
{
	h->ts = ts;
	h->type = type;
	h->cpu = bpf_get_smp_processor_id();
	h->tid = gt_task_pid(t);
	h->tgid = gt_task_tgid(t);
	h->sessions = sessions;
}

/* reserve() and fill_hdr_at() in one: a record of `size` bytes (a struct
 * that opens with its gt_kev_hdr) about task t for the sessions in mask,
 * or NULL (the drop counted). */
static __always_inline void *reserve_event_at(__u32 size, __u64 ts, __u16 type,
					      struct task_struct *t, __u32 mask)
{
	struct gt_kev_hdr *h = reserve(size, mask);

	if (h)
		fill_hdr_at(h, ts, type, t, mask);
	return h;
}

/* The same, timed now: for handlers that do little before reserving. */
static __always_inline void *reserve_event(__u32 size, __u16 type, struct task_struct *t,
					   __u32 mask)
{
	return reserve_event_at(size, bpf_ktime_get_ns(), type, t, mask);
}

/* Drops from `mask` the non-root sessions that may no longer follow the
 * task at address `task`.  Those that followed its tgid forget it here,
 * before anything of it is emitted, and are told once by a GT_KEV_LEAVE
 * record.  A cgroup session follows membership, not a tgid, so nothing
 * here remembers that it was told: it just stops seeing the task while the
 * task stays privileged, and is told by a GT_KEV_LEAVE at each exec and
 * thread exit of such a task (tell_cgroups): where a set-user-ID program
 * takes over, and again at its end should that record have been lost (a
 * full ring).  User space keeps the record only for a process the session had
 * (daemon/engine/session.c, process_left): an exec in the cgroup of a
 * process that was always privileged is told too.  A global function,
 * verified once on its own (inlined into every caller, the verifier's
 * paths multiply past its limit); hence an address, read with CO-RE
 * probes. */
__noinline __u32 gt_leave_if_privileged(__u64 task, __u32 mask, __u32 tell_cgroups)
{
	struct task_struct *t = (struct task_struct *)task;
	__u32 why = 0, lost = unfollowable(t, mask & owner_sessions, &why);
	__u32 tgid, *m, own = 0, left, keep;
	struct gt_kev_leave *e;

	if (!lost)
		return mask;
	tgid = BPF_CORE_READ(t, tgid); /* a helper call: not on the common path */
	m = bpf_map_lookup_elem(&tgids, &tgid);
	if (m)
		own = *m;
	left = own & lost;
	keep = own & ~lost;
	if (left && keep)
		bpf_map_update_elem(&tgids, &tgid, &keep, BPF_EXIST);
	else if (left)
		bpf_map_delete_elem(&tgids, &tgid);
	/* the rest of lost is cgroup sessions' (-a is root's) */
	if (tell_cgroups)
		left |= lost & ~own;
	if (left && (e = reserve(sizeof(*e), left))) {
		e->hdr.ts = bpf_ktime_get_ns();
		e->hdr.type = GT_KEV_LEAVE;
		e->hdr.cpu = bpf_get_smp_processor_id();
		e->hdr.tid = BPF_CORE_READ(t, pid);
		e->hdr.tgid = tgid;
		e->hdr.sessions = left;
		e->why = why;
		e->pad = 0;
		submit(e);
	}
	return mask & ~lost;
}

/* Stack id of the current task (user stack, or kernel with flags 0);
 * failures give a negative id and are counted. */
static __always_inline __s32 stack_id(void *ctx, __u64 flags)
{
	long id = bpf_get_stackid(ctx, &stacks, flags);
	struct gt_bpf_stats *st;

	if (id == -17 /* EEXIST: the bucket holds another stack */) {
		id = bpf_get_stackid(ctx, &stacks_spill, flags);
		if (id >= 0)
			id |= GT_STACK_SPILL;
	}
	if (id < 0) {
		st = my_stats();
		if (st)
			__sync_fetch_and_add(&st->stack_errors, 1);
	}
	return id;
}

/* Scratch for the frame walk's copies of the stack (gt_uframe_at). */
GT_PERCPU_SLOT(uwalk_win, struct gt_uwalk_win);

/* GT_UWALK_* (gotraced.h): 0 in every real recording; a bench walks one
 * frame per read, a test compares both walks.  Read-only: the verifier
 * drops what a load does not ask for. */
const volatile __u32 uwalk_mode = 0;

/* The offset in this CPU's uwalk_win of the frame at fp (gt_uframe_at),
 * or -1 where the walk stops; level: the walk's nesting (frames alone
 * unless 0).  A global function, verified once on its own: inlined in the
 * walk's loop, its paths were walked again at each of the loop's 127
 * rounds (the verifier went through 20 times as many instructions). */
__noinline __s64 gt_uframe(__u64 fp, __u32 per_frame, __u32 level)
{
	struct gt_uwalk_win *w = percpu_slot(&uwalk_win);
	struct gt_uframe *f;

	if (!w)
		return -1;
	f = gt_uframe_at(w, fp, per_frame || level, &w->one[level & (GT_UWALK_LEVELS - 1)]);
	return f ? (__s64)((void *)f - (void *)w) : -1;
}

/* The rest of the key (gt_ustack_head says what it names) from fp, the
 * key so far h: up the frame chain, a window of stack at a time or
 * (per_frame) one frame per read.  0 = no key (no scratch: never; nested
 * past GT_UWALK_LEVELS: then bpf_get_stackid walks).  A global function,
 * verified once on its own (inlined, the verifier walked its loop again
 * for every path of its callers). */
__noinline __u64 gt_ustack_walk(__u64 h, __u64 fp, __u32 per_frame)
{
	struct gt_uwalk_win *w = percpu_slot(&uwalk_win);
	struct gt_uframe *f;
	__u32 level;
	__s64 off;

	if (!w)
		return 0;
	level = w->busy;
	if (level >= GT_UWALK_LEVELS)
		return 0;
	w->busy = level + 1;
	if (!level)
		w->base = 1; /* no window copied yet */
	/* the count is up before the walk touches the scratch */
	asm volatile("" ::: "memory");
	for (int i = 1; i < GT_STACK_DEPTH; i++) {
		off = gt_uframe(fp, per_frame, level);
		if (off < 0 || off > sizeof(*w) - sizeof(*f))
			break;
		f = (void *)w + off;
		h = gt_mix(h, f->ret);
		fp = f->next;
	}
	asm volatile("" ::: "memory");
	w->busy = level;
	return h | 1;
}

/* The key of the current task's user stack (gt_ustack_head in
 * compat.bpf.h says what it names), 0 = none; with GT_UWALK_CHECK both
 * walks, compared (stats). */
static __always_inline __u64 ustack_key(struct pt_regs *regs)
{
	struct gt_bpf_stats *st;
	__u64 fp = 0, h = gt_ustack_head(regs, &fp), key;

	if (!h)
		return 0;
	key = gt_ustack_walk(h, fp, uwalk_mode & GT_UWALK_PER_FRAME);
	if ((uwalk_mode & GT_UWALK_CHECK) && (st = my_stats())) {
		__sync_fetch_and_add(&st->uwalk_checks, 1);
		if (key != gt_ustack_walk(h, fp, 1))
			__sync_fetch_and_add(&st->uwalk_mismatches, 1);
	}
	return key;
}

/* The current task's user stack id, from ustack_ids when the same frames
 * were walked before.  regs = its saved user registers (NULL: unknown). */
static __always_inline __s32 ustack_id(void *ctx, struct pt_regs *regs)
{
	__u64 key = ustack_key(regs);
	__s32 *hit, id;

	if (key) {
		hit = bpf_map_lookup_elem(&ustack_ids, &key);
		if (hit)
			return *hit;
	}
	id = stack_id(ctx, BPF_F_USER_STACK);
	if (key && id >= 0)
		bpf_map_update_elem(&ustack_ids, &key, &id, BPF_ANY);
	return id;
}

#endif
