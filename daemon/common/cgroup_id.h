/* The path of a cgroup of the cpu controller from its id (the kernfs id
 * BPF reads, e.g. the cgroup whose CPU quota throttled a task: the inode
 * number of its directory), for the names a recording shows. */
#ifndef GT_CGROUP_ID_H
#define GT_CGROUP_ID_H

#include <stddef.h>
#include <stdint.h>

/* Writes the path of cgroup `id` in the hierarchy that holds the cpu
 * controller (a cgroup v1 mount whose options name "cpu", else the cgroup
 * v2 mount), as /proc/TID/cgroup writes paths ("/" the root, "/a/b"), when
 * it is task tid's cpu cgroup or one of its ancestors: the only cgroups
 * looked at (a stat() each, no walk of the tree).  -ENOENT if none of them
 * has that id (the task moved or exited, the cgroup is outside a
 * bind-mounted subtree), -errno. */
int gt_cgroup_id_path(uint64_t id, int tid, char *out, size_t len);

#endif
