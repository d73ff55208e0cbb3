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

/* The process's path in one hierarchy of /proc/PID/cgroup: controller NULL
 * for the cgroup v2 line ("0::/path"), else a v1 controller ("memory").
 * 0 and out filled, -ENOENT if the process or the hierarchy is not there. */
int gt_proc_cgroup(pid_t pid, const char *controller, char *out, size_t outlen);

#endif
