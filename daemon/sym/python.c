/* See python.h.  Offsets are CPython's own (offsetof on the internal
 * headers of each version, x86-64 and arm64 alike: LP64, no packing). */
#include "python.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loader.h"
#include "maps.h"
#include "safe_open.h"
#include "util/gt_grow.h"
#include "util/gt_idmap.h"
#include "util/gt_strset.h"

/* What user space reads of a code object and a str, by version. */
struct py_layout {
	unsigned minor;
	struct gt_py_proc bpf;     /* all but runtime */
	uint16_t co_name, co_filename, co_firstlineno, co_linetable, co_code;
	uint16_t ascii_data;       /* sizeof(PyASCIIObject) */
	uint16_t compact_data;     /* sizeof(PyCompactUnicodeObject) */
};

static const struct py_layout layouts[] = {
	{11, {.interp_head = 40, .threads_head = 16, .tstate_next = 8, .native_tid = 160,
	      .cframe = 56, .current_frame = 8, .code = 32, .previous = 48, .instr = 56,
	      .entry = 68, .entry_val = 1, .deref2 = 1, .version_minor = 11},
	 120, 112, 72, 136, 184, 48, 72},
	{12, {.interp_head = 40, .threads_head = 72, .tstate_next = 8, .native_tid = 144,
	      .cframe = 56, .current_frame = 0, .code = 0, .previous = 8, .instr = 56,
	      .entry = 70, .entry_val = 3, .deref2 = 1, .version_minor = 12},
	 120, 112, 68, 136, 192, 40, 56},
};

#define PY_STR_MAX 1024          /* bytes of a name or path kept */
/* A line table of 64 KiB: the largest of 3.11's stdlib (18755 code
 * objects) is html/entities.py's module, 39 KiB, the next 15 KiB; a longer
 * one keeps its names, without lines. */
#define PY_LINETABLE_MAX (1u << 16)
/* What one process set may cost the daemon (the processes choose how many
 * code objects they make, and how long their names are): past either, a
 * new code object is named "[python]" until gt_python_names_free. */
#define PY_NAMES_BYTES_MAX ((size_t)64 << 20)
#define PY_CODES_MAX 65536
/* A code object whose header does not read is tried this many times (it
 * may be read before the process wrote it), then named "[python]". */
#define PY_CODE_TRIES 3
/* New code objects read per drain of the rings (gt_python_names_round):
 * each read is preads of another process's memory on the engine's
 * thread. */
#define PY_READS_PER_ROUND 64
#define PY_BYTES_DATA 32         /* offsetof(PyBytesObject, ob_sval) */
#define PY_VAR_SIZE 16           /* offsetof(PyVarObject, ob_size) */
#define PY_STR_LENGTH 16         /* offsetof(PyASCIIObject, length) */
#define PY_STR_STATE 32          /* offsetof(PyASCIIObject, state) */

static const struct py_layout *layout_of(unsigned minor)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

/* The minor version in a file name: python3.X or libpython3.X..., else 0. */
static unsigned name_minor(const char *path, size_t len)
{
	const char *base = path, *p;
	unsigned minor = 0;

	for (size_t i = 0; i < len; i++)
		if (path[i] == '/')
			base = path + i + 1;
	if ((size_t)(base - path) + 9 > len)
		return 0;
	if (!strncmp(base, "libpython3.", 11))
		p = base + 11;
	else if (!strncmp(base, "python3.", 8))
		p = base + 8;
	else
		return 0;
	while (p < path + len && *p >= '0' && *p <= '9' && minor < 100)
		minor = minor * 10 + (unsigned)(*p++ - '0');
	/* python3.X exactly, libpython3.X or libpython3.X.so...: not
	 * python3.11-config, nor python3.11/site-packages/... */
	if (p < path + len && !(base[0] == 'l' && *p == '.'))
		return 0;
	return minor;
}

int gt_python_binary_name(const char *path, size_t len)
{
	return name_minor(path, len) != 0;
}

/* The link-time address of symbol name in the ELF open at fd (.dynsym or
 * .symtab), and whether the file is ET_EXEC; 0 or -ENOENT. */
static int elf_symbol(int fd, const char *name, uint64_t *value, int *is_exec, uint64_t *first_vaddr)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	int rc = -ENOENT;

	if (!elf || !gelf_getehdr(elf, &eh)) {
		if (elf)
			elf_end(elf);
		return -ENOEXEC;
	}
	*is_exec = eh.e_type == ET_EXEC;
	*first_vaddr = UINT64_MAX;
	for (size_t i = 0; i < eh.e_phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr < *first_vaddr)
			*first_vaddr = ph.p_vaddr & ~(uint64_t)0xfff;
	}
	while (rc && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    sh.sh_entsize != sizeof(Elf64_Sym) || !(d = elf_getdata(scn, NULL)))
			continue; /* LP64 only (the layouts are): a size lies else */
		for (size_t k = 0; k < sh.sh_size / sh.sh_entsize && k < INT_MAX; k++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(d, (int)k, &sym))
				break; /* past the data: the rest would fail too */
			if (sym.st_shndx == SHN_UNDEF)
				continue;
			n = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (n && !strcmp(n, name)) {
				*value = sym.st_value;
				rc = 0;
				break;
			}
		}
	}
	elf_end(elf);
	return rc;
}

/* Bytes at addr of the process's memory open at mem: 0 or -EFAULT. */
static int mem_read(int mem, uint64_t addr, void *buf, size_t n)
{
	return pread(mem, buf, n, (off_t)addr) == (ssize_t)n ? 0 : -EFAULT;
}

int gt_python_open_mem(pid_t pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* _PyRuntime's address in the mapping m of pid (its file's offset-0
 * mapping at base): 0 or -errno. */
static int runtime_of(pid_t pid, const struct gt_map_line *m, uint64_t base, uint64_t *runtime)
{
	char link[96];
	uint64_t value = 0, first = 0;
	int fd, is_exec = 0, rc;

	snprintf(link, sizeof(link), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid,
		 m->start, m->end);
	fd = gt_sym_open(AT_FDCWD, link, GT_SYM_OPEN_TRUSTED, NULL, GT_SYM_FILE_MAX);
	if (fd < 0)
		return fd;
	rc = elf_symbol(fd, "_PyRuntime", &value, &is_exec, &first);
	close(fd);
	if (rc)
		return rc;
	*runtime = is_exec ? value : base - first + value;
	return 0;
}

int gt_python_detect(pid_t pid, struct gt_py_proc *out)
{
	char path[64], line[4096];
	uint64_t base = 0;
	unsigned minor = 0;
	int rc = -ENOENT, seen = 0;
	FILE *f;

	elf_version(EV_CURRENT);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (rc == -ENOENT && fgets(line, sizeof(line), f)) {
		struct gt_map_line m;
		const struct py_layout *l;
		uint64_t runtime;

		if (gt_map_line_parse(line, strlen(line), &m) || !m.path_len)
			continue;
		minor = name_minor(m.path, m.path_len);
		if (!minor)
			continue;
		if (m.offset == 0)
			base = m.start;
		if (!m.executable)
			continue;
		l = layout_of(minor);
		if (!l) {
			rc = -ENOTSUP;
			break;
		}
		seen = 1;
		if (runtime_of(pid, &m, base, &runtime) == 0) {
			*out = l->bpf;
			out->runtime = runtime;
			rc = 0;
		}
	}
	fclose(f);
	return rc == -ENOENT && seen ? -ENODATA : rc;
}

/* Location table (Objects/locations.md of CPython 3.11): varints of 6
 * bits a byte, bit 6 set when more follow. */
struct lt {
	const uint8_t *p, *end;
};

static unsigned lt_varint(struct lt *t)
{
	unsigned v = 0, shift = 0;

	while (t->p < t->end && shift < 30) {
		uint8_t b = *t->p++;

		v |= (unsigned)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			break;
	}
	return v;
}

static int lt_svarint(struct lt *t)
{
	unsigned v = lt_varint(t);

	return v & 1 ? -(int)(v >> 1) : (int)(v >> 1);
}

int gt_python_addr2line(const uint8_t *tab, size_t n, int firstlineno, int addr)
{
	struct lt t = {tab, tab + n};
	int64_t line = firstlineno; /* the target's numbers: never overflow */
	int start = 0;

	if (addr < 0)
		return firstlineno;
	while (t.p < t.end) {
		uint8_t b = *t.p++;
		int code = (b >> 3) & 15, end = start + ((b & 7) + 1) * 2, delta = 0, none = 0;

		if (!(b & 128))
			return -1; /* not an entry's first byte: a table read wrong */
		if (code == 15) {
			none = 1;
		} else if (code == 14) {
			delta = lt_svarint(&t);
			lt_varint(&t);
			lt_varint(&t);
			lt_varint(&t);
		} else if (code == 13) {
			delta = lt_svarint(&t);
		} else if (code >= 10) {
			delta = code - 10;
			t.p = t.end - t.p >= 2 ? t.p + 2 : t.end;
		} else {
			t.p = t.p < t.end ? t.p + 1 : t.end;
		}
		line += delta;
		if (line > INT_MAX)
			line = INT_MAX;
		else if (line < INT_MIN)
			line = INT_MIN;
		if (addr < end)
			return none ? -1 : (int)line;
		start = end;
	}
	return -1;
}

/* A code object's names, cached by {pid, address}: func NULL while its
 * header has not read yet (tries so far), "[python]" once it never will. */
static const char unnamed[] = "[python]";

struct code_info {
	const char *func, *file;
	const uint8_t *linetable; /* interned copy, or NULL */
	uint32_t ntable;
	int32_t firstlineno;
	uint32_t tries;
	int pending;              /* async: a loader thread reads it */
};

/* A code object's fields as read from the process, before interning: on
 * the engine's thread (sync) or a loader thread (async, the job's arg). */
struct code_raw {
	uint64_t key[2];          /* {pid, code} */
	const struct py_layout *l;
	int mem;                  /* async: a duplicate of the process's */
	int rc;                   /* 0 read (names maybe not), -EFAULT header */
	char func[PY_STR_MAX], file[PY_STR_MAX];
	size_t nfunc, nfile;      /* 0: unreadable */
	uint8_t *table;           /* malloc'd, or NULL */
	size_t ntable;
	int32_t first;
};

struct gt_python_names {
	struct gt_idmap codes;     /* {pid, code} -> struct code_info */
	struct gt_strset strs;     /* names, files and line tables */
	size_t bytes, max_bytes;   /* interned so far, and the budget */
	size_t max_codes;
	unsigned reads;            /* new code objects read this round */
	int async;                 /* reads on loader threads (the engine's) */
	struct py_read {
		struct gt_sym_job *job;
		pid_t pid;
	} *pending;                /* async reads under way */
	size_t npending, cappending;
};

struct gt_python_names *gt_python_names_new(void)
{
	struct gt_python_names *n = calloc(1, sizeof(*n));

	if (n) {
		gt_idmap_init(&n->codes, 2, sizeof(struct code_info));
		n->max_bytes = PY_NAMES_BYTES_MAX;
		n->max_codes = PY_CODES_MAX;
	}
	return n;
}

/* Lets the reads of pid go (every pid: -1). */
static void drop_reads(struct gt_python_names *n, pid_t pid)
{
	for (size_t i = n->npending; i-- > 0;) {
		if (pid >= 0 && n->pending[i].pid != pid)
			continue;
		gt_sym_job_drop(n->pending[i].job);
		n->pending[i] = n->pending[--n->npending];
	}
}

void gt_python_names_free(struct gt_python_names *n)
{
	if (!n)
		return;
	drop_reads(n, -1);
	free(n->pending);
	gt_idmap_free(&n->codes);
	gt_strset_free(&n->strs);
	free(n);
}

void gt_python_names_limit(struct gt_python_names *n, size_t bytes, size_t codes)
{
	n->max_bytes = bytes;
	n->max_codes = codes;
}

size_t gt_python_names_bytes(const struct gt_python_names *n)
{
	return n->bytes;
}

static void harvest(struct gt_python_names *n);

void gt_python_names_async(struct gt_python_names *n, int async)
{
	n->async = async;
}

void gt_python_names_harvest(struct gt_python_names *n)
{
	if (n && n->npending)
		harvest(n);
}

void gt_python_names_round(struct gt_python_names *n)
{
	if (!n)
		return;
	harvest(n);
	n->reads = 0;
}

/* A stable copy of p[0..len), counted against the budget (a string
 * already held costs nothing more); NULL if it might pass it. */
static const char *intern(struct gt_python_names *n, const void *p, size_t len)
{
	/* its copy, NUL, alignment and entry with its slots */
	const size_t cost = len + 8 + sizeof(struct gt_strset_ent) + 2 * sizeof(uint32_t);
	const void *copy = NULL;
	size_t before = n->strs.n;

	if (!len || cost > n->max_bytes - n->bytes ||
	    gt_strset_add(&n->strs, p, len, NULL, &copy))
		return NULL;
	if (n->strs.n != before)
		n->bytes += cost;
	return copy;
}

/* The str object at addr, if compact and one byte a character (ASCII or
 * Latin-1: names and paths nearly always), into buf: its length, 0 if not. */
static size_t read_str(int mem, const struct py_layout *l, uint64_t addr, char *buf)
{
	uint64_t len;
	uint32_t state;
	unsigned kind;

	if (!addr || mem_read(mem, addr + PY_STR_LENGTH, &len, sizeof(len)) ||
	    mem_read(mem, addr + PY_STR_STATE, &state, sizeof(state)))
		return 0;
	kind = (state >> 2) & 7;
	if (!(state & 32) || kind != 1 || !len) /* compact, 1 byte a char */
		return 0;
	if (len > PY_STR_MAX)
		len = PY_STR_MAX;
	if (mem_read(mem, addr + (state & 64 ? l->ascii_data : l->compact_data), buf, len))
		return 0;
	for (size_t i = 0; i < len; i++)
		if (buf[i] == 0 || (unsigned char)buf[i] >= 128)
			return 0; /* Latin-1 beyond ASCII: not UTF-8 as is */
	return (size_t)len;
}

/* Reads code object r->key[1] (layout r->l) of the memory open at mem:
 * r->rc 0 (names unreadable past its header: "[python]", for good) or
 * -EFAULT (the header unreadable: maybe not written yet). */
static void read_raw(struct code_raw *r, int mem)
{
	const struct py_layout *l = r->l;
	const uint64_t code = r->key[1];
	uint64_t name = 0, file = 0, table = 0, size = 0;

	r->rc = -EFAULT;
	if (mem_read(mem, code + l->co_name, &name, 8) ||
	    mem_read(mem, code + l->co_filename, &file, 8) ||
	    mem_read(mem, code + l->co_firstlineno, &r->first, 4) ||
	    mem_read(mem, code + l->co_linetable, &table, 8))
		return;
	r->rc = 0;
	r->nfunc = read_str(mem, l, name, r->func);
	r->nfile = r->nfunc ? read_str(mem, l, file, r->file) : 0;
	if (!r->nfunc || !r->nfile || !table || mem_read(mem, table + PY_VAR_SIZE, &size, 8) ||
	    !size || size > PY_LINETABLE_MAX || !(r->table = malloc(size)))
		return;
	if (mem_read(mem, table + PY_BYTES_DATA, r->table, size)) {
		free(r->table);
		r->table = NULL;
		return;
	}
	r->ntable = size;
}

/* What was read, interned into *ci (tries kept). */
static void take_raw(struct gt_python_names *n, const struct code_raw *r, struct code_info *ci)
{
	uint32_t tries = ci->tries;

	*ci = (struct code_info){0};
	if (r->rc) {
		ci->tries = tries + 1;
		return;
	}
	ci->func = r->nfunc ? intern(n, r->func, r->nfunc) : NULL;
	ci->file = ci->func && r->nfile ? intern(n, r->file, r->nfile) : NULL;
	ci->firstlineno = r->first;
	if (!ci->func || !ci->file) {
		ci->func = ci->file = unnamed;
		return;
	}
	if (r->table) {
		ci->linetable = (const uint8_t *)intern(n, r->table, r->ntable);
		ci->ntable = ci->linetable ? (uint32_t)r->ntable : 0;
	}
}

/* On a loader thread. */
static int run_read(void *arg)
{
	struct code_raw *r = arg;

	read_raw(r, r->mem);
	return 0;
}

static void free_raw(void *arg)
{
	struct code_raw *r = arg;

	if (r->mem >= 0)
		close(r->mem);
	free(r->table);
	free(r);
}

/* Posts the read of code object key (async): 0, or -errno. */
static int post_read(struct gt_python_names *n, int mem, const struct py_layout *l,
		     const uint64_t key[2])
{
	struct code_raw *r;
	char what[64];

	if (n->npending >= PY_READS_PER_ROUND ||
	    gt_grow(&n->pending, &n->cappending, n->npending + 1, sizeof(*n->pending)))
		return -EAGAIN;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	memcpy(r->key, key, sizeof(r->key));
	r->l = l;
	r->mem = fcntl(mem, F_DUPFD_CLOEXEC, 0);
	if (r->mem < 0) {
		free(r);
		return -EMFILE;
	}
	snprintf(what, sizeof(what), "/proc/%d/mem (CPython code 0x%" PRIx64 ")", (int)key[0],
		 key[1]);
	n->pending[n->npending].pid = (pid_t)key[0];
	n->pending[n->npending].job = gt_sym_call_post((pid_t)key[0], what, run_read, r, free_raw);
	if (!n->pending[n->npending].job) {
		free_raw(r);
		return -ENOMEM;
	}
	n->npending++;
	return 0;
}

/* The reads finished since, into the cache (async). */
static void harvest(struct gt_python_names *n)
{
	for (size_t i = n->npending; i-- > 0;) {
		struct gt_sym_job *j = n->pending[i].job;
		const struct code_raw *r;
		struct code_info *ci;
		int rc;

		if (!gt_sym_job_wait(j, 0))
			continue;
		r = gt_sym_call_result(j, &rc);
		ci = gt_idmap_find(&n->codes, r->key);
		if (ci && ci->pending)
			take_raw(n, r, ci);
		gt_sym_job_drop(j);
		n->pending[i] = n->pending[--n->npending];
	}
}

/* The cached names of code object key[1], read now (or, async, asked of
 * a loader thread) if new and the budgets allow; NULL: "[python]" (for
 * now or for good). */
static const struct code_info *code_of(struct gt_python_names *n, int mem,
				       const struct py_layout *l, const uint64_t key[2],
				       int *later)
{
	struct code_info *ci = gt_idmap_find(&n->codes, key);
	struct code_raw got;
	int isnew;

	*later = 0;
	if (ci && ci->func)
		return ci->func == unnamed ? NULL : ci;
	if (ci && ci->pending) {
		*later = 1;
		return NULL; /* being read */
	}
	if (ci && ci->tries >= PY_CODE_TRIES)
		return NULL; /* never read: "[python]" for good */
	if (mem < 0 || (!ci && n->codes.count >= n->max_codes))
		return NULL; /* past the budget */
	if (n->reads >= PY_READS_PER_ROUND) {
		*later = 1;
		return NULL; /* a later round */
	}
	n->reads++;
	if (!ci && !(ci = gt_idmap_insert(&n->codes, key, &isnew)))
		return NULL;
	if (n->async) {
		ci->pending = post_read(n, mem, l, key) == 0;
		*later = 1; /* (a post that failed: tried again later) */
		return NULL; /* named once read */
	}
	memset(&got, 0, sizeof(got));
	memcpy(got.key, key, sizeof(got.key));
	got.l = l;
	read_raw(&got, mem);
	take_raw(n, &got, ci);
	free(got.table);
	return ci->func && ci->func != unnamed ? ci : NULL;
}

int gt_python_name(struct gt_python_names *n, pid_t pid, int mem, const struct gt_py_proc *p,
		   const struct gt_py_frame *f, const char **func, const char **file,
		   unsigned *line)
{
	const struct py_layout *l = layout_of(p->version_minor);
	const uint64_t key[2] = {(uint64_t)pid, f->code};
	const struct code_info *ci;
	int ln, later;

	*func = *file = "[python]";
	*line = 0;
	if (!l || !f->code)
		return -ENOTSUP;
	ci = code_of(n, mem, l, key, &later);
	if (!ci)
		return later ? -EINPROGRESS : -EFAULT;
	*func = ci->func;
	*file = ci->file;
	/* the code unit before the next instruction (prev_instr), counted
	 * from the first after the object's header; -1 in a frame not yet
	 * started (its first line then), as _PyInterpreterFrame_GetLine */
	int64_t unit = ((int64_t)(f->instr - f->code) - (int64_t)l->co_code) / 2;

	ln = unit < -1 || unit > (int64_t)PY_LINETABLE_MAX * 8 ? -1
		: gt_python_addr2line(ci->linetable, ci->ntable, ci->firstlineno, (int)unit * 2);
	*line = ln > 0 ? (unsigned)ln : 0;
	/* py-spy's `function (file:line)`: folded stacks show functions only;
	 * past the budget the function alone */
	char buf[2 * PY_STR_MAX + 32];
	int len = snprintf(buf, sizeof(buf), "%s (%s:%u)", ci->func, ci->file, *line);
	const char *full = len > 0 ? intern(n, buf, (size_t)len < sizeof(buf) ? (size_t)len
					    : sizeof(buf) - 1) : NULL;

	if (full)
		*func = full;
	return 0;
}

void gt_python_names_forget(struct gt_python_names *n, pid_t pid)
{
	if (!n)
		return;
	drop_reads(n, pid);
	for (size_t i = 0; i < n->codes.cap; i++)
		if (gt_idmap_full(&n->codes, i) && gt_idmap_key(&n->codes, i)[0] == (uint64_t)pid)
			gt_idmap_remove(&n->codes, gt_idmap_key(&n->codes, i));
}
