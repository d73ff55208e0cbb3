/* Internals of the gotraced server shared by its server_*.c files. */
#ifndef GT_SERVER_INTERNAL_H
#define GT_SERVER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/protocol.h"
#include "server.h"

#define GT_SRV_MAX_CLIENTS 256
/* What one user may hold, so that no user can lock the others out (300
 * idle connections filled every slot): connections and concurrent
 * sessions per non-root uid, and slots only root may take (its status
 * and stop always get through). */
#define GT_SRV_MAX_CLIENTS_PER_UID 32
#define GT_SRV_MAX_SESSIONS_PER_UID 8
#define GT_SRV_ROOT_RESERVED 8
#define GT_SRV_MAX_FDS 2
#define GT_SRV_OUT_MAX (256 * 1024)  /* unsent replies beyond this: client dropped */
#define GT_SRV_PROGRESS_MS 1000

struct gt_engine;
struct gt_session;
struct gt_srv_session;

struct gt_srv_client {
	int fd;
	unsigned conn;               /* connection number, for logs */
	uid_t uid;                   /* SO_PEERCRED */
	gid_t gid;
	pid_t pid;
	unsigned char *in;           /* GT_PROTO_MAX_MSG bytes */
	size_t inlen;
	/* descriptors received for the next RECORD: the output file, then
	 * (with --cgroup) the cgroup directory the client opened itself */
	int pending_fds[GT_SRV_MAX_FDS];
	int npending;
	unsigned char *out;          /* replies not yet sent */
	size_t outlen, outcap;
	int read_closed;             /* peer half-closed or vanished */
	int closing;                 /* close once out is flushed */
	int dead;                    /* close now */
	uint64_t last_active_ms;     /* CLOCK_MONOTONIC of the connect or the last whole message */
	uint64_t partial_since_ms;   /* when the message now in `in` began (inlen > 0) */
	unsigned requests;           /* whole messages received */
	struct gt_srv_session *session;
};

struct gt_srv_session {
	struct gt_session *s;
	int id;
	int out_fd;                  /* the client's descriptor; closed at the end */
	uid_t owner;
	pid_t owner_pid;
	int want_progress;
	int ok_pending;              /* OK not sent: the start goes on in the engine */
	int orphaned;                /* its client was killed: the log says where
					the finished trace stays */
	char targets[GT_PROTO_MAX_TARGETS + 1];
	char label[GT_PROTO_MAX_LABEL + 1];
	struct gt_srv_client *client; /* NULL once the client went away */
};

struct gt_server {
	struct gt_engine *engine;
	int epfd, listen_fd, signal_fd, timer_fd;
	int listen_owned;            /* we created the socket file (unlink at exit) */
	char socket_path[108];
	struct gt_srv_client *clients[GT_SRV_MAX_CLIENTS];
	struct gt_srv_session *sessions[GT_PROTO_MAX_SESSIONS];
	uint64_t request_ms, idle_ms; /* gt_server_opts' timeouts */
	unsigned next_conn;
	unsigned ticks;
	uint64_t drained_ns;          /* the engine's rings last read (CLOCK_MONOTONIC) */
	int stopping;
};

void gt_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* server_notify.c: systemd integration without libsystemd. */
int gt_sd_listen_fd(void);              /* fd 3 from socket activation, or -1 */
void gt_sd_notify(const char *state);   /* no-op without $NOTIFY_SOCKET */

/* privs.c: raises RLIMIT_MEMLOCK, then drops CAP_SYS_RESOURCE from every
 * set of the process, before any thread is made (threads inherit it): the
 * traces gotraced writes never bypass a quota or use root's reserved
 * blocks for that capability.  0 or -errno (logged). */
int gt_drop_sys_resource(void);

/* connection.c */
void gt_conn_drop_fds(struct gt_srv_client *c);
void gt_conn_accept(struct gt_server *sv);
void gt_conn_on_io(struct gt_server *sv, struct gt_srv_client *c, uint32_t events);
int gt_conn_queue(struct gt_srv_client *c, const void *buf, int len);
void gt_conn_queue_error(struct gt_srv_client *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void gt_conn_flush(struct gt_server *sv, struct gt_srv_client *c);
void gt_conn_reap(struct gt_server *sv);
void gt_conn_expire_idle(struct gt_server *sv);
void gt_conn_close_all(struct gt_server *sv);

/* server_session.c */
void gt_srv_handle(struct gt_server *sv, struct gt_srv_client *c, const struct gt_msg *m);
void gt_srv_client_gone(struct gt_server *sv, struct gt_srv_client *c, const char *reason);
void gt_srv_tick(struct gt_server *sv);          /* ended sessions -> DONE; progress */
void gt_srv_tick_ended(struct gt_server *sv);    /* ended sessions -> DONE */
void gt_srv_stop_all(struct gt_server *sv, const char *reason);
int gt_srv_count_sessions(const struct gt_server *sv);

#endif
