/* --cgroup from a client that is not root: the directory it opened itself
 * and passed with the output's descriptor (see authz.h).  The daemon never
 * looks a user's cgroup path up with its own rights, so its answers say
 * nothing the client could not learn from its own descriptor. */
#include "authz.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* The name the daemon sees for the directory of fd (its own /proc link),
 * checked to be that very directory: a cgroup mounted only in the client's
 * mount namespace, or removed meanwhile, has no such name. */
static int name_of_dir(int fd, const struct stat *st, char *path, size_t pathlen,
		       char *why, size_t whylen)
{
	char proc[64];
	struct stat named;
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, path, pathlen - 1);
	if (n < 0 || (size_t)n >= pathlen - 1) {
		snprintf(why, whylen, "cannot name the cgroup directory passed: %s",
			 n < 0 ? strerror(errno) : "path too long");
		return n < 0 ? -errno : -ENAMETOOLONG;
	}
	path[n] = '\0';
	if (path[0] != '/' || stat(path, &named) || named.st_dev != st->st_dev ||
	    named.st_ino != st->st_ino) {
		snprintf(why, whylen, "the cgroup directory passed is not in gotraced's cgroup "
			 "tree (another mount namespace, or removed)");
		return -ENOENT;
	}
	return 0;
}

int gt_authz_cgroup_fd(uid_t uid, int fd, char *path, size_t pathlen, char *why, size_t whylen)
{
	struct statfs sfs;
	struct stat st;

	if (fstat(fd, &st) || fstatfs(fd, &sfs)) {
		int rc = -errno;

		snprintf(why, whylen, "cannot stat the cgroup directory passed: %s", strerror(-rc));
		return rc;
	}
	if (!S_ISDIR(st.st_mode) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		snprintf(why, whylen, "the cgroup descriptor passed is not a cgroup v2 directory");
		return -ENOTDIR;
	}
	if (name_of_dir(fd, &st, path, pathlen, why, whylen))
		return -ENOENT;
	return gt_authz_cgroup_owner(uid, path, st.st_uid, why, whylen);
}

int gt_authz_cgroup_by_path(uid_t uid, char *why, size_t whylen)
{
	if (uid == 0)
		return 0;
	snprintf(why, whylen, "uid %u names a cgroup by path: a client that is not root passes "
		 "the cgroup directory it opened itself (a second descriptor after the "
		 "output's); gotraced does not look up users' paths", (unsigned)uid);
	return -EPERM;
}
