/* Go binaries: the TLS slot of g and g.goid's offset (goinfo.h).
 *
 * The g slot, as delve computes it (pkg/proc/bininfo.go,
 * setGStructOffsetElf): on amd64 a pure-Go binary keeps g at -8 from the
 * thread pointer; one linked externally (cgo) places it in the TLS block by
 * the TLS symbol runtime.tlsg, at tlsg - (PT_TLS memsz, padded so that the
 * block's offset is aligned as its vaddr is).  A stripped binary has no
 * runtime.tlsg: -8, as delve assumes.  arm64 keeps g in R28 (no offset).
 *
 * g.goid: from the table by the Go version in the build info
 * (.go.buildinfo) for the versions it knows, else from the DWARF type
 * runtime.g.  The table is what each toolchain's DWARF says (test_goinfo
 * holds it to the DWARF of binaries built by every installed Go), and
 * costs nothing: libdw inflates a Go binary's compressed .debug_info to
 * find the unit, 0.4 s and 26 MiB for the 18 MB go command, on the thread
 * that reads the events.  */
#include "goinfo.h"

#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>

/* DWARF constants (<dwarf.h> is shadowed by this folder's dwarf.h) */
#define GT_DW_TAG_STRUCT   0x13 /* DW_TAG_structure_type */
#define GT_DW_AT_MEMBER_AT 0x38 /* DW_AT_data_member_location */

#if defined(__x86_64__)
#define GT_GO_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define GT_GO_MACHINE EM_AARCH64
#else
#define GT_GO_MACHINE EM_NONE
#endif

/* The oldest Go whose goroutine ids are read. */
#define GT_GO_MINOR_MIN 19

/* This runs on the daemon's event loop (docs/security.md): what libdw may
 * inflate of one .debug_* section, and read of one stored plain. */
#define GT_DEBUG_INFLATED_MAX (64ull << 20)
#define GT_DEBUG_PLAIN_MAX    (256ull << 20)
#define GT_FUSE_SUPER_MAGIC   0x65735546 /* linux/magic.h */

/* g.goid on 64-bit targets, measured from each toolchain's DWARF
 * (runtime.g.goid's DW_AT_data_member_location): 152 from Go 1.19 (where
 * stack, stackguard*, _panic, _defer, m, sched, ... precede it) through
 * 1.22; 1.23 added syscallbp before it.  Later versions are not measured
 * here: their binaries need DWARF. */
uint32_t gt_goinfo_goid_table(int minor)
{
	if (minor >= 19 && minor <= 22)
		return 152;
	if (minor == 23)
		return 160;
	return 0;
}

/* g.labels, measured the same way: 360 in Go 1.19, 344 in 1.21 and 1.22
 * (the tracer's fields before it went), 352 in 1.23.  Go 1.20 was not
 * measured (no toolchain here): none, its labels are not read.  The map
 * it leads to is a hmap up to 1.23 only (1.24: swiss tables). */
uint32_t gt_goinfo_labels_table(int minor)
{
	switch (minor) {
	case 19: return 360;
	case 21:
	case 22: return 344;
	case 23: return 352;
	}
	return 0;
}

/* g.m (48: after stack, stackguard0/1, _panic, _defer) and m.curg (192)
 * are where they were from Go 1.19 to 1.23 (DWARF of 1.19, 1.21, 1.22 and
 * 1.23; 1.20 between two that agree), and g.atomicstatus is 8 bytes
 * before g.goid in all of them (bpf/goid.bpf.h reads both at once). */
uint32_t gt_goinfo_m_table(int minor)
{
	return minor >= 19 && minor <= 23 ? 48 : 0;
}

uint32_t gt_goinfo_curg_table(int minor)
{
	return minor >= 19 && minor <= 23 ? 192 : 0;
}

static Elf_Scn *find_section(Elf *elf, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* Go 1.minor from .go.buildinfo: a 32-byte header "\xff Go buildinf:",
 * pointer size, flags; flag 2 = the version string follows inline, as a
 * varint length and its bytes (Go 1.18+). */
static int read_minor(Elf *elf)
{
	Elf_Scn *scn = find_section(elf, ".go.buildinfo");
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	const unsigned char *p;
	char ver[32];
	size_t len;

	if (!d || !d->d_buf || d->d_size < 34 || memcmp(d->d_buf, "\xff Go buildinf:", 14))
		return 0;
	p = d->d_buf;
	if (!(p[15] & 2))
		return 0; /* before Go 1.18: pointers to the strings */
	len = p[32];
	if (len & 0x80 || len >= sizeof(ver) || 33 + len > d->d_size)
		return 0;
	memcpy(ver, p + 33, len);
	ver[len] = 0;
	if (strncmp(ver, "go1.", 4))
		return 0; /* devel builds say "devel go1.x-..." */
	return atoi(ver + 4);
}

/* The value of the symbol name in .symtab, 0 and -ENOENT if none. */
static int find_symbol(Elf *elf, const char *name, GElf_Sym *out)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		/* an entsize of 1 claimed sh_size symbols; the count comes from
		 * the data libelf holds, and the first bad one ends the scan */
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    sh.sh_entsize != sizeof(Elf64_Sym))
			continue;
		if (!(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < d->d_size / sizeof(Elf64_Sym) && i <= INT32_MAX; i++) {
			const char *n;
			if (!gelf_getsym(d, (int)i, out))
				break;
			n = elf_strptr(elf, sh.sh_link, out->st_name);
			if (n && !strcmp(n, name))
				return 0;
		}
	}
	return -ENOENT;
}

static int64_t amd64_tls_off(Elf *elf)
{
	GElf_Phdr ph, tls = {0};
	GElf_Sym tlsg;
	size_t n = 0;

	if (elf_getphdrnum(elf, &n))
		return -8;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_TLS)
			tls = ph;
	if (!tls.p_memsz || find_symbol(elf, "runtime.tlsg", &tlsg))
		return -8;
	uint64_t align = tls.p_align ? tls.p_align : 1;
	uint64_t memsz = tls.p_memsz + ((-tls.p_vaddr - tls.p_memsz) & (align - 1));
	/* unsigned: a hostile st_value or memsz must not overflow int64_t;
	 * the wrapped difference is the two's complement offset */
	return (int64_t)(tlsg.st_value - memsz);
}

/* DW_AT_name of die is name. */
static int die_named(Dwarf_Die *die, const char *name)
{
	const char *n = dwarf_diename(die);
	return n && !strcmp(n, name);
}

/* -EFBIG if libdw would inflate a .debug_* section (SHF_COMPRESSED, its
 * Elf64_Chdr's ch_size) or a .zdebug_* one (GNU "ZLIB" and a big-endian
 * size, Go before 1.20) past GT_DEBUG_INFLATED_MAX, or read one stored
 * plain past GT_DEBUG_PLAIN_MAX: a hostile binary held the loop. */
static int debug_too_big(Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0; /* no section names: libdw finds no DWARF either */
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		Elf_Data *raw;
		uint64_t size = sh.sh_size;

		if (!n || sh.sh_type == SHT_NOBITS ||
		    (strncmp(n, ".debug_", 7) && strncmp(n, ".zdebug_", 8)))
			continue;
		if (sh.sh_flags & SHF_COMPRESSED) {
			Elf64_Chdr ch;

			raw = elf_rawdata(scn, NULL);
			if (!raw || !raw->d_buf || raw->d_size < sizeof(ch))
				return -EFBIG; /* cannot tell: not for the loop */
			memcpy(&ch, raw->d_buf, sizeof(ch));
			size = ch.ch_size;
			if (size > GT_DEBUG_INFLATED_MAX)
				return -EFBIG;
		} else if (n[1] == 'z') {
			const unsigned char *p;

			raw = elf_rawdata(scn, NULL);
			if (!raw || !raw->d_buf || raw->d_size < 12 || memcmp(raw->d_buf, "ZLIB", 4))
				continue; /* libdw reads it as it is: the plain bound holds */
			p = (const unsigned char *)raw->d_buf + 4;
			size = 0;
			for (int i = 0; i < 8; i++)
				size = size << 8 | p[i];
			if (size > GT_DEBUG_INFLATED_MAX)
				return -EFBIG;
		}
		if (size > GT_DEBUG_PLAIN_MAX)
			return -EFBIG;
	}
	return 0;
}

/* The offset of member `member` in the struct type `type` (runtime.g) of
 * the "runtime" unit. */
static int dwarf_member(Elf *elf, const char *type, const char *member, uint32_t *off)
{
	int err = debug_too_big(elf);
	Dwarf *dw = err ? NULL : dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	Dwarf_Off cu = 0, next;
	size_t hsize;

	if (err)
		return err;
	err = -ENOENT;
	if (!dw)
		return -ENOENT;
	while (err && dwarf_nextcu(dw, cu, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cud, die, mem;
		if (dwarf_offdie(dw, cu + hsize, &cud) && die_named(&cud, "runtime") &&
		    dwarf_child(&cud, &die) == 0) {
			do {
				if (dwarf_tag(&die) != GT_DW_TAG_STRUCT || !die_named(&die, type) ||
				    dwarf_child(&die, &mem))
					continue;
				do {
					Dwarf_Attribute a;
					Dwarf_Word w;
					if (die_named(&mem, member) &&
					    dwarf_attr(&mem, GT_DW_AT_MEMBER_AT, &a) &&
					    !dwarf_formudata(&a, &w) && w < 4096) {
						*off = (uint32_t)w;
						err = 0;
					}
				} while (err && dwarf_siblingof(&mem, &mem) == 0);
			} while (err && dwarf_siblingof(&die, &die) == 0);
		}
		cu = next;
	}
	dwarf_end(dw);
	return err;
}

/* -EPERM for a file on FUSE: its server answers each page fault of the
 * mapping, or never, and this runs on the event loop. */
static int on_fuse(int fd)
{
	struct statfs sfs;

	if (fstatfs(fd, &sfs))
		return -errno;
	return sfs.f_type == GT_FUSE_SUPER_MAGIC ? -EPERM : 0;
}

int gt_goinfo_dwarf_member(int fd, const char *type, const char *member, uint32_t *off)
{
	Elf *elf;
	int err;

	if ((err = on_fuse(fd)))
		return err;
	elf_version(EV_CURRENT);
	if (!(elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)))
		return -ENOENT;
	err = dwarf_member(elf, type, member, off);
	elf_end(elf);
	return err;
}

int gt_goinfo_dwarf_goid(int fd, uint32_t *off)
{
	return gt_goinfo_dwarf_member(fd, "runtime.g", "goid", off);
}

int gt_goinfo_read(int fd, struct gt_goinfo *out)
{
	Elf *elf;
	GElf_Ehdr eh;
	int err = -ENOENT;

	memset(out, 0, sizeof(*out));
	if ((err = on_fuse(fd)))
		return err;
	err = -ENOENT;
	elf_version(EV_CURRENT);
	if (!(elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)))
		return -ENOENT;
	if (!gelf_getehdr(elf, &eh) || eh.e_machine != GT_GO_MACHINE || eh.e_ident[EI_CLASS] != ELFCLASS64)
		goto out;
	out->minor = read_minor(elf);
	if (out->minor < GT_GO_MINOR_MIN)
		goto out; /* not Go, or older than the goroutine ids are known for */
	if (!(out->goid_off = gt_goinfo_goid_table(out->minor))) {
		if ((err = dwarf_member(elf, "runtime.g", "goid", &out->goid_off)))
			goto out; /* a Go newer than the table, without DWARF */
		out->goid_from_dwarf = 1;
	}
	out->labels_off = gt_goinfo_labels_table(out->minor);
	out->m_off = gt_goinfo_m_table(out->minor);
	out->curg_off = gt_goinfo_curg_table(out->minor);
	out->tls_off = eh.e_machine == EM_X86_64 ? amd64_tls_off(elf) : 0;
	err = 0;
out:
	elf_end(elf);
	return err;
}
