/* One process's allocator probes: entry uprobes and return uprobes on each
 * allocator binary it maps, for that pid only. */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "memory.skel.h"
#include "memory.h"

static struct bpf_program *entry_prog(struct memory_bpf *skel, enum gt_alloc_fn f)
{
	switch (f) {
	case GT_AF_MALLOC: return skel->progs.gt_malloc;
	case GT_AF_CALLOC: return skel->progs.gt_calloc;
	case GT_AF_REALLOC: return skel->progs.gt_realloc;
	case GT_AF_FREE: return skel->progs.gt_free;
	case GT_AF_POSIX_MEMALIGN: return skel->progs.gt_posix_memalign;
	case GT_AF_ALIGNED_ALLOC:
	case GT_AF_MEMALIGN: return skel->progs.gt_memalign;
	case GT_AF_VALLOC:
	case GT_AF_PVALLOC: return skel->progs.gt_valloc;
	default: return NULL;
	}
}

static int attach_one(struct gt_mt_proc *p, struct bpf_program *prog, const char *path,
		      uint64_t off, int ret, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o, .retprobe = ret);
	struct bpf_link *l;

	if (p->nlinks >= GT_MT_MAX_LINKS)
		return -E2BIG;
	l = bpf_program__attach_uprobe_opts(prog, p->pid, path, (size_t)off, &o);
	if (!l) {
		int rc = -errno;

		snprintf(err, errlen, "attaching a %s to %s+0x%llx in pid %d: %s",
			 ret ? "uretprobe" : "uprobe", path, (unsigned long long)off,
			 (int)p->pid, strerror(-rc));
		return rc;
	}
	p->is_ret[p->nlinks] = (unsigned char)ret;
	p->links[p->nlinks++] = l;
	if (ret)
		p->nuretprobes++;
	else
		p->nuprobes++;
	return 0;
}

/* Return probes go first: a call entered after its entry probe exists then
 * always has its return seen (else the thread would look stuck inside an
 * allocator until the pending entry goes stale). */
static int attach_lib(struct gt_memtrack *m, struct gt_mt_proc *p,
		      const struct gt_alloc_lib *lib, char *err, size_t errlen)
{
	int rc;

	for (int pass = 0; pass < 2; pass++) {
		for (int f = 0; f < GT_AF_COUNT; f++) {
			int ret = pass == 0;

			if (!lib->offset[f] || (ret && f == GT_AF_FREE))
				continue;
			rc = attach_one(p, ret ? m->skel->progs.gt_alloc_ret : entry_prog(m->skel, f),
					lib->path, lib->offset[f], ret, err, errlen);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int gt_mt_attach_process(struct gt_memtrack *m, struct gt_mt_proc *p,
			 const struct gt_alloc_target *t, char *err, size_t errlen)
{
	/* the rule of DESIGN.md: never a uretprobe in a Go program */
	if (t->is_go) {
		snprintf(err, errlen, "pid %d is a Go program: not probed", (int)p->pid);
		return -EPERM;
	}
	for (int i = 0; i < t->nlibs; i++) {
		int rc = attach_lib(m, p, &t->libs[i], err, errlen);

		if (rc) {
			gt_mt_detach_process(p);
			return rc;
		}
		snprintf(p->libs[i], sizeof(p->libs[i]), "%s", t->libs[i].path);
	}
	p->nlibs = t->nlibs;
	return 0;
}

/* Entry probes go first, for the same reason as in attach_lib. */
void gt_mt_detach_process(struct gt_mt_proc *p)
{
	for (int ret = 0; ret < 2; ret++) {
		for (int i = 0; i < p->nlinks; i++) {
			if (!p->links[i] || p->is_ret[i] != ret)
				continue;
			bpf_link__destroy(p->links[i]);
			p->links[i] = NULL;
		}
	}
	p->nlinks = p->nuprobes = p->nuretprobes = p->nlibs = 0;
}

void gt_mt_forget_process(struct gt_memtrack *m, pid_t pid)
{
	int live = bpf_map__fd(m->skel->maps.live);
	struct gt_mem_live_key k, next, *prev = NULL;
	uint32_t tgid = (uint32_t)pid;

	bpf_map_delete_elem(bpf_map__fd(m->skel->maps.procs), &tgid);
	/* deleting the current key would restart the walk: delete one behind */
	while (bpf_map_get_next_key(live, prev, &next) == 0) {
		if (prev && prev->tgid == tgid)
			bpf_map_delete_elem(live, prev);
		k = next;
		prev = &k;
	}
	if (prev && prev->tgid == tgid)
		bpf_map_delete_elem(live, prev);
}
