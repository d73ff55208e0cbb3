/* See safe_open.h. */
#include "safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/gt_escape.h"

static _Atomic uint64_t rejected[GT_SYM_REJECT_COUNT];
static _Atomic unsigned logged;

static const char *const reasons[] = {
#define GT_X_REJECT_WHY(e, why) [GT_SYM_REJECT_##e] = why,
	GT_SYM_REJECT_LIST(GT_X_REJECT_WHY)
#undef GT_X_REJECT_WHY
};

/* Counts and logs a refusal; more follows the reason ("" none). */
static void reject(enum gt_sym_reject why, const char *path, const char *more)
{
	char shown[320];
	unsigned k;

	if ((unsigned)why >= GT_SYM_REJECT_COUNT)
		return;
	atomic_fetch_add(&rejected[why], 1);
	k = atomic_fetch_add(&logged, 1);
	if (k >= GT_SYM_LOG_MAX)
		return;
	gt_esc(shown, sizeof(shown), path ? path : "?"); /* a user's path: one log line */
	fprintf(stderr, "symbols: not reading %s: %s%s%s\n", shown, reasons[why], more,
		k + 1 == GT_SYM_LOG_MAX ? " (further refusals are only counted)" : "");
}

void gt_sym_reject(enum gt_sym_reject why, const char *path)
{
	reject(why, path, "");
}

/* A file over the cap it was opened with, named: " 4 GiB", " 1 GiB"
 * (a debug-link candidate's), or in bytes when not a whole MiB. */
static void reject_size(const char *path, uint64_t max)
{
	char cap[48];

	if (max % (1ull << 30) == 0)
		snprintf(cap, sizeof(cap), " %llu GiB", (unsigned long long)(max >> 30));
	else if (max % (1ull << 20) == 0)
		snprintf(cap, sizeof(cap), " %llu MiB", (unsigned long long)(max >> 20));
	else
		snprintf(cap, sizeof(cap), " %llu bytes", (unsigned long long)max);
	reject(GT_SYM_REJECT_TOO_LARGE, path, cap);
}

uint64_t gt_sym_rejected(enum gt_sym_reject why)
{
	return (unsigned)why < GT_SYM_REJECT_COUNT ? atomic_load(&rejected[why]) : 0;
}

/* An O_PATH descriptor of path: no open() of a device or FIFO runs.
 * openat2 (Linux 5.6) refuses links in every component; where it is
 * missing or filtered, the last component is still never followed. */
static int open_path(int root_fd, const char *path, enum gt_sym_open_how how)
{
	struct open_how oh = { .flags = O_PATH | O_CLOEXEC };
	int fd;

	if (how == GT_SYM_OPEN_TRUSTED) {
		fd = openat(root_fd, path, O_PATH | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	oh.flags |= O_NOFOLLOW;
	oh.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	if (root_fd != AT_FDCWD)
		oh.resolve |= RESOLVE_IN_ROOT;
	fd = (int)syscall(SYS_openat2, root_fd, path, &oh, sizeof(oh));
	if (fd >= 0)
		return fd;
	if (errno == ELOOP || errno == EXDEV) { /* a link on the way */
		gt_sym_reject(GT_SYM_REJECT_LINK, path);
		return -EPERM;
	}
	if (errno != ENOSYS && errno != EPERM)
		return -errno;
	/* no openat2: resolved below root_fd, the last component unfollowed */
	while (root_fd != AT_FDCWD && *path == '/')
		path++;
	fd = openat(root_fd, path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* 0 if the file at pfd may be read, else counts why and -EPERM. */
static int check(int pfd, const char *path, const struct gt_sym_file_id *want,
		 uint64_t max_size, struct stat *st)
{
	enum gt_sym_reject why;

	if (fstat(pfd, st))
		return -errno;
	if (S_ISLNK(st->st_mode))
		why = GT_SYM_REJECT_LINK;
	else if (!S_ISREG(st->st_mode))
		why = GT_SYM_REJECT_NOT_REGULAR;
	else if ((uint64_t)st->st_size > max_size) {
		reject_size(path, max_size);
		return -EPERM;
	} else if (want && (st->st_ino != want->ino || major(st->st_dev) != want->dev_major ||
			  minor(st->st_dev) != want->dev_minor))
		why = GT_SYM_REJECT_NOT_MAPPED;
	else
		return 0;
	gt_sym_reject(why, path);
	return -EPERM;
}

int gt_sym_reopen(int pfd, const char *path, const struct gt_sym_file_id *want,
		  uint64_t max_size)
{
	struct stat st, st2;
	char self[64];
	int fd, err = check(pfd, path, want, max_size, &st);

	if (err)
		return err;
	/* the very inode checked, now for reading */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st2) || st2.st_ino != st.st_ino || st2.st_dev != st.st_dev) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

int gt_sym_open(int root_fd, const char *path, enum gt_sym_open_how how,
		const struct gt_sym_file_id *want, uint64_t max_size)
{
	int pfd = open_path(root_fd, path, how), fd;

	if (pfd < 0)
		return pfd;
	fd = gt_sym_reopen(pfd, path, want, max_size);
	close(pfd);
	return fd;
}

int gt_sym_open_rooted(const char *path, uint64_t max_size)
{
	char root[64];
	int pid, n = 0, root_fd, fd;

	if (sscanf(path, "/proc/%d/root%n", &pid, &n) != 1 || n <= 0 || path[n] != '/')
		return gt_sym_open(AT_FDCWD, path, GT_SYM_OPEN_NO_LINKS, NULL, max_size);
	snprintf(root, sizeof(root), "/proc/%d/root", pid);
	root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		return -errno;
	fd = gt_sym_open(root_fd, path + n, GT_SYM_OPEN_NO_LINKS, NULL, max_size);
	close(root_fd);
	return fd;
}
