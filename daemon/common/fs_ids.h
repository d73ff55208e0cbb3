/* A thread's file-system ids (setfsuid/setfsgid), switched to a user's
 * around what gotraced does on that user's behalf: writing the user's
 * trace (quotas; docs/security.md "Output files") and creating a flight
 * session's dumps in the user's directory (the kernel's permission checks
 * then are the user's).  Per thread: the other threads keep root's.
 *
 * common/ includes nothing of the other folders. */
#ifndef GT_COMMON_FS_IDS_H
#define GT_COMMON_FS_IDS_H

#include <stddef.h>
#include <sys/types.h>

struct gt_fs_ids {
	uid_t uid;
	gid_t gid;
};

/* Takes ids' file-system ids, the previous ones in *saved: 0, or -EPERM
 * (nothing changed) when the switch did not take (no CAP_SETUID). */
int gt_fs_become(const struct gt_fs_ids *ids, struct gt_fs_ids *saved);
void gt_fs_restore(const struct gt_fs_ids *saved);

/* A writer's write function (format/'s gt_writer_open_with): write(2) with
 * the file-system ids of ctx (a struct gt_fs_ids); -1 and EPERM if they
 * cannot be taken: never written as root instead. */
long gt_fs_write_as(void *ctx, int fd, const void *buf, size_t n);

/* Every byte of buf to fd through wr(ctx, fd, ...) (write(2) when wr is
 * NULL), again after EINTR and short writes: 0, or -errno (-EIO when a
 * write wrote nothing).  The v2 encoder's output, which wants it all. */
int gt_fs_write_all(long (*wr)(void *ctx, int fd, const void *buf, size_t n), void *ctx,
		    int fd, const void *buf, size_t n);

#endif
