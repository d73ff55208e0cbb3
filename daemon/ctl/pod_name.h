/* --pod NAMESPACE/NAME: the pod's UID, asked of crictl (the CRI runtime's
 * own client: no Kubernetes API server, no credentials).  A node without
 * crictl gets an error saying to pass the UID (the pod's metadata.uid, e.g.
 * through the downward API).  The cgroup is then found from the UID
 * (gt_cgroup_resolve_pod). */
#ifndef GT_CTL_POD_NAME_H
#define GT_CTL_POD_NAME_H

#include <stddef.h>

/* 0 and uid filled, or -errno with err saying why. */
int gt_pod_uid_by_name(const char *ns_name, char *uid, size_t uidlen, char *err, size_t errlen);

#endif
