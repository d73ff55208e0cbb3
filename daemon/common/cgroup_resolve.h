/* Finding the cgroup v2 directory a user means by --cgroup or --container.
 *
 * The cgroup v2 mount is read from /proc/self/mountinfo (it is not always
 * /sys/fs/cgroup: hybrid systems mount it at /sys/fs/cgroup/unified).
 *
 * Return convention: 0 or -errno; err gets a message for the user.
 */
#ifndef GT_CGROUP_RESOLVE_H
#define GT_CGROUP_RESOLVE_H

#include <stddef.h>

/* The cgroup v2 mount point, e.g. "/sys/fs/cgroup/unified".
 * -ENOENT if no cgroup2 filesystem is mounted. */
int gt_cgroup_mount(char *out, size_t outlen, char *err, size_t errlen);

/* --cgroup PATH: absolute, or relative to the cgroup v2 mount ("system.slice/x").
 * Writes the canonical absolute directory; -ENOENT if missing, -ENOTDIR,
 * -EINVAL if the directory is not on the cgroup v2 filesystem. */
int gt_cgroup_resolve_path(const char *arg, char *out, size_t outlen,
			   char *err, size_t errlen);

/* --container ID: a full container id (64 hex) or a unique prefix of one,
 * found in the directory names runtimes create (their systemd and cgroupfs
 * drivers; rootful and rootless):
 *   docker-<id>.scope   cri-containerd-<id>.scope   crio-<id>.scope
 *   libpod-<id>.scope   libpod-<id> (podman cgroupfs: libpod_parent/)
 *   crio-<id>   <id> (docker/<id>, kubepods/QOS/pod<uid>/<id>)
 * or a systemd unit name ("foo.service", "foo.scope", "foo.slice", or
 * "foo" for foo.service).
 * -ENOENT if nothing matches, -EEXIST (message lists them) if several do. */
int gt_cgroup_resolve_container(const char *id, char *out, size_t outlen,
				char *err, size_t errlen);

/* --pod UID: a Kubernetes pod's cgroup, the parent of all its containers,
 * as kubelet names it (UID as in metadata.uid, 8-4-4-4-12 hex; '_' for
 * '-' is accepted too):
 *   cgroupfs driver  kubepods/pod<uid>, kubepods/burstable/pod<uid>,
 *                    kubepods/besteffort/pod<uid>
 *   systemd driver   kubepods.slice/kubepods-pod<uid_>.slice,
 *                    kubepods.slice/kubepods-burstable.slice/
 *                      kubepods-burstable-pod<uid_>.slice, ...besteffort...
 *   (uid_: the uid with '_' for '-'; anywhere under the mount, so a kubelet
 *   run in a nested cgroup is found too)
 * -EINVAL for a malformed UID, -ENOENT if no pod matches, -EEXIST if
 * several do. */
int gt_cgroup_resolve_pod(const char *uid, char *out, size_t outlen,
			  char *err, size_t errlen);

/* 0 if path is a directory on a cgroup v2 filesystem, else -errno. */
int gt_cgroup_check_dir(const char *path, char *err, size_t errlen);

#endif
