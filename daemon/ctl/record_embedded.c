/* Embedded mode: this process loads the BPF programs and runs the one
 * session itself (needs root or CAP_BPF + CAP_PERFMON). */
#include "record_run.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "engine/session.h"
#include "record_flight.h"
#include "v2/gt_v2.h" /* GT_V2_HEADER_LEN */

#define POLL_MS 100

static void note_load(struct gt_record_run *r, const struct gt_engine *e)
{
	struct gt_engine_timing t;

	gt_engine_timing(e, &t);
	r->fig.embedded = 1;
	r->fig.load_check_ns = t.kernel_check_ns;
	r->fig.load_open_ns = t.open_ns;
	r->fig.load_ns = t.load_ns;
	r->fig.load_maps_ns = t.maps_ns;
	memcpy(r->fig.load_progs_ns, t.progs_ns, sizeof(r->fig.load_progs_ns));
	r->fig.load_mem_ns = t.mem_ns;
	r->fig.load_rings_ns = t.rings_ns;
	r->fig.verified_insns = t.verified_insns;
	r->fig.load_probe_ns = t.probe_ns;
	r->fig.load_total_ns = t.total_ns;
}

/* The one session's options, known before the programs load. */
static void session_opts(struct gt_record_run *r, struct gt_session_opts *so)
{
	gt_record_session_opts(r->opts, so);
	so->out_fd = r->out.fd;
	so->owner_uid = getuid();
	so->owner_gid = getgid();
	so->owner_pid = getpid();
}

static int start_session(struct gt_record_run *r, struct gt_engine *e,
			 const struct gt_session_opts *so, struct gt_session **s)
{
	int err = gt_session_start(e, so, s);

	if (err)
		snprintf(r->why, sizeof(r->why), "%s", gt_engine_error(e));
	return err;
}

/* Whether the engine may end the session for its duration within the
 * next poll (it stops it inside gt_engine_poll). */
static int duration_due(const struct gt_record_run *r, const struct gt_session_stats *st)
{
	uint64_t d = r->opts->duration_ns;

	return d && st->elapsed_ns + POLL_MS * 1000000ull >= d;
}

/* --flight: what fired, what is due; a dump that fails ends the
 * recording (r->why says it was). */
static int flight_tick(struct gt_record_run *r, struct gt_session *s, int at_end)
{
	int n = gt_flight_tick(s, r->opts->out, &r->opts->flight, at_end);

	if (n < 0) {
		snprintf(r->why, sizeof(r->why), "a flight recording's dump failed (said above)");
		return n;
	}
	r->dumps += n;
	return 0;
}

/* Embedded v2: the file is named PATH.partial once it holds more than its
 * header (a whole generation: the encoder writes no less). */
static void name_partial(struct gt_record_run *r)
{
	struct stat st;
	int err;

	if (!r->partial_pending || fstat(r->out.fd, &st) < 0 || st.st_size <= GT_V2_HEADER_LEN)
		return;
	r->partial_pending = 0;
	err = gt_output_link_partial(&r->out);
	if (err && !r->opts->quiet)
		fprintf(stderr, "gotracectl: warning: cannot name the trace %s.partial while "
			"recording (%s): a SIGKILL would leave nothing\n", r->opts->out,
			strerror(-err));
}

static void record_loop(struct gt_record_run *r, struct gt_engine *e, struct gt_session *s,
			struct gt_progress *prog)
{
	struct gt_session_stats st = {0};
	uint64_t stats_ns = 0;

	while (!gt_session_ended(s) && !gt_record_interrupted && !gt_gotrace_over(r->gotrace)) {
		if (duration_due(r, &st))
			gt_progress_stopping(prog);
		int n = gt_engine_poll(e, POLL_MS);

		if (n < 0 && n != -EINTR) {
			snprintf(r->why, sizeof(r->why), "reading kernel events failed: %s", strerror(-n));
			break;
		}
		/* the figures at most every POLL_MS: a busy session's poll
		 * returns thousands of times a second, and the figures cost
		 * a map lookup per CPU (the drops) and a flight's walk */
		if (gt_now_ns() - stats_ns >= POLL_MS * 1000000ull) {
			stats_ns = gt_now_ns();
			gt_session_stats(s, &st);
			GT_SESSION_COUNTERS_COPY(&r->fig, &st);
			gt_progress_show(prog, &r->fig);
			name_partial(r); /* an fstat: not at every poll either */
		}
		if (r->opts->flight_on && flight_tick(r, s, 0))
			break;
	}
}

int gt_record_embedded(struct gt_record_run *r)
{
	struct gt_engine_opts eo = {0};
	struct gt_session_opts so;
	struct gt_engine *e = NULL;
	struct gt_session *s = NULL;
	struct gt_go_preread *pre = NULL;
	struct gt_session_stats st;
	struct gt_progress prog;
	uint64_t t0;
	int err;

	eo.ring_bytes_per_cpu = r->opts->ring_bytes;
	/* A dwarf stack copy is 8 KiB and its unwinding slow (docs/mapping.md,
	 * "Stacks without frame pointers"): larger rings by default ride out
	 * the bursts of a switch-heavy program (the demo's ping-pong). */
	eo.big_rings = r->opts->dwarf_stack_bytes != 0;
	eo.verbose = r->opts->verbose;
	eo.one_session = 1; /* memory tracking: only the programs it asks for */
	/* the syscall entry program is a seventh of the verifier's time at
	 * start: loaded only for the one session that wants it */
	eo.no_syscall_entries = !r->opts->all_syscalls;
	session_opts(r, &so);
	eo.only = &so; /* and what else it will not use */
	/* while the programs load: its first switches get goroutine ids */
	if (r->have_child)
		pre = gt_engine_go_preread(r->opts->cmd[0]);
	err = gt_engine_open(&e, &eo, r->why, sizeof(r->why));
	if (err) {
		gt_engine_go_preread_drop(pre);
		return err;
	}
	note_load(r, e);
	gt_engine_go_preread_wait(pre); /* the user's own file, read with progress */
	err = start_session(r, e, &so, &s);
	if (!err && r->have_child)
		err = gt_record_release_child(r);
	if (!err && r->have_child)
		gt_engine_exec_seen(e, (uint32_t)r->child.pid, pre); /* it has exec'd */
	else
		gt_engine_go_preread_drop(pre);
	if (err) {
		if (s)
			gt_session_free(s);
		gt_engine_close(e);
		return err;
	}
	r->why[0] = 0;
	gt_record_started(r);
	/* a flight recording says what fired and what it wrote instead */
	gt_progress_init(&prog, r->opts->quiet || r->opts->flight_on);
	record_loop(r, e, s, &prog);
	gt_progress_stopping(&prog);
	err = gt_session_stop(s, gt_record_interrupted ? "interrupted" : r->why[0] ? "error" : "stopped");
	gt_progress_clear(&prog);
	/* a trigger waiting for --after is written with what there is */
	if (r->opts->flight_on && !err && !r->why[0])
		flight_tick(r, s, 1);
	if (r->opts->flight_on && !err && r->why[0])
		err = -EIO;
	if (r->opts->flight_on)
		gt_session_flight_stats(s, &r->flight);
	gt_session_stats(s, &st);
	GT_SESSION_COUNTERS_COPY(&r->fig, &st);
	snprintf(r->reason, sizeof(r->reason), "%s", st.end_reason ? st.end_reason : "");
	if (err && !r->why[0])
		snprintf(r->why, sizeof(r->why), "%s", st.end_reason);
	t0 = gt_now_ns();
	gt_session_free(s);
	gt_engine_close(e);
	r->fig.unload_ns = gt_now_ns() - t0;
	return err;
}
