/* Authorization of recording requests (see authz.h). */
#include "authz.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int gt_proc_uids(pid_t pid, uid_t uids[4])
{
	char path[64], line[256];
	unsigned long u[4];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "Uid: %lu %lu %lu %lu", &u[0], &u[1], &u[2], &u[3]) == 4;
	fclose(f);
	if (!found)
		return -EIO;
	for (int i = 0; i < 4; i++)
		uids[i] = (uid_t)u[i];
	return 0;
}

/* ptrace's other rule: the process must be dumpable.  The kernel gives a
 * process that is not (it changed credentials, or runs a set-user-ID,
 * set-group-ID or file-capability program) a /proc/PID/environ owned by
 * root (the directory itself may keep the owner's uid).
 * Gids and later changes are BPF's to check (gt_capture_session_owner). */
static int authz_dumpable(uid_t uid, pid_t pid, char *why, size_t whylen)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	if (stat(path, &st)) {
		int rc = errno == ENOENT ? -ESRCH : -errno;

		snprintf(why, whylen, "cannot stat %s: %s", path, strerror(errno));
		return rc;
	}
	if (st.st_uid != uid) {
		snprintf(why, whylen, "uid %u may not trace process %d: it is not dumpable "
			 "(it changed credentials or runs a privileged program)", (unsigned)uid, (int)pid);
		return -EPERM;
	}
	return 0;
}

int gt_authz_pid(uid_t uid, pid_t pid, char *why, size_t whylen)
{
	uid_t u[4];
	int rc = gt_proc_uids(pid, u);

	if (rc) {
		if (rc == -ESRCH)
			snprintf(why, whylen, "no such process %d", (int)pid);
		else
			snprintf(why, whylen, "cannot read /proc/%d/status: %s", (int)pid, strerror(-rc));
		return rc;
	}
	if (uid == 0)
		return 0;
	/* the ptrace rule: real, effective and saved uid must all be the caller's */
	if (u[0] != uid || u[1] != uid || u[2] != uid) {
		snprintf(why, whylen, "uid %u may not trace process %d (owned by uid %u/%u/%u): "
			 "only your own processes, or run as root", (unsigned)uid, (int)pid,
			 (unsigned)u[0], (unsigned)u[1], (unsigned)u[2]);
		return -EPERM;
	}
	return authz_dumpable(uid, pid, why, whylen);
}

int gt_authz_cgroup(uid_t uid, const char *path, char *why, size_t whylen)
{
	struct stat st;

	if (stat(path, &st)) {
		int rc = -errno;

		snprintf(why, whylen, "cgroup %s: %s", path, strerror(-rc));
		return rc;
	}
	if (uid != 0 && st.st_uid != uid) {
		snprintf(why, whylen, "uid %u may not trace cgroup %s (owned by uid %u): "
			 "only cgroups you own, or run as root", (unsigned)uid, path,
			 (unsigned)st.st_uid);
		return -EPERM;
	}
	return 0;
}

int gt_authz_machine(uid_t uid, const char *what, char *why, size_t whylen)
{
	if (uid == 0)
		return 0;
	snprintf(why, whylen, "uid %u may not record with %s: it selects every user's "
		 "processes; run as root, or select your own with -p", (unsigned)uid, what);
	return -EPERM;
}
