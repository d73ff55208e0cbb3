/* See py_stacks.h. */
#include "py_stacks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/capture.h"
#include "sym/loader.h"
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

/* A Python frame as BPF read it: named when a stack is asked for (the
 * code object's read may still be under way when the rings are read). */
struct raw {
	struct gt_py_frame f;
	int entry;
};

struct gt_py_stacks {
	struct gt_capture *capture;
	struct gt_python_names *names;
	struct gt_idmap procs;    /* tgid -> struct proc */
	struct gt_idmap tried;    /* tgids detected once this image (any result) */
	struct gt_idmap ids;      /* {tgid, native, n, hash} -> index + 1 */
	struct gt_idmap pcs;      /* {tgid, pc} -> code object: a frame named again */
	struct stack *stacks;
	size_t nstacks, capstacks;
	struct raw *frames;
	size_t nframes, capframes;
	struct gt_py_named named[GT_PY_FRAMES]; /* the last stack asked for */
	struct detect {           /* detections under way (loader threads) */
		uint32_t tgid;
		int mapped, again;    /* asked for a mapped CPython; another asked since */
		struct gt_sym_job *job;
	} *detects;
	size_t ndetects, capdetects;
	int async_detect;         /* detections on loader threads (gotraced) */
};

/* A hash of what tells two stacks apart. */
static uint64_t frames_hash(const struct raw *f, int n)
{
	uint64_t h = 0;

	for (int i = 0; i < n; i++) {
		const uint64_t w[3] = {f[i].f.code, f[i].f.instr, (unsigned)f[i].entry};

		h = gt_hash_more(h, w, sizeof(w));
	}
	return h;
}

/* The pc a frame shows: its instruction's address in the code object
 * (one pc, one function: the trace's frame tables key on it). */
static uint64_t pc_of(const struct gt_py_frame *f)
{
	return f->instr ? f->instr : f->code;
}

/* The id of a process's stack, added if new; native without memory or
 * on a hash collision (the Python frames lost, never confused). */
static int32_t intern(struct gt_py_stacks *p, uint32_t tgid, int32_t native,
		      const struct raw *f, int n)
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
	for (int i = 0; i < n; i++) { /* for gt_py_stacks_rename */
		const uint64_t k[2] = {tgid, pc_of(&f[i].f)};
		uint64_t *code = gt_idmap_insert(&p->pcs, k, &isnew);

		if (code)
			*code = f[i].f.code;
	}
	memcpy(p->frames + p->nframes, f, (size_t)n * sizeof(*f));
	p->stacks[p->nstacks] = (struct stack){.off = p->nframes, .n = (uint32_t)n, .native = native};
	p->nframes += (size_t)n;
	*v = (uint32_t)++p->nstacks;
	return (int32_t)(GT_STACK_PY | (p->nstacks - 1));
}

/* Frame f of process tgid named into *out: 1 when its code object's read
 * is under way (named later), else 0. */
static int name_one(struct gt_py_stacks *p, uint32_t tgid, const struct proc *pr,
		    const struct gt_py_frame *f, struct gt_py_named *out)
{
	out->pc = pc_of(f);
	if (!pr) {
		out->func = out->file = "[python]";
		out->line = 0;
		return 0;
	}
	return gt_python_name(p->names, (pid_t)tgid, pr->mem, &pr->bpf, f, &out->func, &out->file,
			      &out->line) == -EINPROGRESS;
}

/* 3.12's evaluation loop marks its entry with a shim frame of its own
 * (owned by the C stack), in the chain above the frame it runs: the shim
 * is dropped, the frame below it is the entry.  3.11 marks the frame. */
static int raw_frames(const struct proc *pr, const struct gt_kev_pystack *r, struct raw *out)
{
	int n = 0;

	for (uint32_t i = 0; i < r->n && i < GT_PY_FRAMES; i++) {
		int entry = (int)(r->entry >> i & 1);

		if (pr->bpf.entry_val == 3 && entry) {
			if (n)
				out[n - 1].entry = 1;
			continue;
		}
		out[n].f = r->f[i];
		out[n].entry = entry;
		n++;
	}
	return n;
}

static void take_detects(struct gt_py_stacks *p);

static int32_t on_pystack(void *ctx, const struct gt_kev_pystack *r, int32_t native)
{
	struct gt_py_stacks *p = ctx;
	const struct proc *proc = gt_idmap_get(&p->procs, r->hdr.tgid);
	struct raw f[GT_PY_FRAMES];
	struct gt_py_named scratch;
	int n;

	if (!proc && p->ndetects) { /* BPF told by its detection, just now */
		take_detects(p);
		proc = gt_idmap_get(&p->procs, r->hdr.tgid);
	}
	if (!proc)
		return native; /* forgotten since: an old image's */
	memset(f, 0, sizeof(f)); /* compared whole (padding included) */
	n = raw_frames(proc, r, f);
	/* the code objects' reads asked for now, a merge lag before a
	 * translator names the stack */
	for (int i = 0; i < n; i++)
		name_one(p, r->hdr.tgid, proc, &f[i].f, &scratch);
	return n > 0 ? intern(p, r->hdr.tgid, native, f, n) : native;
}

static void drop_detect(struct gt_py_stacks *p, size_t i)
{
	gt_sym_job_drop(p->detects[i].job);
	p->detects[i] = p->detects[--p->ndetects];
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
	gt_idmap_init(&p->pcs, 2, sizeof(uint64_t));
	gt_python_names_async(p->names, 1);
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
	while (p->ndetects)
		drop_detect(p, 0);
	free(p->detects);
	close_procs(p);
	gt_python_names_free(p->names);
	gt_idmap_free(&p->procs);
	gt_idmap_free(&p->tried);
	gt_idmap_free(&p->ids);
	gt_idmap_free(&p->pcs);
	free(p->stacks);
	free(p->frames);
	free(p);
}

void gt_py_stacks_reset(struct gt_py_stacks *p)
{
	struct gt_python_names *fresh;

	if (!p || (!p->procs.count && !p->tried.count && !p->nstacks && !p->capstacks &&
		   !p->ndetects && !gt_python_names_bytes(p->names)))
		return; /* nothing held: called at every idle check */
	while (p->ndetects)
		drop_detect(p, 0);
	for (size_t i = 0; i < p->procs.cap; i++)
		if (gt_idmap_full(&p->procs, i))
			gt_capture_python_proc(p->capture, (uint32_t)gt_idmap_key(&p->procs, i)[0],
					       NULL);
	close_procs(p);
	gt_idmap_free(&p->procs);
	gt_idmap_free(&p->tried);
	gt_idmap_free(&p->ids);
	gt_idmap_free(&p->pcs);
	free(p->stacks);
	free(p->frames);
	p->stacks = NULL;
	p->frames = NULL;
	p->nstacks = p->capstacks = p->nframes = p->capframes = 0;
	fresh = gt_python_names_new(); /* NULL: names kept (a budget still holds) */
	if (fresh) {
		gt_python_names_async(fresh, 1);
		gt_python_names_free(p->names);
		p->names = fresh;
	}
}


/* A detection's own state (the job's arg): asked on a loader thread,
 * answered into bpf, err and mem (moved out when taken). */
struct detect_arg {
	uint32_t tgid;
	int err, mem;
	struct gt_py_proc bpf;
	struct gt_capture *capture; /* told at once (NULL: by the taker) */
};

/* On a loader thread: reads /proc/PID/maps and the CPython binary's
 * symbols (through map_files: its owner's file), opens its memory. */
static int run_detect(void *arg)
{
	struct detect_arg *a = arg;

	a->err = gt_python_detect((pid_t)a->tgid, &a->bpf);
	if (!a->err) {
		a->mem = gt_python_open_mem((pid_t)a->tgid);
		if (a->mem < 0)
			a->err = a->mem;
	}
	/* BPF walks its frames from now on, not from when the loop takes the
	 * answer (a busy poll took 0.5 s: a script's first block had none);
	 * its first record takes it (on_pystack).  A map update is one
	 * syscall on the map's fd, safe from any thread. */
	if (!a->err && a->capture && gt_capture_python_proc(a->capture, a->tgid, &a->bpf))
		a->capture = NULL; /* the taker tries again */
	return a->err;
}

static void free_detect(void *arg)
{
	struct detect_arg *a = arg;

	if (a->mem >= 0)
		close(a->mem);
	free(a);
}

static int post_detect(struct gt_py_stacks *p, uint32_t tgid, int mapped)
{
	struct detect_arg *a;
	char what[64];

	if (gt_grow(&p->detects, &p->capdetects, p->ndetects + 1, sizeof(*p->detects)) ||
	    !(a = calloc(1, sizeof(*a))))
		return -ENOMEM;
	a->tgid = tgid;
	a->mem = -1;
	a->capture = p->capture;
	snprintf(what, sizeof(what), "/proc/%u/maps (CPython)", tgid);
	p->detects[p->ndetects] = (struct detect){.tgid = tgid, .mapped = mapped};
	p->detects[p->ndetects].job = gt_sym_call_post((pid_t)tgid, what, run_detect, a, free_detect);
	if (!p->detects[p->ndetects].job) {
		free(a);
		return -ENOMEM;
	}
	p->ndetects++;
	return 0;
}

/* A detection's answer: BPF told of a CPython (its memory kept). */
static void take_detect(struct gt_py_stacks *p, const struct detect *d, struct detect_arg *a)
{
	struct proc *v;
	int isnew;

	/* no CPython mapped (yet: a libpython loads after exec) is asked
	 * again when one is; anything else is this image's answer */
	if (d->mapped || a->err != -ENOENT)
		gt_idmap_add(&p->tried, d->tgid);
	if (a->err)
		return;
	v = gt_idmap_put(&p->procs, d->tgid, &isnew);
	if (!v)
		gt_capture_python_proc(p->capture, d->tgid, NULL); /* its records unnamed */
	if (!v || !isnew)
		return; /* (or found by the other detection already) */
	*v = (struct proc){.bpf = a->bpf, .mem = a->mem};
	a->mem = -1; /* the proc's now */
	if (gt_capture_python_proc(p->capture, d->tgid, &a->bpf)) {
		close(v->mem);
		gt_idmap_del(&p->procs, d->tgid);
	}
}

static void take_detects(struct gt_py_stacks *p)
{
	for (size_t i = p->ndetects; i-- > 0;) {
		struct detect d = p->detects[i];
		struct detect_arg *a;
		int rc;

		if (!gt_sym_job_wait(d.job, 0))
			continue;
		a = gt_sym_call_result(d.job, &rc);
		if (!(a->err == -ENOENT && d.again)) /* else the later one answers */
			take_detect(p, &d, a);
		drop_detect(p, i);
	}
}

void gt_py_stacks_async_detect(struct gt_py_stacks *p)
{
	if (p)
		p->async_detect = 1;
}

void gt_py_stacks_round(struct gt_py_stacks *p)
{
	if (!p)
		return;
	take_detects(p);
	gt_python_names_round(p->names);
}

int gt_py_stacks_check(struct gt_py_stacks *p, uint32_t tgid, int mapped)
{
	if (!p || gt_idmap_has(&p->tried, tgid))
		return 0;
	if (!p->async_detect) { /* the recorder's own thread may wait */
		struct detect d = {.tgid = tgid, .mapped = mapped};
		struct detect_arg a = {.tgid = tgid, .mem = -1};

		run_detect(&a);
		take_detect(p, &d, &a);
		if (a.mem >= 0)
			close(a.mem);
		return a.err;
	}
	for (size_t i = 0; i < p->ndetects; i++) {
		struct detect *d = &p->detects[i];

		if (d->tgid != tgid)
			continue;
		if (!mapped || d->mapped || d->again)
			return 0; /* under way */
		/* a CPython mapped since (a libpython after exec): asked at
		 * once beside it, which may have read the maps before */
		d->again = 1;
		break;
	}
	return post_detect(p, tgid, mapped);
}

void gt_py_stacks_forget(struct gt_py_stacks *p, uint32_t tgid)
{
	struct proc *v;

	if (!p)
		return;
	for (size_t i = p->ndetects; i-- > 0;)
		if (p->detects[i].tgid == tgid)
			drop_detect(p, i); /* an older image's */
	gt_idmap_del(&p->tried, tgid);
	v = gt_idmap_get(&p->procs, tgid);
	if (!v)
		return;
	close(v->mem);
	gt_capture_python_proc(p->capture, tgid, NULL);
	gt_idmap_del(&p->procs, tgid);
	gt_python_names_forget(p->names, (pid_t)tgid);
	/* its pcs are another image's code now: never named again */
	for (size_t i = 0; i < p->pcs.cap; i++)
		if (gt_idmap_full(&p->pcs, i) && gt_idmap_key(&p->pcs, i)[0] == tgid)
			gt_idmap_remove(&p->pcs, gt_idmap_key(&p->pcs, i));
}

int gt_py_stacks_get(struct gt_py_stacks *p, uint32_t tgid, int32_t id, int32_t *native,
		     const struct gt_py_named **frames, int *later)
{
	uint32_t i = (uint32_t)id & GT_STACK_DWARF_SEQ;
	const struct proc *pr;
	const struct raw *f;
	int n;

	*later = 0;
	if (!p || id < 0 || !(id & GT_STACK_PY) || i >= p->nstacks)
		return -ENOENT;
	*native = p->stacks[i].native;
	f = p->frames + p->stacks[i].off;
	n = (int)p->stacks[i].n;
	pr = gt_idmap_get(&p->procs, tgid);
	gt_python_names_harvest(p->names); /* answers come since the drain */
	for (int k = 0; k < n; k++) {
		*later |= name_one(p, tgid, pr, &f[k].f, &p->named[k]);
		p->named[k].entry = f[k].entry;
	}
	*frames = p->named;
	return n;
}

int gt_py_stacks_rename(struct gt_py_stacks *p, uint32_t tgid, uint64_t pc, const char **func,
			const char **file, unsigned *line)
{
	const uint64_t k[2] = {tgid, pc};
	const uint64_t *code = p ? gt_idmap_find(&p->pcs, k) : NULL;
	struct gt_py_named out;
	struct gt_py_frame f;

	if (!code)
		return -ENOENT;
	f.code = *code;
	f.instr = pc == *code ? 0 : pc;
	gt_python_names_harvest(p->names);
	name_one(p, tgid, gt_idmap_get(&p->procs, tgid), &f, &out);
	*func = out.func;
	*file = out.file;
	*line = out.line;
	return 0;
}
