/* Shared by the gt_analyze*.c files only: the id maps, the dictionaries and
 * the Ps (their runs of records and cursors, gt_pcursor.h).  Not a public
 * API. */
#ifndef GT_ANALYZE_INTERNAL_H
#define GT_ANALYZE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "gt_analyze.h"
#include "wire/gt_parse.h"
#include "wire/gt_pcursor.h"
#include "wire/gt_reader.h"
#include "util/gt_grow.h"
#include "util/gt_idmap.h"
#include "util/gt_strset.h"

/* Indexes keyed by three 64-bit words, on the one id map (a zeroed
 * struct is an empty index). */
/* The index stored for key, or -1. */
int64_t gt_an_map_get(const struct gt_idmap *m, uint64_t a, uint64_t b, uint64_t c);
/* Stores v for key (replacing); -ENOMEM. */
int gt_an_map_put(struct gt_idmap *m, uint64_t a, uint64_t b, uint64_t c, uint32_t v);
void gt_an_map_free(struct gt_idmap *m);

struct gt_an_str {
	uint64_t off;
	uint32_t len;
};

struct gt_an_stk {
	uint64_t off;    /* the Stack record, decoded again when needed (v2:
			  * until its frames are copied) */
	int32_t sys;     /* syscall name index; -1 not computed yet */
	uint64_t end;    /* v2: the end of the Stack's batch */
	uint32_t gen;    /* v2: the generation whose strings name its frames */
	uint32_t fr, nfr; /* v2: its frames, priv->frames[fr..fr+nfr) */
};

/* A v2 stack's frame, copied (the file's bytes are let go generation by
 * generation): its function and file names interned in priv->fnames. */
struct gt_an_fr {
	uint64_t pc, line;
	uint64_t fn, file; /* ids in priv->fnames, 0: none */
};

/* A P: where its runs of records lie (pass 1), its cursor in them (pass 2). */
struct gt_an_proc {
	int64_t p;
	uint32_t first, last; /* its runs in priv->segs, or UINT32_MAX */
	struct gt_pcursor cur;
};

struct gt_an_priv {
	const uint8_t *data;
	size_t len;
	struct gt_reader rd;          /* opened on data; copied with pos set */
	struct gt_raw_event *raw;
	struct gt_analyze_opts opts;
	int64_t min_ts;
	int has_min;
	uint64_t gomaxprocs;          /* the last Gomaxprocs (0: none yet) */
	double ns_per_tick;

	struct gt_idmap strings, stacks, gs, aggmap, pmap;
	struct gt_an_str *strs;
	size_t nstrs, capstrs;
	struct gt_an_stk *stks;
	size_t nstks, capstks;
	struct gt_psegs segs;
	struct gt_an_proc *procs;
	size_t nprocs, capprocs;
	size_t capthreads, capaggs, capnames, capgoros, capthrottles;
	int v2;                       /* a Go 1.22+ file (gt_analyze_v2*.c) */
	/* v2: the frames of every stack, named when their generation's
	 * strings are read (gt_an_v2_name_stacks); stks[0..named) are */
	struct gt_an_fr *frames;
	size_t nframes, capframes, named;
	struct gt_strset fnames;
	int seen_gomaxprocs;          /* Go 1.23's converter: init is over */
	int64_t last123_ns;           /* its last event's time */
};

/* Pass 1: dictionaries, segments, frequency, first timestamp. */
int gt_an_index(struct gt_analysis *a);
/* Pass 2: the merged events, each handed to gt_an_event. */
int gt_an_merge(struct gt_analysis *a);
/* The state machine; ns = event time since the first event. */
int gt_an_event(struct gt_analysis *a, const struct gt_pev *e, int64_t ns);
/* The Go viewers' profile models (gt_analyze_viewers.c); in: the event is
 * in the window. */
int gt_an_viewers(struct gt_analysis *a, const struct gt_pev *e, int64_t ns, int in);
/* A CPU sample (outside the merge: its order does not matter). */
int gt_an_sample(struct gt_analysis *a, const struct gt_pev *e);
/* A UserLog of g at ns, key and value as the file has them (not
 * NUL-terminated): kept in a->marks if its key is opts.mark_key. */
void gt_an_user_log(struct gt_analysis *a, uint64_t g, int64_t ns, const char *key,
		    size_t keylen, const char *val, size_t vallen);
/* Closes what is open at the end of the trace. */
void gt_an_finish(struct gt_analysis *a);

int64_t gt_an_ns(const struct gt_analysis *a, int64_t ts);
/* The thread for g, created if new; NULL if memory ran out. */
struct gt_an_thread *gt_an_thread_get(struct gt_analysis *a, uint64_t g);

/* gt_analyze_goid.c: a UserLog (key, value) of goroutine g, which may
 * name the Go goroutine its next stop stops; and that stop's off-CPU time
 * ending (t->stop_goid set).  0 or -ENOMEM. */
int gt_an_goid_log(struct gt_analysis *a, uint64_t g, const char *key, size_t klen,
		   const char *val, size_t vlen);
int gt_an_throttle_log(struct gt_analysis *a, uint64_t g, const char *val, size_t vlen);
void gt_an_throttle_end(struct gt_analysis *a, struct gt_an_thread *t, uint64_t off);
int gt_an_goid_stop_end(struct gt_analysis *a, struct gt_an_thread *t, int reason, uint64_t off);
/* Adds to the stack aggregate (g, kind, stk); -ENOMEM. */
int gt_an_agg_add(struct gt_analysis *a, uint64_t g, uint64_t kind, uint64_t stk,
		  uint64_t weight);
/* The syscall name index of a GoSysCall stack; -ENOMEM. */
int32_t gt_an_stack_sysname(struct gt_analysis *a, uint64_t stk);
/* The string with this id, or NULL. */
const char *gt_an_string(const struct gt_analysis *a, uint64_t id, size_t *len);

/* ---- Go 1.22+ (v2) files (gt_analyze_v2*.c, gt_analyze_v2_run.h) ---- */
/* Both passes over a v2 file: its generations, translated (0, -EINVAL with
 * a->error naming the rule, -ENOMEM). */
int gt_an_v2(struct gt_analysis *a);
/* String id of generation gen (ordinal from 1; only the generation being
 * read has its strings), or NULL. */
const char *gt_an_string_v2(const struct gt_analysis *a, uint64_t id, uint32_t gen, size_t *len);
/* The frames of a v2 stack (index i of priv->stks). */
size_t gt_an_stack_v2(const struct gt_analysis *a, int64_t i, struct gt_an_frame *out, size_t max);
/* A GoStatusStack with a stack: Go 1.23's viewers track that transition
 * (status: GT_V2_G_*). */
int gt_an_viewers_status(struct gt_analysis *a, uint64_t g, int status, int64_t ns);
/* v2: goroutine g runs at ns (Go 1.23's summary start, the first). */
int gt_an_viewers_started(struct gt_analysis *a, uint64_t g, int64_t ns);
/* A syscall of g that did not block returned at ns (GoSyscallEnd). */
int gt_an_syscall_end(struct gt_analysis *a, uint64_t g, int64_t ns);

#endif
