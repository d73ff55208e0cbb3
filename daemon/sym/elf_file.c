/* ELF side of the symbolizer: segments, symbols, debug files, Go tables. */
#include "elf_file.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "debug_file.h"
#include "minidebug.h"
#include "symbolize.h"

static int elf_ready(void)
{
	static int ok = -1;

	if (ok < 0)
		ok = elf_version(EV_CURRENT) != EV_NONE;
	return ok ? 0 : -ENOTSUP;
}

static int load_segments(struct gt_binary *b, Elf *elf)
{
	size_t n, i;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	b->segs = calloc(n ? n : 1, sizeof(*b->segs));
	if (!b->segs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		b->segs[b->nsegs++] = (struct gt_sym_segment){
			ph.p_vaddr, ph.p_offset, ph.p_filesz };
	}
	return 0;
}

/* Adds the FUNC symbols of every SYMTAB/DYNSYM section of elf. */
static int load_symbols(struct gt_symtab *t, Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Sym s;
			const char *name;
			int type, err;

			if (!gelf_getsym(data, (int)i, &s))
				break;
			type = GELF_ST_TYPE(s.st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
			    s.st_shndx == SHN_UNDEF || !s.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!name || !*name)
				continue;
			err = gt_symtab_add(t, s.st_value, s.st_size, name,
					    strlen(name), NULL);
			if (err)
				return err;
		}
	}
	return 0;
}

/* A separate debug file (debug_file.h); 0 if found. */
static int open_debug_file(struct gt_binary *b, Elf *elf, const struct gt_sym_origin *o)
{
	int fd = gt_debug_file_open(elf, o);

	if (fd < 0)
		return -ENOENT;
	b->debug_elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!b->debug_elf || elf_kind(b->debug_elf) != ELF_K_ELF) {
		if (b->debug_elf)
			elf_end(b->debug_elf);
		b->debug_elf = NULL;
		close(fd);
		return -EINVAL;
	}
	b->debug_fd = fd;
	return 0;
}

/* Maps the file and decodes its pclntab: the .gopclntab section, or a
 * scan for the magic when section headers or the section are gone. */
static int load_go(struct gt_binary *b, Elf *elf)
{
	GElf_Shdr sh, text;
	uint64_t text_start = 0;
	size_t size;
	long off;
	int has_sect, looks_go;

	/* PIE builds put it in .data.rel.ro.gopclntab. */
	has_sect = gt_elf_section(elf, ".gopclntab", &sh) != NULL ||
		   gt_elf_section(elf, ".data.rel.ro.gopclntab", &sh) != NULL;
	looks_go = has_sect || gt_elf_section(elf, ".go.buildinfo", &text) ||
		   gt_elf_section(elf, ".note.go.buildid", &text);
	if (!looks_go)
		return -ENOENT;
	if (gt_elf_section(elf, ".text", &text))
		text_start = text.sh_addr;
	else if (b->nsegs > 1)
		text_start = b->segs[1].vaddr; /* Go puts text in the 2nd LOAD */
	if (elf_rawfile(elf, &size) == NULL || !size)
		return -EINVAL;
	b->map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, b->fd, 0);
	if (b->map == MAP_FAILED) {
		b->map = NULL;
		return -errno;
	}
	b->map_len = size;
	if (has_sect && sh.sh_type != SHT_NOBITS && sh.sh_offset < size &&
	    sh.sh_size <= size - sh.sh_offset)
		off = (long)sh.sh_offset;
	else
		off = gt_pcln_find(b->map, size);
	if (off < 0)
		return (int)off;
	return gt_pcln_open(&b->pcln, (const uint8_t *)b->map + off,
			    size - (size_t)off, text_start);
}

#if defined(__x86_64__)
/* x86-64 heuristic: most sampled functions open with push %rbp (after an
 * optional endbr64) and set mov %rsp,%rbp within the next few bytes (the
 * compiler may schedule other instructions in between). */
static int has_fp_prologue(const uint8_t *code, size_t n)
{
	static const uint8_t endbr[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const uint8_t mov[3] = { 0x48, 0x89, 0xe5 };
	size_t k = memcmp(code, endbr, 4) ? 0 : 4;

	if (code[k] != 0x55)
		return 0;
	for (k++; k + 3 <= n; k++)
		if (!memcmp(code + k, mov, 3))
			return 1;
	return 0;
}
#endif

static int guess_frame_pointers(const struct gt_binary *b)
{
#if defined(__x86_64__)
	size_t step = b->syms.n / 64 + 1, seen = 0, with_fp = 0;

	for (size_t i = 0; i < b->syms.n; i += step) {
		const struct gt_symtab_entry *e = &b->syms.v[i];
		uint8_t code[20];
		uint64_t off;
		size_t k;

		if (e->size < sizeof(code))
			continue;
		for (k = 0; k < b->nsegs; k++)
			if (e->addr - b->segs[k].vaddr < b->segs[k].filesz)
				break;
		if (k == b->nsegs)
			continue;
		off = e->addr - b->segs[k].vaddr + b->segs[k].offset;
		if (pread(b->fd, code, sizeof(code), (off_t)off) != sizeof(code))
			continue;
		seen++;
		with_fp += has_fp_prologue(code, sizeof(code));
	}
	return seen && with_fp * 2 >= seen;
#else
	(void)b;
	return 0;
#endif
}

static void set_flags(struct gt_binary *b, Elf *elf)
{
	GElf_Shdr sh;

	if (b->syms.n)
		b->flags |= GT_SYM_HAS_SYMTAB;
	if (b->dwarf.dw)
		b->flags |= GT_SYM_HAS_DWARF;
	if (b->is_go)
		b->flags |= GT_SYM_HAS_PCLNTAB | GT_SYM_FRAME_POINTERS;
	if (gt_elf_section(elf, ".eh_frame", &sh))
		b->flags |= GT_SYM_HAS_EH_FRAME;
	if (!b->is_go && b->fd >= 0 && guess_frame_pointers(b))
		b->flags |= GT_SYM_FRAME_POINTERS;
}

/* Symbols, debug info and flags of an opened Elf handle. */
static int load_parts(struct gt_binary *b, Elf *elf, const struct gt_sym_origin *o)
{
	GElf_Shdr sh;
	int err;

	b->elf = elf;
	err = load_segments(b, elf);
	if (err)
		return err;
	b->is_go = b->fd >= 0 && load_go(b, elf) == 0;
	err = load_symbols(&b->syms, elf);
	/* Debug info: in the file itself, else a separate debug file. */
	if (!err && !b->is_go && !gt_elf_section(elf, ".debug_info", &sh) &&
	    open_debug_file(b, elf, o) == 0) {
		err = load_symbols(&b->syms, b->debug_elf);
		gt_dwarf_open(&b->dwarf, b->debug_elf);
	} else if (!err && !b->is_go) {
		gt_dwarf_open(&b->dwarf, elf);
	}
	/* no debug file and no .symtab: the MiniDebugInfo's, if any */
	if (!err && !b->is_go && !b->debug_elf && !gt_elf_section(elf, ".symtab", &sh) &&
	    gt_minidebug_open(elf, &b->mini_buf, &b->mini_elf) == 0)
		err = load_symbols(&b->syms, b->mini_elf);
	if (err)
		return err;
	gt_symtab_finish(&b->syms);
	set_flags(b, elf);
	gt_cfi_open(&b->cfi, elf); /* .eh_frame is in the file itself */
	return 0;
}

static Elf *check_kind(Elf *elf)
{
	if (elf && elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return NULL;
	}
	return elf;
}

int gt_binary_load(struct gt_binary *b, int fd, const struct gt_sym_origin *o)
{
	Elf *elf;
	int err;

	memset(b, 0, sizeof(*b));
	b->fd = fd;
	b->debug_fd = -1;
	err = elf_ready();
	if (!err) {
		elf = check_kind(elf_begin(fd, ELF_C_READ_MMAP, NULL));
		err = elf ? load_parts(b, elf, o) : -ENOEXEC;
	}
	if (err)
		gt_binary_close(b);
	return err;
}

int gt_binary_load_image(struct gt_binary *b, const void *image, size_t size)
{
	Elf *elf;
	int err;

	memset(b, 0, sizeof(*b));
	b->fd = b->debug_fd = -1;
	err = elf_ready();
	if (err)
		return err;
	b->image = malloc(size ? size : 1);
	if (!b->image)
		return -ENOMEM;
	memcpy(b->image, image, size);
	elf = check_kind(elf_memory(b->image, size));
	err = elf ? load_parts(b, elf, NULL) : -ENOEXEC;
	if (err)
		gt_binary_close(b);
	return err;
}

int gt_binary_vaddr(const struct gt_binary *b, uint64_t file_off,
		    uint64_t *vaddr)
{
	for (size_t i = 0; i < b->nsegs; i++) {
		const struct gt_sym_segment *s = &b->segs[i];

		if (file_off - s->offset < s->filesz) {
			*vaddr = file_off - s->offset + s->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

int gt_binary_lookup(const struct gt_binary *b, uint64_t vaddr,
		     struct gt_binary_sym *out)
{
	const struct gt_symtab_entry *e;
	struct gt_pcln_result r;

	memset(out, 0, sizeof(*out));
	if (b->is_go && gt_pcln_lookup(&b->pcln, vaddr, &r) == 0) {
		out->func = r.func;
		out->file = r.file;
		out->line = r.line > 0 ? (unsigned)r.line : 0;
		return 0;
	}
	e = gt_symtab_find(&b->syms, vaddr);
	if (e)
		out->func = e->name;
	if (gt_dwarf_line(&b->dwarf, vaddr, &out->file, &out->line))
		out->file = NULL, out->line = 0;
	if (!out->func)
		gt_dwarf_func(&b->dwarf, vaddr, &out->func);
	return out->func ? 0 : -ENOENT;
}

int gt_binary_ra(const struct gt_binary *b, uint64_t vaddr, struct gt_ra_rule *out)
{
	return gt_cfi_ra(&b->cfi, vaddr, out);
}

void gt_binary_close(struct gt_binary *b)
{
	gt_cfi_close(&b->cfi);
	gt_dwarf_close(&b->dwarf);
	if (b->debug_elf)
		elf_end(b->debug_elf);
	if (b->debug_fd >= 0)
		close(b->debug_fd);
	if (b->mini_elf)
		elf_end(b->mini_elf);
	free(b->mini_buf);
	if (b->elf)
		elf_end(b->elf);
	if (b->map)
		munmap(b->map, b->map_len);
	if (b->fd >= 0)
		close(b->fd);
	free(b->image);
	gt_symtab_free(&b->syms);
	free(b->segs);
	memset(b, 0, sizeof(*b));
	b->fd = b->debug_fd = -1;
}
