/* Opening the files the symbolizer reads (binaries, debug files,
 * kallsyms) as root, when another user chose their path: never blocking on
 * a FIFO, never opening a device, never following a link the user made.
 *
 * The path is first opened O_PATH (no driver's open runs, a FIFO does not
 * wait for a writer), checked with fstat (a regular file, at most max_size
 * bytes, and the expected device and inode when given), and only then
 * opened for reading through /proc/self/fd with O_RDONLY | O_NONBLOCK |
 * O_NOCTTY | O_CLOEXEC: the file read is the one checked.
 *
 * Rejections (a link, not a regular file, too large, another file than the
 * one mapped, a bad debug link) are counted by reason and logged on stderr
 * (the first GT_SYM_LOG_MAX, paths escaped); a missing file is not a
 * rejection.  Counters are process-wide and atomic: loads may run on
 * other threads. */
#ifndef GT_SYM_SAFE_OPEN_H
#define GT_SYM_SAFE_OPEN_H

#include <stdint.h>

/* How a path is resolved. */
enum gt_sym_open_how {
	/* A path a user may control (a process's files, the directory of its
	 * binary): no symbolic link in any component; with root_fd (a
	 * process's /proc/PID/root) resolved inside that root, as the
	 * process sees it. */
	GT_SYM_OPEN_NO_LINKS,
	/* root's own tree (/usr/lib/debug, /proc/kallsyms) or a /proc magic
	 * link the kernel made (/proc/PID/map_files/...): links followed. */
	GT_SYM_OPEN_TRUSTED,
};

/* Files larger than this are not symbol files (the largest real ones, Go
 * servers and C++ debug files, are a few hundred MB). */
#define GT_SYM_FILE_MAX (4ull << 30)
#define GT_SYM_LOG_MAX 32

#define GT_SYM_REJECT_LIST(X) \
	X(LINK, "a symbolic link") \
	X(NOT_REGULAR, "not a regular file") \
	X(TOO_LARGE, "larger than") /* + the cap it was opened with */ \
	X(NOT_MAPPED, "not the file the process maps") \
	X(DEBUGLINK_NAME, "its .gnu_debuglink is not a bare file name") \
	X(DEBUGLINK_CRC, "its CRC is not the one .gnu_debuglink names") \
	X(NOT_OWNER, "a perf map not owned by its process's user or root") \
	X(BUILD_ID, "its build-id is not the binary's")

enum gt_sym_reject {
#define GT_X_REJECT_ENUM(e, why) GT_SYM_REJECT_##e,
	GT_SYM_REJECT_LIST(GT_X_REJECT_ENUM)
#undef GT_X_REJECT_ENUM
	GT_SYM_REJECT_COUNT
};

/* The device and inode a file must have (from /proc/PID/maps). */
struct gt_sym_file_id {
	unsigned dev_major, dev_minor;
	uint64_t ino;
};

/* Opens path for reading as described above: root_fd is a directory to
 * resolve it in (AT_FDCWD: the daemon's own root), want NULL or the file
 * it must be, max_size the largest size accepted.  Returns the descriptor,
 * or -errno: -ENOENT (and other errors of the path) when there is no such
 * file, -EPERM when it was rejected (counted, logged). */
int gt_sym_open(int root_fd, const char *path, enum gt_sym_open_how how,
		const struct gt_sym_file_id *want, uint64_t max_size);

/* The second half of gt_sym_open, for an O_PATH descriptor the caller
 * opened (path only names it in the log); pfd stays the caller's. */
int gt_sym_reopen(int pfd, const char *path, const struct gt_sym_file_id *want,
		  uint64_t max_size);

/* A path as "/proc/PID/root/REST" (how memtrack names a process's
 * binaries): REST resolved inside that process's root, with no link
 * (GT_SYM_OPEN_NO_LINKS); any other path with no link from the daemon's
 * root.  Returns as gt_sym_open. */
int gt_sym_open_rooted(const char *path, uint64_t max_size);

/* Counts and logs a rejection of path (for checks made after opening). */
void gt_sym_reject(enum gt_sym_reject why, const char *path);

/* Rejections so far, by reason. */
uint64_t gt_sym_rejected(enum gt_sym_reject why);

#endif
