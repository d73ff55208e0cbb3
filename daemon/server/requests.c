/* What gotraced does with each request: RECORD (authorize, start a session
 * on the client's descriptor), STATUS, STOP, DUMP; and the sessions table:
 * progress, DONE when a session ends, cleanup when a client leaves (a
 * detached flight session stays). */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "authz.h"
#include "common/cgroup_resolve.h"
#include "common/clock.h"
#include "common/fs_ids.h"
#include "common/parse_args.h"
#include "engine/session.h"

static void to_msg_stats(const struct gt_session_stats *st, struct gt_msg_stats *m)
{
	memset(m, 0, sizeof(*m));
	m->id = (uint32_t)st->id;
	m->state = (uint32_t)st->state;
	m->owner_uid = (uint32_t)st->owner_uid;
	GT_SESSION_COUNTERS_COPY(m, st);
}

static void send_done(struct gt_srv_client *c, const struct gt_session_stats *st, int err)
{
	static struct gt_msg_done d;
	unsigned char buf[GT_PROTO_HDR_SIZE + 128 + GT_PROTO_MAX_TEXT];

	memset(&d, 0, sizeof(d));
	to_msg_stats(st, &d.stats);
	d.error = err;
	snprintf(d.reason, sizeof(d.reason), "%s", st->end_reason && *st->end_reason ?
		 st->end_reason : "ended");
	gt_conn_queue(c, buf, gt_proto_encode_done(buf, sizeof(buf), &d));
}

/* What the client's file is called, for the log: the link of our own
 * descriptor (the daemon never opens a path of a client's choosing). */
static void name_of_fd(int fd, char *buf, size_t len)
{
	char proc[64];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, len - 1);
	if (n < 0)
		snprintf(buf, len, "descriptor %d (%s)", fd, strerror(errno));
	else
		buf[n] = 0;
}

/* A killed client's trace is finished all the same: where it stays. */
static void log_orphan(const struct gt_srv_session *ss, int err)
{
	char where[4200];

	name_of_fd(ss->out_fd, where, sizeof(where));
	if (err)
		gt_log_uid(ss->owner, "session %d: its client is gone and its trace could not be finished "
		       "(%s): %s", ss->id, strerror(-err), where);
	else
		gt_log_uid(ss->owner, "session %d: its client is gone; the finished trace stays in %s", ss->id,
		       where);
}

/* The STOPs of session id that waited for its end: answered now. */
static void answer_stops(struct gt_server *sv, int id)
{
	unsigned char buf[GT_PROTO_HDR_SIZE + 4];

	for (int i = 0; i < GT_SRV_MAX_CLIENTS; i++) {
		struct gt_srv_client *c = sv->clients[i];

		if (c && c->stop_waits && c->stop_id == id) {
			c->stop_waits = 0;
			gt_conn_queue(c, buf, gt_proto_encode_ok(buf, sizeof(buf), (uint32_t)id));
		}
	}
}

/* A session the engine has finished: tells its client, frees everything;
 * 1.  A flight session's dump still under way: 0, a later turn of the
 * loop (finish_session) comes back, the loop does not wait for it (but
 * with wait: the daemon's shutdown). */
static int complete_session(struct gt_server *sv, int slot, int err, int wait)
{
	struct gt_srv_session *ss = sv->sessions[slot];
	struct gt_session_stats st;
	int id = ss->id;

	if (gt_srv_flight_end(ss, wait))
		return 0;
	if (ss->orphaned)
		log_orphan(ss, err);
	gt_session_stats(ss->s, &st);
	gt_log_uid(ss->owner, "session %d ended (%s)%s%s: %llu threads, %llu events, %llu bytes, %llu dropped",
	       ss->id, st.end_reason && *st.end_reason ? st.end_reason : "ended",
	       err ? ", file unusable: " : "", err ? strerror(-err) : "",
	       (unsigned long long)st.threads, (unsigned long long)st.trace_events,
	       (unsigned long long)st.bytes, (unsigned long long)st.drops);
	if (ss->client) {
		send_done(ss->client, &st, err);
		ss->client->session = NULL;
	}
	close(ss->out_fd);
	gt_session_free(ss->s);
	free(ss);
	sv->sessions[slot] = NULL;
	answer_stops(sv, id);
	return 1;
}

/* Ends a session: its trace ends now; the engine finishes the file (at
 * once, or in the background), a flight session's dump under way is
 * written: then gt_srv_tick_ended completes it.  1 if it is over. */
static int finish_session(struct gt_server *sv, int slot, const char *reason, int wait)
{
	struct gt_srv_session *ss = sv->sessions[slot];
	int err = gt_session_stop(ss->s, reason);

	return gt_session_ended(ss->s) && !ss->ok_pending && complete_session(sv, slot, err, wait);
}

static int slot_of_session(const struct gt_server *sv, int id)
{
	for (int i = 0; i < GT_PROTO_MAX_SESSIONS; i++)
		if (sv->sessions[i] && sv->sessions[i]->id == id)
			return i;
	return -1;
}

static int free_slot(const struct gt_server *sv)
{
	for (int i = 0; i < GT_PROTO_MAX_SESSIONS; i++)
		if (!sv->sessions[i])
			return i;
	return -1;
}

int gt_srv_count_sessions(const struct gt_server *sv)
{
	int n = 0;

	for (int i = 0; i < GT_PROTO_MAX_SESSIONS; i++)
		n += sv->sessions[i] != NULL;
	return n;
}

/* ---- RECORD ------------------------------------------------------------------ */

static void refuse(struct gt_srv_client *c, int code, const char *why)
{
	gt_log_uid(c->uid, "client %u (uid %u pid %d): refused: %s", c->conn, (unsigned)c->uid,
	       (int)c->pid, why);
	gt_conn_queue_error(c, code, "%s", why);
}

/* The output must be a regular file open for writing: the daemon never
 * opens a path itself, and a pipe or socket could stall the whole loop. */
static int check_output(int fd, char *why, size_t whylen)
{
	struct stat st;
	int fl;

	if (fd < 0) {
		snprintf(why, whylen, "RECORD came without the output file descriptor "
			 "(SCM_RIGHTS); the daemon never opens paths");
		return -EBADF;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "the output descriptor is not a regular file");
		return -EINVAL;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY) {
		snprintf(why, whylen, "the output descriptor is not open for writing");
		return -EBADF;
	}
	return 0;
}

static int authorize_cgroup(const struct gt_srv_client *c, const struct gt_msg_record *r,
			    int cgroup_fd, char *cgroup, char *why, size_t whylen)
{
	int rc;

	if (cgroup_fd >= 0)
		return gt_authz_cgroup_fd(c->uid, cgroup_fd, cgroup, GT_PROTO_MAX_PATH + 1, why,
					  whylen);
	rc = gt_authz_cgroup_by_path(c->uid, why, whylen);
	if (rc)
		return rc;
	/* root's path: canonical, on cgroup2 only, so symlinks cannot point elsewhere */
	rc = gt_cgroup_resolve_path(r->cgroup, cgroup, GT_PROTO_MAX_PATH + 1, why, whylen);
	return rc ? rc : gt_authz_cgroup(c->uid, cgroup, why, whylen);
}

static int authorize(const struct gt_srv_client *c, const struct gt_msg_record *r,
		     int cgroup_fd, char *cgroup, char *why, size_t whylen)
{
	struct gt_tracer t = gt_tracer_of(c->uid, c->gid, c->pid);
	int rc;

	if (r->all_processes)
		return gt_authz_machine(c->uid, "-a", why, whylen);
	if (r->nnames)
		return gt_authz_machine(c->uid, "--name", why, whylen);
	for (uint32_t i = 0; i < r->npids; i++) {
		rc = gt_authz_pid(&t, r->pids[i], why, whylen);
		if (rc)
			return rc;
	}
	if (!r->cgroup[0])
		return 0;
	rc = gt_ptrace_may_open_set(&t, "--cgroup", why, whylen);
	return rc ? rc : authorize_cgroup(c, r, cgroup_fd, cgroup, why, whylen);
}

static void describe_targets(const struct gt_msg_record *r, const char *cgroup,
			     char *out, size_t len)
{
	size_t off = 0;

	if (cgroup[0]) {
		snprintf(out, len, "cgroup %s", cgroup);
		return;
	}
	if (r->all_processes) {
		snprintf(out, len, "all processes");
		return;
	}
	if (r->nnames) {
		off = (size_t)snprintf(out, len, "name");
		for (uint32_t i = 0; i < r->nnames && off < len; i++)
			off += (size_t)snprintf(out + off, len - off, "%s%s", i ? "," : " ", r->names[i]);
		return;
	}
	off = (size_t)snprintf(out, len, "pid");
	for (uint32_t i = 0; i < r->npids && off < len; i++)
		off += (size_t)snprintf(out + off, len - off, "%s%d", i ? "," : " ", r->pids[i]);
}

static int sessions_of(const struct gt_server *sv, uid_t uid, int detached_only)
{
	int n = 0;

	for (int i = 0; i < GT_PROTO_MAX_SESSIONS; i++)
		n += sv->sessions[i] && sv->sessions[i]->owner == uid &&
		     (!detached_only || sv->sessions[i]->detached);
	return n;
}

/* Sessions of every user other than root together. */
static int users_sessions(const struct gt_server *sv)
{
	int n = 0;

	for (int i = 0; i < GT_PROTO_MAX_SESSIONS; i++)
		n += sv->sessions[i] && sv->sessions[i]->owner != 0;
	return n;
}

/* What a non-root user may hold besides the session count: detached
 * sessions, and flight memory per session.  0 or -EBUSY with why. */
static int user_bounds(const struct gt_server *sv, const struct gt_srv_client *c,
		       const struct gt_msg_record *r, char *why, size_t whylen)
{
	if (c->uid == 0 || !(r->flags & GT_REC_FLIGHT))
		return 0;
	if ((r->flags & GT_REC_DETACH) &&
	    sessions_of(sv, c->uid, 1) >= GT_SRV_MAX_DETACHED_PER_UID) {
		snprintf(why, whylen, "too many detached sessions for uid %u: limit %d (stop one "
			 "first: gotracectl status, gotracectl stop ID)", (unsigned)c->uid,
			 GT_SRV_MAX_DETACHED_PER_UID);
		return -EBUSY;
	}
	if (r->flight.size_bytes > GT_SRV_MAX_FLIGHT_SIZE_USER) {
		snprintf(why, whylen, "--flight-size %llu: users other than root may hold at most "
			 "%llu bytes per session", (unsigned long long)r->flight.size_bytes,
			 (unsigned long long)GT_SRV_MAX_FLIGHT_SIZE_USER);
		return -EBUSY;
	}
	return 0;
}

/* May c start one more session?  Its slot, or -errno with why said. */
static int admit(struct gt_server *sv, struct gt_srv_client *c, const struct gt_msg_record *r,
		 char *why, size_t whylen)
{
	int slot = free_slot(sv), rc;

	if (slot < 0) {
		snprintf(why, whylen, "too many recording sessions (at most %d)", GT_PROTO_MAX_SESSIONS);
		return -EBUSY;
	}
	if (c->uid != 0 && users_sessions(sv) >= GT_PROTO_MAX_SESSIONS - GT_SRV_ROOT_SESSIONS) {
		snprintf(why, whylen, "too many recording sessions: users other than root hold %d, "
			 "their limit (the last %d of %d are root's); try again later",
			 users_sessions(sv), GT_SRV_ROOT_SESSIONS, GT_PROTO_MAX_SESSIONS);
		return -EBUSY;
	}
	if (c->uid != 0 && sessions_of(sv, c->uid, 0) >= GT_SRV_MAX_SESSIONS_PER_UID) {
		snprintf(why, whylen, "too many sessions for uid %u: limit %d (this user already "
			 "records %d sessions, at most %d per user)", (unsigned)c->uid,
			 GT_SRV_MAX_SESSIONS_PER_UID, sessions_of(sv, c->uid, 0),
			 GT_SRV_MAX_SESSIONS_PER_UID);
		return -EBUSY;
	}
	if ((rc = user_bounds(sv, c, r, why, whylen)))
		return rc;
	return slot;
}

/* The session's options: the request's, for its client (o->pids point
 * into a static array, valid until the next call). */
static void session_opts(struct gt_session_opts *o, const struct gt_srv_client *c,
			 const struct gt_msg_record *r, int out_fd, const char *cgroup)
{
	static pid_t pids[GT_PROTO_MAX_PIDS];

	gt_proto_opts_from_record(o, r);
	memcpy(pids, r->pids, r->npids * sizeof(pids[0]));
	o->pids = pids;
	o->npids = gt_pids_dedup(pids, (int)r->npids);
	o->cgroup_path = cgroup[0] ? cgroup : NULL; /* as resolved and authorized */
	o->out_fd = r->flags & GT_REC_FLIGHT ? -1 : out_fd; /* flight: the directory */
	o->owner_uid = c->uid;
	o->owner_gid = c->gid;
	o->owner_pid = c->pid;
}

/* The started session ss->s becomes c's. */
static void adopt(struct gt_srv_session *ss, struct gt_srv_client *c,
		  const struct gt_msg_record *r, int out_fd)
{
	struct gt_session_stats st;

	gt_session_stats(ss->s, &st);
	ss->id = st.id;
	ss->out_fd = out_fd;
	ss->owner = c->uid;
	ss->owner_pid = c->pid;
	ss->want_progress = !!(r->flags & GT_REC_PROGRESS);
	ss->owner_gid = c->gid;
	ss->flight = !!(r->flags & GT_REC_FLIGHT);
	ss->detached = !!(r->flags & GT_REC_DETACH);
	if (ss->flight)
		ss->fopts = r->flight;
	ss->ok_pending = gt_session_starting(ss->s);
	ss->client = c;
	c->session = ss;
}

static int start(struct gt_server *sv, struct gt_srv_client *c, const struct gt_msg_record *r,
		 int out_fd, const char *cgroup, char *why, size_t whylen)
{
	struct gt_session_opts o;
	struct gt_srv_session *ss;
	int slot = admit(sv, c, r, why, whylen), rc;

	if (slot < 0)
		return slot;
	ss = calloc(1, sizeof(*ss));
	if (!ss) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	describe_targets(r, cgroup, ss->targets, sizeof(ss->targets));
	if (r->label[0])
		snprintf(ss->label, sizeof(ss->label), "%s", r->label);
	else
		snprintf(ss->label, sizeof(ss->label), "client pid %d", (int)c->pid);
	session_opts(&o, c, r, out_fd, cgroup);
	rc = gt_session_start(sv->engine, &o, &ss->s);
	if (rc) {
		const char *e = gt_engine_error(sv->engine);

		snprintf(why, whylen, "cannot start the session: %s", e && *e ? e : strerror(-rc));
		free(ss);
		return rc;
	}
	adopt(ss, c, r, out_fd);
	sv->sessions[slot] = ss;
	return 0;
}

/* A detached session, once its client has its OK, is nobody's: the
 * connection is free for other requests and may close. */
static void detach_if_asked(struct gt_srv_session *ss)
{
	if (!ss->detached || !ss->client)
		return;
	gt_log_uid(ss->owner, "session %d detached from its client (pid %d): it records until stopped",
	       ss->id, (int)ss->owner_pid);
	ss->client->session = NULL;
	ss->client = NULL;
}

static void handle_record(struct gt_server *sv, struct gt_srv_client *c,
			  const struct gt_msg_record *r)
{
	char why[GT_PROTO_MAX_TEXT], cgroup[GT_PROTO_MAX_PATH + 1] = "";
	unsigned char buf[GT_PROTO_HDR_SIZE + 4];
	int fd = c->npending > 0 ? c->pending_fds[0] : -1;
	int cgroup_fd = c->npending > 1 ? c->pending_fds[1] : -1, rc;

	c->npending = 0;
	if (c->session) {
		snprintf(why, sizeof(why), "this connection is already recording session %d; "
			 "open another connection", c->session->id);
		rc = -EALREADY;
	} else if (sv->stopping) {
		snprintf(why, sizeof(why), "gotraced is shutting down");
		rc = -ESHUTDOWN;
	} else {
		rc = r->flags & GT_REC_FLIGHT ? gt_srv_flight_check_dir(fd, c->uid, why, sizeof(why))
					      : check_output(fd, why, sizeof(why));
		if (!rc)
			rc = authorize(c, r, cgroup_fd, cgroup, why, sizeof(why));
		if (!rc)
			rc = start(sv, c, r, fd, cgroup, why, sizeof(why));
	}
	if (cgroup_fd >= 0)
		close(cgroup_fd); /* the session goes by the name checked against it */
	if (rc) {
		if (fd >= 0)
			close(fd);
		refuse(c, -rc, why);
		return;
	}
	gt_log_uid(c->uid, "session %d %s for uid %u (pid %d): %s, %.3f s%s", c->session->id,
	       c->session->ok_pending ? "attaching probes" : "started", (unsigned)c->uid, (int)c->pid,
	       c->session->targets, r->duration_ns / 1e9, r->duration_ns ? "" : " (until stopped)");
	if (!c->session->ok_pending) {
		gt_conn_queue(c, buf, gt_proto_encode_ok(buf, sizeof(buf), (uint32_t)c->session->id));
		detach_if_asked(c->session);
	}
}

/* A start that went on in the background is over: OK, or the error that
 * ended it (as if RECORD had been refused: no DONE then). */
static void settle_start(struct gt_server *sv, int slot)
{
	struct gt_srv_session *ss = sv->sessions[slot];
	unsigned char buf[GT_PROTO_HDR_SIZE + 4];
	struct gt_session_stats st;
	int err;

	if (gt_session_starting(ss->s))
		return;
	err = gt_session_ended(ss->s) ? gt_session_stop(ss->s, NULL) : 0;
	if (!err) {
		ss->ok_pending = 0;
		gt_log_uid(ss->owner, "session %d started for uid %u (pid %d): %s, probes attached", ss->id,
		       (unsigned)ss->owner, (int)ss->owner_pid, ss->targets);
		if (ss->client)
			gt_conn_queue(ss->client, buf,
					gt_proto_encode_ok(buf, sizeof(buf), (uint32_t)ss->id));
		detach_if_asked(ss);
		return;
	}
	if (!gt_session_ended(ss->s))
		return; /* failed: its file is being finished */
	if (ss->orphaned)
		log_orphan(ss, err);
	gt_session_stats(ss->s, &st);
	if (ss->client) {
		refuse(ss->client, -err, st.end_reason && *st.end_reason ? st.end_reason :
		       strerror(-err));
		ss->client->session = NULL;
	}
	close(ss->out_fd);
	gt_session_free(ss->s);
	free(ss);
	sv->sessions[slot] = NULL;
}

/* The session id names, if c may act on it: its slot, or -1 (refused).
 * Another user's session is answered as a missing one, as `status`
 * hides it: ids cannot be probed for whose they are. */
static int session_for(struct gt_server *sv, struct gt_srv_client *c, uint32_t id)
{
	int slot = id > 0x7fffffffu ? -1 : slot_of_session(sv, (int)id);
	char why[256];

	if (slot >= 0 && c->uid != 0 && sv->sessions[slot]->owner != c->uid)
		slot = -1;
	if (slot < 0) {
		snprintf(why, sizeof(why), "no session %u (see gotracectl status)", id);
		refuse(c, ESRCH, why);
	}
	return slot;
}

/* ---- STATUS, STOP ----------------------------------------------------------- */

static void handle_status(struct gt_server *sv, struct gt_srv_client *c)
{
	static struct gt_msg_status_reply r;
	static unsigned char buf[GT_PROTO_MAX_MSG];

	memset(&r, 0, sizeof(r));
	for (int i = 0; i < GT_PROTO_MAX_SESSIONS; i++) {
		struct gt_srv_session *ss = sv->sessions[i];
		struct gt_session_stats st;

		/* non-root users see their own sessions only; a session still
		 * attaching its probes is not recording yet (its client has
		 * not had OK) */
		if (!ss || ss->ok_pending || (c->uid != 0 && ss->owner != c->uid))
			continue;
		gt_session_stats(ss->s, &st);
		to_msg_stats(&st, &r.sessions[r.count].stats);
		snprintf(r.sessions[r.count].targets, sizeof(r.sessions[0].targets), "%s", ss->targets);
		snprintf(r.sessions[r.count].label, sizeof(r.sessions[0].label), "%s", ss->label);
		gt_srv_flight_describe(ss, r.sessions[r.count].flight,
				       sizeof(r.sessions[0].flight));
		r.count++;
	}
	gt_conn_queue(c, buf, gt_proto_encode_status_reply(buf, sizeof(buf), &r));
}

static void handle_stop(struct gt_server *sv, struct gt_srv_client *c, uint32_t id)
{
	unsigned char buf[GT_PROTO_HDR_SIZE + 4];
	int slot = session_for(sv, c, id);
	char reason[64];

	if (slot < 0)
		return;
	gt_log_uid(c->uid, "client %u (uid %u): stop session %u", c->conn, (unsigned)c->uid, id);
	snprintf(reason, sizeof(reason), "stopped by uid %u", (unsigned)c->uid);
	/* a file finished in the background is answered at once, as ever;
	 * a flight session's dump under way first (answer_stops) */
	if (finish_session(sv, slot, reason, 0) || !sv->sessions[slot]->dump) {
		gt_conn_queue(c, buf, gt_proto_encode_ok(buf, sizeof(buf), id));
		return;
	}
	c->stop_waits = 1;
	c->stop_id = (int)id;
}

/* The window to the client's file (written with the client's ids, as
 * its own file), or to a new file of the session's directory: begun
 * here, answered (DUMPED) by flight_dump.c once written, the loop
 * serving every client meanwhile. */
static void handle_dump(struct gt_server *sv, struct gt_srv_client *c, uint32_t id)
{
	int fd = c->npending > 0 ? c->pending_fds[0] : -1, slot, err = 0;
	char why[GT_PROTO_MAX_TEXT];

	if (c->npending > 0)
		c->npending--, c->pending_fds[0] = c->pending_fds[c->npending];
	gt_conn_drop_fds(c);
	slot = session_for(sv, c, id);
	if (slot >= 0 && sv->sessions[slot]->flight && gt_session_ended(sv->sessions[slot]->s)) {
		snprintf(why, sizeof(why), "session %u is ending (its last dump is being written)",
			 id);
		refuse(c, ESRCH, why);
		slot = -1;
	} else if (slot >= 0 && (!sv->sessions[slot]->flight || sv->sessions[slot]->ok_pending)) {
		snprintf(why, sizeof(why), "session %u is %s", id, sv->sessions[slot]->flight ?
			 "still starting" : "not a flight recording (record --flight)");
		refuse(c, sv->sessions[slot]->flight ? EAGAIN : EINVAL, why);
		slot = -1;
	}
	if (slot >= 0 && fd >= 0)
		err = check_output(fd, why, sizeof(why));
	if (slot < 0 || err) {
		if (fd >= 0)
			close(fd);
		if (err)
			refuse(c, -err, why);
		return;
	}
	err = gt_srv_flight_dump_start(sv->sessions[slot], c, fd, NULL, why, sizeof(why));
	if (err)
		refuse(c, -err, why);
}

void gt_srv_handle(struct gt_server *sv, struct gt_srv_client *c, const struct gt_msg *m)
{
	unsigned type = m->hdr.type;

	if (type != GT_MSG_RECORD && type != GT_MSG_DUMP)
		gt_conn_drop_fds(c); /* descriptors only ride with RECORD and DUMP */
	if (c->dumping || c->stop_waits) { /* as on a recording connection: one thing at a time */
		char why[128];

		gt_conn_drop_fds(c);
		snprintf(why, sizeof(why), "%s on a connection waiting for its %s; use another "
			 "connection", gt_proto_type_name(type), c->dumping ? "DUMP" : "STOP");
		refuse(c, EALREADY, why);
	} else if (type == GT_MSG_RECORD) {
		handle_record(sv, c, &m->u.record);
	} else if (c->session) {
		char why[128];

		snprintf(why, sizeof(why), "%s on a connection that is recording session %d; "
			 "use another connection", gt_proto_type_name(type), c->session->id);
		refuse(c, EALREADY, why);
	} else if (type == GT_MSG_STATUS) {
		handle_status(sv, c);
	} else if (type == GT_MSG_STOP) {
		handle_stop(sv, c, m->u.id);
	} else if (type == GT_MSG_DUMP) {
		handle_dump(sv, c, m->u.id);
	} else {
		char why[128];

		snprintf(why, sizeof(why), "%s is a reply, not a request", gt_proto_type_name(type));
		refuse(c, EPROTO, why);
	}
}

/* ---- time and departures ---------------------------------------------------- */

/* Whether the client closed its whole connection (killed, or it exited),
 * not just its sending side (a half-close: it still reads). */
static int peer_closed(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLOUT};

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR));
}

/* A client that goes away mid-recording (killed, even by SIGKILL) gets its
 * trace finished all the same, footer included, in the file it passed:
 * gotracectl names it FILE.partial in daemon mode, so it stays on disk.
 * The file may be finished in the background (memtrack's stop on the
 * worker): a half-closed client keeps its connection until its DONE
 * (connection.c), a dead one is let go of now. */
void gt_srv_client_gone(struct gt_server *sv, struct gt_srv_client *c, const char *reason)
{
	struct gt_srv_session *ss = c->session;
	int slot = ss ? slot_of_session(sv, ss->id) : -1, gone;

	if (slot < 0) {
		c->session = NULL;
		return;
	}
	gone = peer_closed(c->fd);
	if (gone || c->dead) {
		ss->orphaned = gone; /* killed or exited: say where its trace stays */
		ss->client = NULL;
		c->session = NULL;
	}
	finish_session(sv, slot, reason, 0);
}

static void send_progress(struct gt_srv_session *ss)
{
	unsigned char buf[GT_PROTO_HDR_SIZE + 128];
	struct gt_session_stats st;
	struct gt_msg_stats m;

	gt_session_stats(ss->s, &st);
	to_msg_stats(&st, &m);
	gt_conn_queue(ss->client, buf, gt_proto_encode_progress(buf, sizeof(buf), &m));
}

void gt_srv_tick(struct gt_server *sv)
{
	int progress_due = ++sv->ticks % 10 == 0; /* ticks are 100 ms */

	for (int i = 0; i < GT_PROTO_MAX_SESSIONS; i++) {
		struct gt_srv_session *ss = sv->sessions[i];

		if (!ss)
			continue;
		if (ss->ok_pending)
			settle_start(sv, i);
		else if (gt_session_ended(ss->s))
			finish_session(sv, i, NULL, 0);
		else if (progress_due && ss->client && ss->want_progress)
			send_progress(ss);
	}
}

void gt_srv_tick_ended(struct gt_server *sv)
{
	for (int i = 0; i < GT_PROTO_MAX_SESSIONS; i++) {
		if (sv->sessions[i] && sv->sessions[i]->ok_pending)
			settle_start(sv, i);
		else if (sv->sessions[i] && gt_session_ended(sv->sessions[i]->s))
			finish_session(sv, i, NULL, 0);
		else if (sv->sessions[i])
			gt_srv_flight_tick(sv->sessions[i]); /* what fired, what is due */
	}
}

/* Every trace ends at the same instant, the files are finished together
 * (SIGTERM: not one after another, each recording while it waits). */
void gt_srv_stop_all(struct gt_server *sv, const char *reason)
{
	gt_engine_stop_all(sv->engine, reason);
	for (int i = 0; i < GT_PROTO_MAX_SESSIONS; i++) {
		if (!sv->sessions[i])
			continue;
		if (sv->sessions[i]->ok_pending)
			settle_start(sv, i);
		if (sv->sessions[i])
			finish_session(sv, i, reason, 1); /* shutting down: may wait */
	}
}
