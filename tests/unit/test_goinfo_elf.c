/* daemon/sym/goinfo.c on crafted ELF files (it runs on the daemon's event
 * loop at each exec of a traced program, docs/security.md): a .symtab
 * whose sh_entsize is not an Elf64_Sym's is skipped (an entsize of 1
 * claimed sh_size symbols), and DWARF that libdw would inflate past 64 MiB
 * is refused before dwarf_begin_elf (-EFBIG). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gt_test.h"
#include "sym/goinfo.h"

static char shstr[] = "\0.shstrtab\0.go.buildinfo\0.symtab\0.strtab\0.debug_info";
static char str[] = "\0runtime.tlsg";

static Elf_Scn *add(Elf *e, unsigned name, unsigned type, uint64_t flags, void *buf, size_t n,
		    unsigned dtype)
{
	Elf_Scn *scn = elf_newscn(e);
	Elf_Data *d = elf_newdata(scn);
	GElf_Shdr sh;

	d->d_buf = buf;
	d->d_size = n;
	d->d_type = dtype;
	d->d_align = 8;
	d->d_version = EV_CURRENT;
	gelf_getshdr(scn, &sh);
	sh.sh_name = name;
	sh.sh_type = type;
	sh.sh_flags = flags;
	gelf_update_shdr(scn, &sh);
	return scn;
}

/* An amd64 ELF saying it is Go 1.minor, with PT_TLS (memsz 0x20),
 * runtime.tlsg = 0x10 in a .symtab of entsize symsz, and a .debug_info
 * compressed to say it inflates to inflated bytes. */
static int craft(const char *path, int minor, size_t symsz, uint64_t inflated)
{
	static unsigned char bi[64];
	static Elf64_Sym syms[2];
	static unsigned char dbg[sizeof(Elf64_Chdr) + 16];
	Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = inflated, .ch_addralign = 1 };
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), len;
	Elf *e;
	GElf_Ehdr eh;
	GElf_Phdr ph = { .p_type = PT_TLS, .p_memsz = 0x20, .p_align = 8 };
	GElf_Shdr sh;
	Elf_Scn *sym;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_WRITE, NULL);
	gelf_newehdr(e, ELFCLASS64);
	gelf_getehdr(e, &eh);
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_machine = EM_X86_64;
	eh.e_type = ET_EXEC;
	eh.e_version = EV_CURRENT;
	gelf_update_ehdr(e, &eh);
	gelf_newphdr(e, 1);
	gelf_update_phdr(e, 0, &ph);
	memcpy(bi, "\xff Go buildinf:", 14);
	bi[14] = 8;
	bi[15] = 2;
	len = snprintf((char *)bi + 33, sizeof(bi) - 33, "go1.%d", minor);
	bi[32] = (unsigned char)len;
	syms[1].st_name = 1;
	syms[1].st_value = 0x10;
	syms[1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_TLS);
	memcpy(dbg, &ch, sizeof(ch));
	add(e, 1, SHT_STRTAB, 0, shstr, sizeof(shstr), ELF_T_BYTE);
	add(e, 11, SHT_PROGBITS, 0, bi, sizeof(bi), ELF_T_BYTE);
	sym = add(e, 25, SHT_SYMTAB, 0, syms, sizeof(syms), ELF_T_SYM);
	add(e, 33, SHT_STRTAB, 0, str, sizeof(str), ELF_T_BYTE);
	add(e, 41, SHT_PROGBITS, SHF_COMPRESSED, dbg, sizeof(dbg), ELF_T_BYTE);
	gelf_getshdr(sym, &sh);
	sh.sh_link = 4;
	sh.sh_entsize = symsz;
	gelf_update_shdr(sym, &sh);
	gelf_getehdr(e, &eh); /* with e_phnum from gelf_newphdr */
	eh.e_shstrndx = 1;
	gelf_update_ehdr(e, &eh);
	if (elf_update(e, ELF_C_WRITE) < 0) {
		fprintf(stderr, "elf_update: %s\n", elf_errmsg(-1));
		len = -1;
	} else {
		len = 0;
	}
	elf_end(e);
	/* libelf writes a .symtab's entsize itself: patch it in the file
	 * (Elf64_Shdr of section 3, sh_entsize) */
	if (!len && symsz != sizeof(Elf64_Sym)) {
		Elf64_Ehdr h;
		uint64_t v = symsz;

		if (pread(fd, &h, sizeof(h), 0) != sizeof(h) ||
		    pwrite(fd, &v, 8, (off_t)(h.e_shoff + 3 * sizeof(Elf64_Shdr) +
					      offsetof(Elf64_Shdr, sh_entsize))) != 8)
			len = -1;
	}
	close(fd);
	return len;
}

static int read_info(const char *path, struct gt_goinfo *gi)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -errno;
	rc = gt_goinfo_read(fd, gi);
	close(fd);
	return rc;
}

static char dir[] = "/tmp/gt_goinfo_elf.XXXXXX";

static void test_symtab_entsize(void)
{
	char p[64];
	struct gt_goinfo gi;
	int rc;

	snprintf(p, sizeof(p), "%s/a", dir);
	GT_REQUIRE(craft(p, 22, sizeof(Elf64_Sym), 1 << 20) == 0, "craft");
	rc = read_info(p, &gi);
	GT_CHECK(rc == 0 && gi.tls_off == 0x10 - 0x20, "good symtab: rc %d tls_off %lld", rc,
		 (long long)gi.tls_off);
	GT_REQUIRE(craft(p, 22, 1, 1 << 20) == 0, "craft");
	rc = read_info(p, &gi);
	GT_CHECK(rc == 0 && gi.tls_off == -8, "entsize 1 was read: rc %d tls_off %lld", rc,
		 (long long)gi.tls_off);
}

static void test_debug_inflated(void)
{
	char p[64];
	struct gt_goinfo gi;
	uint32_t off;
	int rc, fd;

	snprintf(p, sizeof(p), "%s/b", dir);
	/* Go 1.24: not in the table, so its DWARF would be read */
	GT_REQUIRE(craft(p, 24, sizeof(Elf64_Sym), 1 << 20) == 0, "craft");
	rc = read_info(p, &gi);
	GT_CHECK(rc == -ENOENT, "1 MiB inflated (no units): rc %d", rc);
	GT_REQUIRE(craft(p, 24, sizeof(Elf64_Sym), (64ull << 20) + 1) == 0, "craft");
	rc = read_info(p, &gi);
	GT_CHECK(rc == -EFBIG, "64 MiB + 1 inflated: rc %d", rc);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	GT_CHECK(gt_goinfo_dwarf_goid(fd, &off) == -EFBIG, "dwarf_goid read it");
	close(fd);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	GT_RUN(test_symtab_entsize);
	GT_RUN(test_debug_inflated);
	{
		char p[64];

		snprintf(p, sizeof(p), "%s/a", dir);
		if (!getenv("KEEP")) unlink(p);
		snprintf(p, sizeof(p), "%s/b", dir);
		if (!getenv("KEEP")) unlink(p);
		if (!getenv("KEEP")) rmdir(dir);
	}
	return gt_test_done();
}
