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
 * Then goid = *(g + goid_off).  0 = no goroutine (g0, a signal handler's
 * gsignal, a thread outside Go code, or a failed read). */
#ifndef GOTRACED_GOID_BPF_H
#define GOTRACED_GOID_BPF_H

/* tgid -> where its goroutines are; set by user space (gt_capture_go_proc) */
GT_MAP(go_procs, BPF_MAP_TYPE_HASH, 4096, __u32, struct gt_go_proc);

/* The goid current (task, with its saved user registers regs, which may
 * be NULL) runs, 0 if none or not a Go process. */
static __always_inline __u64 gt_current_goid(struct task_struct *task, struct pt_regs *regs)
{
	__u32 tgid = gt_task_tgid(task);
	struct gt_go_proc *gp = bpf_map_lookup_elem(&go_procs, &tgid);
	__u64 g = 0, goid = 0;

	if (!gp)
		return 0;
#if defined(__TARGET_ARCH_x86)
	__u64 fs = BPF_CORE_READ(task, thread.fsbase);

	if (!fs || bpf_probe_read_user(&g, sizeof(g), (void *)(fs + gp->tls_off)))
		return 0;
#elif defined(__TARGET_ARCH_arm64)
	if (!regs)
		return 0;
	g = GT_REGS_FIELD(regs, regs[28]);
#endif
	if (!g || bpf_probe_read_user(&goid, sizeof(goid), (void *)(g + gp->goid_off)))
		return 0;
	return goid;
}

/* The process is gone: its tgid may come back as another program. */
static __always_inline void gt_go_proc_forget(__u32 tgid)
{
	bpf_map_delete_elem(&go_procs, &tgid);
}

#endif
