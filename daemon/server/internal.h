/* Internals of the gotraced server shared by its server_*.c files. */
#ifndef GT_SERVER_INTERNAL_H
#define GT_SERVER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/flight_opts.h"
#include "common/protocol.h"
#include "server.h"

#define GT_SRV_MAX_CLIENTS 256
/* What one user may hold, so that no user can lock the others out (300
 * idle connections filled every slot): connections and concurrent
 * sessions per non-root uid, and slots only root may take (its status
 * and stop always get through). */
#define GT_SRV_MAX_CLIENTS_PER_UID 32
#define GT_SRV_MAX_SESSIONS_PER_UID 8
/* Of those, detached flight sessions (they hold memory with nobody
 * watching), and the memory each may hold (--flight-size). */
#define GT_SRV_MAX_DETACHED_PER_UID 2
#define GT_SRV_MAX_FLIGHT_SIZE_USER (256ull << 20)
#define GT_SRV_ROOT_RESERVED 8
/* Session slots only root may take: users other than root hold at most
 * GT_PROTO_MAX_SESSIONS - GT_SRV_ROOT_SESSIONS together (four users at
 * their limit of 8 filled all 32), so root's record always starts. */
#define GT_SRV_ROOT_SESSIONS 4
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
	int dumping;                 /* its DUMP is being written (flight_dump.c):
					another request is refused at once */
	int stop_waits;              /* its STOP of session stop_id is answered once
					that session's dump under way is written
					(requests.c): likewise */
	int stop_id;
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
	/* a flight recording (flight.c): out_fd is then the directory of its
	 * triggered dumps (O_PATH), written with the owner's ids */
	int flight;
	int detached;                /* outlives its client: ended by STOP */
	gid_t owner_gid;
	struct gt_flight_opts fopts; /* as asked (names, messages) */
	unsigned dumps;              /* files written */
	uint64_t last_dump_ns;       /* how long the last dump took */
	char last_error[160];        /* the last dump that failed, "" none */
	struct gt_srv_dump *dump;    /* the dump under way, NULL none */
	struct gt_srv_dump *queue;   /* DUMPs asked meanwhile, in order */
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

/* log.c: one escaped line on stderr.  gt_log_uid: a line uid's requests
 * or sessions caused, at most GT_LOG_BURST per GT_LOG_WINDOW_MS for a
 * non-root uid, the rest counted and said in one line when the window
 * ends (gt_log_tick, from the loop's timer, says it without a next line). */
#define GT_LOG_BURST 50
#define GT_LOG_WINDOW_MS 10000
void gt_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gt_log_uid(uid_t uid, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gt_log_tick(void);

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

/* flight.c: a flight session's dumps and status line. */
struct gt_flight_fired;
struct gt_srv_dump;
/* Checks the descriptor a flight RECORD brought: a directory the owner
 * owns (root: any); 0 or -errno with why. */
int gt_srv_flight_check_dir(int fd, uid_t owner, char *why, size_t whylen);
/* flight_dump.c: a dump begun now and written while the loop goes on.
 * fd -1: to a new file of the session's directory, created, written and
 * named flight-ID-YYYYMMDD-HHMMSS[-KIND].trace with the owner's ids (mark:
 * what fired); else to the requester c's file fd (taken: closed when done),
 * written with c's ids.  c (NULL for a trigger's) gets DUMPED or an error
 * when it is done.  While one is under way a DUMP is queued (begun by the
 * turn that settles the one before it; GT_SRV_DUMP_QUEUE at most, then
 * -EBUSY at once): the loop never waits here.  0, or -errno with why
 * (nothing begun, fd closed). */
int gt_srv_flight_dump_start(struct gt_srv_session *ss, struct gt_srv_client *c, int fd,
			     const struct gt_flight_fired *mark, char *why, size_t whylen);
/* A client freed: a dump it asked for is written, answered to no one; one
 * still queued is dropped. */
void gt_srv_flight_forget_client(struct gt_server *sv, const struct gt_srv_client *c);
/* What fired, the dump under way (settled once written), what is due or
 * queued (begun), logged and written. */
void gt_srv_flight_tick(struct gt_srv_session *ss);
/* The session ends: its queued dumps refused, the dump under way settled
 * once written and then a trigger's due (--after not over) begun.  1 while
 * one is under way (the session's end waits for a later turn: the loop
 * never waits for a user's dump), 0 once none is; wait (the daemon's
 * shutdown only): waits for each, 0. */
int gt_srv_flight_end(struct gt_srv_session *ss, int wait);
/* The session's line in status: window, bytes held, dumps, triggers. */
void gt_srv_flight_describe(struct gt_srv_session *ss, char *out, size_t len);
/* flight_config.c: starts the always-on flight recording, if configured;
 * 0 or -errno (logged: the daemon serves on without it). */
int gt_srv_flight_start_configured(struct gt_server *sv, const struct gt_srv_flight_config *c);

/* server_session.c */
void gt_srv_handle(struct gt_server *sv, struct gt_srv_client *c, const struct gt_msg *m);
void gt_srv_client_gone(struct gt_server *sv, struct gt_srv_client *c, const char *reason);
void gt_srv_tick(struct gt_server *sv);          /* ended sessions -> DONE; progress */
void gt_srv_tick_ended(struct gt_server *sv);    /* ended sessions -> DONE */
void gt_srv_stop_all(struct gt_server *sv, const char *reason);
int gt_srv_count_sessions(const struct gt_server *sv);

#endif
