/* The go_procs map (bpf/goid.bpf.h): where a Go process's running
 * goroutine is, so that its threads' switch-outs carry their goroutine id.
 * No skeleton here (load.c noted the map and the flag): the unit tier
 * (make check-unit) links the engine without BPF. */
#include <errno.h>

#include <bpf/bpf.h>

#include "internal.h"

int gt_capture_go_proc(struct gt_capture *c, uint32_t tgid, const struct gt_go_proc *gp)
{
	int fd = c->go_procs_fd;

	if (!c->skel)
		return -ENODEV;
	if (gp) {
		if (bpf_map_update_elem(fd, &tgid, gp, BPF_ANY))
			return -errno;
		/* wakeups look Go processes up from now on (bpf/goid.bpf.h) */
		__atomic_store_n(c->go_procs_any, 1, __ATOMIC_RELAXED);
		return 0;
	}
	if (bpf_map_delete_elem(fd, &tgid) && errno != ENOENT)
		return -errno;
	return 0;
}
