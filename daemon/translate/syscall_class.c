/* Syscall classification and names for the architecture we are built
 * for: numbers come from the kernel's <asm/unistd.h> (__NR_*), names from
 * the list the build extracts from that same header (syscall_names.h), so
 * x86_64 and arm64 (whose tables differ) each get their own. */
#include "syscall_class.h"

#include <asm/unistd.h>
#include <stddef.h>

static const char *const names[] = {
#define GT_SYSCALL(name) [__NR_##name] = #name,
#include "syscall_names.h"
#undef GT_SYSCALL
};

/* Some calls exist only on older ABIs (x86_64 keeps poll, select,
 * epoll_wait; arm64 has only their p-variants). */
enum gt_sys_class gt_syscall_class(int64_t nr)
{
	switch (nr) {
	case __NR_futex:
#ifdef __NR_futex_waitv
	case __NR_futex_waitv:
#endif
		return GT_SYS_FUTEX;
	case __NR_nanosleep:
	case __NR_clock_nanosleep:
		return GT_SYS_SLEEP;
#ifdef __NR_poll
	case __NR_poll:
#endif
#ifdef __NR_select
	case __NR_select:
#endif
#ifdef __NR_epoll_wait
	case __NR_epoll_wait:
#endif
#ifdef __NR_epoll_pwait2
	case __NR_epoll_pwait2:
#endif
	case __NR_ppoll:
	case __NR_pselect6:
	case __NR_epoll_pwait:
		return GT_SYS_SELECT;
	case __NR_accept:
	case __NR_accept4:
	case __NR_connect:
	case __NR_recvfrom:
	case __NR_recvmsg:
	case __NR_recvmmsg:
	case __NR_sendto:
	case __NR_sendmsg:
	case __NR_sendmmsg:
		return GT_SYS_NET;
	case __NR_sched_yield:
		return GT_SYS_YIELD;
	case __NR_read:
	case __NR_pread64:
	case __NR_readv:
	case __NR_preadv:
	case __NR_preadv2:
	case __NR_msgrcv:
	case __NR_mq_timedreceive:
		return GT_SYS_READ;
	case __NR_write:
	case __NR_pwrite64:
	case __NR_writev:
	case __NR_pwritev:
	case __NR_pwritev2:
	case __NR_msgsnd:
	case __NR_mq_timedsend:
		return GT_SYS_WRITE;
	}
	return GT_SYS_OTHER;
}

const char *gt_syscall_name(int64_t nr)
{
	if (nr < 0 || nr >= (int64_t)(sizeof(names) / sizeof(names[0])))
		return NULL;
	return names[nr];
}
