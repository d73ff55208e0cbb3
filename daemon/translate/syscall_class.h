/* Syscall numbers (of the architecture we are built for) -> how a thread
 * blocked in them is shown in the Go trace, and their names.
 *
 * The class decides the switch-out event of a thread that sleeps inside
 * the syscall: futex waits are GoBlockSync, sleeps GoSleep, poll/select/
 * epoll GoBlockSelect, socket calls GoBlockNet, sched_yield GoSched; any
 * other syscall is its GoSysCall then a block another task may end with a
 * GoUnblock naming it: GoBlockRecv for reads (a pipe), GoBlockSend for
 * writes, GoBlockCond for the rest (wait4, flock, ...).  Never GoSysBlock:
 * Go's GoSysExit has no waker, and a GoUnblock after GoSysBlock is a state
 * Go 1.22+'s converter does not model.
 */
#ifndef GT_SYSCALL_CLASS_H
#define GT_SYSCALL_CLASS_H

#include <stdint.h>

enum gt_sys_class {
	GT_SYS_OTHER = 0,  /* GoBlockCond */
	GT_SYS_FUTEX,      /* GoBlockSync */
	GT_SYS_SLEEP,      /* GoSleep */
	GT_SYS_SELECT,     /* GoBlockSelect */
	GT_SYS_NET,        /* GoBlockNet */
	GT_SYS_YIELD,      /* GoSched */
	GT_SYS_READ,       /* GoBlockRecv */
	GT_SYS_WRITE,      /* GoBlockSend */
};

enum gt_sys_class gt_syscall_class(int64_t nr);

/* "read", "futex", ...; NULL for a number this table does not know. */
const char *gt_syscall_name(int64_t nr);

#endif
