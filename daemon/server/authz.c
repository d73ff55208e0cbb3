/* Authorization of recording requests (see authz.h). */
#include "authz.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int gt_authz_pid(const struct gt_tracer *t, pid_t pid, char *why, size_t whylen)
{
	return gt_ptrace_may(t, pid, why, whylen);
}

int gt_authz_cgroup_owner(uid_t uid, const char *path, uid_t owner, char *why, size_t whylen)
{
	if (uid == 0 || owner == uid)
		return 0;
	snprintf(why, whylen, "uid %u may not trace cgroup %s (owned by uid %u): "
		 "only cgroups you own, or run as root", (unsigned)uid, path, (unsigned)owner);
	return -EPERM;
}

int gt_authz_cgroup(uid_t uid, const char *path, char *why, size_t whylen)
{
	struct stat st;

	if (stat(path, &st)) {
		int rc = -errno;

		snprintf(why, whylen, "cgroup %s: %s", path, strerror(-rc));
		return rc;
	}
	return gt_authz_cgroup_owner(uid, path, st.st_uid, why, whylen);
}

int gt_authz_machine(uid_t uid, const char *what, char *why, size_t whylen)
{
	if (uid == 0)
		return 0;
	snprintf(why, whylen, "uid %u may not record with %s: it selects every user's "
		 "processes; run as root, or select your own with -p", (unsigned)uid, what);
	return -EPERM;
}
