/* What `gotracectl record` shows the user: live progress on a terminal and
 * the one-line summary at the end. */
#ifndef GT_RECORD_UI_H
#define GT_RECORD_UI_H

#include <stdint.h>

struct gt_record_figures {
	uint64_t elapsed_ns;  /* the trace's span: its start to its end */
	uint64_t wall_ns;     /* the whole run, starting and stopping included */
	uint64_t threads;
	uint64_t events;      /* Go trace events written */
	uint64_t bytes;
	uint64_t drops;
};

struct gt_progress {
	int enabled;          /* stderr is a terminal and not --quiet */
	uint64_t last_ns;
	int shown;
};

void gt_progress_init(struct gt_progress *p, int quiet);
/* Redraws the progress line at most twice a second. */
void gt_progress_show(struct gt_progress *p, const struct gt_record_figures *f);
void gt_progress_clear(struct gt_progress *p);

/* CLOCK_MONOTONIC now, for wall_ns. */
uint64_t gt_record_clock_ns(void);

void gt_record_summary(const struct gt_record_figures *f, const char *reason,
		       const char *path);

#endif
