/* Where a function keeps its return address at one of its instructions,
 * from the DWARF call-frame information of its binary (.eh_frame, which
 * code built without frame pointers still carries: C++ exceptions and
 * thread cancellation unwind through it).  Only the two answers a
 * frame-pointer walk can use are given: "on the stack, at sp + offset"
 * (the frame is addressed from the stack pointer) and "still in the link
 * register" (arm64, nothing saved it yet).  Native 64-bit code only. */
#ifndef GT_SYM_CFI_H
#define GT_SYM_CFI_H

#include <stdint.h>

struct gt_cfi {
	void *cfi;      /* Dwarf_CFI *, NULL if the file has none usable */
	void *elf;      /* Elf * of image: the checked copy libdw reads */
	void *image;    /* the file's .eh_frame, copied (cfi.c) */
};

enum gt_ra_where {
	GT_RA_STACK = 1, /* at sp + sp_off */
	GT_RA_LINK,      /* in the link register */
};

struct gt_ra_rule {
	enum gt_ra_where where;
	int64_t sp_off;  /* GT_RA_STACK: bytes above the stack pointer */
};

/* Opens the CFI of an ELF handle (Elf *) when it is code of this machine's
 * 64-bit ABI and its .eh_frame passes gt_cfi_check (cfi_check.h): a copy
 * of it is kept, the handle is not needed after.  Returns 0 or -ENOENT. */
int gt_cfi_open(struct gt_cfi *c, void *elf);

/* The rule at link-time address vaddr (the address of the instruction
 * about to run, as in frame 0 of a stack).  Returns 0, or -ENOENT when no
 * CFI covers vaddr or the return address is found otherwise (from a frame
 * pointer, by an expression). */
int gt_cfi_ra(const struct gt_cfi *c, uint64_t vaddr, struct gt_ra_rule *out);

void gt_cfi_close(struct gt_cfi *c);

#endif
