/* Syscall numbers (of the architecture we are built for) -> how a thread
 * blocked in them is shown in the Go trace, and their names.
 *
 * The class decides the switch-out event of a thread that sleeps inside
 * the syscall: futex waits are GoBlockSync, sleeps GoSleep, poll/select/
 * epoll GoBlockSelect, socket calls GoBlockNet, sched_yield GoSched;
 * anything else is GoSysBlock (then GoSysExit when woken).
 */
#ifndef GT_SYSCALL_CLASS_H
#define GT_SYSCALL_CLASS_H

#include <stdint.h>

enum gt_sys_class {
	GT_SYS_OTHER = 0,  /* blocks as GoSysBlock */
	GT_SYS_FUTEX,      /* GoBlockSync */
	GT_SYS_SLEEP,      /* GoSleep */
	GT_SYS_SELECT,     /* GoBlockSelect */
	GT_SYS_NET,        /* GoBlockNet */
	GT_SYS_YIELD,      /* GoSched */
};

enum gt_sys_class gt_syscall_class(int64_t nr);

/* "read", "futex", ...; NULL for a number this table does not know. */
const char *gt_syscall_name(int64_t nr);

#endif
