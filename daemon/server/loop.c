/* The gotraced event loop: one epoll set for the listening socket, the
 * clients, the engine's ring buffers, a 100 ms timer and the signals. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/protocol.h"
#include "engine/session.h"

#define TICK_MS 100
/* While a session records, the rings are read at least this often, as in
 * embedded mode (capture/poll.c): BPF wakes us only when a ring is a
 * quarter full, and a session learns its last target exited only from
 * the rings (at TICK_MS, 50 ms late on average, 100 at worst). */
#define RING_TICK_MS 10
#define SOCKET_GROUP "gotrace"

/* epoll data for the fixed descriptors (clients carry their own pointer) */
static char tag_listen, tag_signal, tag_timer, tag_engine;

/* Socket file: 0660, group gotrace when that group exists (root otherwise). */
static void set_socket_access(const char *path)
{
	struct group *g = getgrnam(SOCKET_GROUP);

	if (g && chown(path, 0, g->gr_gid))
		gt_log("cannot give %s to group %s: %s", path, SOCKET_GROUP, strerror(errno));
	if (!g)
		gt_log("group %s does not exist: only root can use %s", SOCKET_GROUP, path);
	if (chmod(path, 0660))
		gt_log("chmod %s: %s", path, strerror(errno));
}

/* Outside systemd (no RuntimeDirectory=) the default directory may be
 * missing: make it like the unit would, 0750 root:gotrace. */
static void make_default_dir(const char *path)
{
	char dir[sizeof(GT_DEFAULT_SOCKET)];
	struct group *g;

	if (strcmp(path, GT_DEFAULT_SOCKET))
		return;
	snprintf(dir, sizeof(dir), "%s", GT_DEFAULT_SOCKET);
	*strrchr(dir, '/') = '\0';
	if (mkdir(dir, 0750)) {
		if (errno != EEXIST)
			gt_log("cannot create %s: %s", dir, strerror(errno));
		return;
	}
	g = getgrnam(SOCKET_GROUP);
	if (g && chown(dir, 0, g->gr_gid))
		gt_log("cannot give %s to group %s: %s", dir, SOCKET_GROUP, strerror(errno));
}

static int listen_on(struct gt_server *sv, const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		gt_log("socket path %s is too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	make_default_dir(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* a stale socket from a previous run is replaced; anything else is not */
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		int alive = probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0;

		if (probe >= 0)
			close(probe);
		if (alive) {
			gt_log("another gotraced already serves %s", path);
			close(fd);
			return -EADDRINUSE;
		}
		unlink(path);
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 64)) {
		int rc = -errno;

		gt_log("cannot listen on %s: %s", path, strerror(-rc));
		close(fd);
		return rc;
	}
	set_socket_access(path);
	snprintf(sv->socket_path, sizeof(sv->socket_path), "%s", path);
	sv->listen_owned = 1;
	sv->listen_fd = fd;
	return 0;
}

static int open_listener(struct gt_server *sv, const char *path)
{
	int fd = path ? -1 : gt_sd_listen_fd();
	int fl;

	if (fd < 0)
		return listen_on(sv, path ? path : GT_DEFAULT_SOCKET);
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		gt_log("socket from systemd: cannot make it non-blocking: %s", strerror(errno));
	sv->listen_fd = fd;
	gt_log("serving the socket passed by systemd (fd %d)", fd);
	return 0;
}

static int watch(struct gt_server *sv, int fd, void *tag)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = tag};

	if (epoll_ctl(sv->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		int rc = -errno;

		gt_log("epoll_ctl: %s", strerror(-rc));
		return rc;
	}
	return 0;
}

/* SIGTERM/SIGINT arrive through a signalfd; SIGPIPE is ignored (MSG_NOSIGNAL
 * covers sockets, but a session may write to a closed pipe-like file). */
static int open_signals(struct gt_server *sv)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	sv->signal_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	return sv->signal_fd < 0 ? -errno : 0;
}

static int open_timer(struct gt_server *sv)
{
	struct itimerspec its = {
		.it_interval = {.tv_nsec = TICK_MS * 1000000L},
		.it_value = {.tv_nsec = TICK_MS * 1000000L},
	};

	sv->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (sv->timer_fd < 0 || timerfd_settime(sv->timer_fd, 0, &its, NULL))
		return -errno;
	return 0;
}

static int setup(struct gt_server *sv, const struct gt_server_opts *o)
{
	/* background: a session's slow start or stop never holds the loop
	 * (status, other clients) nor the rings (other sessions); nor does a
	 * binary's load, whose cost its owner chose (docs/security.md) */
	struct gt_engine_opts eo = {.ring_bytes_per_cpu = o->ring_bytes_per_cpu,
				    .verbose = o->verbose, .background = 1,
				    .many_users = 1};
	char why[512];
	int rc;

	rc = gt_drop_sys_resource();
	if (rc)
		return rc;
	sv->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (sv->epfd < 0)
		return -errno;
	rc = open_signals(sv);
	if (rc) {
		gt_log("cannot set up signal handling: %s", strerror(-rc));
		return rc;
	}
	rc = open_timer(sv);
	if (rc) {
		gt_log("cannot create the timer: %s", strerror(-rc));
		return rc;
	}
	rc = gt_engine_open(&sv->engine, &eo, why, sizeof(why));
	if (rc) {
		gt_log("cannot load the BPF programs: %s", why);
		return rc;
	}
	rc = open_listener(sv, o->socket_path);
	if (rc)
		return rc;
	if ((rc = watch(sv, sv->listen_fd, &tag_listen)) || (rc = watch(sv, sv->signal_fd, &tag_signal)) ||
	    (rc = watch(sv, sv->timer_fd, &tag_timer)) ||
	    (rc = watch(sv, gt_engine_fd(sv->engine), &tag_engine)) ||
	    (rc = watch(sv, gt_engine_notify_fd(sv->engine), &tag_engine)) ||
	    (rc = watch(sv, gt_engine_calls_fd(sv->engine), &tag_engine)))
		return rc;
	return 0;
}

static void on_signal(struct gt_server *sv)
{
	struct signalfd_siginfo si;

	while (read(sv->signal_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			gt_log("SIGHUP: nothing to reload");
			continue;
		}
		gt_log("%s: finishing %d session(s) and exiting", strsignal((int)si.ssi_signo),
		       gt_srv_count_sessions(sv));
		sv->stopping = 1;
	}
}

static void drain_engine(struct gt_server *sv)
{
	int n = gt_engine_poll(sv->engine, 0);

	sv->drained_ns = gt_now_ns();
	if (n < 0 && n != -EINTR)
		gt_log("reading events failed: %s", strerror(-n));
}

static void on_timer(struct gt_server *sv)
{
	uint64_t expirations;

	if (read(sv->timer_fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		gt_log("timer: %s", strerror(errno));
	drain_engine(sv);   /* also ends sessions whose duration is over */
	gt_srv_tick(sv);
	gt_log_tick();
	if (sv->ticks % 10 == 0)
		gt_conn_expire_idle(sv);
}

static void status_line(struct gt_server *sv)
{
	static int last = -1;
	char line[64];
	int n = gt_srv_count_sessions(sv);

	if (n == last)
		return;
	last = n;
	snprintf(line, sizeof(line), "STATUS=%d recording session(s)", n);
	gt_sd_notify(line);
}

static void flush_clients(struct gt_server *sv)
{
	for (int i = 0; i < GT_SRV_MAX_CLIENTS; i++)
		if (sv->clients[i] && sv->clients[i]->outlen)
			gt_conn_flush(sv, sv->clients[i]);
	gt_conn_reap(sv);
}

static void loop(struct gt_server *sv)
{
	struct epoll_event evs[64];

	while (!sv->stopping) {
		int tick = gt_srv_count_sessions(sv) ? RING_TICK_MS : -1;
		int n = epoll_wait(sv->epfd, evs, 64, tick);

		if (n < 0 && errno != EINTR) {
			gt_log("epoll_wait: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			void *tag = evs[i].data.ptr;

			if (tag == &tag_listen)
				gt_conn_accept(sv);
			else if (tag == &tag_signal)
				on_signal(sv);
			else if (tag == &tag_timer)
				on_timer(sv);
			else if (tag == &tag_engine)
				drain_engine(sv);
			else
				gt_conn_on_io(sv, tag, evs[i].events);
		}
		if (tick >= 0 && gt_now_ns() - sv->drained_ns >= RING_TICK_MS * 1000000ull)
			drain_engine(sv);
		gt_srv_tick_ended(sv);
		flush_clients(sv);
		status_line(sv);
	}
}

static void teardown(struct gt_server *sv)
{
	gt_sd_notify("STOPPING=1");
	if (sv->engine)
		drain_engine(sv);
	gt_srv_stop_all(sv, "daemon shutting down");
	flush_clients(sv);
	gt_conn_close_all(sv);
	if (sv->listen_fd >= 0)
		close(sv->listen_fd);
	if (sv->listen_owned)
		unlink(sv->socket_path);
	gt_engine_close(sv->engine);
	if (sv->timer_fd >= 0)
		close(sv->timer_fd);
	if (sv->signal_fd >= 0)
		close(sv->signal_fd);
	if (sv->epfd >= 0)
		close(sv->epfd);
}

int gt_server_run(const struct gt_server_opts *o)
{
	static struct gt_server sv;
	int rc;

	memset(&sv, 0, sizeof(sv));
	sv.epfd = sv.listen_fd = sv.signal_fd = sv.timer_fd = -1;
	sv.request_ms = 1000ull * (o->request_timeout_s ? o->request_timeout_s : GT_SRV_REQUEST_S);
	sv.idle_ms = 1000ull * (o->idle_timeout_s ? o->idle_timeout_s : GT_SRV_IDLE_S);
	rc = setup(&sv, o);
	if (rc) {
		teardown(&sv);
		return 1;
	}
	gt_srv_flight_start_configured(&sv, &o->flight);
	gt_log("ready on %s", sv.listen_owned ? sv.socket_path : "the systemd socket");
	gt_sd_notify("READY=1\nSTATUS=0 recording session(s)");
	loop(&sv);
	teardown(&sv);
	gt_log("exited cleanly");
	return 0;
}
