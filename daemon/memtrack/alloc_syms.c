/* Allocator discovery: /proc/PID/maps -> candidate binaries -> their ELF
 * symbols -> file offsets for uprobes; Go detection from ELF sections. */
#include "alloc_syms.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sym/maps.h"
#include "sym/safe_open.h"

const char *const gt_alloc_fn_names[GT_AF_COUNT] = {
	"malloc", "calloc", "realloc", "free", "posix_memalign",
	"aligned_alloc", "memalign", "valloc", "pvalloc",
};

static Elf *open_elf(const char *path, int *fd)
{
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	/* a user's file: no link, no FIFO, no device (sym/safe_open.h) */
	*fd = gt_sym_open_rooted(path, GT_SYM_FILE_MAX);
	if (*fd < 0) {
		errno = -*fd;
		return NULL;
	}
	e = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		close(*fd);
		errno = ENOEXEC;
		return NULL;
	}
	return e;
}

/* Link-time address -> file offset through the PT_LOAD headers. */
static int vaddr_to_offset(Elf *e, uint64_t vaddr, uint64_t *off)
{
	size_t n;

	if (elf_getphdrnum(e, &n))
		return -ENOEXEC;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

static int fn_index(const char *name)
{
	for (int i = 0; i < GT_AF_COUNT; i++)
		if (!strcmp(name, gt_alloc_fn_names[i]))
			return i;
	return -1;
}

/* Scans one symbol table for defined allocator functions. */
static int scan_symtab(Elf *e, Elf_Scn *scn, GElf_Shdr *sh, uint64_t offset[GT_AF_COUNT])
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	int found = 0;

	for (size_t i = 0; d && i < n; i++) {
		GElf_Sym s;
		const char *name;
		int k;

		if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
		    s.st_shndx == SHN_UNDEF || !s.st_value)
			continue;
		name = elf_strptr(e, sh->sh_link, s.st_name);
		if (!name || (k = fn_index(name)) < 0 || offset[k])
			continue;
		if (vaddr_to_offset(e, s.st_value, &offset[k]) == 0)
			found++;
	}
	return found;
}

int gt_alloc_elf_offsets(const char *path, uint64_t offset[GT_AF_COUNT])
{
	Elf_Scn *scn = NULL;
	int fd, found = 0;
	Elf *e = open_elf(path, &fd);

	memset(offset, 0, GT_AF_COUNT * sizeof(offset[0]));
	if (!e)
		return -errno;
	/* .dynsym first: what other objects bind to; .symtab adds static ones */
	for (int pass = 0; pass < 2; pass++) {
		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh))
				continue;
			if (sh.sh_type == (pass ? SHT_SYMTAB : SHT_DYNSYM))
				found += scan_symtab(e, scn, &sh, offset);
		}
	}
	elf_end(e);
	close(fd);
	return found;
}

int gt_alloc_is_go_binary(const char *path)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int fd, go = 0;
	Elf *e = open_elf(path, &fd);

	if (!e)
		return -errno;
	if (elf_getshdrstrndx(e, &shstrndx) == 0) {
		while (!go && (scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			const char *name;

			if (!gelf_getshdr(scn, &sh))
				continue;
			name = elf_strptr(e, shstrndx, sh.sh_name);
			go = name && (!strcmp(name, ".gopclntab") || !strcmp(name, ".go.buildinfo") ||
				      !strcmp(name, ".note.go.buildid"));
		}
	}
	elf_end(e);
	close(fd);
	return go;
}

/* Libraries that provide a malloc others bind to. */
static int allocator_lib(const char *path, size_t len)
{
	const char *base = path;

	for (size_t i = 0; i < len; i++)
		if (path[i] == '/')
			base = path + i + 1;
	return !strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5) ||
	       !strncmp(base, "libjemalloc", 11) || !strncmp(base, "libtcmalloc", 11);
}

static int seen_lib(const struct gt_alloc_target *t, const char *path)
{
	for (int i = 0; i < t->nlibs; i++)
		if (!strcmp(t->libs[i].path, path))
			return 1;
	return 0;
}

/* Adds the binary if it defines at least malloc and free. */
static void try_lib(struct gt_alloc_target *t, const char *path)
{
	struct gt_alloc_lib *l;

	if (t->nlibs >= GT_ALLOC_MAX_LIBS || seen_lib(t, path))
		return;
	l = &t->libs[t->nlibs];
	snprintf(l->path, sizeof(l->path), "%s", path);
	if (gt_alloc_elf_offsets(path, l->offset) > 0 && l->offset[GT_AF_MALLOC] &&
	    l->offset[GT_AF_FREE])
		t->nlibs++;
}

static int exe_path(pid_t pid, char *out, size_t outlen)
{
	char link[64], target[4096];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	target[n] = 0;
	/* through the process's root: it may live in another mount namespace */
	snprintf(out, outlen, "/proc/%d/root%s", (int)pid, target);
	return 0;
}

int gt_alloc_find(pid_t pid, struct gt_alloc_target *t)
{
	char path[64], exe[4200], lib[4200], *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f;
	int rc;

	memset(t, 0, sizeof(*t));
	rc = exe_path(pid, exe, sizeof(exe));
	if (rc)
		return rc;
	rc = gt_alloc_is_go_binary(exe);
	t->is_go = rc == 1;
	if (t->is_go)
		return 0; /* never probed: nothing more to find */
	try_lib(t, exe); /* a static binary, or one with its own allocator */
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((n = getline(&line, &cap, f)) > 0) {
		struct gt_map_line m;

		if (gt_map_line_parse(line, (size_t)n, &m) || !m.executable || !m.path_len ||
		    m.path[0] != '/' || !allocator_lib(m.path, m.path_len))
			continue;
		snprintf(lib, sizeof(lib), "/proc/%d/root%.*s", (int)pid, (int)m.path_len, m.path);
		try_lib(t, lib);
	}
	free(line);
	fclose(f);
	return 0;
}
