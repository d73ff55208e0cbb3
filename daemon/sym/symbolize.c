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
#include "intern.h"
#include "kallsyms.h"
#include "maps.h"
#include "table.h"
#include "testing.h"

#define BUCKETS 256
#define CACHE_SLOTS 4096 /* recent (binary, address) results */

struct bin_entry {
	struct bin_entry *next;
	unsigned dev_major, dev_minor;
	uint64_t ino;
	int loaded;            /* 0: could not open or parse (fallbacks only) */
	unsigned refs;         /* mappings of snapshotted processes that use it */
	struct gt_binary b;
};

struct proc_map {
	uint64_t start, end, offset;
	const char *module;    /* interned path or pseudo name */
	const char *base;      /* basename, for "base+0xOFF" */
	struct bin_entry *bin; /* NULL for anonymous / pseudo mappings */
};

struct proc {
	struct proc *next;
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
	struct proc *procs[BUCKETS];
	size_t nprocs;
	struct bin_entry *bins[BUCKETS];
	struct gt_intern strings;
	struct gt_symtab ksyms;
	int kstate;            /* 0 not loaded, 1 loaded, -errno failed */
	struct bin_entry *vdso; /* our own vDSO: the kernel maps the same one
				 * into every 64-bit process */
	struct cache_slot cache[CACHE_SLOTS];
	char unmapped[24];     /* "0xADDR" of the last -EFAULT lookup */
};

struct gt_symbolizer *gt_symbolizer_new(void)
{
	return calloc(1, sizeof(struct gt_symbolizer));
}

/* A binary no snapshotted process maps any more is closed: a daemon that
 * sees thousands of short-lived processes keeps only what is in use. */
static void release_binary(struct gt_symbolizer *s, struct bin_entry *e)
{
	unsigned h = (unsigned)((e->ino * 31 + e->dev_major * 7 + e->dev_minor) % BUCKETS);
	struct bin_entry **pp = &s->bins[h];

	if (e == s->vdso || --e->refs)
		return;
	while (*pp && *pp != e)
		pp = &(*pp)->next;
	if (*pp)
		*pp = e->next;
	for (int i = 0; i < CACHE_SLOTS; i++)
		if (s->cache[i].bin == e)
			s->cache[i].bin = NULL;
	if (e->loaded)
		gt_binary_close(&e->b);
	free(e);
}

static void hold_binary(struct gt_symbolizer *s, struct bin_entry *e)
{
	if (e && e != s->vdso)
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
	for (int i = 0; i < BUCKETS; i++) /* procs first: they release bins */
		while (s->procs[i]) {
			struct proc *next = s->procs[i]->next;

			free_proc(s, s->procs[i]);
			s->procs[i] = next;
		}
	for (int i = 0; i < BUCKETS; i++) {
		while (s->bins[i]) {
			struct bin_entry *next = s->bins[i]->next;

			if (s->bins[i]->loaded)
				gt_binary_close(&s->bins[i]->b);
			free(s->bins[i]);
			s->bins[i] = next;
		}
	}
	if (s->vdso) {
		if (s->vdso->loaded)
			gt_binary_close(&s->vdso->b);
		free(s->vdso);
	}
	gt_intern_free(&s->strings);
	gt_symtab_free(&s->ksyms);
	free(s);
}

static struct proc **proc_slot(struct gt_symbolizer *s, pid_t pid)
{
	struct proc **pp = &s->procs[(unsigned)pid % BUCKETS];

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	return pp;
}

/* Whether fd is the file m maps: same inode and device. */
static int same_file(int fd, const struct gt_map_line *m)
{
	struct stat st;

	return !fstat(fd, &st) && st.st_ino == m->inode &&
	       major(st.st_dev) == m->dev_major && minor(st.st_dev) == m->dev_minor;
}

static int open_checked(const char *path, const struct gt_map_line *m)
{
	/* O_NONBLOCK: the path may have become a FIFO (its inode then differs) */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd >= 0 && same_file(fd, m))
		return fd;
	if (fd >= 0)
		close(fd);
	return -ENOENT;
}

/* Opens the mapped file: through the process's root (containers), its
 * map_files link (exact even if replaced or deleted; needs privilege,
 * and the mapping still there: checked, as another may have replaced
 * it), then the plain path.  A file is trusted only if its device and
 * inode match. */
static int open_mapped(pid_t pid, const struct gt_map_line *m, const char *path)
{
	char buf[4200];
	int fd;

	if (!m->deleted) {
		snprintf(buf, sizeof(buf), "/proc/%d/root%s", (int)pid, path);
		if ((fd = open_checked(buf, m)) >= 0)
			return fd;
	}
	snprintf(buf, sizeof(buf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 (int)pid, m->start, m->end);
	if ((fd = open_checked(buf, m)) >= 0)
		return fd;
	return open_checked(path, m);
}

/* The cached binary for the mapping, opening and parsing it on first
 * sight; a file that opens but does not parse is cached as not loaded. */
static struct bin_entry *get_binary(struct gt_symbolizer *s, pid_t pid,
				    const struct gt_map_line *m,
				    const char *path)
{
	unsigned h = (unsigned)((m->inode * 31 + m->dev_major * 7 + m->dev_minor) % BUCKETS);
	struct bin_entry *e;
	int fd;

	for (e = s->bins[h]; e; e = e->next)
		if (e->ino == m->inode && e->dev_major == m->dev_major &&
		    e->dev_minor == m->dev_minor)
			return e;
	/* Not cached when it cannot be opened (the process may have just
	 * exited): the next process mapping it gets another try. */
	fd = open_mapped(pid, m, path);
	if (fd < 0)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e) {
		close(fd);
		return NULL;
	}
	e->dev_major = m->dev_major;
	e->dev_minor = m->dev_minor;
	e->ino = m->inode;
	e->loaded = gt_binary_load(&e->b, fd) == 0;
	e->next = s->bins[h];
	s->bins[h] = e;
	return e;
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
	pm->module = m->path_len ? gt_intern(&s->strings, m->path, m->path_len)
				 : "[anon]";
	if (!pm->module)
		return -ENOMEM;
	slash = strrchr(pm->module, '/');
	pm->base = slash ? slash + 1 : pm->module;
	if (m->inode && pm->module[0] == '/')
		pm->bin = get_binary(s, pid, m, pm->module);
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
	struct proc **slot = proc_slot(s, pid);
	struct proc *p = calloc(1, sizeof(*p));
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
	if (*slot && !p->n) { /* exited (a zombie has no maps): keep ours */
		free_proc(s, p);
		return -ESRCH;
	}
	if (*slot) { /* re-snapshot */
		err = keep_old_maps(s, p, *slot);
		if (err) {
			free_proc(s, p);
			return err;
		}
		p->next = (*slot)->next;
		free_proc(s, *slot);
	} else {
		s->nprocs++;
	}
	*slot = p;
	return 0;
}

int gt_symbolizer_clone_process(struct gt_symbolizer *s, pid_t parent, pid_t child)
{
	struct proc *from = *proc_slot(s, parent), *p;
	struct proc **slot = proc_slot(s, child);

	if (!from || !from->n || *slot)
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
	*slot = p;
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
	struct proc **slot = proc_slot(s, pid);
	struct proc *p = *slot;
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
		*slot = p;
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
	gt_intern_free(&s->strings);
}

void gt_symbolizer_forget_process(struct gt_symbolizer *s, pid_t pid)
{
	struct proc **slot = proc_slot(s, pid);
	struct proc *p = *slot;

	if (p) {
		*slot = p->next;
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
	r = gt_intern(&s->strings, buf, (size_t)n);
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
			const char *kept = gt_intern(&s->strings, plain, strlen(plain));

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
	*pp = *proc_slot(s, pid);
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
	struct proc *p = *proc_slot(s, pid);
	const struct proc_map *m = p ? find_map(p, ip) : NULL;

	if (!m && p && refresh_maps(s, &p, pid, ip))
		m = find_map(p, ip);
	*err = m ? 0 : p && p->n ? -EFAULT : -ESRCH;
	return m;
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
	if (m->bin && m->bin->loaded && !gt_binary_vaddr(&m->bin->b, off, &vaddr))
		cached_lookup(s, m->bin, vaddr, &bs);
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
	if (!m->bin || !m->bin->loaded ||
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
		out->module = gt_intern(&s->strings, mod, (size_t)n);
		if (!out->module)
			out->module = "[kernel]";
	}
	return 0;
}

int gt_symbolizer_binary_info(struct gt_symbolizer *s, pid_t pid, uint64_t ip)
{
	struct proc *p = *proc_slot(s, pid);
	const struct proc_map *m;

	if (!p)
		return -ESRCH;
	m = find_map(p, ip);
	if (!m)
		return -ENOENT;
	return m->bin && m->bin->loaded ? (int)m->bin->b.flags : 0;
}

size_t gt_symbolizer_names(const struct gt_symbolizer *s)
{
	return s->strings.n;
}
