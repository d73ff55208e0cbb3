/* Finding a container by its monitor, conmon (Podman's and CRI-O's).
 *
 * conmon runs as `conmon ... -c <id> ... -n <name> ...` (or --cid,
 * --name): its command line names the container it monitors, and the
 * container's first process is its child.  This serves two cases the
 * cgroup tree cannot:
 *  - a container named by its name (`podman run --name web`): names live
 *    in the runtime's store, not in cgroup names;
 *  - a container with no cgroup of its own: rootless Podman on a cgroup v1
 *    or hybrid host (and --cgroups=disabled) makes none, its processes stay
 *    in their user's.
 * An exec session's conmon (-e, --exec) is not the container's.  Any
 * process may call itself conmon: what it names is only a suggestion the
 * caller checks like any user input (the ptrace rule, cgroup ownership).
 *
 * Return convention: 0 or -errno; err gets a message for the user.
 */
#ifndef GT_COMMON_CONMON_H
#define GT_COMMON_CONMON_H

#include <stddef.h>
#include <sys/types.h>

/* The container a conmon command line (NUL-separated argv, len bytes, as
 * /proc/PID/cmdline holds it) monitors: its id (and its name, "" if none)
 * copied out: 1, or 0 if it is not a container's conmon (another program,
 * an exec session, no id, or one too long for the buffers). */
int gt_conmon_cmdline(const char *cmdline, size_t len, char *id, size_t idlen, char *name,
		      size_t namelen);

/* The conmon of the container named want: a container id or a unique
 * prefix of one (lowercase hex), or a container's name, exactly.  Its
 * full id goes to id and its pid to *conmon.  -ENOENT if none, -EEXIST
 * (message lists the ids) if several match. */
int gt_conmon_find(const char *want, char *id, size_t idlen, pid_t *conmon, char *err,
		   size_t errlen);

/* The children of conmon pid (the container's first processes), up to max,
 * *n of them.  -ESRCH if it has none (starting, or ended). */
int gt_conmon_children(pid_t conmon, pid_t *pids, int max, int *n, char *err, size_t errlen);

#endif
