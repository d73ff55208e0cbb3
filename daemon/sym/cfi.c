/* Return-address rules from .eh_frame, through libdw's CFI reader. */
#include "cfi.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>

/* DWARF register numbers of the stack pointer and the link register (the
 * psABIs); x86-64 has no link register: its return-address column (16) is
 * always a stack slot. */
#if defined(__x86_64__)
#define CFI_MACHINE EM_X86_64
#define CFI_SP 7
#define CFI_LR (-1)
#elif defined(__aarch64__)
#define CFI_MACHINE EM_AARCH64
#define CFI_SP 31
#define CFI_LR 30
#else
#define CFI_MACHINE EM_NONE
#define CFI_SP (-1)
#define CFI_LR (-1)
#endif

int gt_cfi_open(struct gt_cfi *c, void *elf)
{
	GElf_Ehdr eh;

	c->cfi = NULL;
	if (CFI_MACHINE == EM_NONE || !gelf_getehdr(elf, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != CFI_MACHINE)
		return -ENOENT;
	c->cfi = dwarf_getcfi_elf(elf);
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
	c->cfi = NULL;
}
