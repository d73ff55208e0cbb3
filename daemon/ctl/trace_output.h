/* The output file of a recording, made so that no truncated or invalid trace
 * is ever left at the user's path: the trace is written to an anonymous file
 * (O_TMPFILE) in the target directory and only linked into place by
 * gt_output_commit once its footer is written.  In daemon mode it is
 * PATH.partial instead (gt_output_name_partial): the daemon finishes a
 * trace whose client died, and it must stay on disk under a name.  Where O_TMPFILE is not
 * supported, a hidden temporary name in the same directory is used and
 * renamed over the target.
 *
 * By descriptor: the directory is opened once, at the start, and every name
 * is relative to it; before and after the final rename the names are
 * checked to be our very file (device and inode of our descriptor).  If a
 * symbolic link or another file was swapped in for PATH.partial (or the
 * temporary name), the trace is not lost: it is linked, or copied from our
 * descriptor, to PATH.kept-PID, and commit fails saying so. */
#ifndef GT_TRACE_OUTPUT_H
#define GT_TRACE_OUTPUT_H

#include <stddef.h>

struct gt_output {
	int fd;              /* the trace, open read-write */
	int dirfd;           /* the directory of path, opened once (O_PATH) */
	char path[4096];     /* where the trace must end up, as given */
	char dir[4096];      /* its directory, as given (for messages) */
	char base[256];      /* its name in dirfd */
	char tmp[300];       /* our named file in dirfd ("" = anonymous) */
};

/* Opens the output; on failure returns -errno with a sentence in why.
 * path must name a regular file (replaced when the trace is complete) or
 * nothing yet: a directory, device, FIFO, socket or symbolic link is
 * refused and left untouched. */
int gt_output_open(struct gt_output *o, const char *path, char *why, size_t whylen);

/* Daemon mode: the trace goes to a file named PATH.partial instead,
 * created here (never over an existing one: -EEXIST, why says so), so that
 * if this process dies the daemon still finishes the trace there.  Commit
 * renames it to PATH; discard removes it. */
int gt_output_name_partial(struct gt_output *o, char *why, size_t whylen);

/* Embedded Go 1.22+: PATH.partial must be free now (-EEXIST, why says so),
 * and is given to the file later, by gt_output_link_partial, once the file
 * holds something readable: a SIGKILL before that leaves nothing (an idle
 * target's header alone, 16 bytes no reader takes, was left). */
int gt_output_partial_free(struct gt_output *o, char *why, size_t whylen);
/* Names the (still anonymous) file PATH.partial: 0, or -errno (it stays
 * anonymous, committed as ever). */
int gt_output_link_partial(struct gt_output *o);

/* Makes the finished trace appear at o->path; a non-empty regular file
 * there is kept as PATH.old (an older PATH.old is replaced), as perf does.
 * If something other than a regular file took the path meanwhile, or the
 * old file cannot be kept, it is left alone and the trace is kept beside
 * it (why says where). */
int gt_output_commit(struct gt_output *o, char *why, size_t whylen);

/* Drops the unfinished trace: nothing appears at o->path. */
void gt_output_discard(struct gt_output *o);

#endif
