/* Folder server/: the gotraced daemon: its socket, connections, requests,
 * authorization and sd_notify. It may include common/ and engine/, never
 * ctl/ (gotraced links no CLI code).
 *
 * The gotraced server: one process, one thread, one epoll loop serving
 * recording sessions to clients of a Unix stream socket (protocol.h).
 */
#ifndef GT_SERVER_H
#define GT_SERVER_H

#include "common/flight_opts.h"

/* The always-on flight recording (--flight-unit or --flight-cgroup and the
 * --flight-* options; flight_config.c). */
struct gt_srv_flight_config {
	const char *unit;            /* a systemd unit (or container) name */
	const char *cgroup;          /* or a cgroup v2 path */
	const char *dir;             /* NULL = GT_SRV_FLIGHT_DIR */
	int go_version;              /* its dumps' format; 0 = GT_V1_19 */
	struct gt_flight_opts opts;
};
#define GT_SRV_FLIGHT_DIR "/var/lib/gotraced/flight"

struct gt_server_opts {
	const char *socket_path;     /* NULL = GT_DEFAULT_SOCKET (or systemd's socket) */
	unsigned ring_bytes_per_cpu; /* 0 = engine default */
	int verbose;                 /* libbpf debug output, one log line per message */
	/* seconds a connection may take to send a whole request (from its
	 * connect, or from a message's first byte); 0 = GT_SRV_REQUEST_S */
	unsigned request_timeout_s;
	/* seconds a connection without a session may stay silent after its
	 * last request; 0 = GT_SRV_IDLE_S */
	unsigned idle_timeout_s;
	struct gt_srv_flight_config flight;
};

#define GT_SRV_REQUEST_S 10
#define GT_SRV_IDLE_S 60
#define GT_SRV_TIMEOUT_MAX_S 86400

/* A --flight-* option (opt without its dashes): 0, -EINVAL (said on
 * stderr), or -ENOENT when opt is not one.  The check: 0, or -EINVAL when
 * the options are incomplete (said). */
int gt_srv_flight_option(const char *opt, const char *arg, struct gt_server_opts *o);
int gt_srv_flight_config_check(const struct gt_server_opts *o);

/* Runs until SIGTERM/SIGINT; every open session's file is finished first.
 * Returns the process exit status (0 clean, 1 could not start). */
int gt_server_run(const struct gt_server_opts *opts);

#endif
