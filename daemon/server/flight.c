/* Flight sessions in gotraced (docs/design.md, "Flight recorder"): the
 * directory the client passed for their dumps (flight_dump.c), and their
 * line in status. */
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/session.h"

int gt_srv_flight_check_dir(int fd, uid_t owner, char *why, size_t whylen)
{
	struct stat st;

	if (fd < 0) {
		snprintf(why, whylen, "a flight RECORD came without its directory descriptor "
			 "(SCM_RIGHTS); the daemon never opens paths");
		return -EBADF;
	}
	if (fstat(fd, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(why, whylen, "the flight recording's descriptor is not a directory "
			 "(-o DIR names where its dumps go)");
		return -ENOTDIR;
	}
	/* the daemon's supplementary groups are not the user's: only the
	 * user's own directory is certain to be theirs to write */
	if (owner != 0 && st.st_uid != owner) {
		snprintf(why, whylen, "the dump directory belongs to uid %u, not to uid %u: "
			 "give a directory of your own", (unsigned)st.st_uid, (unsigned)owner);
		return -EPERM;
	}
	return 0;
}

static size_t add(char *out, size_t len, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Appends to out at off; the new end (at most len). */
static size_t add(char *out, size_t len, size_t off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (off >= len)
		return off;
	va_start(ap, fmt);
	n = vsnprintf(out + off, len - off, fmt, ap);
	va_end(ap);
	return n < 0 ? off : off + (size_t)n;
}

void gt_srv_flight_describe(struct gt_srv_session *ss, char *out, size_t len)
{
	const struct gt_flight_opts *o = &ss->fopts;
	struct gt_flight_stats st;
	char dir[256] = "?", proc[64];
	size_t off;
	ssize_t n;

	out[0] = '\0';
	if (!ss->flight)
		return;
	gt_session_flight_stats(ss->s, &st);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", ss->out_fd);
	n = readlink(proc, dir, sizeof(dir) - 1);
	dir[n > 0 ? n : 1] = '\0';
	off = add(out, len, 0, "flight%s: window %.1fs, held %.1f MiB of %.1f MiB over %.1fs, "
		  "%u dump%s, %llu trigger%s taken, %llu ignored (%llu longer than the one taken before "
		  "them)", ss->detached ? " (detached)" : "",
		  (o->window_ns ? o->window_ns : GT_FLIGHT_DEFAULT_WINDOW_NS) / 1e9,
		  st.held_bytes / 1048576.0,
		  (o->size_bytes ? o->size_bytes : GT_FLIGHT_DEFAULT_SIZE) / 1048576.0,
		  st.span_ns / 1e9, ss->dumps, ss->dumps == 1 ? "" : "s",
		  (unsigned long long)st.fired, st.fired == 1 ? "" : "s",
		  (unsigned long long)st.ignored, (unsigned long long)st.held_longer);
	for (int i = 0; i < o->ntriggers; i++)
		off = add(out, len, off, "%s%s%s%s%s", i ? ", " : "; triggers ", o->triggers[i].spec,
			  st.names_seen & (1u << i) ? "" : " (no thread named ",
			  st.names_seen & (1u << i) ? "" : o->triggers[i].name,
			  st.names_seen & (1u << i) ? "" : " seen)");
	off = add(out, len, off, "; dir %s", dir);
	if (ss->last_error[0])
		add(out, len, off, "; last dump failed: %s", ss->last_error);
}
