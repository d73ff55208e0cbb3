/* The go_procs map (bpf/goid.bpf.h): where a Go process's running
 * goroutine is, so that its threads' switch-outs carry their goroutine id. */
#include <errno.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "internal.h"
#include "gotraced.skel.h"

int gt_capture_go_proc(struct gt_capture *c, uint32_t tgid, const struct gt_go_proc *gp)
{
	int fd = bpf_map__fd(c->skel->maps.go_procs);

	if (gp) {
		if (bpf_map_update_elem(fd, &tgid, gp, BPF_ANY))
			return -errno;
		/* wakeups look Go processes up from now on (bpf/goid.bpf.h) */
		__atomic_store_n(&c->skel->bss->go_procs_any, 1, __ATOMIC_RELAXED);
		return 0;
	}
	if (bpf_map_delete_elem(fd, &tgid) && errno != ENOENT)
		return -errno;
	return 0;
}
