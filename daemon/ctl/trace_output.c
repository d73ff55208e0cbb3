#include "trace_output.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void dir_of(const char *path, char *dir, size_t len)
{
	char copy[4096];

	snprintf(copy, sizeof(copy), "%s", path);
	snprintf(dir, len, "%s", dirname(copy));
}

static int open_named_tmp(struct gt_output *o)
{
	char dir[4096], base[4096];

	dir_of(o->path, dir, sizeof(dir));
	snprintf(base, sizeof(base), "%s", o->path);
	snprintf(o->tmp, sizeof(o->tmp), "%s/.%s.partial-%d", dir, basename(base), (int)getpid());
	o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	return o->fd < 0 ? -errno : 0;
}

/* What path names now, if it is anything but a regular file or nothing:
 * -o never replaces a device, FIFO, socket, directory or symlink (root's
 * `-o /dev/null` used to turn it into a regular file). */
static int refuse_special(const char *path, char *why, size_t whylen)
{
	struct stat st;
	const char *what;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (S_ISREG(st.st_mode))
		return 0;
	if (S_ISDIR(st.st_mode))
		what = "a directory";
	else if (S_ISLNK(st.st_mode))
		what = "a symbolic link (name the file it points to)";
	else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		what = "a device";
	else if (S_ISFIFO(st.st_mode))
		what = "a FIFO";
	else if (S_ISSOCK(st.st_mode))
		what = "a socket";
	else
		what = "not a regular file";
	snprintf(why, whylen, "cannot write %s: it is %s; -o takes a regular file or a new name",
		 path, what);
	return S_ISDIR(st.st_mode) ? -EISDIR : -EEXIST;
}

int gt_output_open(struct gt_output *o, const char *path, char *why, size_t whylen)
{
	char dir[4096];
	int err;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if (!path || !*path) {
		snprintf(why, whylen, "no output file given");
		return -EINVAL;
	}
	if (strlen(path) >= sizeof(o->path) - 32) {
		snprintf(why, whylen, "output path is too long");
		return -ENAMETOOLONG;
	}
	snprintf(o->path, sizeof(o->path), "%s", path);
	err = refuse_special(path, why, whylen);
	if (err) {
		if (err != -EISDIR && err != -EEXIST)
			snprintf(why, whylen, "cannot write %s: %s", path, strerror(-err));
		return err;
	}
	dir_of(path, dir, sizeof(dir));
	o->fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	if (o->fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		int err = open_named_tmp(o);
		if (err)
			errno = -err;
	}
	if (o->fd < 0) {
		int err = errno;
		snprintf(why, whylen, "cannot write %s: %s", path, strerror(err));
		return -err;
	}
	return 0;
}

int gt_output_name_partial(struct gt_output *o, char *why, size_t whylen)
{
	char partial[sizeof(o->tmp)];
	int fd;

	snprintf(partial, sizeof(partial), "%s.partial", o->path);
	fd = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		int err = -errno;

		if (err == -EEXIST)
			snprintf(why, whylen, "%s exists: a recording that was cut short (its "
				 "gotracectl killed?); move it away or remove it", partial);
		else
			snprintf(why, whylen, "cannot create %s: %s", partial, strerror(-err));
		return err;
	}
	if (o->tmp[0])
		unlink(o->tmp);
	if (o->fd >= 0)
		close(o->fd);
	o->fd = fd;
	snprintf(o->tmp, sizeof(o->tmp), "%s", partial);
	return 0;
}

/* The finished trace cannot go to its path: it stays beside it under a
 * name of ours (the named temporary, or the anonymous file linked as
 * PATH.partial-PID), and why says where. */
static int keep_aside(struct gt_output *o, const char *note, char *why, size_t whylen)
{
	char proc[64], kept[sizeof(o->tmp)];
	size_t n = strlen(why);

	if (o->tmp[0]) {
		snprintf(kept, sizeof(kept), "%s", o->tmp);
	} else {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", o->fd);
		snprintf(kept, sizeof(kept), "%s.partial-%d", o->path, (int)getpid());
		if (linkat(AT_FDCWD, proc, AT_FDCWD, kept, AT_SYMLINK_FOLLOW) < 0)
			kept[0] = 0;
	}
	if (kept[0])
		snprintf(why + n, whylen - n, "%s; the trace is kept as %s", note, kept);
	close(o->fd);
	o->fd = -1;
	o->tmp[0] = 0;
	return -EEXIST;
}

/* What -o names now, if it is a non-empty regular file, becomes PATH.old
 * (replacing an older one), as perf record keeps perf.data.old: a new
 * recording never silently destroys the last one.  Just before the new
 * trace is linked into place. */
static int keep_old(const struct gt_output *o, char *why, size_t whylen)
{
	char old[sizeof(o->path) + 8];
	struct stat st;

	if (lstat(o->path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
		return 0;
	snprintf(old, sizeof(old), "%s.old", o->path);
	if (rename(o->path, old) == 0)
		return 0;
	snprintf(why, whylen, "cannot keep the existing %s as %s: %s", o->path, old, strerror(errno));
	return -errno;
}

int gt_output_commit(struct gt_output *o, char *why, size_t whylen)
{
	char proc[64], tmp[4096 + 32];
	int err = 0;

	if (fsync(o->fd) < 0 && errno != EINVAL && errno != EROFS)
		err = -errno;
	/* The path may have been replaced while we recorded. */
	if (!err && refuse_special(o->path, why, whylen))
		return keep_aside(o, " (it appeared while recording)", why, whylen);
	if (!err && keep_old(o, why, whylen))
		return keep_aside(o, "", why, whylen);
	if (!err && o->tmp[0]) {
		if (rename(o->tmp, o->path) < 0)
			err = -errno;
	} else if (!err) {
		/* Link the anonymous file under a temporary name, then rename it
		 * over the target so the switch is atomic. */
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", o->fd);
		snprintf(tmp, sizeof(tmp), "%s.tmp-%d", o->path, (int)getpid());
		unlink(tmp);
		if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) < 0)
			err = -errno;
		else if (rename(tmp, o->path) < 0) {
			err = -errno;
			unlink(tmp);
		}
	}
	if (err)
		snprintf(why, whylen, "cannot save %s: %s", o->path, strerror(-err));
	close(o->fd);
	o->fd = -1;
	o->tmp[0] = 0;
	return err;
}

void gt_output_discard(struct gt_output *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->tmp[0])
		unlink(o->tmp);
	o->tmp[0] = 0;
}
