/* Choosing processes from /proc: every process, a process's descendants,
 * processes by name.  Used by the engine to find a session's targets at
 * its start and by gotracectl to warn about what a selection leaves out.
 *
 * Return convention: 0 or -errno.
 */
#ifndef GT_COMMON_PROC_SELECT_H
#define GT_COMMON_PROC_SELECT_H

#include <sys/types.h>

/* Every process (thread group) in /proc, with its parent; *out is malloc'ed
 * (free() it).  Processes that vanish while being read are skipped. */
struct gt_proc_entry {
	pid_t pid;
	pid_t ppid;
	int kthread; /* PF_KTHREAD */
};
int gt_proc_list(struct gt_proc_entry **out, int *n);

/* How many of the processes in list descend from one of roots (not counting
 * the roots); if out is not NULL, their pids are also stored there (room
 * for n entries: no process has more descendants than list has entries). */
int gt_proc_descendants(const struct gt_proc_entry *list, int n, const pid_t *roots,
			int nroots, pid_t *out);

/* Whether process pid is called name: its comm (the kernel's 15 bytes),
 * or the last path component of its executable or of its argv[0]. */
int gt_proc_is_named(pid_t pid, const char *name);

#endif
