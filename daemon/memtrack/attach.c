/* One process's allocator probes: entry uprobes and return uprobes on each
 * allocator binary it maps, for that pid only: a uprobe_multi link per
 * program and binary where the kernel has them (m->multi), else a
 * perf-event link per function. */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "memory.skel.h"
#include "memory.h"
#include "uprobe_multi.h"

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

static void count(struct gt_mt_proc *p, int ret, int nfuncs)
{
	if (ret)
		p->nuretprobes += nfuncs;
	else
		p->nuprobes += nfuncs;
}

/* ---- one perf-event link per function (any kernel) ---- */

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
	p->links[p->nlinks++] = (struct gt_mt_link){ .bl = l, .fd = -1, .is_ret = (unsigned char)ret };
	count(p, ret, 1);
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

/* ---- one uprobe_multi link per program (Linux 6.6+) ---- */

/* The offsets in lib of the functions prog probes on entry, or of every
 * function but free for the return program. */
static int prog_offsets(struct gt_memtrack *m, const struct gt_alloc_lib *lib, int ret,
			const struct bpf_program *prog, uint64_t offs[GT_AF_COUNT])
{
	int n = 0;

	for (int f = 0; f < GT_AF_COUNT; f++) {
		if (!lib->offset[f])
			continue;
		if (ret ? f != GT_AF_FREE : entry_prog(m->skel, f) == prog)
			offs[n++] = lib->offset[f];
	}
	return n;
}

static int attach_multi(struct gt_memtrack *m, struct gt_mt_proc *p,
			const struct gt_alloc_lib *lib, int ret, struct bpf_program *prog,
			char *err, size_t errlen)
{
	uint64_t offs[GT_AF_COUNT];
	int n = prog_offsets(m, lib, ret, prog, offs), fd;

	if (!n)
		return 0;
	if (p->nlinks >= GT_MT_MAX_LINKS)
		return -E2BIG;
	fd = gt_mt_multi_link(bpf_program__fd(prog), lib->path, offs, n, ret, p->pid);
	if (fd < 0) {
		snprintf(err, errlen, "attaching %s (%d %s, one uprobe_multi link) to %s in pid %d: %s",
			 bpf_program__name(prog), n, ret ? "uretprobes" : "uprobes", lib->path,
			 (int)p->pid, strerror(-fd));
		return fd;
	}
	p->links[p->nlinks++] = (struct gt_mt_link){ .bl = NULL, .fd = fd, .is_ret = (unsigned char)ret };
	count(p, ret, n);
	return 0;
}

/* The return link first, as in attach_lib; then one link per entry
 * program (memalign's and valloc's serve two functions each). */
static int attach_lib_multi(struct gt_memtrack *m, struct gt_mt_proc *p,
			    const struct gt_alloc_lib *lib, char *err, size_t errlen)
{
	int rc = attach_multi(m, p, lib, 1, m->skel->progs.gt_alloc_ret, err, errlen);

	for (int f = 0; f < GT_AF_COUNT && !rc; f++) {
		struct bpf_program *prog = entry_prog(m->skel, f);
		int first = 1;

		for (int g = 0; g < f; g++)
			first &= entry_prog(m->skel, g) != prog;
		if (first)
			rc = attach_multi(m, p, lib, 0, prog, err, errlen);
	}
	return rc;
}

int gt_mt_attach_process(struct gt_memtrack *m, struct gt_mt_proc *p,
			 const struct gt_alloc_target *t, char *err, size_t errlen)
{
	/* the rule of docs/mapping.md: never a uretprobe in a Go program */
	if (t->is_go) {
		snprintf(err, errlen, "pid %d is a Go program: not probed", (int)p->pid);
		return -EPERM;
	}
	for (int i = 0; i < t->nlibs; i++) {
		int rc = m->multi ? attach_lib_multi(m, p, &t->libs[i], err, errlen)
				  : attach_lib(m, p, &t->libs[i], err, errlen);

		if (rc) {
			gt_mt_detach_process(p);
			return rc;
		}
		snprintf(p->libs[i], sizeof(p->libs[i]), "%s", t->libs[i].path);
	}
	p->nlibs = t->nlibs;
	return 0;
}

void gt_mt_forget_process(struct gt_memtrack *m, pid_t pid, int walk_live)
{
	int live = bpf_map__fd(m->skel->maps.live);
	struct gt_mem_live_key k, next, *prev = NULL;
	uint32_t tgid = (uint32_t)pid;

	bpf_map_delete_elem(bpf_map__fd(m->skel->maps.procs), &tgid);
	if (!walk_live)
		return;
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
