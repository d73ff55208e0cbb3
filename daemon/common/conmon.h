/* Finding a container that has no cgroup of its own by its monitor.
 *
 * Rootless Podman on a cgroup v1 or hybrid host (and any Podman container
 * run with --cgroups=disabled) makes no cgroup: its processes stay in
 * their user's, and `--container` has no directory to find.  Its monitor
 * still names it: conmon (Podman's and CRI-O's) runs as
 * `conmon ... -c <id> ...` (or --cid), and the container's first process
 * is conmon's child.  An exec session's conmon (-e, --exec) is not the
 * container's.
 *
 * Return convention: 0 or -errno; err gets a message for the user.
 */
#ifndef GT_COMMON_CONMON_H
#define GT_COMMON_CONMON_H

#include <stddef.h>
#include <sys/types.h>

/* The container id a conmon command line (NUL-separated argv, len bytes,
 * as /proc/PID/cmdline holds it) monitors, copied to id: 1, or 0 if it is
 * not a container's conmon (another program, an exec session, no id). */
int gt_conmon_cmdline_id(const char *cmdline, size_t len, char *id, size_t idlen);

/* The processes of the container whose id is id or starts with it (hex):
 * the children of its conmon, up to max in pids (*n of them), and its full
 * id in full.  -ENOENT if no conmon monitors such a container, -EEXIST
 * (message lists them) if several ids match, -ESRCH if its conmon has no
 * child (the container is starting or has ended).  An id that is not
 * lowercase hex is no container's: -ENOENT. */
int gt_conmon_container_pids(const char *id, pid_t *pids, int max, int *n, char *full,
			     size_t fulllen, char *err, size_t errlen);

#endif
