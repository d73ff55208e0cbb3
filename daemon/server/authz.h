/* Who may trace what, decided from the peer's SO_PEERCRED credentials:
 * root may trace anything; anyone else only the processes ptrace's rule
 * lets them (common/ptrace_rule.h: the one place it is decided), and
 * cgroups whose directory they own.  This is the check at the start; the
 * engine applies the same rule to every process its snapshot finds, and
 * BPF re-checks it at every event for the rest of the session.
 *
 * Return convention: 0 allowed, or -errno (-EPERM refused, -ESRCH no such
 * process, ...); why gets a message for the client and the log.
 */
#ifndef GT_AUTHZ_H
#define GT_AUTHZ_H

#include <stddef.h>
#include <sys/types.h>

#include "common/ptrace_rule.h"

int gt_authz_pid(const struct gt_tracer *t, pid_t pid, char *why, size_t whylen);
int gt_authz_cgroup(uid_t uid, const char *path, char *why, size_t whylen);
/* The ownership rule both cgroup checks share: 0, or -EPERM with why. */
int gt_authz_cgroup_owner(uid_t uid, const char *path, uid_t owner, char *why, size_t whylen);
/* --cgroup by descriptor (authz_cgroup.c): fd is the directory the client
 * opened (O_PATH is enough); it must be a cgroup v2 directory the uid owns
 * (root: any).  path gets the daemon's name for it.  Every refusal is about
 * the client's own descriptor: nothing it could not learn itself. */
int gt_authz_cgroup_fd(uid_t uid, int fd, char *path, size_t pathlen, char *why, size_t whylen);
/* --cgroup by path string (no descriptor): root only; for anyone else one
 * refusal whatever the path, so the daemon is no oracle for paths the
 * user cannot see. */
int gt_authz_cgroup_by_path(uid_t uid, char *why, size_t whylen);
/* Selections that reach other users' processes (what: "-a", "--name"):
 * root only. */
int gt_authz_machine(uid_t uid, const char *what, char *why, size_t whylen);

#endif
