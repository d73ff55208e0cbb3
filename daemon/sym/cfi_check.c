/* See cfi_check.h. */
#include <stdint.h>
#include <stddef.h>

#include "cfi_check.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>

struct cursor {
	const uint8_t *p, *end;
};

static int skip(struct cursor *c, uint64_t n)
{
	if ((uint64_t)(c->end - c->p) < n)
		return -EINVAL;
	c->p += n;
	return 0;
}

/* A ULEB128 (or, for skipping, an SLEB128: the same bytes) of at most 64
 * bits: a longer one is refused rather than read as libdw would cut it. */
static int uleb(struct cursor *c, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; c->p < c->end; shift += 7) {
		uint8_t b = *c->p++;

		if (shift == 63 && b > 1)
			return -EINVAL;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
		if (shift == 63)
			return -EINVAL;
	}
	return -EINVAL;
}

static int reg(struct cursor *c, unsigned reg_max)
{
	uint64_t r;

	return uleb(c, &r) || r > reg_max ? -EINVAL : 0;
}

/* A DW_FORM_block: its ULEB128 length, then the bytes (an expression: its
 * operations allocate in proportion to its length, never to a number). */
static int block(struct cursor *c)
{
	uint64_t n;

	return uleb(c, &n) || skip(c, n) ? -EINVAL : 0;
}

/* The operands of one of the opcodes without a packed operand. */
static int operands(struct cursor *c, uint8_t op, int enc_size, unsigned rmax, int *depth)
{
	uint64_t v;

	switch (op) {
	case DW_CFA_nop:
	case DW_CFA_GNU_window_save: /* = DW_CFA_AARCH64_negate_ra_state */
		return 0;
	case DW_CFA_remember_state:
		return ++*depth > GT_CFI_STATE_DEPTH_MAX ? -EINVAL : 0;
	case DW_CFA_restore_state:
		return --*depth < 0 ? -EINVAL : 0;
	case DW_CFA_set_loc:
		return enc_size ? skip(c, (uint64_t)enc_size) : -EINVAL;
	case DW_CFA_advance_loc1:
		return skip(c, 1);
	case DW_CFA_advance_loc2:
		return skip(c, 2);
	case DW_CFA_advance_loc4:
		return skip(c, 4);
	case DW_CFA_MIPS_advance_loc8:
		return skip(c, 8);
	case DW_CFA_def_cfa_offset:
	case DW_CFA_def_cfa_offset_sf:
	case DW_CFA_GNU_args_size:
		return uleb(c, &v);
	case DW_CFA_restore_extended:
	case DW_CFA_undefined:
	case DW_CFA_same_value:
	case DW_CFA_def_cfa_register:
		return reg(c, rmax);
	case DW_CFA_offset_extended:
	case DW_CFA_offset_extended_sf:
	case DW_CFA_def_cfa:
	case DW_CFA_def_cfa_sf:
	case DW_CFA_val_offset:
	case DW_CFA_val_offset_sf:
	case DW_CFA_GNU_negative_offset_extended:
		return reg(c, rmax) || uleb(c, &v) ? -EINVAL : 0;
	case DW_CFA_register:
		return reg(c, rmax) || reg(c, rmax) ? -EINVAL : 0;
	case DW_CFA_def_cfa_expression:
		return block(c);
	case DW_CFA_expression:
	case DW_CFA_val_expression:
		return reg(c, rmax) || block(c) ? -EINVAL : 0;
	default:
		return -EINVAL; /* libdw would refuse it too */
	}
}

int gt_cfi_check_insns(const uint8_t *p, const uint8_t *end, size_t max, int enc_size,
		       unsigned reg_max)
{
	struct cursor c = { p, end };
	int depth = 0;
	uint64_t v;

	if (!p || end < p || (size_t)(end - p) > max)
		return p == end ? 0 : -EINVAL;
	while (c.p < c.end) {
		uint8_t op = *c.p++;
		int err;

		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
		case DW_CFA_restore: /* register in the low 6 bits: < 64 */
			err = 0;
			break;
		case DW_CFA_offset:
			err = uleb(&c, &v);
			break;
		default:
			err = operands(&c, op, enc_size, reg_max, &depth);
		}
		if (err)
			return -EINVAL;
	}
	return 0;
}

/* What an FDE needs of its CIE: the size of its addresses (the 'R'
 * encoding's, fixed-size only) and whether its augmentation is sized. */
struct cie_info {
	int enc_size;
	int sized;
};

/* The size of a DW_EH_PE encoding's value: fixed sizes, applied absolute
 * or pc-relative (or indirect, for a personality's); 0 for anything else. */
static int enc_size(uint8_t enc, int indirect_ok)
{
	if ((enc & 0x70) > DW_EH_PE_pcrel || ((enc & DW_EH_PE_indirect) && !indirect_ok))
		return 0;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8; /* 64-bit files only */
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	default:
		return 0;
	}
}

/* The augmentation a CIE may have: none, or "z" followed by 'L', 'P',
 * 'R', 'S' (what GCC and LLVM write); libdw's reading of any other
 * differs between its versions. */
static int cie_check(const Dwarf_CIE *cie, unsigned reg_max, struct cie_info *ci)
{
	const char *a = cie->augmentation;
	struct cursor d = { cie->augmentation_data,
			    cie->augmentation_data + cie->augmentation_data_size };
	uint8_t enc = DW_EH_PE_absptr;
	int n;

	if (!a || cie->return_address_register > reg_max || (a[0] && a[0] != 'z') ||
	    (a[0] && !d.p))
		return -EINVAL;
	ci->sized = a[0] == 'z';
	for (a += ci->sized; *a; a++) {
		if (*a == 'S')
			continue;
		if (*a != 'L' && *a != 'P' && *a != 'R')
			return -EINVAL;
		if (d.p >= d.end)
			return -EINVAL;
		if (*a == 'R')
			enc = *d.p;
		n = *a == 'P' ? enc_size(*d.p, 1) : 1;
		if (!n || skip(&d, 1) || (*a == 'P' && skip(&d, (uint64_t)n)))
			return -EINVAL;
	}
	ci->enc_size = enc_size(enc, 0);
	if (!ci->enc_size)
		return -EINVAL;
	return gt_cfi_check_insns(cie->initial_instructions, cie->initial_instructions_end,
				  GT_CFI_CIE_INSNS_MAX, ci->enc_size, reg_max);
}

/* An FDE: its two addresses, its augmentation block, its instructions. */
static int fde_check(const Dwarf_FDE *f, const struct cie_info *ci, unsigned reg_max)
{
	struct cursor c = { f->start, f->end };

	if (!c.p || c.end < c.p || skip(&c, 2 * (uint64_t)ci->enc_size) ||
	    (ci->sized && block(&c)))
		return -EINVAL;
	return gt_cfi_check_insns(c.p, c.end, GT_CFI_FDE_INSNS_MAX, ci->enc_size, reg_max);
}

/* The CIE at offset off, as libdw finds an FDE's. */
static int cie_at(const unsigned char *e_ident, Elf_Data *data, Dwarf_Off off, unsigned reg_max,
		  struct cie_info *ci)
{
	Dwarf_CFI_Entry e;
	Dwarf_Off next;

	if (dwarf_next_cfi(e_ident, data, true, off, &next, &e) != 0 || !dwarf_cfi_cie_p(&e))
		return -EINVAL;
	return cie_check(&e.cie, reg_max, ci);
}

int gt_cfi_check(const unsigned char *e_ident, Elf_Data *data, unsigned reg_max)
{
	Dwarf_Off off = 0, next, fde_cie = (Dwarf_Off)-1;
	struct cie_info ci, fci = { 0, 0 };
	size_t n = 0, ncie = 0;

	for (; off != (Dwarf_Off)-1; off = next) {
		Dwarf_CFI_Entry e;
		int r = dwarf_next_cfi(e_ident, data, true, off, &next, &e);

		if (r > 0)
			return 0;
		if (r < 0 || next <= off || ++n > GT_CFI_ENTRIES_MAX)
			return -EINVAL;
		if (dwarf_cfi_cie_p(&e)) {
			if (++ncie > GT_CFI_CIES_MAX || cie_check(&e.cie, reg_max, &ci))
				return -EINVAL;
			continue;
		}
		/* the CIE of the last FDE, decoded once for its run of FDEs */
		if (e.fde.CIE_pointer != fde_cie) {
			if (cie_at(e_ident, data, e.fde.CIE_pointer, reg_max, &fci))
				return -EINVAL;
			fde_cie = e.fde.CIE_pointer;
		}
		if (fde_check(&e.fde, &fci, reg_max))
			return -EINVAL;
	}
	return 0;
}
