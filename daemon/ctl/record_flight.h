/* `record --flight` (docs/design.md, "Flight recorder"): its options, and
 * the dumps of an embedded flight recording: named by time and trigger
 * from -o, written whole or not at all, announced on stderr. */
#ifndef GT_RECORD_FLIGHT_H
#define GT_RECORD_FLIGHT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "common/flight_opts.h"
#include "engine/session.h"

struct gt_session;

/* Set by SIGUSR1: dump the window now. */
extern volatile sig_atomic_t gt_record_dump_asked;

/* gt_flight_trigger_parse, gt_flight_size_parse: engine/session.h. */

/* The dump's path from -o FILE: FILE (less a .trace suffix), the local
 * time, the trigger's kind if any, ".trace"; a free name (-2, -3, ...). */
int gt_flight_dump_name(const char *out, const struct gt_flight_opts *o,
			const struct gt_flight_fired *mark, char *path, size_t len);

/* What the loop of an embedded flight recording does at each turn: says
 * what fired, writes what is due or asked (at_end: a trigger still waiting
 * for --after is written now).  Returns the dumps written, or -errno when
 * one could not be (said on stderr; nothing is left at its path). */
int gt_flight_tick(struct gt_session *s, const char *out, const struct gt_flight_opts *o,
		   int at_end);

#endif
