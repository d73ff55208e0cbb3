/* file:line from DWARF line tables (libdw). */
#ifndef GT_SYM_DWARF_H
#define GT_SYM_DWARF_H

#include <stdint.h>

struct gt_dwarf {
	void *dw;       /* Dwarf *, NULL if the file has no usable DWARF */
	int walk_units; /* no .debug_aranges: find units by walking them */
};

/* Opens the DWARF of an ELF handle (Elf *, kept open by the caller).
 * Returns 0 or -ENOENT (no DWARF). */
int gt_dwarf_open(struct gt_dwarf *d, void *elf);

/* file:line of a link-time address; 0 or -ENOENT.  *file is owned by
 * libdw and valid while d is open. */
int gt_dwarf_line(const struct gt_dwarf *d, uint64_t vaddr, const char **file,
		  unsigned *line);

/* Name of the function (DW_TAG_subprogram) covering vaddr, for binaries
 * whose symbol tables are stripped but whose debug info is not. */
int gt_dwarf_func(const struct gt_dwarf *d, uint64_t vaddr, const char **name);

void gt_dwarf_close(struct gt_dwarf *d);

#endif
