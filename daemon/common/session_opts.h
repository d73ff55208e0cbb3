/* What a recording session is asked to record: the one record that travels
 * from gotracectl's command line through the protocol to the engine, and
 * from the engine to the translator and memtrack.
 *
 * common/ is the lowest layer of daemon/: it includes nothing of the
 * others (only libc and the kernel's UAPI).
 */
#ifndef GT_COMMON_SESSION_OPTS_H
#define GT_COMMON_SESSION_OPTS_H

#include <stdint.h>
#include <sys/types.h>

enum gt_heap_mode { GT_HEAP_DEFAULT = 0, GT_HEAP_OFF, GT_HEAP_MALLOC, GT_HEAP_RSS };

struct gt_session_opts {
	const pid_t *pids;             /* processes to trace (all their threads) */
	int npids;
	const char *cgroup_path;       /* or a cgroup v2 directory (absolute path) */
	int out_fd;                    /* trace output; the session does not close it */
	uint64_t duration_ns;          /* 0 = until stopped or targets exit */
	int go_version;                /* trace version, 0 = GT_V1_19 */
	enum gt_heap_mode heap;
	unsigned cpu_profile_hz;       /* 0 = off */
	unsigned alloc_stack_every;    /* 0 = off; sample every Nth allocation */
	int kernel_stacks;             /* kernel stack at every blocking switch-out
					* (default: only blocks outside a syscall) */
	int blocking_syscalls_only;    /* GoSysCall only for syscalls that block
					* (default: at every syscall entry) */
	int from_exec;                 /* the pids are a command the recorder
					* launched and holds before its exec:
					* the trace begins at its exec (its
					* events before are the recorder's) */
	uid_t owner_uid;               /* who asked (for status) */
	const char *label;             /* free text shown by status */
};

#endif
