/* Threads alive when a recording starts, read from /proc.
 *
 * The translator turns each into a goroutine created by G 0 (with GoWaiting
 * or GoInSyscall when it is not runnable), so the trace starts with every
 * thread of the process, not only those that happen to do something.
 *
 * Return convention: 0 or a negative errno.
 */
#ifndef GT_PROC_SNAPSHOT_H
#define GT_PROC_SNAPSHOT_H

#include <stdint.h>
#include <sys/types.h>

#include "translate/translate.h" /* struct gt_thread_snapshot */


/* Reads every thread of process tgid (/proc/TGID/task/<tid>/{stat,syscall,
 * comm}).  *out is malloc'ed (free() it); threads that vanish while being
 * read are skipped.  -ESRCH if the process does not exist. */
int gt_proc_snapshot(pid_t tgid, struct gt_thread_snapshot **out, int *n);

/* Reads one thread; 0, or -ENOENT/-ESRCH if it is gone. */
int gt_proc_snapshot_thread(pid_t tgid, pid_t tid, struct gt_thread_snapshot *out);

#endif
