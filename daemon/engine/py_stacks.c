/* See py_stacks.h. */
#include "py_stacks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/capture.h"
#include "sym/python.h"
#include "util/gt_grow.h"
#include "util/gt_hash.h"
#include "util/gt_idmap.h"

struct stack {
	size_t off;   /* in frames */
	uint32_t n;
	int32_t native;
};

/* A CPython process: its layout for BPF, and its memory, open since it
 * was detected (closed at exec or forget). */
struct proc {
	struct gt_py_proc bpf;
	int mem;
};

struct gt_py_stacks {
	struct gt_capture *capture;
	struct gt_python_names *names;
	struct gt_idmap procs;    /* tgid -> struct proc */
	struct gt_idmap tried;    /* tgids detected once this image (any result) */
	struct gt_idmap ids;      /* {tgid, native, n, hash} -> index + 1 */
	struct stack *stacks;
	size_t nstacks, capstacks;
	struct gt_py_named *frames;
	size_t nframes, capframes;
};

/* A hash of what tells two named stacks apart. */
static uint64_t frames_hash(const struct gt_py_named *f, int n)
{
	uint64_t h = 0;

	for (int i = 0; i < n; i++) {
		const uint64_t w[4] = {f[i].pc, (uintptr_t)f[i].func, (uintptr_t)f[i].file,
				       (uint64_t)f[i].line << 1 | (unsigned)f[i].entry};

		h = gt_hash_more(h, w, sizeof(w));
	}
	return h;
}

/* The id of a process's stack, added if new; native without memory or
 * on a hash collision (the Python frames lost, never confused). */
static int32_t intern(struct gt_py_stacks *p, uint32_t tgid, int32_t native,
		      const struct gt_py_named *f, int n)
{
	const uint64_t key[3] = {(uint64_t)tgid << 32 | (uint32_t)native, (uint64_t)n,
				 frames_hash(f, n)};
	uint32_t *v;
	int isnew;

	v = gt_idmap_insert(&p->ids, key, &isnew);
	if (!v)
		return native;
	if (!isnew) {
		const struct stack *s = &p->stacks[*v - 1];

		return memcmp(p->frames + s->off, f, (size_t)n * sizeof(*f)) ? native
			: (int32_t)(GT_STACK_PY | (*v - 1));
	}
	if (p->nstacks >= GT_STACK_DWARF_SEQ ||
	    gt_grow(&p->stacks, &p->capstacks, p->nstacks + 1, sizeof(*p->stacks)) ||
	    gt_grow(&p->frames, &p->capframes, p->nframes + (size_t)n, sizeof(*p->frames))) {
		gt_idmap_remove(&p->ids, key);
		return native;
	}
	memcpy(p->frames + p->nframes, f, (size_t)n * sizeof(*f));
	p->stacks[p->nstacks] = (struct stack){.off = p->nframes, .n = (uint32_t)n, .native = native};
	p->nframes += (size_t)n;
	*v = (uint32_t)++p->nstacks;
	return (int32_t)(GT_STACK_PY | (p->nstacks - 1));
}

/* 3.12's evaluation loop marks its entry with a shim frame of its own
 * (owned by the C stack), in the chain above the frame it runs: the shim
 * is dropped, the frame below it is the entry.  3.11 marks the frame. */
static int name_frames(struct gt_py_stacks *p, uint32_t tgid, const struct proc *pr,
		       const struct gt_kev_pystack *r, struct gt_py_named *out)
{
	const struct gt_py_proc *proc = &pr->bpf;
	int n = 0;

	for (uint32_t i = 0; i < r->n && i < GT_PY_FRAMES; i++) {
		int entry = (int)(r->entry >> i & 1);

		if (proc->entry_val == 3 && entry) {
			if (n)
				out[n - 1].entry = 1;
			continue;
		}
		out[n].pc = r->f[i].instr ? r->f[i].instr : r->f[i].code;
		out[n].entry = entry;
		gt_python_name(p->names, (pid_t)tgid, pr->mem, proc, &r->f[i], &out[n].func, &out[n].file,
			       &out[n].line);
		n++;
	}
	return n;
}

static int32_t on_pystack(void *ctx, const struct gt_kev_pystack *r, int32_t native)
{
	struct gt_py_stacks *p = ctx;
	const struct proc *proc = gt_idmap_get(&p->procs, r->hdr.tgid);
	struct gt_py_named f[GT_PY_FRAMES];
	int n;

	if (!proc)
		return native; /* forgotten since: an old image's */
	n = name_frames(p, r->hdr.tgid, proc, r, f);
	return n > 0 ? intern(p, r->hdr.tgid, native, f, n) : native;
}

struct gt_py_stacks *gt_py_stacks_new(struct gt_capture *c)
{
	struct gt_py_stacks *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->names = gt_python_names_new();
	if (!p->names) {
		free(p);
		return NULL;
	}
	p->capture = c;
	gt_idmap_init(&p->procs, 1, sizeof(struct proc));
	gt_idmap_init(&p->ids, 3, sizeof(uint32_t));
	gt_capture_set_pystack_cb(c, on_pystack, p);
	return p;
}

static void close_procs(struct gt_py_stacks *p)
{
	for (size_t i = 0; i < p->procs.cap; i++)
		if (gt_idmap_full(&p->procs, i))
			close(((struct proc *)gt_idmap_val(&p->procs, i))->mem);
}

void gt_py_stacks_free(struct gt_py_stacks *p)
{
	if (!p)
		return;
	close_procs(p);
	gt_python_names_free(p->names);
	gt_idmap_free(&p->procs);
	gt_idmap_free(&p->tried);
	gt_idmap_free(&p->ids);
	free(p->stacks);
	free(p->frames);
	free(p);
}

void gt_py_stacks_reset(struct gt_py_stacks *p)
{
	struct gt_python_names *fresh;

	if (!p || (!p->procs.count && !p->tried.count && !p->nstacks && !p->capstacks &&
		   !gt_python_names_bytes(p->names)))
		return; /* nothing held: called at every idle check */
	for (size_t i = 0; i < p->procs.cap; i++)
		if (gt_idmap_full(&p->procs, i))
			gt_capture_python_proc(p->capture, (uint32_t)gt_idmap_key(&p->procs, i)[0],
					       NULL);
	close_procs(p);
	gt_idmap_free(&p->procs);
	gt_idmap_free(&p->tried);
	gt_idmap_free(&p->ids);
	free(p->stacks);
	free(p->frames);
	p->stacks = NULL;
	p->frames = NULL;
	p->nstacks = p->capstacks = p->nframes = p->capframes = 0;
	fresh = gt_python_names_new(); /* NULL: names kept (a budget still holds) */
	if (fresh) {
		gt_python_names_free(p->names);
		p->names = fresh;
	}
}

void gt_py_stacks_round(struct gt_py_stacks *p)
{
	if (p)
		gt_python_names_round(p->names);
}

int gt_py_stacks_check(struct gt_py_stacks *p, uint32_t tgid, int mapped)
{
	struct gt_py_proc bpf;
	struct proc *v;
	int err, isnew, mem;

	if (!p || gt_idmap_has(&p->tried, tgid))
		return 0;
	err = gt_python_detect((pid_t)tgid, &bpf);
	/* no CPython mapped (yet: a libpython loads after exec) is asked
	 * again when one is; anything else is this image's answer */
	if (mapped || err != -ENOENT)
		gt_idmap_add(&p->tried, tgid);
	if (err)
		return err;
	mem = gt_python_open_mem((pid_t)tgid);
	if (mem < 0)
		return mem;
	v = gt_idmap_put(&p->procs, tgid, &isnew);
	if (!v) {
		close(mem);
		return -ENOMEM;
	}
	*v = (struct proc){.bpf = bpf, .mem = mem};
	err = gt_capture_python_proc(p->capture, tgid, &bpf);
	if (err) {
		close(mem);
		gt_idmap_del(&p->procs, tgid);
	}
	return err;
}

void gt_py_stacks_forget(struct gt_py_stacks *p, uint32_t tgid)
{
	struct proc *v;

	if (!p)
		return;
	gt_idmap_del(&p->tried, tgid);
	v = gt_idmap_get(&p->procs, tgid);
	if (!v)
		return;
	close(v->mem);
	gt_capture_python_proc(p->capture, tgid, NULL);
	gt_idmap_del(&p->procs, tgid);
	gt_python_names_forget(p->names, (pid_t)tgid);
}

int gt_py_stacks_get(const struct gt_py_stacks *p, int32_t id, int32_t *native,
		     const struct gt_py_named **frames)
{
	uint32_t i = (uint32_t)id & GT_STACK_DWARF_SEQ;

	if (!p || id < 0 || !(id & GT_STACK_PY) || i >= p->nstacks)
		return -ENOENT;
	*native = p->stacks[i].native;
	*frames = p->frames + p->stacks[i].off;
	return (int)p->stacks[i].n;
}
