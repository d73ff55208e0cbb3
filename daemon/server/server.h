/* Folder server/: the gotraced daemon: its socket, connections, requests,
 * authorization and sd_notify. It may include common/ and engine/, never
 * ctl/ (gotraced links no CLI code).
 *
 * The gotraced server: one process, one thread, one epoll loop serving
 * recording sessions to clients of a Unix stream socket (protocol.h).
 */
#ifndef GT_SERVER_H
#define GT_SERVER_H

struct gt_server_opts {
	const char *socket_path;     /* NULL = GT_DEFAULT_SOCKET (or systemd's socket) */
	unsigned ring_bytes_per_cpu; /* 0 = engine default */
	int verbose;                 /* libbpf debug output, one log line per message */
};

/* Runs until SIGTERM/SIGINT; every open session's file is finished first.
 * Returns the process exit status (0 clean, 1 could not start). */
int gt_server_run(const struct gt_server_opts *opts);

#endif
