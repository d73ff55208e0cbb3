/* A session's window: the span of time its trace covers, from the snapshot
 * (for a launched command: from its exec) to the end of the recording.
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

#include "sym/symbolize.h"

void gt_session_window_open(struct gt_session *s, uint64_t ts)
{
	s->started_ns = ts;
	s->end_ns = s->duration_ns && ts + s->duration_ns > ts ? ts + s->duration_ns : UINT64_MAX;
}

/* `record -- CMD`: the command is forked from the recorder and held until
 * the session runs; until its exec it runs the recorder's code, whose
 * frames are not the command's.  The trace begins at the exec, with the
 * maps of the new image only (the symbolizer keeps old mappings for
 * stacks taken before an exec: here there are none to keep). */
static int begins_here(struct gt_session *s, const struct gt_kev_hdr *ev)
{
	struct gt_engine *e = s->engine;

	if (ev->type != GT_KEV_EXEC || !gt_idmap_has(&s->awaiting_exec, ev->tgid))
		return 0;
	gt_idmap_free(&s->awaiting_exec);
	/* with the perf records, the recorder's maps went at the exec
	 * (mmaps.c), and the new image's, recorded since, stay */
	if (gt_capture_mmap_unavailable(e->capture))
		gt_symbolizer_forget_process(e->sym, (pid_t)ev->tgid);
	gt_symbolizer_add_process(e->sym, (pid_t)ev->tgid);
	gt_session_window_open(s, ev->ts);
	return 1;
}

/* Whether ev belongs in the session's trace.  The translator begins (with
 * no snapshot) at the first event it gets: for a launched command, the
 * exec, which makes its goroutine. */
int gt_session_in_window(struct gt_session *s, const struct gt_kev_hdr *ev)
{
	if (s->awaiting_exec.count && !begins_here(s, ev))
		return 0;
	return ev->ts >= s->started_ns && ev->ts <= s->end_ns;
}

/* The last target exited at ts: nothing of theirs comes later. */
void gt_session_targets_gone(struct gt_session *s, uint64_t ts)
{
	if (ts < s->end_ns)
		s->end_ns = ts;
}

/* The recording stops now: the end is now, unless it came earlier.  A
 * launched command that never exec'd has an empty window. */
void gt_session_window_close(struct gt_session *s, uint64_t now)
{
	if (s->awaiting_exec.count) {
		gt_idmap_free(&s->awaiting_exec);
		gt_session_window_open(s, now);
	}
	if (now < s->end_ns)
		s->end_ns = now;
	if (s->end_ns < s->started_ns)
		s->end_ns = s->started_ns;
}
