/* File-system ids of the calling thread (fs_ids.h). */
#include "fs_ids.h"

#include <errno.h>
#include <sys/fsuid.h>
#include <unistd.h>

/* setfsuid/setfsgid say nothing on failure: a second call returns the ids
 * now in force. */
int gt_fs_become(const struct gt_fs_ids *ids, struct gt_fs_ids *saved)
{
	saved->gid = (gid_t)setfsgid(ids->gid);
	saved->uid = (uid_t)setfsuid(ids->uid);
	if ((uid_t)setfsuid(ids->uid) == ids->uid && (gid_t)setfsgid(ids->gid) == ids->gid)
		return 0;
	gt_fs_restore(saved);
	return -EPERM;
}

void gt_fs_restore(const struct gt_fs_ids *saved)
{
	setfsuid(saved->uid);
	setfsgid(saved->gid);
}

long gt_fs_write_as(void *ctx, int fd, const void *buf, size_t n)
{
	struct gt_fs_ids saved;
	ssize_t k;
	int err;

	if (gt_fs_become(ctx, &saved)) {
		errno = EPERM;
		return -1;
	}
	k = write(fd, buf, n);
	err = errno;
	gt_fs_restore(&saved);
	errno = err;
	return (long)k;
}

int gt_fs_write_all(long (*wr)(void *ctx, int fd, const void *buf, size_t n), void *ctx,
		    int fd, const void *buf, size_t n)
{
	const char *b = buf;

	while (n) {
		long k = wr ? wr(ctx, fd, b, n) : (long)write(fd, b, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		b += k;
		n -= (size_t)k;
	}
	return 0;
}
