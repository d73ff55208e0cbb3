/* Small readers of /proc shared by every layer: a task's stat line and a
 * process's cgroup.  One parser each, so the corner cases (a comm with
 * spaces and parentheses, v1 hierarchy lines beside the v2 one) are
 * handled once.
 *
 * Return convention: 0 or -errno (-ENOENT: the task is gone).
 */
#ifndef GT_COMMON_PROCFS_H
#define GT_COMMON_PROCFS_H

#include <stddef.h>
#include <sys/types.h>

/* Reads a small file into buf, NUL-terminated: bytes read, or -errno. */
int gt_proc_read_small(const char *path, char *buf, size_t size);

/* The fields of /proc/PID[/task/TID]/stat that we use. */
struct gt_proc_stat {
	char comm[16];
	char state;            /* R S D T t Z X I ... */
	pid_t ppid;            /* field 4 */
	unsigned long flags;   /* field 9: PF_* (PF_KTHREAD) */
	int cpu;               /* field 39: CPU it last ran on, -1 unknown */
};

/* tid 0: the process's own line (/proc/TGID/stat). */
int gt_proc_stat(pid_t tgid, pid_t tid, struct gt_proc_stat *out);

/* Parses one stat line (exposed for tests and fuzzing): 0 or -EINVAL. */
int gt_proc_stat_parse(const char *line, struct gt_proc_stat *out);

/* Liveness, one rule for every caller.  A process is dead when /proc/PID
 * is gone (ENOENT, ESRCH) or its state is Z, X or x.  A zombie (Z) counts
 * as dead: it has exited, its threads and memory are gone, its exit event
 * has fired; only its parent's wait is missing, which may never come.
 * Any other failure (EACCES, EMFILE, ENOMEM, a line that does not parse)
 * says nothing about the process: UNKNOWN, and the caller keeps what it
 * believed before; never "dead", never a guess from an unread line. */
enum gt_proc_life { GT_PROC_UNKNOWN = -1, GT_PROC_DEAD = 0, GT_PROC_ALIVE = 1 };

/* The rule on a state letter alone: 0 for Z, X, x; 1 for any other. */
int gt_proc_state_alive(char state);

/* The rule on what gt_proc_stat returned (st read only when rc is 0). */
enum gt_proc_life gt_proc_life_of(int rc, const struct gt_proc_stat *st);

/* Reads /proc/PID/stat and applies the rule. */
enum gt_proc_life gt_proc_alive(pid_t pid);

/* The process's path in one hierarchy of /proc/PID/cgroup: controller NULL
 * for the cgroup v2 line ("0::/path"), else a v1 controller ("memory").
 * 0 and out filled, -ENOENT if the process or the hierarchy is not there. */
int gt_proc_cgroup(pid_t pid, const char *controller, char *out, size_t outlen);

#endif
