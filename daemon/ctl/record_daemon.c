/* Daemon mode: gotraced runs the session; this process passes it the
 * output descriptor, shows progress, and asks it to finish on Ctrl-C. */
#include "record_run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "client.h"

/* --cgroup / --container: this process opens the directory with its own
 * rights and passes it; the daemon never looks the path up for us. */
static int open_cgroup(struct gt_record_run *r, const char *path)
{
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		int err = -errno;

		snprintf(r->why, sizeof(r->why), "cannot open cgroup %s: %s", path, strerror(-err));
		return err;
	}
	return fd;
}

static int send_request(struct gt_record_run *r, int sock)
{
	struct gt_session_opts so;
	uint32_t id = 0;
	int cg = -1, err;

	gt_record_session_opts(r->opts, &so);
	if (so.cgroup_path && (cg = open_cgroup(r, so.cgroup_path)) < 0)
		return cg;
	err = gt_client_record(sock, &so, 1, r->out.fd, cg, &id, r->why, sizeof(r->why));
	if (cg >= 0)
		close(cg);
	return err;
}

/* The daemon went away (or spoke nonsense) before its DONE: it cannot
 * have finished the file, and the caller discards it.  Say so. */
static void say_lost(struct gt_record_run *r)
{
	size_t n = strlen(r->why);

	snprintf(r->why + n, sizeof(r->why) - n, " before the trace was finished (gotraced "
		 "stopped or crashed?): the recording is lost, nothing was saved at %s",
		 r->opts->out);
}

int gt_record_via_daemon(struct gt_record_run *r, int sock)
{
	struct gt_client_event ev;
	struct gt_progress prog;
	int err = send_request(r, sock), asked_stop = 0;

	if (!err && r->have_child)
		err = gt_record_release_child(r);
	if (err)
		return err;
	gt_record_started(r);
	gt_progress_init(&prog, r->opts->quiet);
	for (;;) {
		if ((gt_record_interrupted || gt_gotrace_over(r->gotrace)) && !asked_stop) {
			gt_client_finish(sock);
			gt_progress_stopping(&prog);
			asked_stop = 1;
		}
		err = gt_client_next(sock, 200, &ev, r->why, sizeof(r->why));
		if (err == -ETIMEDOUT || err == -EINTR)
			continue;
		if (err) {
			say_lost(r);
			break;
		}
		GT_SESSION_COUNTERS_COPY(&r->fig, &ev.stats);
		/* the daemon ends it for its duration: say so before it does */
		if (r->opts->duration_ns && !r->gotrace &&
		    r->fig.elapsed_ns + 500000000ull >= r->opts->duration_ns)
			gt_progress_stopping(&prog);
		gt_progress_show(&prog, &r->fig);
		if (ev.kind == GT_CLIENT_DONE) {
			snprintf(r->reason, sizeof(r->reason), "%s", ev.reason);
			err = ev.error;
			if (err)
				snprintf(r->why, sizeof(r->why), "the daemon could not finish the trace: %s",
					 ev.reason);
			break;
		}
	}
	gt_progress_clear(&prog);
	return err;
}
