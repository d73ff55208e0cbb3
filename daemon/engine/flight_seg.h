/* Segments of a flight recording (flight*.c only): records in chunks, the
 * snapshot the segment starts from, the stacks it used. */
#ifndef GT_ENGINE_FLIGHT_SEG_H
#define GT_ENGINE_FLIGHT_SEG_H

#include "flight.h"
#include "flight_codec.h"
#include "writer/gt_writer.h"

struct gt_flight_chunk {
	struct gt_flight_chunk *next;
	size_t len, cap;
	unsigned char data[];     /* records, encoded (flight_codec.h) */
};

struct gt_flight_seg {
	struct gt_flight_seg *next;
	uint64_t start_ts;        /* the snapshot's time */
	uint64_t last_ts;         /* the last record's */
	struct gt_thread_snapshot *snap;
	int nsnap;
	struct gt_flight_chunk *first, *last;
	uint64_t records;
	struct gt_idmap stacks;   /* (tgid, ustack, kstack, caller) -> blob * */
	struct gt_idmap ra;       /* (tgid, ustack) -> int */
	uint64_t bytes;           /* what it holds (chunks, snapshot, stacks) */
	int pins;                 /* dumps reading it (engine thread only) */
};

/* A resolved stack, copied with its strings: n frames, then the bytes
 * their func and file point into. */
struct gt_flight_frames {
	int n;
	size_t size;
	struct gt_frame f[];
};

struct gt_flight {
	struct gt_flight_opts o;
	struct gt_flight_params p;
	struct gt_flight_seg *head, *tail; /* oldest, current */
	struct gt_flight_seg *unlinked; /* dropped while a dump reads them:
					   freed when it is done */
	uint64_t seg_ns, seg_max, chunk_size;
	uint64_t held;
	struct gt_writer *lw;      /* the live model: its output is dropped */
	struct gt_translator *lt;
	struct gt_stack_source rec; /* the resolver, recording into tail */
	struct gt_flight_trig trig;
	struct gt_flight_codec enc; /* the current segment's encoder */
	uint64_t last_ts;
	int have_fired, pending, accepted_any;
	int have_held;                /* a held-off longer one to say */
	struct gt_flight_fired held_fi;
	uint64_t held_max_span;       /* the longest said since the last taken */
	int freezing;              /* a dump's cut: retain() waits */
	struct gt_flight_fired fired, pend;
	uint64_t last_accept_ts, last_span; /* the last taken: when, how long */
	unsigned triggered;        /* triggers accepted (for --max-dumps) */
	int dumping;               /* dumps begun and not ended */
	struct gt_flight_stats st;
};

/* flight_stacks.c.  A dump's stacks: the copies of the segments it
 * reads, the newest first. */
struct gt_flight_segs {
	struct gt_flight_seg **v;
	int n;
};
void gt_flight_stacks_init(struct gt_flight *f);
void gt_flight_replay_source(const struct gt_flight_segs *segs, struct gt_stack_source *out);
void gt_flight_seg_stacks_free(struct gt_flight_seg *s);

#endif
