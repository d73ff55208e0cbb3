/* Shared by the gt_check*.c files only: the decoded event table, the
 * id-keyed hash maps and the check context.  Not a public API. */
#ifndef GT_CHECK_INTERNAL_H
#define GT_CHECK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "gt_check.h"
#include "wire/gt_parse.h"
#include "wire/gt_pcursor.h"
#include "wire/gt_reader.h"
#include "util/gt_idmap.h"

/* Go's fake P ids (internal/trace: FakeP + iota). */
#define GT_TIMER_P   1000001
#define GT_NETPOLL_P 1000002
#define GT_SYSCALL_P 1000003
#define GT_PROFILE_P 1000005

struct gt_string {
	uint64_t off; /* bytes in the input */
	uint32_t len;
};

struct gt_stack {
	uint64_t off;   /* offset of the record */
	uint32_t nframes;
	uint64_t top_pc, top_fn, top_file, top_line;
};

struct gt_batch {
	int64_t p;
	uint32_t seg_first, seg_last; /* streaming: its runs, or UINT32_MAX */
	uint64_t last_g; /* parseEvents' lastGs[p] */
	uint32_t first;  /* into ctx->order, after grouping */
	uint32_t n;
	int64_t last_ts; /* docs/format.md: time never goes back within a P */
	int has_ts;
};

struct gt_ctx {
	const uint8_t *data;
	size_t len;
	unsigned flags;
	int version;
	struct gt_check_report *rep;

	struct gt_pev *ev;   /* in file order (src: the batch) */
	uint32_t nev, capev;
	uint32_t *order;     /* event indices: grouped, then merged order */
	uint32_t norder;

	struct gt_idmap strings;  /* id -> struct gt_string */
	struct gt_idmap stacks;   /* id -> struct gt_stack */
	struct gt_idmap timer_gs; /* g -> nothing */
	struct gt_idmap batch_of; /* p -> uint32_t batch index */
	struct gt_batch *batches;
	uint32_t nbatches, capbatches;
	int64_t ticks_per_sec;
	int seen_batch;

	struct gt_raw_event *raw;

	/* Streaming (gt_check_stream.c): decode keeps no events but CPU
	 * samples (in ev); the merge decodes each P's next event again from
	 * its runs of records. */
	int stream;
	int mapped;             /* data is a private file mapping (may drop pages) */
	uint32_t window;        /* events held to re-sort moved GoSysExits */
	uint64_t nall;          /* events decoded, samples included */
	uint64_t read_since;    /* bytes decoded since pages were last dropped */
	struct gt_psegs segs;   /* each batch's runs of records */
};

/* Decode's parse state: the current P's, and where its batch stands. */
struct gt_decode_state {
	struct gt_pstate ps;
	uint32_t cur;      /* batch index of ps.p */
	uint64_t skew_off; /* a CPUSample of this batch with a time delta, or 0 */
};

/* The context's tables (0 or -ENOMEM; free in any case) for a check of
 * data[0..len) into rep. */
int gt_check_ctx_init(struct gt_ctx *c, const uint8_t *data, size_t len, unsigned flags,
		      struct gt_check_report *rep);
void gt_check_ctx_free(struct gt_ctx *c);

/* Records the first error: "<Event> at offset N: <rule>".  Returns 1. */
int gt_ctx_fail(struct gt_ctx *c, int type, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Which rule sets apply (see GT_CHECK_* in gt_check.h). */
int gt_ctx_viewer_rules(const struct gt_ctx *c);
int gt_ctx_design_rules(const struct gt_ctx *c);

/* Phases, in Go's order; each returns 0, 1 (invalid, error set) or -ENOMEM. */
int gt_check_decode(struct gt_ctx *c);     /* readTrace + parseEvents */
int gt_check_order(struct gt_ctx *c);      /* order1007 / order1005 */
int gt_check_futile(struct gt_ctx *c);     /* removeFutile */
int gt_check_state(struct gt_ctx *c, gt_goroutine_fn fn, void *arg); /* postProcessTrace + viewer rules */
int gt_check_go122(struct gt_ctx *c);      /* Go 1.22+ conversion, Go 1.23 viewer */

/* Pass 2 when streaming: order1007's merge of the Ps' runs (and of the
 * samples in c->ev), each event handed to sink in merged order.  0, 1
 * (ordering error, in c->rep), or what sink returned when not 0. */
typedef int (*gt_check_sink)(void *arg, struct gt_pev *e);
int gt_check_merge_stream(struct gt_ctx *c, gt_check_sink sink, void *arg);

/* order1007's check that the merged stream's time never goes back: e
 * comes right after prev.  0 or 1 (error set, saying "... out of order
 * <when>: ..."). */
int gt_check_later(struct gt_ctx *c, const struct gt_pev *prev, const struct gt_pev *e,
		   const char *when);

/* order1007's last part, one event at a time in merged order: a GoSysExit
 * takes its real exit time, which must follow its goroutine's last
 * GoSysBlock or GoInSyscall (last_block: g -> int64_t ts).  0, 1 (error
 * set) or -ENOMEM. */
int gt_check_sysexit(struct gt_ctx *c, struct gt_idmap *last_block, struct gt_pev *e);

/* The state pass one event at a time: open with the first event's time,
 * then every event in order, then close (end rules if viewer rules, the
 * goroutine report if fn).  Each returns 0, 1 (error set) or -ENOMEM. */
struct gt_state;
int gt_state_open(struct gt_ctx *c, int64_t min_ts, struct gt_state **out);
int gt_state_event(struct gt_state *s, struct gt_pev *e);
int gt_state_close(struct gt_state *s, int end_rules, gt_goroutine_fn fn, void *arg);

/* The Go 1.22+ pass one event at a time, likewise. */
struct gt_conv;
int gt_go122_open(struct gt_ctx *c, int64_t min_ts, struct gt_conv **out);
int gt_go122_event(struct gt_conv *v, const struct gt_pev *e);
/* The end rules when run is set; frees v either way. */
int gt_go122_close(struct gt_conv *v, int run);

/* A file mapping's pages count in the process's RSS once read: every
 * GT_RELEASE_EVERY bytes decoded, drop them (they come back from the page
 * cache if read again).  No-op unless c->mapped. */
#define GT_RELEASE_EVERY (16u << 20)
void gt_check_release(struct gt_ctx *c, uint64_t nbytes);

/* gt_check_run, telling whether data is a file mapping (gt_check_release). */
int gt_check_run_mapped(const uint8_t *data, size_t len, unsigned flags, int mapped,
			struct gt_check_report *rep, gt_goroutine_fn fn, void *arg);

/* The same with a re-sort window of that many events (tests: a small one
 * wraps the ring and sends files with moved GoSysExits to memory). */
int gt_check_run_window(const uint8_t *data, size_t len, unsigned flags, int mapped,
			uint32_t window, struct gt_check_report *rep, gt_goroutine_fn fn, void *arg);

/* The whole check in memory (every event decoded into c->ev). */
int gt_check_run_mem(const uint8_t *data, size_t len, unsigned flags,
		     struct gt_check_report *rep, gt_goroutine_fn fn, void *arg);

#endif
