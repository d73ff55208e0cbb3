/* uprobe_multi links (Linux 6.6+, with process-wide pid filtering since
 * 6.10 and its stable updates): one BPF link puts one program on many
 * offsets of one binary.  Tearing a link down costs the kernel an RCU
 * tasks-trace grace period (hundreds of ms on a VM), so one link per
 * program and binary instead of one per function (and two grace periods
 * each, through perf events) is what makes stopping fast.
 *
 * libbpf 1.1 knows nothing of them: the program is loaded with the
 * expected attach type below and the link is made with the raw bpf(2)
 * call.  A program loaded that way can no longer be attached through a
 * perf event: the choice is made once, before the memory programs load.
 *
 * Return convention: 0 or -errno (links: a descriptor or -errno).
 */
#ifndef GT_MT_UPROBE_MULTI_H
#define GT_MT_UPROBE_MULTI_H

#include <stdint.h>
#include <sys/types.h>

/* enum bpf_attach_type's BPF_TRACE_UPROBE_MULTI (UAPI since 6.6; the
 * installed headers may be older) */
#define GT_BPF_TRACE_UPROBE_MULTI 48

/* Set to 1 in the environment, it keeps the per-probe perf-event links
 * (the fallback of older kernels), e.g. to test that path. */
#define GT_NO_UPROBE_MULTI_ENV "GOTRACED_NO_UPROBE_MULTI"

/* 1 if this kernel makes uprobe_multi links that filter by process and the
 * environment does not forbid them, else 0.  Asks the kernel once (a
 * two-instruction program and two link attempts that must fail), then
 * remembers. */
int gt_mt_multi_available(void);

/* Attaches the loaded program prog_fd (loaded for uprobe_multi) to the cnt
 * file offsets of path, in process pid only; ret: as return probes.
 * Returns the link's descriptor or -errno. */
int gt_mt_multi_link(int prog_fd, const char *path, const uint64_t *offsets, int cnt,
		     int ret, pid_t pid);

#endif
