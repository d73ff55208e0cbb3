/* A session's window: the span of time its trace covers, from the snapshot
 * to the end of the recording.
 *
 * The end is the earliest of: the start plus the duration (-d), the exit
 * of the last target, the moment the stop was asked (Ctrl-C, SIGTERM,
 * `gotracectl stop`, an error).  What the rings still hold then is
 * translated if it is stamped at or before the end, and dropped if it is
 * stamped after it: written with an earlier stamp, it would show at a time
 * it did not happen.  The closing events (every G descheduled, every P
 * stopped, the last heap values) carry the end time, not the time the file
 * is finished: detaching probes can take seconds that were not recorded.
 *
 * The file's order holds: every event the translator gets is stamped at or
 * before the end, and its clock only moves forward (a late event is
 * clamped forward, never back), so the closing events never go back in
 * time on any P. */
#include "internal.h"

void gt_session_window_open(struct gt_session *s, uint64_t ts)
{
	s->started_ns = ts;
	s->end_ns = s->duration_ns && ts + s->duration_ns > ts ? ts + s->duration_ns : UINT64_MAX;
}

/* Whether ev belongs in the session's trace. */
int gt_session_in_window(struct gt_session *s, const struct gt_kev_hdr *ev)
{
	return ev->ts >= s->started_ns && ev->ts <= s->end_ns;
}

/* The last target exited at ts: nothing of theirs comes later. */
void gt_session_targets_gone(struct gt_session *s, uint64_t ts)
{
	if (ts < s->end_ns)
		s->end_ns = ts;
}

/* The recording stops now: the end is now, unless it came earlier. */
void gt_session_window_close(struct gt_session *s, uint64_t now)
{
	if (now < s->end_ns)
		s->end_ns = now;
	if (s->end_ns < s->started_ns)
		s->end_ns = s->started_ns;
}
