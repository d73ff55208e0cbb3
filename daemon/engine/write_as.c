/* A user's trace is written with the user's file-system ids (see
 * internal.h), so the file system charges the writes to the user. */
#include "internal.h"

#include <errno.h>
#include <sys/fsuid.h>
#include <unistd.h>

/* setfsuid/setfsgid say nothing on failure: a second call returns the ids
 * now in force. */
static int become(uid_t uid, gid_t gid, uid_t *old_uid, gid_t *old_gid)
{
	*old_gid = (gid_t)setfsgid(gid);
	*old_uid = (uid_t)setfsuid(uid);
	if ((uid_t)setfsuid(uid) == uid && (gid_t)setfsgid(gid) == gid)
		return 0;
	setfsuid(*old_uid);
	setfsgid(*old_gid);
	return -1;
}

long gt_session_write_as_owner(void *ctx, int fd, const void *buf, size_t n)
{
	const struct gt_session *s = ctx;
	uid_t old_uid;
	gid_t old_gid;
	ssize_t k;
	int err;

	if (become(s->owner_uid, s->owner_gid, &old_uid, &old_gid)) {
		errno = EPERM; /* the daemon lacks CAP_SETUID/CAP_SETGID */
		return -1;
	}
	k = write(fd, buf, n);
	err = errno;
	setfsuid(old_uid);
	setfsgid(old_gid);
	errno = err;
	return (long)k;
}
