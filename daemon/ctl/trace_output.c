#include "trace_output.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define COPY_CHUNK 65536

/* Splits path into the directory (opened once, by the caller) and the name
 * in it that every later step uses relative to that descriptor. */
static int split(struct gt_output *o, const char *path, char *why, size_t whylen)
{
	char copy[4096];

	snprintf(copy, sizeof(copy), "%s", path);
	snprintf(o->dir, sizeof(o->dir), "%s", dirname(copy));
	snprintf(copy, sizeof(copy), "%s", path);
	if (strlen(basename(copy)) >= sizeof(o->base)) {
		snprintf(why, whylen, "cannot write %s: its name is too long", path);
		return -ENAMETOOLONG;
	}
	snprintf(o->base, sizeof(o->base), "%s", basename(copy));
	return 0;
}

/* "DIR/NAME" for messages. */
static const char *full(const struct gt_output *o, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", o->dir, name);
	return buf;
}

/* Whether name in the directory is our very file (not a symlink, not a
 * file someone put there in its place). */
static int is_ours(const struct gt_output *o, const char *name)
{
	struct stat mine, there;

	return fstat(o->fd, &mine) == 0 &&
	       fstatat(o->dirfd, name, &there, AT_SYMLINK_NOFOLLOW) == 0 &&
	       mine.st_dev == there.st_dev && mine.st_ino == there.st_ino;
}

static int open_named_tmp(struct gt_output *o)
{
	snprintf(o->tmp, sizeof(o->tmp), ".%s.partial-%d", o->base, (int)getpid());
	o->fd = openat(o->dirfd, o->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		       0644);
	if (o->fd < 0)
		o->tmp[0] = 0;
	return o->fd < 0 ? -errno : 0;
}

/* What the name is now, if it is anything but a regular file or nothing:
 * -o never replaces a device, FIFO, socket, directory or symlink (root's
 * `-o /dev/null` used to turn it into a regular file). */
static int refuse_special(const struct gt_output *o, char *why, size_t whylen)
{
	struct stat st;
	const char *what;

	if (fstatat(o->dirfd, o->base, &st, AT_SYMLINK_NOFOLLOW) < 0)
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
		 o->path, what);
	return S_ISDIR(st.st_mode) ? -EISDIR : -EEXIST;
}

int gt_output_open(struct gt_output *o, const char *path, char *why, size_t whylen)
{
	int err;

	memset(o, 0, sizeof(*o));
	o->fd = o->dirfd = -1;
	if (!path || !*path) {
		snprintf(why, whylen, "no output file given");
		return -EINVAL;
	}
	if (strlen(path) >= sizeof(o->path) - 32) {
		snprintf(why, whylen, "output path is too long");
		return -ENAMETOOLONG;
	}
	snprintf(o->path, sizeof(o->path), "%s", path);
	err = split(o, path, why, whylen);
	if (err)
		return err;
	/* every later step is relative to this directory: swapping a
	 * component of its path meanwhile changes nothing */
	o->dirfd = open(o->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (o->dirfd < 0) {
		err = -errno;
		snprintf(why, whylen, "cannot write %s: %s: %s", path, o->dir, strerror(-err));
		return err;
	}
	err = refuse_special(o, why, whylen);
	if (err) {
		if (err != -EISDIR && err != -EEXIST)
			snprintf(why, whylen, "cannot write %s: %s", path, strerror(-err));
		gt_output_discard(o);
		return err;
	}
	/* read-write: a trace whose name was taken from us can still be copied */
	o->fd = openat(o->dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
	if (o->fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		err = open_named_tmp(o);
		if (err)
			errno = -err;
	}
	if (o->fd < 0) {
		err = -errno;
		snprintf(why, whylen, "cannot write %s: %s", path, strerror(-err));
		gt_output_discard(o);
		return err;
	}
	return 0;
}

/* Removes our named file, if the name still is ours. */
static void unlink_ours(struct gt_output *o)
{
	if (o->tmp[0] && is_ours(o, o->tmp))
		unlinkat(o->dirfd, o->tmp, 0);
	o->tmp[0] = 0;
}

int gt_output_name_partial(struct gt_output *o, char *why, size_t whylen)
{
	char partial[sizeof(o->tmp)], buf[8400];
	int fd;

	snprintf(partial, sizeof(partial), "%s.partial", o->base);
	fd = openat(o->dirfd, partial, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		int err = -errno;

		if (err == -EEXIST)
			snprintf(why, whylen, "%s exists: a recording that was cut short (its "
				 "gotracectl killed?); move it away or remove it",
				 full(o, partial, buf, sizeof(buf)));
		else
			snprintf(why, whylen, "cannot create %s: %s",
				 full(o, partial, buf, sizeof(buf)), strerror(-err));
		return err;
	}
	unlink_ours(o);
	if (o->fd >= 0)
		close(o->fd);
	o->fd = fd;
	snprintf(o->tmp, sizeof(o->tmp), "%s", partial);
	return 0;
}

int gt_output_partial_free(struct gt_output *o, char *why, size_t whylen)
{
	char partial[sizeof(o->tmp)], buf[8400];
	struct stat st;

	snprintf(partial, sizeof(partial), "%s.partial", o->base);
	if (fstatat(o->dirfd, partial, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	snprintf(why, whylen, "%s exists: a recording that was cut short (its gotracectl "
		 "killed?); move it away or remove it", full(o, partial, buf, sizeof(buf)));
	return -EEXIST;
}

int gt_output_link_partial(struct gt_output *o)
{
	char partial[sizeof(o->tmp)], proc[64];

	snprintf(partial, sizeof(partial), "%s.partial", o->base);
	if (o->tmp[0]) { /* no O_TMPFILE here: our hidden name becomes it */
		if (renameat2(o->dirfd, o->tmp, o->dirfd, partial, RENAME_NOREPLACE) < 0)
			return -errno;
	} else {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", o->fd);
		if (linkat(AT_FDCWD, proc, o->dirfd, partial, AT_SYMLINK_FOLLOW) < 0)
			return -errno;
	}
	snprintf(o->tmp, sizeof(o->tmp), "%s", partial);
	return 0;
}

/* Copies the whole trace from our descriptor into fd. */
static int copy_trace(int from, int to)
{
	static char buf[COPY_CHUNK];
	off_t off = 0;

	for (;;) {
		ssize_t n = pread(from, buf, sizeof(buf), off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return fsync(to) < 0 && errno != EINVAL ? -errno : 0;
		for (ssize_t done = 0; done < n;) {
			ssize_t w = write(to, buf + done, (size_t)(n - done));

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return -errno;
			done += w;
		}
		off += n;
	}
}

/* Gives our file a new name of its own, name.kept-PID[-N]: a link to it
 * when the kernel allows (it has a name left, or is still anonymous), a
 * copy otherwise (its last name was taken: unlinked, or replaced).
 * 0 and kept filled, or -errno. */
static int save_as_new(struct gt_output *o, char *kept, size_t keptlen)
{
	char proc[64];
	int err = -EEXIST;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", o->fd);
	for (int n = 0; n < 100 && err == -EEXIST; n++) {
		int fd;

		if (n)
			snprintf(kept, keptlen, "%s.kept-%d-%d", o->base, (int)getpid(), n);
		else
			snprintf(kept, keptlen, "%s.kept-%d", o->base, (int)getpid());
		if (linkat(AT_FDCWD, proc, o->dirfd, kept, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		if (errno == EEXIST)
			continue;
		fd = openat(o->dirfd, kept, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0644);
		if (fd < 0) {
			err = -errno;
			continue;
		}
		err = copy_trace(o->fd, fd);
		close(fd);
		if (err)
			unlinkat(o->dirfd, kept, 0);
	}
	return err;
}

/* Ends a commit that could not put the trace at its path: the trace stays
 * under a name of ours that why gives (or why says it is lost). */
static int keep_aside(struct gt_output *o, char *why, size_t whylen)
{
	char kept[sizeof(o->tmp)], buf[8400];
	size_t n = strlen(why);
	int err = 0;

	if (o->tmp[0] && is_ours(o, o->tmp))
		snprintf(kept, sizeof(kept), "%s", o->tmp);
	else
		err = save_as_new(o, kept, sizeof(kept));
	if (!err)
		snprintf(why + n, whylen - n, "; the trace is kept as %s",
			 full(o, kept, buf, sizeof(buf)));
	else
		snprintf(why + n, whylen - n, "; the trace could not be kept either (%s): it is lost",
			 strerror(-err));
	close(o->fd);
	o->fd = -1;
	o->tmp[0] = 0;
	gt_output_discard(o);
	return -EEXIST;
}

/* What -o names now, if it is a non-empty regular file, becomes FILE.old
 * (replacing an older one), as perf record keeps perf.data.old: a new
 * recording never silently destroys the last one.  Just before the new
 * trace is renamed into place. */
static int keep_old(const struct gt_output *o, char *why, size_t whylen)
{
	char old[sizeof(o->base) + 8], mid[sizeof(o->base) + 32];
	struct stat st;

	if (fstatat(o->dirfd, o->base, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size == 0)
		return 0;
	snprintf(old, sizeof(old), "%s.old", o->base);
	snprintf(mid, sizeof(mid), ".%s.old-%d", o->base, (int)getpid());
	unlinkat(o->dirfd, mid, 0);
	/* A second name, moved over FILE.old: FILE itself stays in place until
	 * the new trace replaces it in one rename. */
	if (linkat(o->dirfd, o->base, o->dirfd, mid, 0) == 0 &&
	    renameat(o->dirfd, mid, o->dirfd, old) == 0)
		return 0;
	unlinkat(o->dirfd, mid, 0);
	snprintf(why, whylen, "cannot keep the existing %s as %s.old: %s", o->path, o->path,
		 strerror(errno));
	return -1;
}

/* Links the anonymous trace as a temporary name of ours in the directory. */
static int link_anonymous(struct gt_output *o)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", o->fd);
	snprintf(o->tmp, sizeof(o->tmp), ".%s.tmp-%d", o->base, (int)getpid());
	unlinkat(o->dirfd, o->tmp, 0);
	if (linkat(AT_FDCWD, proc, o->dirfd, o->tmp, AT_SYMLINK_FOLLOW) < 0) {
		int err = -errno;

		o->tmp[0] = 0;
		return err;
	}
	return 0;
}

int gt_output_commit(struct gt_output *o, char *why, size_t whylen)
{
	char buf[8400];
	int err = 0;

	if (fsync(o->fd) < 0 && errno != EINVAL && errno != EROFS)
		err = -errno;
	if (err) { /* not all of it reached the disk: no trace is better */
		snprintf(why, whylen, "cannot save %s: %s", o->path, strerror(-err));
		gt_output_discard(o);
		return err;
	}
	/* The path may have been replaced while we recorded. */
	if (refuse_special(o, why, whylen)) {
		snprintf(why + strlen(why), whylen - strlen(why), " (it appeared while recording)");
		return keep_aside(o, why, whylen);
	}
	if (!o->tmp[0] && (err = link_anonymous(o))) {
		snprintf(why, whylen, "cannot save %s: %s", o->path, strerror(-err));
		return keep_aside(o, why, whylen);
	}
	/* Our temporary name (FILE.partial in daemon mode) may have been
	 * replaced meanwhile (a symbolic link): never move that into place. */
	if (!is_ours(o, o->tmp)) {
		snprintf(why, whylen, "cannot save %s: %s was replaced while recording "
			 "(it is not the file the trace was written to)", o->path,
			 full(o, o->tmp, buf, sizeof(buf)));
		o->tmp[0] = 0;
		return keep_aside(o, why, whylen);
	}
	if (keep_old(o, why, whylen))
		return keep_aside(o, why, whylen);
	if (renameat(o->dirfd, o->tmp, o->dirfd, o->base) < 0) {
		err = -errno;
		snprintf(why, whylen, "cannot save %s: %s", o->path, strerror(-err));
		return keep_aside(o, why, whylen);
	}
	o->tmp[0] = 0;
	/* Renamed by name: it must be our file that landed there. */
	if (!is_ours(o, o->base)) {
		snprintf(why, whylen, "cannot save %s: its temporary name was replaced while the "
			 "trace was put in place", o->path);
		return keep_aside(o, why, whylen);
	}
	gt_output_discard(o);
	return 0;
}

void gt_output_discard(struct gt_output *o)
{
	if (o->fd >= 0) {
		unlink_ours(o);
		close(o->fd);
	}
	o->fd = -1;
	o->tmp[0] = 0;
	if (o->dirfd >= 0)
		close(o->dirfd);
	o->dirfd = -1;
}
