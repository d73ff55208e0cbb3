/* record --go-trace: the runtime's trace fetched from the program's
 * net/http/pprof endpoint while the kernel records it, then the merge
 * (merge.c).  The fetch starts once the session records (its "started"
 * hook), for the recording's duration; the kernel side records until
 * 250 ms after the runtime's trace is in (gt_gotrace_over), so that it
 * covers the runtime's window however late the session's "started" came
 * (gotraced's window opens when its probes are attached, which a busy
 * machine can take a second to tell the client: a fixed duration then
 * ended the kernel's side before the runtime's began). */
#ifndef GT_RECORD_GOTRACE_H
#define GT_RECORD_GOTRACE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "http_get.h"

#define GT_GOTRACE_MARGIN_NS 250000000ull

struct gt_gotrace {
	char url[4200];
	int timeout_ms;
	pthread_t thread;
	int running;
	atomic_int over;      /* the fetch ended GT_GOTRACE_MARGIN_NS ago */
	int rc;
	struct gt_http_body body;
	char why[600];
};

/* The URL with ?seconds= (or &seconds=) of duration_ns; 0 or -EINVAL. */
int gt_gotrace_init(struct gt_gotrace *g, const char *url, uint64_t duration_ns);
/* Starts the fetch in a thread; 0 or -errno (g->why). */
int gt_gotrace_start(struct gt_gotrace *g);
/* 1 once the kernel's side may stop: the fetch ended (or never started)
 * GT_GOTRACE_MARGIN_NS ago; 0 before, or for g NULL. */
int gt_gotrace_over(struct gt_gotrace *g);
/* Waits for the fetch, merges it with the kernel recording at k_path into
 * out.  0, or 1 with the reason printed. */
int gt_gotrace_finish(struct gt_gotrace *g, const char *k_path, const char *out);

#endif
