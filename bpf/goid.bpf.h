/* The goroutine a Go thread runs when it switches out (docs/mapping.md,
 * "Goroutines of Go programs").
 *
 * User space finds, for each traced process whose binary is Go, where the
 * running g lives and where g.goid sits in it (daemon/sym/goinfo.c) and
 * puts it in `go_procs` under the tgid.  At a switch-out prev is still
 * current, so its user memory is read with bpf_probe_read_user:
 *  - amd64: g is at thread.fsbase + tls_off (-8 for most binaries; cgo and
 *    other TLS models: from runtime.tlsg and the PT_TLS segment, as delve
 *    computes it).  thread.fsbase is what the thread set with arch_prctl
 *    (the Go runtime) or clone's CLONE_SETTLS (libc), neither uses
 *    wrfsbase, so the saved value is the live one;
 *  - arm64: g is register R28 of the saved user registers (the Go ABI
 *    keeps it there in Go code; in C code of a cgo call R28 is the C
 *    code's, and the read gives garbage or fails).
 * Then goid = *(g + goid_off).  The runtime's own g0 (the scheduler, the
 * system stack) and gsignal (a signal handler) have id 0: then the
 * goroutine is the one their M runs, g->m->curg, if any (the M works on
 * the system stack for it: a wakeup from a channel send, a large
 * allocation).  0 = no goroutine (an idle M, a thread outside Go code, or
 * a failed read).
 *
 * At a CPU sample and at a wakeup the sampled task or the waker is current
 * too: the same reads, into a GT_KEV_GOID record of its own (the switch
 * record carries its goid inline).  The goroutine's pprof labels are the
 * address of their map, read from user space later (daemon/sym/golabels.c). */
#ifndef GOTRACED_GOID_BPF_H
#define GOTRACED_GOID_BPF_H

/* tgid -> where its goroutines are; set by user space (gt_capture_go_proc) */
GT_MAP(go_procs, BPF_MAP_TYPE_HASH, 4096, __u32, struct gt_go_proc);

/* Set by user space once it has put a process in go_procs (never reset):
 * until then a wakeup does not even look a Go process up. */
volatile __u32 go_procs_any = 0;

/* What a Go thread runs now: its goroutine and that goroutine's pprof
 * labels (the hmap a labelMap holds; labels 0 = none or not read). */
struct gt_go_now {
	__u64 goid;
	__u64 labels;
	__u32 hash0;
	__u32 count;
};

/* g.labels -> a *labelMap (pprof.SetGoroutineLabels stores the address of
 * the context's map variable) -> the map's *hmap, whose first 16 bytes are
 * count (int), flags, B, noverflow and hash0 (runtime/map.go, Go 1.19 to
 * 1.23).  An empty map is no labels. */
static __always_inline void gt_go_labels(__u64 g, __u32 off, struct gt_go_now *now)
{
	struct {
		__u64 count;
		__u32 flags_b_noverflow;
		__u32 hash0;
	} h;
	__u64 lm = 0, m = 0;

	if (!off || bpf_probe_read_user(&lm, sizeof(lm), (void *)(g + off)) || !lm ||
	    bpf_probe_read_user(&m, sizeof(m), (void *)lm) || !m ||
	    bpf_probe_read_user(&h, sizeof(h), (void *)m) || !h.count)
		return;
	now->labels = m;
	now->hash0 = h.hash0;
	now->count = h.count > 0xffffffffull ? 0xffffffffu : (__u32)h.count;
}

/* The goroutine current (task, with its saved user registers regs, which
 * may be NULL) runs, goid 0 if none or not a Go process; with its labels
 * when want_labels. */
static __always_inline void gt_go_current(struct task_struct *task, struct pt_regs *regs,
					  bool want_labels, struct gt_go_now *now)
{
	__u32 tgid = gt_task_tgid(task);
	struct gt_go_proc *gp = bpf_map_lookup_elem(&go_procs, &tgid);
	__u64 g = 0, goid = 0;

	now->goid = now->labels = 0;
	now->hash0 = now->count = 0;
	if (!gp)
		return;
#if defined(__TARGET_ARCH_x86)
	__u64 fs = BPF_CORE_READ(task, thread.fsbase);

	if (!fs || bpf_probe_read_user(&g, sizeof(g), (void *)(fs + gp->tls_off)))
		return;
#elif defined(__TARGET_ARCH_arm64)
	if (!regs)
		return;
	g = GT_REGS_FIELD(regs, regs[28]);
#endif
	if (!g || bpf_probe_read_user(&goid, sizeof(goid), (void *)(g + gp->goid_off)))
		return;
	if (!goid && gp->m_off) {
		/* g0 or gsignal (id 0): the goroutine its M runs, if any (on
		 * the system stack for it, or in a signal handler over it) */
		struct {
			__u32 status; /* g.atomicstatus, just before goid (1.19-1.23) */
			__u32 stack_lock;
			__u64 goid;
		} cg;
		__u64 m = 0, curg = 0;
		__u32 st;

		if (bpf_probe_read_user(&m, sizeof(m), (void *)(g + gp->m_off)) || !m ||
		    bpf_probe_read_user(&curg, sizeof(curg), (void *)(m + gp->curg_off)) ||
		    !curg || curg == g ||
		    bpf_probe_read_user(&cg, sizeof(cg), (void *)(curg + gp->goid_off - 8)))
			return;
		/* only while it runs (_Grunning 2, _Gsyscall 3, with or without
		 * _Gscan 0x1000): not in park_m, where it is parked already but
		 * still the M's curg until dropg */
		st = cg.status & ~0x1000u;
		if (st != 2 && st != 3)
			return;
		g = curg;
		goid = cg.goid;
	}
	if (!goid)
		return;
	now->goid = goid;
	if (want_labels)
		gt_go_labels(g, gp->labels_off, now);
}

/* A GT_KEV_GOID record of current for the sessions m, at ts.  0 when not
 * written (no goroutine, or the ring is full). */
static __always_inline int gt_go_record(__u64 ts, struct task_struct *task, __u32 m,
					const struct gt_go_now *now, __u32 why)
{
	struct gt_kev_goid *e;

	if (!now->goid)
		return 0;
	e = reserve_event_at(sizeof(*e), ts, GT_KEV_GOID, task, m);
	if (!e)
		return 0;
	e->goid = now->goid;
	e->labels = now->labels;
	e->labels_hash0 = now->hash0;
	e->labels_count = now->count;
	e->why = why;
	e->pad = 0;
	submit(e);
	return 1;
}

/* At a CPU sample or a wakeup by current (traced by the sessions m): the
 * goroutine it runs, as its own record just before the sample's or the
 * wakeup's.  Costs one map lookup for a task of a process that is not Go. */
static __always_inline void gt_go_note(__u64 ts, struct task_struct *task, struct pt_regs *regs,
				       __u32 m, __u32 why)
{
	struct gt_go_now now;

	gt_go_current(task, regs, true, &now);
	gt_go_record(ts, task, m, &now, why);
}

/* At a wakeup by current, traced by the sessions m: its goroutine, once
 * any Go process is known (a recording of no Go program pays one load). */
static __always_inline void gt_go_note_wake(__u64 ts, struct task_struct *task,
					    struct pt_regs *regs, __u32 m)
{
	if (go_procs_any)
		gt_go_note(ts, task, regs, m, GT_GOID_WAKE);
}

/* At a switch-out of prev (traced by the sessions m): the goid for the
 * switch record, or 0 when a GT_KEV_GOID record just written carries it
 * with the goroutine's labels (only a labelled goroutine pays for it). */
static __always_inline __u64 gt_go_switch_out(__u64 ts, struct task_struct *prev,
					      struct pt_regs *regs, __u32 m)
{
	struct gt_go_now now;

	gt_go_current(prev, regs, true, &now);
	if (now.labels && gt_go_record(ts, prev, m, &now, GT_GOID_SWITCH))
		return 0;
	return now.goid;
}

/* The process is gone: its tgid may come back as another program. */
static __always_inline void gt_go_proc_forget(__u32 tgid)
{
	bpf_map_delete_elem(&go_procs, &tgid);
}

#endif
