/* The symbolizer: per-process snapshots of executable mappings, a cache
 * of parsed binaries keyed by (device, inode), and kernel symbols. */
#include "symbolize.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "demangle.h"
#include "elf_file.h"
#include "jit.h"
#include "kallsyms.h"
#include "loader.h"
#include "maps.h"
#include "table.h"
#include "testing.h"
#include "util/gt_idmap.h"
#include "util/gt_strset.h"

#define CACHE_SLOTS 4096 /* recent (binary, address) results */
/* Binaries no process maps any more, kept (parsed or being parsed) for
 * the next that maps them: a launched command's maps are read at its exec,
 * dropped when the kernel's exec record comes, and announced again by
 * its mapping records; without these the same files were parsed twice or
 * three times at every recording's start (docs/mapping.md, Stacks). */
#define PARKED_BINS 32

struct bin_entry {
	unsigned dev_major, dev_minor;
	uint64_t ino;
	int loaded;            /* 0: could not open or parse (fallbacks only) */
	int open_failed;       /* could not be opened: tried again on a new map */
	struct gt_sym_job *job; /* its load, while not taken (loader.h) */
	unsigned refs;         /* mappings of snapshotted processes that use it */
	unsigned parked;       /* unused, kept in s->parked[parked - 1]; 0 not */
	struct gt_binary b;
};

struct proc_map {
	uint64_t start, end, offset;
	const char *module;    /* interned path or pseudo name */
	const char *base;      /* basename, for "base+0xOFF" */
	struct bin_entry *bin; /* NULL for anonymous / pseudo mappings */
};

struct proc {
	pid_t pid;
	struct proc_map *maps; /* sorted by start */
	size_t n;
	uint64_t read_ns;      /* CLOCK_MONOTONIC when maps were read */
	uint64_t reread_gap;   /* wait before the next re-read on a miss */
};

/* Maps of a process are read again when an address misses them (see
 * refresh_maps): at first 10 ms after the last read, then, while re-reads
 * find nothing new for the missing addresses, twice as long each time up
 * to a second, so that a stream of garbage frames costs little. */
#define REREAD_MIN_NS 10000000ull
#define REREAD_MAX_NS 1000000000ull
/* Outside [USER_ADDR_START, USER_ADDR_END) nothing is ever mapped (below
 * the kernel's default mmap_min_addr; above every user address of x86-64
 * with 5-level paging and of arm64): a frame there is garbage from a
 * broken frame-pointer chain, not a mapping we have not seen. */
#define USER_ADDR_START 65536ull
#define USER_ADDR_END (1ull << 57)

struct cache_slot {
	const struct bin_entry *bin; /* NULL: empty */
	uint64_t vaddr;
	struct gt_binary_sym sym;
	int rc;
};

struct gt_symbolizer {
	struct gt_idmap procs; /* pid -> struct proc * */
	size_t nprocs;
	struct gt_idmap bins;  /* (inode, device) -> struct bin_entry * */
	struct gt_idmap jits;  /* pid -> struct gt_jit *: its perf map (jit.h) */
	struct gt_strset strings; /* module paths, fallback names */
	struct gt_symtab ksyms;
	int kstate;            /* 0 not loaded, 1 loaded, -errno failed */
	struct bin_entry *vdso; /* our own vDSO: the kernel maps the same one
				 * into every 64-bit process */
	int no_wait;           /* lookups never wait for a load */
	int pending;           /* a lookup met a binary still loading
				* (gt_symbolizer_pending) */
	uint64_t pending_since; /* the loads' clock at its last call */
	uint64_t jit_misses;   /* JIT code its perf map did not name */
	struct cache_slot cache[CACHE_SLOTS];
	struct bin_entry *parked[PARKED_BINS]; /* oldest let go first */
	unsigned next_parked;
	char unmapped[24];     /* "0xADDR" of the last -EFAULT lookup */
};

struct gt_symbolizer *gt_symbolizer_new(void)
{
	struct gt_symbolizer *s = calloc(1, sizeof(struct gt_symbolizer));

	if (s) {
		gt_idmap_init(&s->procs, 1, sizeof(struct proc *));
		gt_idmap_init(&s->bins, 2, sizeof(struct bin_entry *));
		gt_idmap_init(&s->jits, 1, sizeof(struct gt_jit *));
	}
	return s;
}

/* The stable copy of p[0..len) in s->strings, or NULL if out of memory. */
static const char *intern(struct gt_symbolizer *s, const char *p, size_t len)
{
	const void *copy;

	if (!len)
		return "";
	return gt_strset_add(&s->strings, p, len, NULL, &copy) ? NULL : copy;
}

void gt_symbolizer_no_wait(struct gt_symbolizer *s, int no_wait)
{
	s->no_wait = no_wait;
}

void gt_symbolizer_set_wait(struct gt_symbolizer *s, int wait)
{
	s->no_wait = !wait;
}

uint64_t gt_symbolizer_pending(struct gt_symbolizer *s)
{
	int was = s->pending;
	uint64_t since = s->pending_since;

	/* the clock before the lookups: a load that ends during them moves
	 * it past the value returned */
	s->pending = 0;
	s->pending_since = gt_symbolizer_clock();
	return was ? (since ? since : 1) : 0;
}

uint64_t gt_symbolizer_clock(void)
{
	return gt_sym_loads_ended() + 1;
}

void gt_symbolizer_per_user_budget(void)
{
	gt_sym_loader_budget(GT_SYM_LOADS_PER_UID);
}

/* A binary no snapshotted process maps any more is closed once
 * PARKED_BINS more have been let go after it: a daemon that sees
 * thousands of short-lived processes keeps what is in use and a few. */
static void bin_key(uint64_t key[2], uint64_t ino, unsigned major, unsigned minor)
{
	key[0] = ino;
	key[1] = (uint64_t)major << 32 | minor;
}

static void close_binary(struct gt_symbolizer *s, struct bin_entry *e)
{
	uint64_t key[2];

	bin_key(key, e->ino, e->dev_major, e->dev_minor);
	gt_idmap_remove(&s->bins, key);
	for (int i = 0; i < CACHE_SLOTS; i++)
		if (s->cache[i].bin == e)
			s->cache[i].bin = NULL;
	gt_sym_job_drop(e->job);
	if (e->loaded)
		gt_binary_close(&e->b);
	free(e);
}

/* Parks e, unused; the one parked longest ago (if still unused) is
 * closed to make room. */
static void park_binary(struct gt_symbolizer *s, struct bin_entry *e)
{
	unsigned k = s->next_parked;
	struct bin_entry *old = s->parked[k];

	if (old) {
		old->parked = 0;
		close_binary(s, old);
	}
	s->parked[k] = e;
	e->parked = k + 1;
	s->next_parked = (k + 1) % PARKED_BINS;
}

/* A binary no mapping uses any more is parked. */
static void release_binary(struct gt_symbolizer *s, struct bin_entry *e)
{
	if (e != s->vdso && !--e->refs)
		park_binary(s, e);
}

void gt_symbolizer_close_parked(struct gt_symbolizer *s)
{
	for (unsigned k = 0; k < PARKED_BINS; k++)
		if (s->parked[k]) {
			s->parked[k]->parked = 0;
			close_binary(s, s->parked[k]);
			s->parked[k] = NULL;
		}
}

static void hold_binary(struct gt_symbolizer *s, struct bin_entry *e)
{
	if (!e || e == s->vdso)
		return;
	if (e->parked) {
		s->parked[e->parked - 1] = NULL;
		e->parked = 0;
	}
	e->refs++;
}

static void free_proc(struct gt_symbolizer *s, struct proc *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->maps[i].bin)
			release_binary(s, p->maps[i].bin);
	free(p->maps);
	free(p);
}

void gt_symbolizer_free(struct gt_symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->procs.cap; i++) /* procs first: they release bins */
		if (gt_idmap_full(&s->procs, i))
			free_proc(s, *(struct proc **)gt_idmap_val(&s->procs, i));
	for (size_t i = 0; i < s->bins.cap; i++) {
		struct bin_entry *e;

		if (!gt_idmap_full(&s->bins, i))
			continue;
		e = *(struct bin_entry **)gt_idmap_val(&s->bins, i);
		gt_sym_job_drop(e->job); /* a stuck one is abandoned */
		if (e->loaded)
			gt_binary_close(&e->b);
		free(e);
	}
	for (size_t i = 0; i < s->jits.cap; i++)
		if (gt_idmap_full(&s->jits, i))
			gt_jit_free(*(struct gt_jit **)gt_idmap_val(&s->jits, i));
	gt_idmap_free(&s->procs);
	gt_idmap_free(&s->bins);
	gt_idmap_free(&s->jits);
	if (s->vdso) {
		if (s->vdso->loaded)
			gt_binary_close(&s->vdso->b);
		free(s->vdso);
	}
	gt_strset_free(&s->strings);
	gt_symtab_free(&s->ksyms);
	free(s);
}

static struct proc *proc_of(const struct gt_symbolizer *s, pid_t pid)
{
	struct proc **v = gt_idmap_get(&s->procs, (uint64_t)pid);

	return v ? *v : NULL;
}

/* Sets pid's record (replacing one): 0 or -ENOMEM. */
static int proc_put(struct gt_symbolizer *s, pid_t pid, struct proc *p)
{
	int isnew;
	struct proc **v = gt_idmap_put(&s->procs, (uint64_t)pid, &isnew);

	if (!v)
		return -ENOMEM;
	*v = p;
	return 0;
}

/* The cached binary for the mapping; on first sight its open and parse
 * are posted to the loader (loader.h), and the entry waits for it.  One
 * that could not be opened (its process may have just exited) gets
 * another try from the next process that maps it. */
static struct bin_entry *get_binary(struct gt_symbolizer *s, pid_t pid,
				    const struct gt_map_line *m)
{
	struct bin_entry *e, **slot;
	uint64_t key[2];
	int isnew;

	bin_key(key, m->inode, m->dev_major, m->dev_minor);
	slot = gt_idmap_find(&s->bins, key);
	e = slot ? *slot : NULL;
	if (e && (!e->open_failed || e->job))
		return e;
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e)
			return NULL;
		e->dev_major = m->dev_major;
		e->dev_minor = m->dev_minor;
		e->ino = m->inode;
		slot = gt_idmap_insert(&s->bins, key, &isnew);
		if (!slot) {
			free(e);
			return NULL;
		}
		*slot = e;
	}
	e->open_failed = 0;
	e->job = gt_sym_job_post(pid, m);
	e->open_failed = !e->job;
	return e;
}

/* Whether e's binary is loaded, taking the loader's result when it is
 * done; waits for it only as loader.h says (while it makes progress).
 * One still loading is noted (gt_symbolizer_pending). */
static int bin_ready(struct gt_symbolizer *s, struct bin_entry *e)
{
	int rc;

	if (!e->job)
		return e->loaded;
	if (!gt_sym_job_wait(e->job, !s->no_wait)) {
		s->pending = 1;
		return 0;
	}
	rc = gt_sym_job_take(e->job, &e->b);
	gt_sym_job_drop(e->job);
	e->job = NULL;
	e->loaded = rc == 0;
	e->open_failed = rc == -ENOENT;
	return e->loaded;
}

/* Our vDSO image: section headers come last, so it ends at e_shoff +
 * e_shnum * e_shentsize. */
static struct bin_entry *get_vdso(struct gt_symbolizer *s)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);

	if (!s->vdso && eh && !memcmp(eh->e_ident, ELFMAG, SELFMAG) &&
	    eh->e_ident[EI_CLASS] == ELFCLASS64 &&
	    (s->vdso = calloc(1, sizeof(*s->vdso)))) {
		size_t size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;

		s->vdso->loaded = size < (1u << 20) &&
				  gt_binary_load_image(&s->vdso->b, eh, size) == 0;
	}
	return s->vdso;
}

static int add_map(struct gt_symbolizer *s, struct proc *p, size_t *cap,
		   pid_t pid, const struct gt_map_line *m)
{
	struct proc_map *pm;
	const char *slash;

	if (p->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 32;
		struct proc_map *v = realloc(p->maps, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->maps = v;
		*cap = ncap;
	}
	pm = &p->maps[p->n];
	memset(pm, 0, sizeof(*pm));
	pm->start = m->start;
	pm->end = m->end;
	pm->offset = m->offset;
	pm->module = m->path_len ? intern(s, m->path, m->path_len)
				 : "[anon]";
	if (!pm->module)
		return -ENOMEM;
	slash = strrchr(pm->module, '/');
	pm->base = slash ? slash + 1 : pm->module;
	if (m->inode && pm->module[0] == '/')
		pm->bin = get_binary(s, pid, m);
	else if (!strcmp(pm->module, "[vdso]"))
		pm->bin = get_vdso(s);
	hold_binary(s, pm->bin);
	p->n++;
	return 0;
}

/* Reads the executable mappings of /proc/PID/maps into p. */
static int read_maps(struct gt_symbolizer *s, struct proc *p, pid_t pid)
{
	char path[64];
	char *line = NULL;
	size_t linecap = 0, cap = 0;
	ssize_t n;
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!err && (n = getline(&line, &linecap, f)) > 0) {
		struct gt_map_line m;

		if (gt_map_line_parse(line, (size_t)n, &m) || !m.executable)
			continue;
		err = add_map(s, p, &cap, pid, &m);
	}
	free(line);
	fclose(f);
	return err; /* the kernel lists mappings in address order */
}

static int by_start(const void *a, const void *b)
{
	const struct proc_map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int overlaps_any(const struct proc_map *v, size_t n, const struct proc_map *m)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].start < m->end && m->start < v[i].end)
			return 1;
	return 0;
}

/* A re-read (exec, dlopen, a miss) keeps each old mapping that no new one
 * overlaps: stacks taken before the change are often resolved after it
 * (before an exec, the code of the program that exec'd). */
static int keep_old_maps(struct gt_symbolizer *s, struct proc *p, const struct proc *old)
{
	size_t n = p->n;
	struct proc_map *v = realloc(p->maps, (p->n + old->n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	p->maps = v;
	for (size_t i = 0; i < old->n; i++)
		if (!overlaps_any(v, n, &old->maps[i])) {
			v[p->n++] = old->maps[i];
			hold_binary(s, old->maps[i].bin); /* old's ref goes with it */
		}
	qsort(v, p->n, sizeof(*v), by_start);
	return 0;
}

int gt_symbolizer_add_process(struct gt_symbolizer *s, pid_t pid)
{
	struct proc *old = proc_of(s, pid), *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	p->pid = pid;
	p->read_ns = gt_now_ns();
	err = read_maps(s, p, pid);
	if (err) {
		free_proc(s, p);
		return err;
	}
	if (old && !p->n) { /* exited (a zombie has no maps): keep ours */
		free_proc(s, p);
		return -ESRCH;
	}
	err = old ? keep_old_maps(s, p, old) : 0; /* re-snapshot */
	if (!err)
		err = proc_put(s, pid, p); /* replacing allocates nothing */
	if (err) {
		free_proc(s, p);
		return err;
	}
	if (old)
		free_proc(s, old);
	else
		s->nprocs++;
	return 0;
}

int gt_symbolizer_prefetch_libc(struct gt_symbolizer *s)
{
	char *line = NULL;
	size_t linecap = 0;
	ssize_t n;
	FILE *f = fopen("/proc/self/maps", "re");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (err == -ENOENT && (n = getline(&line, &linecap, f)) > 0) {
		struct gt_map_line m;
		const char *base;
		struct bin_entry *e;
		uint64_t key[2];

		if (gt_map_line_parse(line, (size_t)n, &m) || !m.executable || !m.inode ||
		    !m.path_len || m.path[0] != '/')
			continue;
		base = m.path + m.path_len;
		while (base > m.path && base[-1] != '/')
			base--;
		if ((size_t)(m.path + m.path_len - base) < 8 || memcmp(base, "libc.so.", 8))
			continue;
		bin_key(key, m.inode, m.dev_major, m.dev_minor);
		if (gt_idmap_find(&s->bins, key)) {
			err = 0; /* known already */
			break;
		}
		e = get_binary(s, getpid(), &m);
		if (e)
			park_binary(s, e);
		err = e ? 0 : -ENOMEM;
	}
	free(line);
	fclose(f);
	return err;
}

int gt_symbolizer_clone_process(struct gt_symbolizer *s, pid_t parent, pid_t child)
{
	struct proc *from = proc_of(s, parent), *p;

	if (!from || !from->n || proc_of(s, child))
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->maps = malloc(from->n * sizeof(*p->maps)))) {
		free(p);
		return -ENOMEM;
	}
	memcpy(p->maps, from->maps, from->n * sizeof(*p->maps));
	p->n = from->n;
	for (size_t i = 0; i < p->n; i++)
		hold_binary(s, p->maps[i].bin);
	p->pid = child;
	p->read_ns = gt_now_ns();
	if (proc_put(s, child, p)) {
		free_proc(s, p);
		return -ENOMEM;
	}
	s->nprocs++;
	return 0;
}

/* Removes p's mappings that overlap [start, end), releasing their binaries. */
static void drop_overlapping(struct gt_symbolizer *s, struct proc *p, uint64_t start, uint64_t end)
{
	size_t k = 0;

	for (size_t i = 0; i < p->n; i++) {
		if (p->maps[i].start < end && start < p->maps[i].end) {
			if (p->maps[i].bin)
				release_binary(s, p->maps[i].bin);
			continue;
		}
		p->maps[k++] = p->maps[i];
	}
	p->n = k;
}

int gt_symbolizer_add_mapping(struct gt_symbolizer *s, pid_t pid, const struct gt_map_line *m)
{
	struct proc *p = proc_of(s, pid);
	size_t cap;
	int err;

	if (m->end <= m->start)
		return -EINVAL;
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		p->pid = pid;
		p->read_ns = gt_now_ns();
		if (proc_put(s, pid, p)) {
			free(p);
			return -ENOMEM;
		}
		s->nprocs++;
	}
	drop_overlapping(s, p, m->start, m->end);
	cap = p->n; /* add_map grows the vector from its exact size */
	err = add_map(s, p, &cap, pid, m);
	if (err)
		return err;
	qsort(p->maps, p->n, sizeof(*p->maps), by_start);
	return 0;
}

/* With no process left, nothing refers to the names learned from them
 * (paths, demangled names, fallbacks) but the lookup cache: both go.  The
 * binaries went with their last process; the vDSO and the kernel's
 * symbols stay, they are the same for every process. */
static void drop_names(struct gt_symbolizer *s)
{
	memset(s->cache, 0, sizeof(s->cache));
	gt_strset_free(&s->strings);
}

void gt_symbolizer_forget_process(struct gt_symbolizer *s, pid_t pid)
{
	struct proc *p = proc_of(s, pid);
	struct gt_jit **jit = gt_idmap_get(&s->jits, (uint64_t)pid);

	if (jit) {
		gt_jit_free(*jit);
		gt_idmap_del(&s->jits, (uint64_t)pid);
	}
	if (p) {
		gt_idmap_del(&s->procs, (uint64_t)pid);
		free_proc(s, p);
		if (--s->nprocs == 0)
			drop_names(s);
	}
}

static const struct proc_map *find_map(const struct proc *p, uint64_t ip)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ip < p->maps[mid].start)
			hi = mid;
		else if (ip >= p->maps[mid].end)
			lo = mid + 1;
		else
			return &p->maps[mid];
	}
	return NULL;
}

/* "0xADDR" or "base+0xOFF", interned; a static fallback if out of memory. */
static const char *fallback(struct gt_symbolizer *s, const char *base,
			    uint64_t v)
{
	char buf[512];
	const char *r;
	int n;

	if (base)
		n = snprintf(buf, sizeof(buf), "%.400s+0x%" PRIx64, base, v);
	else
		n = snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	r = intern(s, buf, (size_t)n);
	return r ? r : "?";
}

/* Binary lookups cost microseconds with DWARF; the same frames recur in
 * many stacks, so keep recent answers (direct-mapped). */
static int cached_lookup(struct gt_symbolizer *s, const struct bin_entry *bin,
			 uint64_t vaddr, struct gt_binary_sym *out)
{
	uint64_t h = (vaddr ^ (uint64_t)(uintptr_t)bin) * 0x9e3779b97f4a7c15ull;
	struct cache_slot *c = &s->cache[h >> 52]; /* top 12 bits: 4096 slots */

	if (c->bin != bin || c->vaddr != vaddr) {
		char *plain;

		c->rc = gt_binary_lookup(&bin->b, vaddr, &c->sym);
		c->bin = bin;
		c->vaddr = vaddr;
		plain = gt_demangle(c->sym.func);
		if (plain) {
			const char *kept = intern(s, plain, strlen(plain));

			if (kept)
				c->sym.func = kept;
			free(plain);
		}
	}
	*out = c->sym;
	return c->rc;
}

/* An address outside every mapping known for a process that may still
 * live: its maps changed since they were read.  The usual case is a
 * command started by gotracectl: its exec is seen before the dynamic loader
 * has mapped libc, and dlopen or a JIT map code later too.  Reads them
 * again (see REREAD_MIN_NS); 1 if *pp was replaced. */
static int refresh_maps(struct gt_symbolizer *s, struct proc **pp, pid_t pid, uint64_t ip)
{
	uint64_t now = gt_now_ns(), gap = (*pp)->reread_gap ? (*pp)->reread_gap : REREAD_MIN_NS;
	uint64_t longer = gap * 2 < REREAD_MAX_NS ? gap * 2 : REREAD_MAX_NS;

	if (ip < USER_ADDR_START || ip >= USER_ADDR_END || now - (*pp)->read_ns < gap)
		return 0;
	(*pp)->read_ns = now;
	(*pp)->reread_gap = longer;
	if (gt_symbolizer_add_process(s, pid))
		return 0; /* gone: keep what was known */
	*pp = proc_of(s, pid);
	/* found now: the next change may come soon again (dlopen after exec) */
	(*pp)->reread_gap = find_map(*pp, ip) ? REREAD_MIN_NS : longer;
	return 1;
}

/* The executable mapping of pid at ip (re-reading the maps once if none
 * is known there), or NULL with *err: -EFAULT in none of the mappings we
 * know, -ESRCH when we know none (read too late, after the process
 * exited: that says nothing about the address). */
static const struct proc_map *map_at(struct gt_symbolizer *s, pid_t pid, uint64_t ip, int *err)
{
	struct proc *p = proc_of(s, pid);
	const struct proc_map *m = p ? find_map(p, ip) : NULL;

	if (!m && p && refresh_maps(s, &p, pid, ip))
		m = find_map(p, ip);
	*err = m ? 0 : p && p->n ? -EFAULT : -ESRCH;
	return m;
}

/* Code a JIT may have generated: an anonymous executable mapping (or
 * one of a memfd or /dev/zero), as perf takes its perf map's for. */
static int jit_mapping(const struct proc_map *m)
{
	if (!m->bin)
		return strcmp(m->module, "[vdso]") && strcmp(m->module, "[vsyscall]");
	return !strncmp(m->module, "/memfd:", 7) || !strncmp(m->module, "/dev/zero", 9);
}

/* The name pid's perf map gives ip, interned; NULL if none. */
static const char *jit_name(struct gt_symbolizer *s, pid_t pid, uint64_t ip)
{
	struct gt_jit **slot = gt_idmap_get(&s->jits, (uint64_t)pid);
	const char *name;
	int isnew;

	if (!slot) {
		struct gt_jit *j = gt_jit_new(pid);

		if (!j || !(slot = gt_idmap_put(&s->jits, (uint64_t)pid, &isnew))) {
			gt_jit_free(j);
			return NULL;
		}
		*slot = j;
	}
	name = gt_jit_name(*slot, ip, !s->no_wait);
	if (!name)
		s->jit_misses++;
	return name ? intern(s, name, strlen(name)) : NULL;
}

uint64_t gt_symbolizer_jit_misses(const struct gt_symbolizer *s)
{
	return s->jit_misses;
}

void gt_symbolizer_jit_recheck(struct gt_symbolizer *s, pid_t pid)
{
	struct gt_jit **slot = gt_idmap_get(&s->jits, (uint64_t)pid);

	if (slot)
		gt_jit_recheck(*slot);
}

int gt_symbolize_user(struct gt_symbolizer *s, pid_t pid, uint64_t ip,
		      struct gt_sym *out)
{
	const struct proc_map *m;
	struct gt_binary_sym bs = { 0 };
	uint64_t off, vaddr;
	int err;

	*out = (struct gt_sym){ NULL, "", 0, "?" };
	m = map_at(s, pid, ip, &err);
	if (!m && err == -EFAULT) { /* garbage: not interned (see symbolize.h) */
		snprintf(s->unmapped, sizeof(s->unmapped), "0x%" PRIx64, ip);
		out->func = s->unmapped;
		return err;
	}
	if (!m) {
		/* in none of the mappings we know; knowing none (read too late,
		 * after the process exited) says nothing about the address */
		out->func = fallback(s, NULL, ip);
		return err;
	}
	out->module = m->module;
	off = ip - m->start + m->offset;
	if (m->bin && bin_ready(s, m->bin) && !gt_binary_vaddr(&m->bin->b, off, &vaddr))
		cached_lookup(s, m->bin, vaddr, &bs);
	if (!bs.func && jit_mapping(m))
		bs.func = jit_name(s, pid, ip);
	/* Named files: "libx.so+0xOFF" (file offset, as perf and pprof);
	 * anonymous or pseudo mappings (JIT, stack): the address. */
	if (bs.func)
		out->func = bs.func;
	else if (m->module[0] == '/' || m->bin)
		out->func = fallback(s, m->base, off);
	else
		out->func = fallback(s, NULL, ip);
	if (bs.file) {
		out->file = bs.file;
		out->line = bs.line;
	}
	return bs.func ? 0 : -ENOENT;
}

int gt_symbolize_ra(struct gt_symbolizer *s, pid_t pid, uint64_t ip, struct gt_ra_rule *out)
{
	const struct proc_map *m;
	uint64_t vaddr;
	int err;

	m = map_at(s, pid, ip, &err);
	if (!m)
		return err;
	if (!m->bin || !bin_ready(s, m->bin) ||
	    gt_binary_vaddr(&m->bin->b, ip - m->start + m->offset, &vaddr))
		return -ENOENT;
	return gt_binary_ra(&m->bin->b, vaddr, out);
}

static int load_kernel(struct gt_symbolizer *s)
{
	if (!s->kstate) {
		int err = gt_kallsyms_load(&s->ksyms, "/proc/kallsyms");

		s->kstate = err ? err : 1;
	}
	return s->kstate < 0 ? s->kstate : 0;
}

int gt_symbolize_kernel(struct gt_symbolizer *s, uint64_t ip,
			struct gt_sym *out)
{
	const struct gt_symtab_entry *e;
	char mod[128];
	int err = load_kernel(s), n;

	*out = (struct gt_sym){ NULL, "[kernel]", 0, "[kernel]" };
	e = err ? NULL : gt_symtab_find(&s->ksyms, ip);
	if (!e) {
		out->func = fallback(s, NULL, ip);
		return err ? err : -ENOENT;
	}
	out->func = e->name;
	if (e->mod) {
		n = snprintf(mod, sizeof(mod), "[%.120s]", e->mod);
		out->module = intern(s, mod, (size_t)n);
		if (!out->module)
			out->module = "[kernel]";
	}
	return 0;
}

int gt_symbolizer_binary_info(struct gt_symbolizer *s, pid_t pid, uint64_t ip)
{
	struct proc *p = proc_of(s, pid);
	const struct proc_map *m;

	if (!p)
		return -ESRCH;
	m = find_map(p, ip);
	if (!m)
		return -ENOENT;
	return m->bin && bin_ready(s, m->bin) ? (int)m->bin->b.flags : 0;
}

size_t gt_symbolizer_names(const struct gt_symbolizer *s)
{
	return s->strings.n;
}
