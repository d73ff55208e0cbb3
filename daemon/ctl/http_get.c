/* gt_http_get (http_get.h): one GET over one TCP connection, HTTP/1.0 so
 * that the server ends the body by closing (Go's net/http then sends no
 * chunked encoding). */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http_get.h"

#define MAX_BODY (1u << 30) /* a runtime trace of minutes is far smaller */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* host, port and path of url; 0 or -EINVAL. */
static int split_url(const char *url, char *host, size_t hlen, char *port, size_t plen,
		     const char **path)
{
	const char *h, *e, *c;

	if (strncmp(url, "http://", 7))
		return -EINVAL;
	h = url + 7;
	e = h + strcspn(h, "/?");
	*path = *e ? e : "/";
	c = memchr(h, ':', (size_t)(e - h));
	if (!c)
		c = e;
	if (c == h || (size_t)(c - h) >= hlen || (c < e && ((size_t)(e - c - 1) >= plen || e == c + 1)))
		return -EINVAL;
	memcpy(host, h, (size_t)(c - h));
	host[c - h] = 0;
	if (c < e) {
		memcpy(port, c + 1, (size_t)(e - c - 1));
		port[e - c - 1] = 0;
	} else {
		snprintf(port, plen, "80");
	}
	return 0;
}

/* connect() on a non-blocking socket, waiting for POLLOUT until deadline:
 * a peer that drops SYNs must not hold gotracectl for the kernel's minutes
 * of retries. 0 or -errno. */
static int connect_by(int fd, const struct sockaddr *sa, socklen_t len, uint64_t deadline)
{
	int fl = fcntl(fd, F_GETFL), err = 0;
	socklen_t el = sizeof(err);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	if (connect(fd, sa, len) < 0) {
		if (errno != EINPROGRESS)
			return -errno;
		for (;;) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };
			uint64_t t = now_ms();
			int r = t >= deadline ? 0 : poll(&p, 1, (int)(deadline - t));

			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return -errno;
			if (r == 0)
				return -ETIMEDOUT;
			break;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
			return -errno;
		if (err)
			return -err;
	}
	return fcntl(fd, F_SETFL, fl) < 0 ? -errno : 0;
}

/* getaddrinfo has no deadline; the name service is the user's own
 * (docs/security.md), only connect is bounded. */
static int dial(const char *host, const char *port, uint64_t deadline, char *why, size_t whylen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	int fd = -1, rc = getaddrinfo(host, port, &hints, &res);

	if (rc) {
		snprintf(why, whylen, "cannot resolve %s: %s", host, gai_strerror(rc));
		return -EHOSTUNREACH;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		rc = fd < 0 ? -errno : connect_by(fd, ai->ai_addr, ai->ai_addrlen, deadline);
		if (!rc)
			break;
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		snprintf(why, whylen, "cannot connect to %s:%s: %s", host, port, strerror(-rc));
	return fd < 0 ? rc : fd;
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Reads until the server closes; 0 or -errno (why says). */
static int read_all(int fd, uint64_t deadline, struct gt_http_body *b, char *why, size_t whylen)
{
	size_t cap = 0;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t t = now_ms();
		ssize_t r;
		int pr = t >= deadline ? 0 : poll(&p, 1, (int)(deadline - t));

		if (pr < 0 && errno == EINTR)
			continue; /* the deadline is checked again above */
		if (pr < 0) {
			snprintf(why, whylen, "waiting for the answer: %s", strerror(errno));
			return -errno;
		}
		if (pr == 0) {
			snprintf(why, whylen, "no complete answer in time (%zu bytes read)", b->len);
			return -ETIMEDOUT;
		}
		if (b->len == cap) {
			uint8_t *n = cap >= MAX_BODY ? NULL : realloc(b->data, cap ? 2 * cap : 65536);

			if (!n) {
				snprintf(why, whylen, "the answer is too large (%zu bytes read)", b->len);
				return -ENOMEM;
			}
			b->data = n;
			cap = cap ? 2 * cap : 65536;
		}
		r = recv(fd, b->data + b->len, cap - b->len, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(why, whylen, "reading the answer: %s", strerror(errno));
			return -errno;
		}
		if (r == 0)
			return 0;
		b->len += (size_t)r;
	}
}

/* The three digits of "HTTP/1.x NNN" or -1; data need not end with a NUL
 * (atoi there read past a buffer the server filled with digits). */
int gt_http_status(const uint8_t *data, size_t len)
{
	int code = 0;

	if (len < 12 || memcmp(data, "HTTP/1.", 7) || data[8] != ' ')
		return -1;
	for (int i = 9; i < 12; i++) {
		if (data[i] < '0' || data[i] > '9')
			return -1;
		code = code * 10 + (data[i] - '0');
	}
	return len == 12 || data[12] == ' ' || data[12] == '\r' ? code : -1;
}

/* Checks the status line and drops the headers from b. */
static int strip_head(struct gt_http_body *b, char *why, size_t whylen)
{
	const uint8_t *end = NULL;
	size_t hl, n = b->len < 200 ? b->len : 200;
	int code = 0;

	for (size_t i = 0; i + 3 < b->len; i++)
		if (!memcmp(b->data + i, "\r\n\r\n", 4)) {
			end = b->data + i + 4;
			break;
		}
	code = gt_http_status(b->data, b->len);
	if (!end || code != 200) {
		char head[201];

		for (size_t i = 0; i < n; i++)
			head[i] = b->data[i] >= 32 && b->data[i] < 127 ? (char)b->data[i] : ' ';
		head[n] = 0;
		snprintf(why, whylen, "the server answered: %s", n ? head : "nothing");
		return -EPROTO;
	}
	hl = (size_t)(end - b->data);
	memmove(b->data, end, b->len - hl);
	b->len -= hl;
	return 0;
}

int gt_http_get(const char *url, int timeout_ms, struct gt_http_body *body, char *why,
		size_t whylen)
{
	char host[256], port[16], req[4096];
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
	const char *path;
	int fd, rc, n;

	memset(body, 0, sizeof(*body));
	if (split_url(url, host, sizeof(host), port, sizeof(port), &path)) {
		snprintf(why, whylen, "not an http://HOST:PORT/PATH URL");
		return -EINVAL;
	}
	n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: %s:%s\r\nUser-Agent: gotracectl\r\n"
		     "Accept-Encoding: identity\r\n\r\n", path, host, port);
	if (n < 0 || (size_t)n >= sizeof(req) || strpbrk(path, "\r\n ")) {
		snprintf(why, whylen, "the URL's path is too long or has spaces");
		return -EINVAL;
	}
	if ((fd = dial(host, port, deadline, why, whylen)) < 0)
		return fd;
	rc = send_all(fd, req, (size_t)n);
	if (rc)
		snprintf(why, whylen, "sending the request: %s", strerror(-rc));
	else if (!(rc = read_all(fd, deadline, body, why, whylen)))
		rc = strip_head(body, why, whylen);
	close(fd);
	if (rc) {
		free(body->data);
		memset(body, 0, sizeof(*body));
	}
	return rc;
}
