/* A session's flight recording (docs/design.md, "Flight recorder"): the
 * kernel records of the last WINDOW kept in memory in segments, each
 * beginning with a snapshot of every thread, the stacks each segment used
 * resolved at the time; a dump runs a fresh translator and writer over the
 * kept segments, so each file stands alone.  Engine-private (session*.c). */
#ifndef GT_ENGINE_FLIGHT_H
#define GT_ENGINE_FLIGHT_H

#include <stddef.h>
#include <stdint.h>

#include "common/flight_opts.h"
#include "translate/translate.h"
#include "util/gt_idmap.h"

struct gt_flight;
struct gt_titles;

/* Triggers (flight_trigger.c): per thread, when it went to sleep or became
 * runnable. */
struct gt_flight_trig {
	struct gt_idmap threads;
	uint32_t names_seen;     /* bit i: trigger i's @NAME seen switching */
};
void gt_flight_trig_init(struct gt_flight_trig *tr);
void gt_flight_trig_free(struct gt_flight_trig *tr);
/* 1 when ev (an aligned record of the session mask) makes a trigger fire
 * (*out says which, where, when), else 0. */
int gt_flight_trig_event(struct gt_flight_trig *tr, const struct gt_flight_opts *o,
			 uint32_t mask, const struct gt_kev_hdr *ev, struct gt_flight_fired *out);

struct gt_flight_params {
	const struct gt_flight_opts *opts;
	int ncpus;
	int go_version;
	uint32_t mask;
	const struct gt_stack_source *stacks;  /* the engine's resolver */
	const struct gt_title_source *titles;
	const struct gt_titles *title_cache;   /* copied for a dump's thread */
};


int gt_flight_new(struct gt_flight **out, const struct gt_flight_params *p);
void gt_flight_free(struct gt_flight *f);

/* The first segment, from the snapshot the recording starts with. */
int gt_flight_begin(struct gt_flight *f, uint64_t ts, const struct gt_thread_snapshot *threads,
		    int n);

/* One record of the session (in time order); 0 or -errno (out of memory:
 * the recording fails). */
int gt_flight_event(struct gt_flight *f, const struct gt_kev_hdr *ev, size_t len);

/* A trigger accepted since the last call, else one not taken though
 * longer than the one taken before it (out->held): 1 and *out, else 0. */
int gt_flight_fired(struct gt_flight *f, struct gt_flight_fired *out);
/* The accepted trigger whose --after has passed (by the records' time or by
 * now, CLOCK_MONOTONIC; or at once with force): 1 and *out, else 0. */
int gt_flight_due(struct gt_flight *f, uint64_t now, int force, struct gt_flight_fired *out);

/* Writes the window to fd as one trace (marked with what fired, if mark),
 * ending at now (CLOCK_MONOTONIC, as the records; the last record if that
 * is later: 0 for it): without a mark, the WINDOW up to now, quiet time
 * included (a target idle since is shown idle, not its last busy window);
 * with one, every segment kept (the window before the trigger).  0 or
 * -errno with why. */
int gt_flight_dump(struct gt_flight *f, int fd, const struct gt_flight_fired *mark, uint64_t now,
		   char *why, size_t whylen);
/* The same, written with as's file-system ids (a user's file; NULL: ours),
 * on a thread of its own while the caller calls pump(pump_ctx) (reads the
 * rings: gt_flight_event goes on meanwhile) until it is done; without a
 * pump, on the caller's thread.  Records read after the call are not in
 * it. */
struct gt_fs_ids;
int gt_flight_dump_as(struct gt_flight *f, int fd, const struct gt_flight_fired *mark,
		      const struct gt_fs_ids *as, uint64_t now, void (*pump)(void *),
		      void *pump_ctx, char *why, size_t whylen);

/* The same in steps, for a caller that goes on with other work while the
 * dump is written (gotraced answers its clients): begin (the trace ends
 * at now; on a thread of its own if threaded and one can be made, else
 * written at once), done (1 once written: poll it
 * while reading the rings), end (waits for the thread, then 0 or -errno
 * with why).  Every dump begun is ended before gt_flight_free. */
struct gt_flight_dump;
int gt_flight_dump_begin(struct gt_flight *f, int fd, const struct gt_flight_fired *mark,
			 const struct gt_fs_ids *as, uint64_t now, int threaded,
			 struct gt_flight_dump **out, char *why, size_t whylen);
int gt_flight_dump_done(const struct gt_flight_dump *d);
int gt_flight_dump_end(struct gt_flight *f, struct gt_flight_dump *d, char *why, size_t whylen);

void gt_flight_stats(const struct gt_flight *f, struct gt_flight_stats *st);

#endif
