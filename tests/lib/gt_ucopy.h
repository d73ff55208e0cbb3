/* What BPF copies where --call-graph=dwarf takes a user stack (the
 * registers in DWARF numbering and 8 KiB of stack from sp), taken here in
 * user space: the input of the unwinder's test and bench. */
#ifndef GT_UCOPY_H
#define GT_UCOPY_H

#include <stdint.h>

#include "sym/unwind.h"

#define GT_UCOPY_BYTES 8192

struct gt_ucopy {
	uint64_t regs[GT_UNWIND_REGS], ip, sp;
	uint8_t stack[GT_UCOPY_BYTES];
};

/* Fills c with the callee-saved registers, sp and pc at this call, and
 * the GT_UCOPY_BYTES of stack above sp (the caller must have that much). */
void gt_ucopy_take(struct gt_ucopy *c);

#endif
