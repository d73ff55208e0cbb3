/* What `gotracectl record` shows the user: live progress on a terminal and
 * the one-line summary at the end. */
#ifndef GT_RECORD_UI_H
#define GT_RECORD_UI_H

#include <stdint.h>

#include "common/session_opts.h"

/* The session's counters, whichever mode ran it (GT_SESSION_COUNTERS_COPY
 * from the engine's stats or the daemon's messages). */
struct gt_record_figures {
	GT_SESSION_COUNTER_FIELDS   /* elapsed_ns: the trace's span, start to end */
	uint64_t wall_ns;           /* the whole run, starting and stopping included */
	uint64_t launched_ns;       /* CLOCK_MONOTONIC: `record` began */
	int embedded;               /* the BPF programs were loaded here: */
	uint64_t load_check_ns, load_open_ns, load_ns, load_probe_ns, load_total_ns;
	uint64_t load_maps_ns, load_progs_ns[2], load_mem_ns, load_rings_ns; /* of load_ns:
				     * see gt_engine_timing */
	uint64_t verified_insns;
	uint64_t reap_ns;           /* -- CMD: the command waited for */
	uint64_t commit_ns;         /* the file synced and put at its path */
	uint64_t unload_ns;         /* ...and unloaded (the session freed, the engine closed) */
};

struct gt_progress {
	int enabled;          /* stderr is a terminal and not --quiet */
	uint64_t last_ns;
	int shown;
	int stopping;         /* "stopping…" is shown: nothing redraws it */
	int quiet;
	int cost_told;        /* the probed-call cost line is printed */
};

void gt_progress_init(struct gt_progress *p, int quiet);
/* Redraws the progress line at most twice a second; the first time the
 * figures carry what a probed malloc costs, says it (terminal or not). */
void gt_progress_show(struct gt_progress *p, const struct gt_record_figures *f);
/* Replaces the line by "stopping…" (once; the teardown, detaching probes
 * included, can take a moment: the line must not look frozen). */
void gt_progress_stopping(struct gt_progress *p);
void gt_progress_clear(struct gt_progress *p);

void gt_record_summary(const struct gt_record_figures *f, const char *reason,
		       const char *path);
/* -v: how long starting took (from launched_ns to the trace's first
 * instant) and stopping (from its last instant to done_ns, the file
 * complete), by phase. */
void gt_record_timing(const struct gt_record_figures *f, uint64_t done_ns);

#endif
