/* Whether an .eh_frame may be handed to libdw's CFI reader.
 *
 * libdw sizes a frame's register array by the largest DWARF register an
 * instruction names (a ULEB128: DW_CFA_offset_extended, DW_CFA_register,
 * DW_CFA_undefined, ...) and reallocs it to that size, up to 2 GiB for one
 * crafted CIE (fuzz_sym_elf found it), and keeps a copy of the frame per
 * DW_CFA_remember_state.  The binary is its owner's: every entry of the
 * section (each CIE and FDE read in turn from the start, as libdw's own walk
 * reads them, and each CIE an FDE points at) is decoded here first, bounded,
 * and any register above reg_max, any instruction this decoder does not
 * know, any stream cut short or longer than a real compiler writes, refuses
 * the whole section (docs/security.md, "Files of other users"). */
#ifndef GT_SYM_CFI_CHECK_H
#define GT_SYM_CFI_CHECK_H

#include <libelf.h>

/* Bounds: the entries of a section, its CIEs (libdw keeps each one's
 * initial frame, ~2 KB with 130 registers: a million small CIEs would be
 * 2 GB; linkers merge equal CIEs, so real files have a few dozen), the
 * bytes of a CIE's and an FDE's instructions, DW_CFA_remember_state's
 * nesting. */
#define GT_CFI_ENTRIES_MAX (1u << 20)
#define GT_CFI_CIES_MAX 4096
#define GT_CFI_CIE_INSNS_MAX 256
#define GT_CFI_FDE_INSNS_MAX 65536
#define GT_CFI_STATE_DEPTH_MAX 64

/* data: an .eh_frame section of a 64-bit ELF file whose identification is
 * e_ident.  0 if libdw may read it, -EINVAL (the first fault) if not. */
int gt_cfi_check(const unsigned char *e_ident, Elf_Data *data, unsigned reg_max);

/* The instruction stream [p, end) alone (tests): enc_size is the size of a
 * DW_CFA_set_loc address (0: none allowed), max the longest stream. */
int gt_cfi_check_insns(const uint8_t *p, const uint8_t *end, size_t max, int enc_size,
		       unsigned reg_max);

#endif
