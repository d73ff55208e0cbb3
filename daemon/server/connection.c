/* Client connections of gotraced: accept with SO_PEERCRED, non-blocking
 * reads that cut the byte stream into messages (and pick up the descriptor
 * passed with SCM_RIGHTS), bounded output queues, and closing. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"

#define MAX_FDS_PER_READ 4

static void refuse_connection(int fd, const char *why)
{
	unsigned char buf[GT_PROTO_HDR_SIZE + 6 + GT_PROTO_MAX_TEXT];
	int n = gt_proto_encode_error(buf, sizeof(buf), EBUSY, "%s", why);

	if (n > 0 && send(fd, buf, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		gt_log("could not tell a refused client why: %s", strerror(errno));
	close(fd);
}

static struct gt_srv_client *new_client(int fd)
{
	struct gt_srv_client *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->in = malloc(GT_PROTO_MAX_MSG);
	if (!c->in) {
		free(c);
		return NULL;
	}
	c->fd = fd;
	return c;
}

static int peer_cred(int fd, struct ucred *cred)
{
	socklen_t len = sizeof(*cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cred, &len)) {
		gt_log("connection refused: SO_PEERCRED failed: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Whether uid may have one more connection: 0, or -EBUSY and why not. */
static int admit(const struct gt_server *sv, uid_t uid, int *slot, char *why, size_t whylen)
{
	int used = 0, mine = 0;

	*slot = -1;
	for (int i = 0; i < GT_SRV_MAX_CLIENTS; i++) {
		if (!sv->clients[i]) {
			if (*slot < 0)
				*slot = i;
			continue;
		}
		used++;
		mine += sv->clients[i]->uid == uid;
	}
	if (*slot < 0)
		snprintf(why, whylen, "too many connections to gotraced: limit %d; try again later",
			 GT_SRV_MAX_CLIENTS);
	else if (uid == 0)
		return 0;
	else if (used >= GT_SRV_MAX_CLIENTS - GT_SRV_ROOT_RESERVED)
		snprintf(why, whylen, "too many connections to gotraced: limit %d for users other "
			 "than root (the last %d slots are root's); try again later",
			 GT_SRV_MAX_CLIENTS - GT_SRV_ROOT_RESERVED, GT_SRV_ROOT_RESERVED);
	else if (mine >= GT_SRV_MAX_CLIENTS_PER_UID)
		snprintf(why, whylen, "too many connections for uid %u: limit %d (this user already "
			 "has %d connections to gotraced; close some first)", (unsigned)uid,
			 GT_SRV_MAX_CLIENTS_PER_UID, mine);
	else
		return 0;
	return -EBUSY;
}

static int register_client(struct gt_server *sv, struct gt_srv_client *c, int slot,
			   const struct ucred *cred)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = c};

	c->uid = cred->uid;
	c->gid = cred->gid;
	c->pid = cred->pid;
	if (epoll_ctl(sv->epfd, EPOLL_CTL_ADD, c->fd, &ev)) {
		gt_log("connection refused: epoll_ctl: %s", strerror(errno));
		return -1;
	}
	c->conn = ++sv->next_conn;
	c->last_active_ms = (gt_now_ns() / 1000000u);
	c->partial_since_ms = c->last_active_ms;
	sv->clients[slot] = c;
	return 0;
}

void gt_conn_accept(struct gt_server *sv)
{
	for (;;) {
		int fd = accept4(sv->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct gt_srv_client *c;
		struct ucred cred;
		char why[256];
		int slot;

		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				gt_log("accept: %s", strerror(errno));
			return;
		}
		if (peer_cred(fd, &cred)) {
			close(fd);
			continue;
		}
		if (admit(sv, cred.uid, &slot, why, sizeof(why))) {
			gt_log_uid(cred.uid, "connection of uid %u (pid %d) refused: %s", (unsigned)cred.uid,
			       (int)cred.pid, why);
			refuse_connection(fd, why);
			continue;
		}
		c = new_client(fd);
		if (!c || register_client(sv, c, slot, &cred)) {
			if (c) {
				free(c->in);
				free(c);
			} else {
				gt_log("connection refused: out of memory");
			}
			close(fd);
			continue;
		}
		if (sv->stopping)
			gt_conn_queue_error(c, ESHUTDOWN, "gotraced is shutting down");
	}
}

/* ---- output --------------------------------------------------------------- */

static void want_output(struct gt_server *sv, struct gt_srv_client *c, int on)
{
	struct epoll_event ev = {.events = (c->read_closed ? 0 : EPOLLIN | EPOLLRDHUP) |
					   (on ? EPOLLOUT : 0),
				 .data.ptr = c};

	if (epoll_ctl(sv->epfd, EPOLL_CTL_MOD, c->fd, &ev))
		gt_log("client %u: epoll_ctl: %s", c->conn, strerror(errno));
}

/* Queues a whole encoded message; a client that lets replies pile up beyond
 * GT_SRV_OUT_MAX is not reading and gets dropped. */
int gt_conn_queue(struct gt_srv_client *c, const void *buf, int len)
{
	if (len < 0 || c->dead)
		return len < 0 ? len : -EPIPE;
	if (c->outlen + (size_t)len > GT_SRV_OUT_MAX) {
		gt_log_uid(c->uid, "client %u (uid %u): dropped, it does not read its replies", c->conn,
		       (unsigned)c->uid);
		c->dead = 1;
		return -ENOBUFS;
	}
	if (c->outlen + (size_t)len > c->outcap) {
		size_t cap = c->outcap ? c->outcap : 4096;
		unsigned char *p;

		while (cap < c->outlen + (size_t)len)
			cap *= 2;
		p = realloc(c->out, cap);
		if (!p) {
			c->dead = 1;
			return -ENOMEM;
		}
		c->out = p;
		c->outcap = cap;
	}
	memcpy(c->out + c->outlen, buf, (size_t)len);
	c->outlen += (size_t)len;
	return 0;
}

void gt_conn_queue_error(struct gt_srv_client *c, int code, const char *fmt, ...)
{
	char text[GT_PROTO_MAX_TEXT + 1];
	unsigned char buf[GT_PROTO_HDR_SIZE + 6 + GT_PROTO_MAX_TEXT];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	gt_conn_queue(c, buf, gt_proto_encode_error(buf, sizeof(buf), code, "%s", text));
}

void gt_conn_flush(struct gt_server *sv, struct gt_srv_client *c)
{
	while (c->outlen > 0 && !c->dead) {
		ssize_t n = send(c->fd, c->out, c->outlen, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0) {
			/* the peer is gone; nothing more can reach it */
			c->dead = 1;
			return;
		}
		memmove(c->out, c->out + n, c->outlen - (size_t)n);
		c->outlen -= (size_t)n;
	}
	if (!c->dead)
		want_output(sv, c, c->outlen > 0);
	/* a half-closed client whose session is still being finished (in
	 * the background) waits for its DONE, one whose dump is being
	 * written for its DUMPED, one whose STOP waits for the session's
	 * dump for its OK */
	if (c->outlen == 0 && c->closing &&
	    !(c->read_closed && (c->session || c->dumping || c->stop_waits)))
		c->dead = 1;
}

/* ---- input ---------------------------------------------------------------- */

void gt_conn_drop_fds(struct gt_srv_client *c)
{
	for (int i = 0; i < c->npending; i++)
		close(c->pending_fds[i]);
	c->npending = 0;
}

/* Keeps the descriptors sent with a RECORD (GT_SRV_MAX_FDS); any more are
 * closed. */
static void take_fds(struct gt_srv_client *c, struct msghdr *mh)
{
	for (struct cmsghdr *h = CMSG_FIRSTHDR(mh); h; h = CMSG_NXTHDR(mh, h)) {
		size_t n;

		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		n = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof(int));
			if (c->npending < GT_SRV_MAX_FDS) {
				c->pending_fds[c->npending++] = fd;
			} else {
				gt_log_uid(c->uid, "client %u: extra descriptor closed", c->conn);
				close(fd);
			}
		}
	}
}

/* Reads what is there: 1 got bytes, 0 nothing more now, -1 EOF or error. */
static int read_some(struct gt_srv_client *c)
{
	union {
		char buf[CMSG_SPACE(MAX_FDS_PER_READ * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {.iov_base = c->in + c->inlen, .iov_len = GT_PROTO_MAX_MSG - c->inlen};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf)};
	ssize_t n;

	if (iov.iov_len == 0)
		return 0; /* a whole message is buffered: handle it first */
	n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	take_fds(c, &mh);
	if (mh.msg_flags & MSG_CTRUNC)
		gt_log_uid(c->uid, "client %u: sent more descriptors than allowed; extras dropped", c->conn);
	if (n == 0)
		return -1;
	if (c->inlen == 0)
		c->partial_since_ms = gt_now_ns() / 1000000u;
	c->inlen += (size_t)n;
	return 1;
}

/* Cuts complete messages off the input buffer and hands them over.
 * A bad header cannot be resynchronized: the connection ends after the
 * error reply.  A bad payload is skipped. */
static void parse_input(struct gt_server *sv, struct gt_srv_client *c)
{
	static struct gt_msg msg;
	char why[256];

	while (!c->dead && !c->closing && c->inlen >= GT_PROTO_HDR_SIZE) {
		struct gt_msg_hdr h;
		int rc = gt_proto_decode_hdr(c->in, c->inlen, &h);
		size_t total;

		if (rc) {
			gt_proto_decode(c->in, GT_PROTO_HDR_SIZE, &msg, why, sizeof(why));
			gt_log_uid(c->uid, "client %u (uid %u): bad message: %s; closing", c->conn,
			       (unsigned)c->uid, why);
			gt_conn_queue_error(c, rc == -EMSGSIZE ? EMSGSIZE : EPROTO, "%s", why);
			c->closing = 1;
			break;
		}
		total = GT_PROTO_HDR_SIZE + h.length;
		if (c->inlen < total)
			break;
		rc = gt_proto_decode(c->in, total, &msg, why, sizeof(why));
		if (rc) {
			gt_log_uid(c->uid, "client %u (uid %u): malformed %s: %s", c->conn, (unsigned)c->uid,
			       gt_proto_type_name(h.type), why);
			gt_conn_queue_error(c, EBADMSG, "malformed %s: %s",
					      gt_proto_type_name(h.type), why);
		} else {
			gt_srv_handle(sv, c, &msg);
		}
		c->last_active_ms = (gt_now_ns() / 1000000u);
		c->partial_since_ms = c->last_active_ms;
		c->requests++;
		memmove(c->in, c->in + total, c->inlen - total);
		c->inlen -= total;
	}
}

void gt_conn_on_io(struct gt_server *sv, struct gt_srv_client *c, uint32_t events)
{
	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
		int rc;

		while (!c->read_closed && !c->dead && (rc = read_some(c)) != 0) {
			if (rc < 0) {
				c->read_closed = 1;
				break;
			}
			parse_input(sv, c);
		}
		parse_input(sv, c);
		if (c->read_closed) {
			if (c->inlen > 0)
				gt_log_uid(c->uid, "client %u: connection ended inside a message (%zu bytes)",
				       c->conn, c->inlen);
			gt_srv_client_gone(sv, c, "client disconnected");
			c->closing = 1;
		}
	}
	gt_conn_flush(sv, c);
}

static void free_client(struct gt_server *sv, struct gt_srv_client *c)
{
	gt_srv_client_gone(sv, c, "client disconnected");
	gt_srv_flight_forget_client(sv, c);
	epoll_ctl(sv->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	gt_conn_drop_fds(c);
	free(c->in);
	free(c->out);
	free(c);
}

/* Closes the connections marked dead. */
void gt_conn_reap(struct gt_server *sv)
{
	for (int i = 0; i < GT_SRV_MAX_CLIENTS; i++) {
		struct gt_srv_client *c = sv->clients[i];

		if (c && c->dead) {
			sv->clients[i] = NULL;
			free_client(sv, c);
		}
	}
}

/* Why a connection without a session has waited too long, or NULL: it
 * must send each whole request within request_ms (counted from its connect,
 * or from the message's first byte), and may stay idle idle_ms after one. */
static const char *overdue(const struct gt_server *sv, const struct gt_srv_client *c,
			   uint64_t now, char *why, size_t whylen)
{
	if (c->inlen > 0 && now - c->partial_since_ms >= sv->request_ms)
		snprintf(why, whylen, "no complete request within %llu s (a message was begun "
			 "and not finished); closing", (unsigned long long)(sv->request_ms / 1000));
	else if (c->inlen == 0 && !c->requests && now - c->last_active_ms >= sv->request_ms)
		snprintf(why, whylen, "no request within %llu s of connecting; closing",
			 (unsigned long long)(sv->request_ms / 1000));
	else if (c->inlen == 0 && c->requests && now - c->last_active_ms >= sv->idle_ms)
		snprintf(why, whylen, "idle for %llu s without a request; closing",
			 (unsigned long long)(sv->idle_ms / 1000));
	else
		return NULL;
	return why;
}

/* Connections hold a slot and 64 KiB: one that neither records nor sends
 * its requests in time is told why and closed. */
void gt_conn_expire_idle(struct gt_server *sv)
{
	uint64_t now = (gt_now_ns() / 1000000u);
	char why[160];

	for (int i = 0; i < GT_SRV_MAX_CLIENTS; i++) {
		struct gt_srv_client *c = sv->clients[i];

		if (!c || c->session || c->dumping || c->stop_waits || c->dead ||
		    !overdue(sv, c, now, why, sizeof(why)))
			continue;
		gt_log_uid(c->uid, "client %u (uid %u): %s", c->conn, (unsigned)c->uid, why);
		gt_conn_queue_error(c, ETIMEDOUT, "%s", why);
		c->closing = 1;
		gt_conn_flush(sv, c);
		c->dead = 1; /* not waiting for a client that sends nothing to read */
	}
}

void gt_conn_close_all(struct gt_server *sv)
{
	for (int i = 0; i < GT_SRV_MAX_CLIENTS; i++) {
		struct gt_srv_client *c = sv->clients[i];

		if (c) {
			gt_conn_flush(sv, c);
			sv->clients[i] = NULL;
			free_client(sv, c);
		}
	}
}
