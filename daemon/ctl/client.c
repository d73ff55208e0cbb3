/* Client side of the gotraced protocol (see client.h). */
#include "client.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/gt_escape.h"

/* Once a message has started, the rest must follow promptly. */
#define REST_OF_MESSAGE_MS 5000

/* Whether something listens on the Unix socket path: /proc/net/unix (any
 * user may read it) lists each listening socket (flag __SO_ACCEPTCON,
 * 0x10000) with its path.  1 yes, 0 no, -1 unknown (unreadable). */
static int socket_listening(const char *path)
{
	FILE *f = fopen("/proc/net/unix", "re");
	char line[4096 + 128];
	int found = 0;
	size_t n = strlen(path);

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long flags;
		size_t len = strcspn(line, "\n");

		line[len] = 0;
		if (sscanf(line, "%*s %*s %*s %lx", &flags) != 1 || !(flags & 0x10000ul))
			continue;
		found = len > n && line[len - n - 1] == ' ' && !strcmp(line + len - n, path);
	}
	fclose(f);
	return found;
}

/* Whether a process called gotraced runs (any user may read a comm): a
 * socket we may not reach says nothing of whether anyone listens on it.
 * Asked only when /proc/net/unix cannot say whether one listens on it (a
 * daemon on another socket, or in a container, is no daemon on ours). */
static int gotraced_running(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[64], comm[32];
	int found = 0;

	while (d && !found && (e = readdir(d))) {
		FILE *f;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s/comm", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		found = fgets(comm, sizeof(comm), f) && !strcmp(comm, "gotraced\n");
		fclose(f);
	}
	if (d)
		closedir(d);
	return found;
}

int gt_client_connect(const char *sock_path, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const char *path = sock_path;
	int fd, rc, listening;

	if (!path)
		path = getenv("GOTRACED_SOCKET");
	if (!path || !*path)
		path = GT_DEFAULT_SOCKET;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "socket path %s is too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot create a socket: %s", strerror(-rc));
		return rc;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return fd;
	rc = -errno;
	close(fd);
	listening = rc == -EACCES || rc == -EPERM ? socket_listening(path) : 1;
	if (listening < 0)
		listening = gotraced_running();
	if (!listening) {
		snprintf(err, errlen, "no gotraced daemon is running (%s: %s)", path, strerror(-rc));
		return -ENOENT;
	}
	if (rc == -ENOENT || rc == -ECONNREFUSED)
		snprintf(err, errlen, "no gotraced daemon is running (%s: %s)", path, strerror(-rc));
	else if (rc == -EACCES || rc == -EPERM)
		snprintf(err, errlen, "not allowed to use %s: be root or in group gotrace", path);
	else
		snprintf(err, errlen, "cannot connect to gotraced at %s: %s", path, strerror(-rc));
	return rc;
}

/* Sends a whole message with nfds descriptors (they ride on its first byte). */
static int client_send(int fd, const void *buf, size_t len, const int *fds, int nfds)
{
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	const char *p = buf;

	if (nfds < 0 || nfds > 2)
		return -EINVAL;
	while (len > 0) {
		struct iovec iov = {.iov_base = (void *)p, .iov_len = len};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
		ssize_t n;

		if (nfds > 0) {
			struct cmsghdr *c;

			memset(&ctl, 0, sizeof(ctl));
			mh.msg_control = ctl.buf;
			mh.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
			c = CMSG_FIRSTHDR(&mh);
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
			memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
		}
		n = sendmsg(fd, &mh, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		nfds = 0;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads exactly len bytes; waits at most timeout_ms for each chunk. */
static int read_full(int fd, void *buf, size_t len, int timeout_ms)
{
	char *p = buf;

	while (len > 0) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int rc = poll(&pfd, 1, timeout_ms);
		ssize_t n;

		if (rc < 0)
			return -errno;
		if (rc == 0)
			return -ETIMEDOUT;
		n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ECONNRESET;
		p += n;
		len -= (size_t)n;
		timeout_ms = REST_OF_MESSAGE_MS;
	}
	return 0;
}

/* Reads one whole message (timeout_ms -1 = forever). */
static int client_recv(int fd, int timeout_ms, struct gt_msg *msg, char *err, size_t errlen)
{
	static unsigned char buf[GT_PROTO_MAX_MSG];
	char why[256];
	int rc;

	rc = read_full(fd, buf, GT_PROTO_HDR_SIZE, timeout_ms);
	if (rc == 0) {
		rc = gt_proto_decode_hdr(buf, GT_PROTO_HDR_SIZE, &msg->hdr);
		if (rc == 0)
			rc = read_full(fd, buf + GT_PROTO_HDR_SIZE, msg->hdr.length, REST_OF_MESSAGE_MS);
		else
			snprintf(err, errlen, "the daemon sent a bad message header");
	}
	if (rc == 0) {
		rc = gt_proto_decode(buf, GT_PROTO_HDR_SIZE + msg->hdr.length, msg, why, sizeof(why));
		if (rc)
			snprintf(err, errlen, "the daemon sent a bad message: %s", why);
	} else if (rc == -ECONNRESET) {
		snprintf(err, errlen, "the daemon closed the connection");
	} else if (rc == -ETIMEDOUT) {
		snprintf(err, errlen, "the daemon did not answer in time");
	} else if (rc != -EPROTO && rc != -EMSGSIZE) {
		snprintf(err, errlen, "reading from the daemon: %s", strerror(-rc));
	}
	return rc;
}

/* An ERROR reply becomes -code with the daemon's words; anything but the
 * expected type is a protocol error. */
static int expect(const struct gt_msg *m, unsigned type, char *err, size_t errlen)
{
	if (m->hdr.type == type)
		return 0;
	if (m->hdr.type == GT_MSG_ERROR) {
		gt_esc(err, errlen, m->u.error.text); /* may quote users' text */
		return m->u.error.code > 0 ? -m->u.error.code : -EPROTO;
	}
	snprintf(err, errlen, "the daemon answered %s where %s was expected",
		 gt_proto_type_name(m->hdr.type), gt_proto_type_name(type));
	return -EPROTO;
}

/* A daemon that refused the connection (a limit) wrote why, then closed it:
 * its ERROR is still there to read after our send failed. */
static int refusal_after_send_error(int fd, int rc, char *err, size_t errlen)
{
	static struct gt_msg m;
	char ignored[256];

	if ((rc != -EPIPE && rc != -ECONNRESET) ||
	    client_recv(fd, 1000, &m, ignored, sizeof(ignored)) || m.hdr.type != GT_MSG_ERROR)
		return 0;
	gt_esc(err, errlen, m.u.error.text);
	return m.u.error.code > 0 ? -m.u.error.code : -EPROTO;
}

static int send_or_say(int fd, const void *buf, int len, const int *fds, int nfds, char *err,
		       size_t errlen)
{
	int rc = len < 0 ? len : client_send(fd, buf, (size_t)len, fds, nfds), refused;

	if (rc) {
		refused = refusal_after_send_error(fd, rc, err, errlen);
		if (refused)
			return refused;
		snprintf(err, errlen, "sending to the daemon: %s", strerror(-rc));
	}
	return rc;
}

int gt_client_record(int fd, const struct gt_session_opts *o, int want_progress, int out_fd,
		     int cgroup_fd, uint32_t *session_id, char *err, size_t errlen)
{
	static struct gt_msg_record rec;
	static unsigned char buf[GT_PROTO_MAX_MSG];
	static struct gt_msg m;
	int fds[2] = {out_fd, cgroup_fd};
	int rc = gt_proto_record_from_opts(&rec, o, want_progress, err, errlen);

	if (rc)
		return rc;
	rc = send_or_say(fd, buf, gt_proto_encode_record(buf, sizeof(buf), &rec), fds,
			 cgroup_fd >= 0 ? 2 : 1, err, errlen);
	if (!rc)
		rc = client_recv(fd, -1, &m, err, errlen);
	if (!rc)
		rc = expect(&m, GT_MSG_OK, err, errlen);
	if (!rc)
		*session_id = m.u.id;
	return rc;
}

int gt_client_next(int fd, int timeout_ms, struct gt_client_event *ev, char *err, size_t errlen)
{
	static struct gt_msg m;
	int rc = client_recv(fd, timeout_ms, &m, err, errlen);

	if (rc)
		return rc;
	memset(ev, 0, sizeof(*ev));
	if (m.hdr.type == GT_MSG_PROGRESS) {
		ev->kind = GT_CLIENT_PROGRESS;
		ev->stats = m.u.progress;
		return 0;
	}
	rc = expect(&m, GT_MSG_DONE, err, errlen);
	if (rc)
		return rc;
	ev->kind = GT_CLIENT_DONE;
	ev->stats = m.u.done.stats;
	ev->error = m.u.done.error;
	gt_esc(ev->reason, sizeof(ev->reason), m.u.done.reason);
	return 0;
}

int gt_client_finish(int fd)
{
	return shutdown(fd, SHUT_WR) ? -errno : 0;
}

int gt_client_status(int fd, struct gt_msg_status_reply *out, char *err, size_t errlen)
{
	static unsigned char buf[GT_PROTO_HDR_SIZE];
	static struct gt_msg m;
	int rc = send_or_say(fd, buf, gt_proto_encode_status(buf, sizeof(buf)), NULL, 0, err,
			     errlen);

	if (!rc)
		rc = client_recv(fd, 10000, &m, err, errlen);
	if (!rc)
		rc = expect(&m, GT_MSG_STATUS_REPLY, err, errlen);
	if (!rc)
		*out = m.u.status;
	return rc;
}

int gt_client_stop(int fd, uint32_t id, char *err, size_t errlen)
{
	unsigned char buf[GT_PROTO_HDR_SIZE + 4];
	static struct gt_msg m;
	int rc = send_or_say(fd, buf, gt_proto_encode_stop(buf, sizeof(buf), id), NULL, 0, err,
			     errlen);

	if (!rc)
		rc = client_recv(fd, 30000, &m, err, errlen);
	if (!rc)
		rc = expect(&m, GT_MSG_OK, err, errlen);
	return rc;
}

int gt_client_dump(int fd, uint32_t id, int out_fd, struct gt_msg_dumped *out, char *err,
		   size_t errlen)
{
	unsigned char buf[GT_PROTO_HDR_SIZE + 4];
	static struct gt_msg m;
	int rc = send_or_say(fd, buf, gt_proto_encode_dump(buf, sizeof(buf), id), &out_fd,
			     out_fd >= 0 ? 1 : 0, err, errlen);

	/* the dump is written before the answer: a long window takes seconds */
	if (!rc)
		rc = client_recv(fd, 600000, &m, err, errlen);
	if (!rc)
		rc = expect(&m, GT_MSG_DUMPED, err, errlen);
	if (!rc)
		*out = m.u.dumped;
	return rc;
}
