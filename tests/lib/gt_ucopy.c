#include "gt_ucopy.h"


/* The copy reads across the frames above, AddressSanitizer's redzones
 * included, as BPF's does: a plain word loop, not instrumented. */
__attribute__((noinline, no_sanitize_address)) void gt_ucopy_take(struct gt_ucopy *c)
{
	const volatile uint64_t *from;
	uint64_t *to = (uint64_t *)c->stack;

#if defined(__x86_64__)
	__asm__ volatile("movq %%rbx, %0\n\tmovq %%rbp, %1\n\tmovq %%rsp, %2\n\t"
			 "movq %%r12, %3\n\tmovq %%r13, %4\n\tmovq %%r14, %5\n\t"
			 "movq %%r15, %6\n\tleaq 0(%%rip), %%rax\n\tmovq %%rax, %7"
			 : "=m"(c->regs[3]), "=m"(c->regs[6]), "=m"(c->regs[7]), "=m"(c->regs[12]),
			   "=m"(c->regs[13]), "=m"(c->regs[14]), "=m"(c->regs[15]), "=m"(c->regs[16])
			 : : "rax", "memory");
	c->ip = c->regs[16];
	c->sp = c->regs[7];
#elif defined(__aarch64__)
	uint64_t *r = c->regs;

	__asm__ volatile("stp x19, x20, [%0, #152]\n\tstp x21, x22, [%0, #168]\n\t"
			 "stp x23, x24, [%0, #184]\n\tstp x25, x26, [%0, #200]\n\t"
			 "stp x27, x28, [%0, #216]\n\tstp x29, x30, [%0, #232]\n\t"
			 "mov x9, sp\n\tstr x9, [%0, #248]\n\tadr x9, .\n\tstr x9, [%1]"
			 : : "r"(r), "r"(&c->ip) : "x9", "memory");
	c->sp = c->regs[31];
#endif
	from = (const volatile uint64_t *)(uintptr_t)c->sp;
	for (unsigned i = 0; i < GT_UCOPY_BYTES / 8; i++)
		to[i] = from[i];
}
