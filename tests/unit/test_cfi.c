/* daemon/sym/cfi.c and cfi_check.c: the return-address rules of real
 * binaries (libc, this test) are still found, and an .eh_frame naming a
 * DWARF register no machine has, or holding a stream libdw should not be
 * given, gives none (libdw reallocated its register array to the number
 * named: 1 GiB for fuzz_sym_elf's crashes/sym_elf/cfi-huge-register). */
#include <dlfcn.h>
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gt_test.h"
#include "sym/cfi_check.h"
#include "sym/elf_file.h"

#define TEXT 0x401000u
#define EH (TEXT + 0x100u)

static size_t put_uleb(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	do {
		uint8_t b = v & 0x7f;

		v >>= 7;
		p[n++] = (uint8_t)(b | (v ? 0x80 : 0));
	} while (v);
	return n;
}

/* An x86-64 (or arm64) ELF image: .text at TEXT, and an .eh_frame at EH
 * whose CIE says CFA = sp + 8, return address at CFA - 8, then runs
 * extra[0..nextra); one FDE covers .text. */
static size_t craft(uint8_t *img, size_t cap, const uint8_t *extra, size_t nextra)
{
	static const char shstr[] = "\0.text\0.eh_frame\0.shstrtab";
	uint8_t eh[512], *p = eh + 4;
	size_t cie_len, fde_at, n, sh_at;
	Elf64_Ehdr *h = (Elf64_Ehdr *)(void *)img;
	Elf64_Phdr *ph = (Elf64_Phdr *)(void *)(img + sizeof(*h));
	Elf64_Shdr *sh;
	int32_t pcrel;
	uint32_t u;

	memset(img, 0, cap);
	memset(eh, 0, sizeof(eh));
	memset(p, 0, 4), p += 4;                        /* CIE id */
	*p++ = 1;                                       /* version */
	memcpy(p, "zR", 3), p += 3;
	*p++ = 1;                                       /* code alignment */
	*p++ = 0x78;                                    /* data alignment -8 */
#if defined(__aarch64__)
	*p++ = 30;                                      /* return address: x30 */
	*p++ = 1, *p++ = 0x1b;                          /* R: pcrel sdata4 */
	*p++ = DW_CFA_def_cfa, *p++ = 31, *p++ = 8;
	*p++ = DW_CFA_offset | 30, *p++ = 1;
#else
	*p++ = 16;                                      /* return address: rip */
	*p++ = 1, *p++ = 0x1b;
	*p++ = DW_CFA_def_cfa, *p++ = 7, *p++ = 8;
	*p++ = DW_CFA_offset | 16, *p++ = 1;
#endif
	if (nextra)
		memcpy(p, extra, nextra), p += nextra;
	while ((p - eh) % 8)
		*p++ = DW_CFA_nop;
	cie_len = (size_t)(p - eh);
	u = (uint32_t)(cie_len - 4);
	memcpy(eh, &u, 4);
	fde_at = cie_len;
	u = 20, memcpy(p, &u, 4), p += 4;               /* length */
	u = (uint32_t)(fde_at + 4), memcpy(p, &u, 4), p += 4; /* CIE pointer */
	pcrel = (int32_t)((int64_t)TEXT - (int64_t)(EH + fde_at + 8));
	memcpy(p, &pcrel, 4), p += 4;
	u = 0x100, memcpy(p, &u, 4), p += 4;            /* range */
	*p++ = 0;                                       /* augmentation */
	p += 3;                                         /* nops */
	p += 4;                                         /* terminator */
	n = (size_t)(p - eh);

	memcpy(h->e_ident, ELFMAG, SELFMAG);
	h->e_ident[EI_CLASS] = ELFCLASS64;
	h->e_ident[EI_DATA] = ELFDATA2LSB;
	h->e_ident[EI_VERSION] = EV_CURRENT;
	h->e_type = ET_EXEC;
#if defined(__aarch64__)
	h->e_machine = EM_AARCH64;
#else
	h->e_machine = EM_X86_64;
#endif
	h->e_version = EV_CURRENT;
	h->e_phoff = sizeof(*h);
	h->e_ehsize = sizeof(*h);
	h->e_phentsize = sizeof(*ph);
	h->e_phnum = 1;
	h->e_shentsize = sizeof(*sh);
	h->e_shnum = 4;
	h->e_shstrndx = 3;
	*ph = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0x1000,
			    .p_vaddr = TEXT, .p_paddr = TEXT, .p_filesz = 0x100 + n,
			    .p_memsz = 0x100 + n, .p_align = 0x1000 };
	memset(img + 0x1000, 0xc3, 0x100);
	memcpy(img + 0x1100, eh, n);
	memcpy(img + 0x1100 + n, shstr, sizeof(shstr));
	sh_at = (0x1100 + n + sizeof(shstr) + 7) & ~(size_t)7;
	h->e_shoff = sh_at;
	sh = (Elf64_Shdr *)(void *)(img + sh_at);
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
			      .sh_addr = TEXT, .sh_offset = 0x1000, .sh_size = 0x100, .sh_addralign = 16 };
	sh[2] = (Elf64_Shdr){ .sh_name = 7, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
			      .sh_addr = EH, .sh_offset = 0x1100, .sh_size = n, .sh_addralign = 8 };
	sh[3] = (Elf64_Shdr){ .sh_name = 17, .sh_type = SHT_STRTAB, .sh_offset = 0x1100 + n,
			      .sh_size = sizeof(shstr), .sh_addralign = 1 };
	return sh_at + 4 * sizeof(*sh);
}

/* The rule at TEXT + 0x10 of a crafted file whose CIE runs extra too:
 * 0 and the rule, or -errno. */
static int crafted_ra(const uint8_t *extra, size_t nextra, struct gt_ra_rule *ra)
{
	static uint8_t img[0x2000];
	struct gt_binary b;
	size_t n = craft(img, sizeof(img), extra, nextra);
	int rc;

	if (gt_binary_load_image(&b, img, n))
		return -EINVAL;
	rc = gt_binary_ra(&b, TEXT + 0x10, ra);
	gt_binary_close(&b);
	return rc;
}

static void test_crafted(void)
{
	struct gt_ra_rule ra;
	uint8_t x[16];
	size_t n;
	int rc;

	rc = crafted_ra(NULL, 0, &ra);
	GT_CHECK(rc == 0 && ra.where == GT_RA_STACK && ra.sp_off == 0,
		 "plain CIE: rc %d where %d off %lld", rc, (int)ra.where, (long long)ra.sp_off);
	/* a real register (rbx / x19) saved: still read */
	x[0] = DW_CFA_offset_extended, n = 1 + put_uleb(x + 1, 3);
	x[n++] = 2;
	rc = crafted_ra(x, n, &ra);
	GT_CHECK(rc == 0 && ra.sp_off == 0, "register 3: rc %d", rc);
	/* register 1000, and a register (main: 1 GiB) */
	x[0] = DW_CFA_offset_extended, n = 1 + put_uleb(x + 1, 1000);
	x[n++] = 2;
	rc = crafted_ra(x, n, &ra);
	GT_CHECK(rc == -ENOENT, "register 1000 read: rc %d", rc);
	x[0] = DW_CFA_undefined, n = 1 + put_uleb(x + 1, 0x7fffffe);
	rc = crafted_ra(x, n, &ra);
	GT_CHECK(rc == -ENOENT, "register 0x7fffffe read: rc %d", rc);
}

static int insns(const uint8_t *p, size_t n)
{
	return gt_cfi_check_insns(p, p + n, GT_CFI_FDE_INSNS_MAX, 4, 129);
}

/* Every opcode that takes a register refuses one past the bound; what is
 * cut short, unknown, nested too deep or too long is refused. */
static void test_insns(void)
{
	static const uint8_t one_reg[] = { DW_CFA_restore_extended, DW_CFA_undefined,
					   DW_CFA_same_value, DW_CFA_def_cfa_register };
	static const uint8_t reg_num[] = { DW_CFA_offset_extended, DW_CFA_offset_extended_sf,
					   DW_CFA_def_cfa, DW_CFA_def_cfa_sf, DW_CFA_val_offset,
					   DW_CFA_val_offset_sf, DW_CFA_register,
					   DW_CFA_GNU_negative_offset_extended };
	static const uint8_t reg_block[] = { DW_CFA_expression, DW_CFA_val_expression };
	static uint8_t big[GT_CFI_FDE_INSNS_MAX + 1];
	uint8_t x[16];

	for (size_t i = 0; i < sizeof(one_reg); i++) {
		x[0] = one_reg[i], x[1] = 129;
		x[2] = 1;
		GT_CHECK(insns(x, 3) == 0, "op 0x%x reg 129 refused", one_reg[i]);
		x[1] = 0x82, x[2] = 1; /* 130 */
		GT_CHECK(insns(x, 3) == -EINVAL, "op 0x%x reg 130 read", one_reg[i]);
	}
	for (size_t i = 0; i < sizeof(reg_num); i++) {
		x[0] = reg_num[i], x[1] = 0x82, x[2] = 1, x[3] = 8;
		GT_CHECK(insns(x, 4) == -EINVAL, "op 0x%x reg 130 read", reg_num[i]);
		x[1] = 5, x[2] = 8;
		GT_CHECK(insns(x, 3) == 0, "op 0x%x reg 5 refused", reg_num[i]);
		GT_CHECK(insns(x, 2) == -EINVAL, "op 0x%x cut short read", reg_num[i]);
	}
	x[0] = DW_CFA_register, x[1] = 5, x[2] = 0x82, x[3] = 1;
	GT_CHECK(insns(x, 4) == -EINVAL, "register's second register 130 read");
	for (size_t i = 0; i < sizeof(reg_block); i++) {
		x[0] = reg_block[i], x[1] = 0x82, x[2] = 1, x[3] = 1, x[4] = DW_OP_lit0;
		GT_CHECK(insns(x, 5) == -EINVAL, "op 0x%x reg 130 read", reg_block[i]);
		x[1] = 5, x[2] = 1, x[3] = DW_OP_lit0;
		GT_CHECK(insns(x, 4) == 0, "op 0x%x reg 5 refused", reg_block[i]);
		x[2] = 9; /* the block runs past the end */
		GT_CHECK(insns(x, 4) == -EINVAL, "op 0x%x block past the end read", reg_block[i]);
	}
	/* an 11-byte ULEB128 (more than 64 bits) */
	x[0] = DW_CFA_def_cfa_offset;
	memset(x + 1, 0x80, 10), x[11] = 1;
	GT_CHECK(insns(x, 12) == -EINVAL, "11-byte ULEB128 read");
	x[0] = 0x17; /* no such opcode */
	GT_CHECK(insns(x, 1) == -EINVAL, "opcode 0x17 read");
	x[0] = DW_CFA_restore_state;
	GT_CHECK(insns(x, 1) == -EINVAL, "restore_state without a remember read");
	memset(big, DW_CFA_remember_state, GT_CFI_STATE_DEPTH_MAX + 1);
	GT_CHECK(insns(big, GT_CFI_STATE_DEPTH_MAX) == 0, "remember_state x64 refused");
	GT_CHECK(insns(big, GT_CFI_STATE_DEPTH_MAX + 1) == -EINVAL, "remember_state x65 read");
	memset(big, DW_CFA_nop, sizeof(big));
	GT_CHECK(insns(big, sizeof(big) - 1) == 0, "64 KiB of nops refused");
	GT_CHECK(insns(big, sizeof(big)) == -EINVAL, "64 KiB + 1 of nops read");
}

/* The rule at a function's first instruction (its link-time address: less
 * its object's load bias) of the file dladdr names for it: the return address just pushed (x86-64), or in x30 (arm64). */
static void check_real(const char *what, void *fn)
{
	struct gt_binary b;
	struct gt_ra_rule ra;
	struct link_map *lm = NULL;
	Dl_info info;
	int fd, rc;

	GT_REQUIRE(dladdr1(fn, &info, (void **)&lm, RTLD_DL_LINKMAP) && info.dli_fname && lm,
		   "%s: no dladdr", what);
	fd = open(info.dli_fname, O_RDONLY | O_CLOEXEC);
	GT_REQUIRE(fd >= 0, "%s: open %s", what, info.dli_fname);
	GT_REQUIRE(gt_binary_load(&b, fd, NULL) == 0, "%s: load %s", what, info.dli_fname);
	GT_CHECK(b.cfi.cfi, "%s: %s's .eh_frame refused", what, info.dli_fname);
	rc = gt_binary_ra(&b, (uint64_t)((uintptr_t)fn - lm->l_addr), &ra);
#if defined(__aarch64__)
	GT_CHECK(rc == 0 && ra.where == GT_RA_LINK, "%s: rc %d where %d", what, rc, (int)ra.where);
#else
	GT_CHECK(rc == 0 && ra.where == GT_RA_STACK && ra.sp_off == 0,
		 "%s: rc %d where %d off %lld", what, rc, (int)ra.where, (long long)ra.sp_off);
#endif
	gt_binary_close(&b);
}

static void test_real(void)
{
	check_real("libc write", (void *)write);
	check_real("libc qsort", (void *)qsort);
	check_real("this test's craft", (void *)craft);
}

/* A section of n minimal CIEs (no FDE) passes gt_cfi_check: 0 or -errno. */
static int cies(size_t n)
{
	static uint8_t buf[(GT_CFI_CIES_MAX + 2) * 16 + 4];
	unsigned char ident[EI_NIDENT] = { 0x7f, 'E', 'L', 'F', ELFCLASS64, ELFDATA2LSB, EV_CURRENT };
	Elf_Data d;
	uint8_t *p = buf;

	memset(buf, 0, sizeof(buf));
	for (size_t i = 0; i < n; i++, p += 16) {
		uint32_t len = 12;

		memcpy(p, &len, 4);  /* then CIE id 0 */
		p[8] = 1;            /* version, then augmentation "" */
		p[10] = 1;           /* code alignment */
		p[11] = 0x78;        /* data alignment -8 */
		p[12] = 16;          /* return address register; 3 nops */
	}
	memset(&d, 0, sizeof(d));
	d.d_buf = buf;
	d.d_size = (size_t)(p - buf) + 4; /* the terminator */
	d.d_type = ELF_T_BYTE;
	return gt_cfi_check(ident, &d, 129);
}

/* libdw keeps an initial frame per CIE: past GT_CFI_CIES_MAX of them the
 * section is refused (a million tiny CIEs would be 2 GB in libdw). */
static void test_cie_count(void)
{
	int rc = cies(GT_CFI_CIES_MAX);

	GT_CHECK(rc == 0, "%u CIEs refused: %d", GT_CFI_CIES_MAX, rc);
	rc = cies(GT_CFI_CIES_MAX + 1);
	GT_CHECK(rc == -EINVAL, "%u CIEs passed: %d", GT_CFI_CIES_MAX + 1, rc);
}

int main(void)
{
	GT_RUN(test_crafted);
	GT_RUN(test_insns);
	GT_RUN(test_real);
	GT_RUN(test_cie_count);
	return gt_test_done();
}
