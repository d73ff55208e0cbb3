/* Detaching allocator probes, entry probes before return probes: a call
 * whose entry was seen must have its return seen (else the thread would
 * look inside an allocator until its pending entry goes stale). */
#include "internal.h"

#include <unistd.h>

#include <bpf/libbpf.h>

static void link_free(struct gt_mt_link *l)
{
	if (l->bl)
		bpf_link__destroy(l->bl);
	else if (l->fd >= 0)
		close(l->fd);
	l->bl = NULL;
	l->fd = -1;
}

void gt_mt_detach_procs(struct gt_mt_proc *procs, int n)
{
	for (int ret = 0; ret < 2; ret++)
		for (int i = 0; i < n; i++)
			for (int j = 0; j < procs[i].nlinks; j++)
				if (procs[i].links[j].is_ret == ret)
					link_free(&procs[i].links[j]);
	for (int i = 0; i < n; i++)
		procs[i].nlinks = procs[i].nuprobes = procs[i].nuretprobes = procs[i].nlibs = 0;
}

void gt_mt_detach_process(struct gt_mt_proc *p)
{
	gt_mt_detach_procs(p, 1);
}
