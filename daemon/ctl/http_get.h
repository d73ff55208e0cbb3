/* A small HTTP/1.0 GET for `record --go-trace`: the runtime's trace from a
 * Go program's net/http/pprof endpoint.  Plain http:// only (no TLS, no
 * redirects, no proxy): the endpoint is a debug port, most often on
 * 127.0.0.1. */
#ifndef GT_HTTP_GET_H
#define GT_HTTP_GET_H

#include <stddef.h>
#include <stdint.h>

struct gt_http_body {
	uint8_t *data;   /* malloc'd; the caller frees it */
	size_t len;
};

/* GETs url (http://HOST[:PORT]/PATH[?QUERY]), waiting at most timeout_ms
 * for the whole answer.  0 with the body of a 200 answer, or -errno with
 * why filled (bad URL, cannot connect, the status line and first body
 * bytes of another answer, a timeout). */
int gt_http_get(const char *url, int timeout_ms, struct gt_http_body *body, char *why,
		size_t whylen);

/* The status code of an answer's "HTTP/1.x NNN" line, or -1 when data
 * (len bytes, no NUL needed) does not start with one. */
int gt_http_status(const uint8_t *data, size_t len);

#endif
