/* One P's event stream read again from the input, in bounded memory: a
 * first pass notes where each run of the P's records starts (just past a
 * Batch header, with the batch's clocks); a cursor then walks those runs
 * and parses the P's next event on demand.  Shared by the checker's
 * streaming merge and the analysis.  Not a public API. */
#ifndef GT_PCURSOR_H
#define GT_PCURSOR_H

#include <stdint.h>

#include "gt_parse.h"
#include "gt_reader.h"

/* A run of one P's records, from just past a Batch header. */
struct gt_pseg {
	uint64_t off;
	int64_t base_ts, base_seq; /* the Batch's clocks (seq: 1.5 only) */
	uint32_t next;             /* next run of the same P, or UINT32_MAX */
};

/* Every P's runs, in file order; a P chains its own from first to last. */
struct gt_psegs {
	struct gt_pseg *v;
	uint32_t n, cap;
};

/* Appends a run of the P whose chain is *first..*last (both UINT32_MAX
 * while it has none).  0 or -ENOMEM. */
int gt_psegs_add(struct gt_psegs *s, uint32_t *first, uint32_t *last, uint64_t off,
		 int64_t base_ts, int64_t base_seq);
void gt_psegs_free(struct gt_psegs *s);

/* A P's position in its runs, and its next event once filled. */
struct gt_pcursor {
	uint32_t seg;          /* current run, or UINT32_MAX: the P is done */
	uint64_t pos;
	uint32_t src;          /* the P's index among the streams (head.src) */
	struct gt_pstate st;
	uint64_t nread;        /* bytes of records read (Batch headers aside) */
	struct gt_pev head;
	int has_head;
};

/* Starts the cursor of P p, stream src, at its first run (UINT32_MAX:
 * none). */
void gt_pcursor_start(struct gt_pcursor *k, const struct gt_psegs *s, uint32_t first,
		      int64_t p, uint32_t src);

/* A CPU sample met on the way, already fixed up; 0 or what stops the fill. */
typedef int (*gt_pcursor_sample_fn)(void *arg, const struct gt_pev *e);

/* Brings the P's next event other than a CPU sample to k->head (has_head
 * set) unless it has none left; samples go to sample (if not NULL), and
 * their time delta moves the P's clock as in Go 1.19.  rd is any reader
 * opened on the input (its position is moved), raw its scratch record.
 * 0, -EINVAL if the input does not read (the first pass read it, so
 * never), or what sample returned. */
int gt_pcursor_fill(struct gt_pcursor *k, const struct gt_psegs *s, struct gt_reader *rd,
		    struct gt_raw_event *raw, gt_pcursor_sample_fn sample, void *arg);

#endif
