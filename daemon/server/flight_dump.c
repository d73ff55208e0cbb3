/* A flight session's dumps in gotraced (docs/design.md, "Flight recorder",
 * "In the daemon"): triggered ones into the session's directory, requested
 * ones (DUMP) there or into the requester's file.  A dump is written on a
 * thread of the engine's (gt_session_flight_dump_begin) while the loop
 * goes on answering every client and reading the rings; each turn of the
 * loop looks whether it is done, then names the file, answers DUMPED or
 * logs it.  One dump a session at a time: a DUMP asked meanwhile is
 * queued (at most GT_SRV_DUMP_QUEUE, then refused at once) and begun by
 * the turn that settles the one before it, a trigger due meanwhile
 * likewise.  The loop never waits for a dump's thread but at the daemon's
 * shutdown: a session that ends meanwhile (STOP, its client gone, its
 * time over) has its queued dumps refused at once, and is ended (DONE,
 * STOP's OK, its files closed) by the first turn after the dump under way
 * and a trigger's due at the end are written.  Files in the directory are
 * created, written and linked with the owner's file-system ids
 * (docs/security.md "Output files"). */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/fs_ids.h"
#include "engine/session.h"

/* DUMPs a session may have waiting behind the one under way: each holds
 * its client's connection (32 a user at most) and file descriptor. */
#define GT_SRV_DUMP_QUEUE 4

struct gt_srv_dump {
	struct gt_flight_dump *d;
	int fd;                       /* ours: the anonymous file, or the client's */
	int to_dir;                   /* fd is an O_TMPFILE of the directory */
	int has_mark;
	struct gt_flight_fired mark;  /* a trigger's dump: what fired */
	struct gt_fs_ids as;          /* whose ids write (and name) it */
	struct gt_srv_client *client; /* DUMP's requester; NULL: a trigger's, or gone */
	uint64_t t0;
	struct gt_srv_dump *next;     /* queued after it */
};

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

/* A new anonymous file in the session's directory, as its owner. */
static int open_in_dir(struct gt_srv_session *ss, const struct gt_fs_ids *as, char *why,
		       size_t whylen)
{
	struct gt_fs_ids saved;
	int fd, err;

	if (gt_fs_become(as, &saved)) {
		snprintf(why, whylen, "cannot take uid %u's file-system ids", (unsigned)as->uid);
		return -EPERM;
	}
	fd = openat(ss->out_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0640);
	err = fd < 0 ? -errno : 0;
	gt_fs_restore(&saved);
	if (err)
		snprintf(why, whylen, "cannot create a file in the dump directory as uid %u: %s",
			 (unsigned)as->uid, strerror(-err));
	return err ? err : fd;
}

/* Begins x (filled: client, fd or -1 for the directory, mark) now: the
 * session's dump under way.  0, or -errno with why (x freed, its fd
 * closed). */
static int begin(struct gt_srv_session *ss, struct gt_srv_dump *x, char *why, size_t whylen)
{
	struct gt_srv_client *c = x->client;
	int err;

	x->to_dir = x->fd < 0;
	x->as.uid = x->to_dir || !c ? ss->owner : c->uid;
	x->as.gid = x->to_dir || !c ? ss->owner_gid : c->gid;
	if (x->to_dir)
		x->fd = open_in_dir(ss, &x->as, why, whylen);
	x->t0 = gt_now_ns();
	err = x->fd < 0 ? x->fd :
		gt_session_flight_dump_begin(ss->s, x->fd, x->has_mark ? &x->mark : NULL,
					     x->as.uid ? &x->as : NULL, &x->d, why, whylen);
	if (err) {
		if (x->fd >= 0)
			close(x->fd); /* unlinked, or the client's: nothing is left */
		free(x);
		return err;
	}
	ss->dump = x;
	return 0;
}

static int queued(const struct gt_srv_session *ss)
{
	int n = 0;

	for (const struct gt_srv_dump *q = ss->queue; q; q = q->next)
		n++;
	return n;
}

int gt_srv_flight_dump_start(struct gt_srv_session *ss, struct gt_srv_client *c, int fd,
			     const struct gt_flight_fired *mark, char *why, size_t whylen)
{
	struct gt_srv_dump *x = calloc(1, sizeof(*x)), **tail = &ss->queue;
	int n = queued(ss), err;
	/* a trigger's, due while nothing is written, goes before the queue */
	int busy = ss->dump || (c && n);

	if (!x || (busy && n >= GT_SRV_DUMP_QUEUE)) {
		err = x ? -EBUSY : -ENOMEM;
		if (fd >= 0)
			close(fd);
		if (x)
			snprintf(why, whylen, "session %d is writing a dump and %d more wait: ask "
				 "again once they are written", ss->id, n);
		else
			snprintf(why, whylen, "out of memory");
		free(x);
		return err;
	}
	x->fd = fd;
	x->client = c;
	if ((x->has_mark = mark != NULL))
		x->mark = *mark;
	if (busy) { /* one at a time: begun once the one before is written */
		while (*tail)
			tail = &(*tail)->next;
		*tail = x;
		if (c) {
			c->dumping = 1;
			gt_log_uid(c->uid, "client %u (uid %u): the dump of session %d waits for %d before it",
				   c->conn, (unsigned)c->uid, ss->id, n + 1);
		}
		return 0;
	}
	err = begin(ss, x, why, whylen);
	if (!err && c)
		c->dumping = 1;
	return err;
}

/* Names a dump of the directory; 0 or -errno with why. */
static int name_it(struct gt_srv_session *ss, struct gt_srv_dump *x, char *name, size_t namelen,
		   char *why, size_t whylen)
{
	struct gt_fs_ids saved;
	int err;

	if (gt_fs_become(&x->as, &saved)) {
		snprintf(why, whylen, "cannot take uid %u's file-system ids", (unsigned)x->as.uid);
		return -EPERM;
	}
	err = link_named(ss, x->fd, x->has_mark ? &x->mark : NULL, name, namelen);
	gt_fs_restore(&saved);
	if (err)
		snprintf(why, whylen, "cannot name the dump in its directory: %s", strerror(-err));
	return err;
}

/* What a finished dump says: DUMPED or an error to its requester, a line
 * in the log, the session's counters. */
static void report(struct gt_srv_session *ss, struct gt_srv_dump *x, int err,
		   const struct gt_msg_dumped *d, const char *why)
{
	unsigned char buf[GT_PROTO_HDR_SIZE + 16 + GT_PROTO_MAX_NAME];
	double ms = (gt_now_ns() - x->t0) / 1e6;

	if (!err)
		ss->dumps += x->to_dir;
	if (!x->has_mark && x->client) {
		if (err) {
			gt_log_uid(x->client->uid, "client %u (uid %u): the dump of session %d failed: %s",
			       x->client->conn, (unsigned)x->client->uid, ss->id, why);
			gt_conn_queue_error(x->client, -err, "%s", why);
			return;
		}
		gt_log_uid(x->client->uid, "client %u (uid %u): dumped session %d: %llu bytes%s%s in %.1f ms",
		       x->client->conn, (unsigned)x->client->uid, ss->id,
		       (unsigned long long)d->bytes, d->name[0] ? " to " : "", d->name, ms);
		gt_conn_queue(x->client, buf, gt_proto_encode_dumped(buf, sizeof(buf), d));
		return;
	}
	if (!x->has_mark) {
		gt_log_uid(ss->owner, "session %d: a requested dump %s%s (its client is gone)", ss->id,
		       err ? "failed: " : "was written", err ? why : "");
		return;
	}
	ss->last_dump_ns = gt_now_ns() - x->t0;
	if (err) {
		snprintf(ss->last_error, sizeof(ss->last_error), "%.150s", why);
		gt_log_uid(ss->owner, "session %d: the dump of trigger %s failed: %s", ss->id,
		       ss->fopts.triggers[x->mark.trigger].spec, why);
		return;
	}
	gt_log_uid(ss->owner, "session %d: wrote %s (%llu bytes in %.1f ms; %.1f ms after the trigger and "
	       "--after)", ss->id, d->name, (unsigned long long)d->bytes, ss->last_dump_ns / 1e6,
	       (gt_now_ns() - x->mark.ts - ss->fopts.after_ns) / 1e6);
}

/* Ends the session's dump (waiting for its thread if wait), names it,
 * says so.  1 if one is still under way (!wait), else 0. */
static int settle(struct gt_srv_session *ss, int wait)
{
	struct gt_srv_dump *x = ss->dump;
	struct gt_msg_dumped d;
	char why[GT_PROTO_MAX_TEXT] = "";
	struct stat st;
	int err;

	if (!x)
		return 0;
	if (!wait && !gt_session_flight_dump_done(x->d))
		return 1;
	ss->dump = NULL;
	memset(&d, 0, sizeof(d));
	d.id = (uint32_t)ss->id;
	err = gt_session_flight_dump_end(ss->s, x->d, why, sizeof(why));
	if (!err && fstat(x->fd, &st))
		err = -errno;
	if (!err)
		d.bytes = (uint64_t)st.st_size;
	if (!err && x->to_dir)
		err = name_it(ss, x, d.name, sizeof(d.name), why, sizeof(why));
	if (err && !why[0])
		snprintf(why, sizeof(why), "%s", strerror(-err));
	close(x->fd); /* an anonymous file unnamed on failure: nothing is left */
	if (x->client)
		x->client->dumping = 0;
	report(ss, x, err, &d, why);
	free(x);
	return 0;
}

/* The first queued dump begun (its requester told if that failed). */
static void next_queued(struct gt_srv_session *ss)
{
	struct gt_srv_dump *x = ss->queue;
	struct gt_srv_client *c;
	char why[GT_PROTO_MAX_TEXT];

	if (!x)
		return;
	ss->queue = x->next;
	x->next = NULL;
	c = x->client;
	if (begin(ss, x, why, sizeof(why)) && c) {
		c->dumping = 0;
		gt_conn_queue_error(c, EIO, "%s", why);
	}
}

/* The session ends: its queued dumps are refused, not written one after
 * another while the loop waits. */
static void refuse_queued(struct gt_srv_session *ss)
{
	while (ss->queue) {
		struct gt_srv_dump *x = ss->queue;

		ss->queue = x->next;
		if (x->fd >= 0)
			close(x->fd);
		if (x->client) {
			x->client->dumping = 0;
			gt_conn_queue_error(x->client, ESRCH, "session %d ended before its dump "
					    "began (a dump waits for the one before it)", ss->id);
		}
		free(x);
	}
}

void gt_srv_flight_forget_client(struct gt_server *sv, const struct gt_srv_client *c)
{
	for (int i = 0; i < GT_PROTO_MAX_SESSIONS; i++) {
		struct gt_srv_session *ss = sv->sessions[i];
		struct gt_srv_dump **pp;

		if (!ss)
			continue;
		if (ss->dump && ss->dump->client == c)
			ss->dump->client = NULL; /* written, answered to no one */
		for (pp = &ss->queue; *pp;) { /* not begun: no one to write it for */
			struct gt_srv_dump *x = *pp;

			if (x->client != c) {
				pp = &x->next;
				continue;
			}
			*pp = x->next;
			if (x->fd >= 0)
				close(x->fd);
			free(x);
		}
	}
}

static void say_fired(const struct gt_srv_session *ss, const struct gt_flight_fired *f)
{
	const char *sys = f->sysnr >= 0 ? gt_engine_syscall_name(f->sysnr) : NULL;

	if (f->held) {
		gt_log_uid(ss->owner, "session %d: trigger %s fired again: thread %u (%.16s) of "
			   "process %u, %.1f ms%s%s, longer than the %.1f ms taken %.2f s before; %s",
			   ss->id, ss->fopts.triggers[f->trigger].spec, f->tid, f->comm, f->tgid,
			   f->span_ns / 1e6, sys ? " in " : "", sys ? sys : "", f->taken_span_ns / 1e6,
			   (f->ts - f->taken_ts) / 1e9,
			   f->pending ? "not a dump of its own: the one waiting for --after holds it"
				      : "inside the holdoff: no dump");
		return;
	}
	gt_log_uid(ss->owner, "session %d: trigger %s fired: thread %u (%.16s) of process %u, %.1f ms%s%s",
	       ss->id, ss->fopts.triggers[f->trigger].spec, f->tid, f->comm, f->tgid,
	       f->span_ns / 1e6, sys ? " in " : "", sys ? sys : "");
}

/* A trigger's dump, begun now (its failure said). */
static void start_due(struct gt_srv_session *ss, const struct gt_flight_fired *f)
{
	char why[GT_PROTO_MAX_TEXT];

	if (!gt_srv_flight_dump_start(ss, NULL, -1, f, why, sizeof(why)))
		return;
	snprintf(ss->last_error, sizeof(ss->last_error), "%.150s", why);
	gt_log_uid(ss->owner, "session %d: the dump of trigger %s failed: %s", ss->id,
		   ss->fopts.triggers[f->trigger].spec, why);
}

void gt_srv_flight_tick(struct gt_srv_session *ss)
{
	struct gt_flight_fired f;

	if (!ss->flight || ss->ok_pending)
		return;
	while (gt_session_flight_fired(ss->s, &f))
		say_fired(ss, &f);
	if (settle(ss, 0))
		return; /* a dump under way: a due one waits for it */
	if (gt_session_flight_due(ss->s, 0, &f))
		start_due(ss, &f);
	else
		next_queued(ss);
}

int gt_srv_flight_end(struct gt_srv_session *ss, int wait)
{
	struct gt_flight_fired f;

	if (!ss->flight || ss->ok_pending)
		return 0;
	while (gt_session_flight_fired(ss->s, &f))
		say_fired(ss, &f);
	refuse_queued(ss);
	while (!settle(ss, wait)) { /* none under way (any done is settled) */
		if (!gt_session_flight_due(ss->s, 1, &f))
			return 0;
		start_due(ss, &f); /* a trigger waiting for --after: written now */
	}
	return 1; /* under way: a later turn of the loop looks again */
}
