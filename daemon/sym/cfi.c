/* Return-address rules from .eh_frame, through libdw's CFI reader. */
#include "cfi.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "cfi_check.h"
#include "debug_file.h"

/* DWARF register numbers of the stack pointer and the link register (the
 * psABIs); x86-64 has no link register: its return-address column (16) is
 * always a stack slot. */
#if defined(__x86_64__)
#define CFI_MACHINE EM_X86_64
#define CFI_SP 7
#define CFI_LR (-1)
#define CFI_REG_MAX 129 /* the psABI's last: %bnd3 */
#elif defined(__aarch64__)
#define CFI_MACHINE EM_AARCH64
#define CFI_SP 31
#define CFI_LR 30
#define CFI_REG_MAX 127 /* the psABI's last: z31 */
#else
#define CFI_MACHINE EM_NONE
#define CFI_SP (-1)
#define CFI_LR (-1)
#define CFI_REG_MAX 0
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CFI_DATA ELFDATA2LSB
#else
#define CFI_DATA ELFDATA2MSB
#endif

/* The largest .eh_frame read (a large C++ program's is about 20 MiB). */
#define CFI_EH_FRAME_MAX (64u << 20)

static const char cfi_names[] = "\0.eh_frame\0.shstrtab";

/* An ELF image of our own holding a copy of the file's .eh_frame as its
 * only section, at the same address: libdw reads no .eh_frame_hdr there
 * (whose search table can name any offset of the section, an entry no
 * walk from the start reaches) and no PT_GNU_EH_FRAME (whose section runs
 * to the end of the file), only the entries gt_cfi_check decoded.  Its
 * lookups walk the section from the start once, then search the FDEs
 * that walk kept. */
static Elf *eh_frame_copy(Elf *elf, const GElf_Ehdr *eh, void **image)
{
	size_t n, str_off, sh_off, size;
	Elf64_Ehdr *h;
	Elf64_Shdr *s;
	Elf_Data *d;
	GElf_Shdr sh;
	Elf_Scn *scn;
	char *img;

	scn = gt_elf_section(elf, ".eh_frame", &sh);
	d = scn && sh.sh_type != SHT_NOBITS ? elf_rawdata(scn, NULL) : NULL;
	if (!d || !d->d_buf || !d->d_size || d->d_size > CFI_EH_FRAME_MAX)
		return NULL;
	n = d->d_size;
	str_off = sizeof(*h) + n;
	sh_off = (str_off + sizeof(cfi_names) + 7) & ~(size_t)7;
	size = sh_off + 3 * sizeof(*s);
	img = calloc(1, size);
	if (!img)
		return NULL;
	h = (Elf64_Ehdr *)(void *)img;
	memcpy(h->e_ident, eh->e_ident, EI_NIDENT);
	h->e_type = eh->e_type;
	h->e_machine = eh->e_machine;
	h->e_version = EV_CURRENT;
	h->e_ehsize = sizeof(*h);
	h->e_shoff = sh_off;
	h->e_shentsize = sizeof(*s);
	h->e_shnum = 3;
	h->e_shstrndx = 2;
	memcpy(img + sizeof(*h), d->d_buf, n);
	memcpy(img + str_off, cfi_names, sizeof(cfi_names));
	s = (Elf64_Shdr *)(void *)(img + sh_off);
	s[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
			     .sh_addr = sh.sh_addr, .sh_offset = sizeof(*h), .sh_size = n,
			     .sh_addralign = 1 };
	s[2] = (Elf64_Shdr){ .sh_name = 11, .sh_type = SHT_STRTAB, .sh_offset = str_off,
			     .sh_size = sizeof(cfi_names), .sh_addralign = 1 };
	*image = img;
	return elf_memory(img, size);
}

int gt_cfi_open(struct gt_cfi *c, void *elf)
{
	Elf_Scn *scn;
	GElf_Ehdr eh;
	GElf_Shdr sh;

	memset(c, 0, sizeof(*c));
	if (CFI_MACHINE == EM_NONE || !gelf_getehdr(elf, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != CFI_DATA ||
	    eh.e_machine != CFI_MACHINE)
		return -ENOENT;
	c->elf = eh_frame_copy(elf, &eh, &c->image);
	scn = c->elf ? gt_elf_section(c->elf, ".eh_frame", &sh) : NULL;
	if (scn && gt_cfi_check(eh.e_ident, elf_rawdata(scn, NULL), CFI_REG_MAX) == 0)
		c->cfi = dwarf_getcfi_elf(c->elf);
	if (!c->cfi)
		gt_cfi_close(c);
	return c->cfi ? 0 : -ENOENT;
}

/* The CFA as stack pointer + *off; 0 or -ENOENT (another register, an
 * expression).  libdw gives a register+offset CFA as one DW_OP_bregx. */
static int cfa_from_sp(Dwarf_Frame *f, int64_t *off)
{
	Dwarf_Op *ops;
	size_t nops;

	if (dwarf_frame_cfa(f, &ops, &nops) || nops != 1 ||
	    ops[0].atom != DW_OP_bregx || ops[0].number != CFI_SP)
		return -ENOENT;
	*off = (int64_t)ops[0].number2;
	return 0;
}

/* Where the return-address column ra is: in its own register unchanged
 * (same value), or saved at CFA + *off.  libdw gives an offset(N) rule as
 * DW_OP_call_frame_cfa [DW_OP_plus_uconst N]. */
static int ra_column(Dwarf_Frame *f, int ra, enum gt_ra_where *where, int64_t *off)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	if (dwarf_frame_register(f, ra, mem, &ops, &nops))
		return -ENOENT;
	if (nops == 0 && !ops && ra == CFI_LR) {
		*where = GT_RA_LINK;
		return 0;
	}
	if (nops < 1 || nops > 2 || ops[0].atom != DW_OP_call_frame_cfa ||
	    (nops == 2 && ops[1].atom != DW_OP_plus_uconst))
		return -ENOENT;
	*where = GT_RA_STACK;
	*off = nops == 2 ? (int64_t)ops[1].number : 0;
	return 0;
}

int gt_cfi_ra(const struct gt_cfi *c, uint64_t vaddr, struct gt_ra_rule *out)
{
	Dwarf_Frame *f = NULL;
	int64_t cfa = 0, off = 0;
	int ra, err = -ENOENT;

	if (!c->cfi || dwarf_cfi_addrframe(c->cfi, vaddr, &f) || !f)
		return -ENOENT;
	ra = dwarf_frame_info(f, NULL, NULL, NULL);
	if (ra >= 0 && ra_column(f, ra, &out->where, &off) == 0) {
		out->sp_off = 0;
		if (out->where == GT_RA_LINK)
			err = 0;
		else if (cfa_from_sp(f, &cfa) == 0 && cfa + off >= 0)
			out->sp_off = cfa + off, err = 0;
	}
	free(f);
	return err;
}

void gt_cfi_close(struct gt_cfi *c)
{
	if (c->cfi)
		dwarf_cfi_end(c->cfi);
	if (c->elf)
		elf_end(c->elf);
	free(c->image);
	memset(c, 0, sizeof(*c));
}
