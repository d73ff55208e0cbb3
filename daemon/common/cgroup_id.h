/* The path of a cgroup of the cpu controller from its id (the kernfs id
 * BPF reads, e.g. the cgroup whose CPU quota throttled a task: the inode
 * number of its directory), for the names a recording shows. */
#ifndef GT_CGROUP_ID_H
#define GT_CGROUP_ID_H

#include <stddef.h>
#include <stdint.h>

/* Writes the cgroup's path relative to the mount of the hierarchy that
 * holds the cpu controller ("/" the root, "/a/b"): a cgroup v1 mount whose
 * options name "cpu", else the cgroup v2 mount.  -ENOENT if no directory
 * there has that id (removed since, or another hierarchy's), -errno. */
int gt_cgroup_id_path(uint64_t id, char *out, size_t len);

#endif
