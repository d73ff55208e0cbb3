/* Flight sessions in gotraced (docs/design.md, "Flight recorder"): their
 * triggered and requested dumps into the directory the client passed,
 * created and written with the owner's file-system ids (the kernel checks
 * the owner's rights; docs/security.md "Output files"), and their line in
 * status. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/fs_ids.h"
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

/* Links the finished anonymous file fd into the directory under the first
 * free name (never over an existing one: linkat does not replace). */
static int link_named(struct gt_srv_session *ss, int fd, const struct gt_flight_fired *mark,
		      char *name, size_t namelen)
{
	char when[32], label[64] = "", proc[64];
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y%m%d-%H%M%S", &tm);
	if (mark)
		gt_flight_trigger_label(&ss->fopts.triggers[mark->trigger], label, sizeof(label));
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	for (int i = 1; i < 1000; i++) {
		char suffix[16] = "";

		if (i > 1)
			snprintf(suffix, sizeof(suffix), "-%d", i);
		snprintf(name, namelen, "flight-%d-%s%s%s.trace", ss->id, when, label, suffix);
		if (!linkat(AT_FDCWD, proc, ss->out_fd, name, AT_SYMLINK_FOLLOW))
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int gt_srv_flight_dump_dir(struct gt_srv_session *ss, const struct gt_flight_fired *mark,
			   char *name, size_t namelen, uint64_t *bytes, char *why, size_t whylen)
{
	struct gt_fs_ids as = {.uid = ss->owner, .gid = ss->owner_gid}, saved;
	struct stat st;
	int fd, err;

	name[0] = '\0';
	if (gt_fs_become(&as, &saved)) {
		snprintf(why, whylen, "cannot take uid %u's file-system ids", (unsigned)as.uid);
		return -EPERM;
	}
	fd = openat(ss->out_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0640);
	err = fd < 0 ? -errno : 0;
	gt_fs_restore(&saved);
	if (err) {
		snprintf(why, whylen, "cannot create a file in the dump directory as uid %u: %s",
			 (unsigned)as.uid, strerror(-err));
		return err;
	}
	err = gt_session_flight_dump_as(ss->s, fd, mark, &as, why, whylen);
	if (!err && fstat(fd, &st))
		err = -errno;
	if (!err && !gt_fs_become(&as, &saved)) {
		err = link_named(ss, fd, mark, name, namelen);
		gt_fs_restore(&saved);
		if (err)
			snprintf(why, whylen, "cannot name the dump in its directory: %s",
				 strerror(-err));
	} else if (!err) {
		err = -EPERM;
		snprintf(why, whylen, "cannot take uid %u's file-system ids", (unsigned)as.uid);
	}
	close(fd); /* unlinked until named: nothing is left on failure */
	if (!err) {
		*bytes = (uint64_t)st.st_size;
		ss->dumps++;
	}
	return err;
}

static void say_fired(const struct gt_srv_session *ss, const struct gt_flight_fired *f)
{
	const char *sys = f->sysnr >= 0 ? gt_engine_syscall_name(f->sysnr) : NULL;

	gt_log("session %d: trigger %s fired: thread %u (%.16s) of process %u, %.1f ms%s%s",
	       ss->id, ss->fopts.triggers[f->trigger].spec, f->tid, f->comm, f->tgid,
	       f->span_ns / 1e6, sys ? " in " : "", sys ? sys : "");
}

void gt_srv_flight_tick(struct gt_srv_session *ss, int force)
{
	struct gt_flight_fired f;
	char name[GT_PROTO_MAX_NAME + 1], why[GT_PROTO_MAX_TEXT];
	uint64_t bytes = 0, t0;
	int err;

	if (!ss->flight || ss->ok_pending)
		return;
	while (gt_session_flight_fired(ss->s, &f))
		say_fired(ss, &f);
	if (!gt_session_flight_due(ss->s, force, &f))
		return;
	t0 = gt_now_ns();
	err = gt_srv_flight_dump_dir(ss, &f, name, sizeof(name), &bytes, why, sizeof(why));
	ss->last_dump_ns = gt_now_ns() - t0;
	if (err) {
		snprintf(ss->last_error, sizeof(ss->last_error), "%.150s", why);
		gt_log("session %d: the dump of trigger %s failed: %s", ss->id,
		       ss->fopts.triggers[f.trigger].spec, why);
		return;
	}
	gt_log("session %d: wrote %s (%llu bytes in %.1f ms; %.1f ms after the trigger and "
	       "--after)", ss->id, name, (unsigned long long)bytes, ss->last_dump_ns / 1e6,
	       (gt_now_ns() - f.ts - ss->fopts.after_ns) / 1e6);
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
		  "%u dump%s, %llu trigger%s taken, %llu ignored", ss->detached ? " (detached)" : "",
		  (o->window_ns ? o->window_ns : GT_FLIGHT_DEFAULT_WINDOW_NS) / 1e9,
		  st.held_bytes / 1048576.0,
		  (o->size_bytes ? o->size_bytes : GT_FLIGHT_DEFAULT_SIZE) / 1048576.0,
		  st.span_ns / 1e9, ss->dumps, ss->dumps == 1 ? "" : "s",
		  (unsigned long long)st.fired, st.fired == 1 ? "" : "s",
		  (unsigned long long)st.ignored);
	for (int i = 0; i < o->ntriggers; i++)
		off = add(out, len, off, "%s%s%s%s%s", i ? ", " : "; triggers ", o->triggers[i].spec,
			  st.names_seen & (1u << i) ? "" : " (no thread named ",
			  st.names_seen & (1u << i) ? "" : o->triggers[i].name,
			  st.names_seen & (1u << i) ? "" : " seen)");
	off = add(out, len, off, "; dir %s", dir);
	if (ss->last_error[0])
		add(out, len, off, "; last dump failed: %s", ss->last_error);
}
