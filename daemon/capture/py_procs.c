/* The CPython processes BPF walks the Python frames of (py_procs in
 * bpf/python.bpf.h), and the callback their records go to (ring.c). */
#include <errno.h>
#include <bpf/bpf.h>

#include "internal.h"

int gt_capture_python_proc(struct gt_capture *c, uint32_t tgid, const struct gt_py_proc *p)
{
	if (!c->skel)
		return -ENODEV;
	if (!p)
		return bpf_map_delete_elem(c->py_procs_fd, &tgid) && errno != ENOENT ? -errno : 0;
	return bpf_map_update_elem(c->py_procs_fd, &tgid, p, BPF_ANY) ? -errno : 0;
}

void gt_capture_set_pystack_cb(struct gt_capture *c, gt_capture_pystack_cb cb, void *ctx)
{
	c->py_cb = cb;
	c->py_ctx = ctx;
}
