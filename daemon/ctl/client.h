/* The client side of the gotraced protocol: what gotracectl uses to talk to
 * the daemon (record, status, stop, dump).
 *
 * The client opens the output file itself and passes its descriptor to the
 * daemon (SCM_RIGHTS): the daemon never opens a path a client names.
 *
 * Typical `record --daemon`:
 *
 *   int fd = gt_client_connect(path, err, sizeof(err));
 *   if (fd == -ENOENT || fd == -ECONNREFUSED) -> no daemon: embedded mode
 *   gt_client_record(fd, &session_opts, 1, out_fd, -1, &id, err, sizeof(err));
 *   for (;;) {
 *       rc = gt_client_next(fd, 1000, &ev, err, sizeof(err));
 *       if (rc == -ETIMEDOUT) continue;          // nothing new yet
 *       if (rc < 0) break;                       // daemon gone: err says why
 *       if (ev.kind == GT_CLIENT_PROGRESS) show(ev.stats);
 *       else { summary(ev.stats, ev.reason); break; }   // GT_CLIENT_DONE
 *       if (ctrl_c) gt_client_finish(fd);        // ends the session, DONE follows
 *   }
 *   close(fd);
 *
 * Return convention: 0 (or a descriptor) or -errno; on failure err holds a
 * message for the user (the daemon's own words for refusals).
 */
#ifndef GT_CLIENT_H
#define GT_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/protocol.h"
#include "common/session_opts.h"

/* Connects to the daemon's socket (NULL = $GOTRACED_SOCKET or the default).
 * Returns the connected descriptor, or -errno: -ENOENT / -ECONNREFUSED mean
 * "no daemon is running there" (also when the socket is out of reach and
 * no process called gotraced runs), -EACCES "not allowed to use the socket". */
int gt_client_connect(const char *sock_path, char *err, size_t errlen);

/* Sends RECORD for the session `o` describes (the daemon fills in what is
 * its to know: out_fd is out_fd, attached; owner_uid is the peer's) and
 * waits for the answer.  With --cgroup, cgroup_fd is the cgroup directory
 * this process opened (O_PATH): it rides after out_fd, and the daemon
 * judges that descriptor, never the path (-1: none; root may send a path).  want_progress: the daemon sends PROGRESS about
 * every second.  0 and *session_id, or -errno with the daemon's refusal
 * in err. */
int gt_client_record(int fd, const struct gt_session_opts *o, int want_progress, int out_fd,
		     int cgroup_fd, uint32_t *session_id, char *err, size_t errlen);

enum gt_client_event_kind { GT_CLIENT_PROGRESS = 1, GT_CLIENT_DONE };

struct gt_client_event {
	enum gt_client_event_kind kind;
	struct gt_msg_stats stats;
	int error;                  /* DONE: 0 or -errno that spoiled the file */
	char reason[GT_PROTO_MAX_TEXT + 1]; /* DONE: "duration", "stopped", ... */
};

/* Waits up to timeout_ms (-1 = forever) for the next PROGRESS or DONE of a
 * recording.  0 and *ev, -ETIMEDOUT if nothing came, -EINTR if a signal
 * interrupted the wait, -ECONNRESET if the daemon went away, -errno. */
int gt_client_next(int fd, int timeout_ms, struct gt_client_event *ev,
		   char *err, size_t errlen);

/* Asks the daemon to end this connection's recording (half-close): the file
 * gets its footer and DONE follows through gt_client_next. */
int gt_client_finish(int fd);

/* Lists the sessions (on a connection that is not recording). */
int gt_client_status(int fd, struct gt_msg_status_reply *out, char *err, size_t errlen);

/* Stops session id (root: any; others: their own). */
int gt_client_stop(int fd, uint32_t id, char *err, size_t errlen);

/* Writes flight session id's window now (root: any; others: their own),
 * to out_fd (a regular file this process opened, written with its ids), or
 * with out_fd -1 to a new file of the session's directory (out->name). */
int gt_client_dump(int fd, uint32_t id, int out_fd, struct gt_msg_dumped *out, char *err,
		   size_t errlen);


#endif
