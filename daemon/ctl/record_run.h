/* One run of `gotracectl record`, shared by its embedded mode
 * (record_embedded.c: the engine in this process) and its daemon mode
 * (record_daemon.c: a session in gotraced). */
#ifndef GT_RECORD_RUN_H
#define GT_RECORD_RUN_H

#include <signal.h>

#include "child_launch.h"
#include "record_gotrace.h"
#include "record_opts.h"
#include "record_ui.h"
#include "trace_output.h"

struct gt_record_run {
	struct gt_record_opts *opts;
	struct gt_output out;
	int partial_pending;         /* embedded v2: named PATH.partial once it
				      * holds a generation (record.c) */
	struct gt_child child;       /* -- CMD: held until the session runs */
	int have_child;
	struct gt_record_figures fig;
	char reason[1100];           /* why the recording ended */
	char why[1100];              /* what failed, for the user */
	unsigned dumps;              /* --flight: files written */
	struct gt_flight_stats flight; /* --flight: what it held at the end */
	struct gt_gotrace *gotrace;  /* --go-trace: fetched once the session
				      * records (gt_record_started) */
};

/* The session records now: starts what waits for it (--go-trace). */
void gt_record_started(struct gt_record_run *r);

/* Set by SIGINT/SIGTERM: end the recording cleanly. */
extern volatile sig_atomic_t gt_record_interrupted;

/* Both return 0 when the trace is complete (the caller commits it), or
 * -errno with r->why filled (the caller discards it). */
int gt_record_embedded(struct gt_record_run *r);
int gt_record_via_daemon(struct gt_record_run *r, int sock);

/* record_detach.c: --flight --detach; the exit status (0: the session's
 * ID printed on stdout; 1: why not, on stderr). */
int gt_record_detached(struct gt_record_opts *o);

/* -- CMD mode: lets the held child exec; 0 or -errno (r->why says). */
int gt_record_release_child(struct gt_record_run *r);
/* record_select.c: says on stderr which existing child processes of the
 * -p targets are left out (without --children). */
void gt_record_warn_children(const struct gt_record_opts *o);
/* -n NAME without --wait: 0 if a process has one of the names, else
 * -ESRCH with the reason printed. */
int gt_record_check_names(const struct gt_record_opts *o);

#endif
