/* gotracectl record: parse, open the output, start the command if any,
 * record through the daemon when one answers (or embedded), then commit the
 * finished trace or discard the unfinished one. */
#include "commands.h"
#include "record_run.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client.h"
#include "pod_name.h"
#include "record_flight.h"
#include "common/clock.h"
#include "common/cgroup_resolve.h"
#include "common/conmon.h"

volatile sig_atomic_t gt_record_interrupted;

static void on_signal(int sig)
{
	(void)sig;
	gt_record_interrupted = 1;
}

static void on_usr1(int sig)
{
	(void)sig;
	gt_record_dump_asked = 1;
}

static void install_signals(int flight)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: poll must return EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN); /* a closed pipe is an EPIPE write error */
	if (flight) {
		/* perf's habit: SIGUSR1 writes the flight recorder's window */
		sa.sa_handler = on_usr1;
		sigaction(SIGUSR1, &sa, NULL);
	} /* else ignored, as in every gotracectl (gotracectl.c) */
}

int gt_record_release_child(struct gt_record_run *r)
{
	int err = gt_child_release(&r->child, r->opts->cmd[0], r->why, sizeof(r->why));

	if (err)
		r->have_child = 0;
	return err;
}

/* --container of what the cgroup tree does not name: a container's name,
 * or a container with no cgroup of its own (rootless Podman on a cgroup
 * v1 or hybrid host), both found by their conmon.  A name resolves to its
 * id's cgroup; a container with none to -p PID --children, said on stderr.
 * 0, 1 if conmon knows no such container (the caller reports the cgroup
 * search's miss), or -errno (reported). */
static int container_by_conmon(struct gt_record_opts *o)
{
	char err[512], id[128];
	pid_t conmon;
	int n, rc;

	rc = gt_conmon_find(o->container, id, sizeof(id), &conmon, err, sizeof(err));
	if (rc == -ENOENT)
		return 1;
	if (!rc && strncmp(id, o->container, strlen(o->container))) {
		/* a name: its id's cgroup, if it has one */
		rc = gt_cgroup_resolve_container(id, o->cgroup_path, sizeof(o->cgroup_path), err,
						 sizeof(err));
		if (rc != -ENOENT)
			goto out;
	}
	if (!rc || rc == -ENOENT)
		rc = gt_conmon_children(conmon, o->pids, GT_RECORD_MAX_PIDS, &n, err, sizeof(err));
	if (rc)
		goto out;
	o->npids = n;
	o->children = 1;
	if (!o->quiet)
		fprintf(stderr, "gotracectl: container %.12s has no cgroup of its own (rootless podman "
			"on cgroup v1, or --cgroups=disabled): recording its process %d and "
			"its descendants; `podman exec` sessions are not among them\n",
			id, (int)o->pids[0]);
out:
	if (rc)
		fprintf(stderr, "gotracectl: %s\n", err);
	return rc;
}

static int resolve_cgroup(struct gt_record_opts *o)
{
	char err[512];
	int rc;

	if (o->container) {
		rc = gt_cgroup_resolve_container(o->container, o->cgroup_path,
						 sizeof(o->cgroup_path), err, sizeof(err));
		if (rc == -ENOENT && (rc = container_by_conmon(o)) <= 0)
			return rc;
		if (rc == 1) {
			fprintf(stderr, "gotracectl: %s; nor does a conmon run a container of that "
				"id or name\n", err);
			return -ENOENT;
		}
	} else if (o->pod) {
		char uid[64];

		rc = strchr(o->pod, '/') ? gt_pod_uid_by_name(o->pod, uid, sizeof(uid), err, sizeof(err))
					 : (snprintf(uid, sizeof(uid), "%s", o->pod), 0);
		if (!rc)
			rc = gt_cgroup_resolve_pod(uid, o->cgroup_path, sizeof(o->cgroup_path), err,
						   sizeof(err));
	} else if (o->cgroup)
		rc = gt_cgroup_resolve_path(o->cgroup, o->cgroup_path,
					    sizeof(o->cgroup_path), err, sizeof(err));
	else
		return 0;
	if (rc) {
		fprintf(stderr, "gotracectl: %s\n", err);
		return rc;
	}
	return 0;
}

/* Ends the command we started if it outlived the recording (duration or
 * Ctrl-C), like `timeout` does, and reports how it ended. */
static void finish_child(struct gt_record_run *r)
{
	int status = 0;
	pid_t pid = r->child.pid;

	if (!r->have_child || pid <= 0)
		return;
	if (waitpid(pid, &status, WNOHANG) == 0) {
		kill(pid, SIGTERM);
		for (int i = 0; i < 20 && waitpid(pid, &status, WNOHANG) == 0; i++)
			usleep(100000);
		if (kill(pid, 0) == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
		}
	}
	if (WIFEXITED(status) && WEXITSTATUS(status))
		fprintf(stderr, "gotracectl: %s exited with status %d\n", r->opts->cmd[0], WEXITSTATUS(status));
	else if (WIFSIGNALED(status) && WTERMSIG(status) != SIGTERM)
		fprintf(stderr, "gotracectl: %s was killed by signal %d\n", r->opts->cmd[0], WTERMSIG(status));
}

static void hint_start(char *why, size_t len)
{
	size_t n = strlen(why);

	snprintf(why + n, len - n, ": start it (systemctl start gotraced, or gotraced as root), "
		 "or record as root without it (--standalone)");
}

/* Embedded.  A Go 1.22+ trace grows by whole generations (docs/format.md,
 * "Recording v2"): once its first is written it is named PATH.partial, as
 * in daemon mode, so that a recording killed (SIGKILL) leaves its completed
 * generations there, readable (record_embedded.c names it; before that a
 * kill leaves nothing, as for a v1 trace); the normal ends rename it to
 * PATH or remove it. */
static int embedded(struct gt_record_run *r)
{
	int rc = 0;

	if (r->opts->go_version >= GT_GO_1_22 && !r->opts->flight_on) {
		rc = gt_output_partial_free(&r->out, r->why, sizeof(r->why));
		r->partial_pending = !rc;
	}
	return rc ? rc : gt_record_embedded(r);
}

/* Daemon when one answers (unless --standalone); embedded otherwise
 * (unless --daemon). */
static int run(struct gt_record_run *r)
{
	struct gt_record_opts *o = r->opts;
	char err[512];
	int sock, rc;

	if (o->mode == GT_MODE_STANDALONE || o->flight_on)
		return embedded(r);
	sock = gt_client_connect(o->socket, err, sizeof(err));
	if (sock >= 0) {
		rc = gt_output_name_partial(&r->out, r->why, sizeof(r->why));
		if (!rc)
			rc = gt_record_via_daemon(r, sock);
		close(sock);
		return rc;
	}
	if (o->mode == GT_MODE_DAEMON || (sock != -ENOENT && sock != -ECONNREFUSED)) {
		snprintf(r->why, sizeof(r->why), "%s", err);
		if (o->mode == GT_MODE_DAEMON && (sock == -ENOENT || sock == -ECONNREFUSED))
			hint_start(r->why, sizeof(r->why));
		return sock;
	}
	rc = embedded(r);
	if ((rc == -EPERM || rc == -EACCES) && geteuid() != 0) {
		/* not root, and no daemon: say that, not only what failed */
		snprintf(r->why, sizeof(r->why), "%s", err);
		hint_start(r->why, sizeof(r->why));
	}
	return rc;
}

/* The end of a flight recording: its dumps, and what it held (the
 * segments kept, the kernel records in them as daemon status counts them
 * and all it read, their span, the bytes against the cap). */
static void flight_summary(const struct gt_record_run *r)
{
	const struct gt_flight_stats *f = &r->flight;

	fprintf(stderr, "gotracectl: flight recording ended (%s) after %.2fs: %u dump%s written, "
		"%" PRIu64 " triggers taken, %" PRIu64 " ignored (%" PRIu64 " longer than the one "
		"taken before them); held %" PRIu64 " bytes (cap %" PRIu64 ") in %" PRIu64
		" segments (%" PRIu64 " records of %" PRIu64 " read) over %.2fs, %" PRIu64
		" dropped; %" PRIu64 " events lost by the kernel\n",
		r->reason[0] ? r->reason : "stopped", r->fig.elapsed_ns / 1e9, r->dumps,
		r->dumps == 1 ? "" : "s", f->fired, f->ignored, f->held_longer, f->held_bytes,
		(uint64_t)(r->opts->flight.size_bytes ? r->opts->flight.size_bytes
						      : GT_FLIGHT_DEFAULT_SIZE),
		f->segments, f->records, r->fig.kernel_events, f->span_ns / 1e9, f->dropped,
		r->fig.drops);
	/* "0 dumps" alone would not tell a quiet target from a misspelt name */
	for (int i = 0; i < r->opts->flight.ntriggers; i++)
		if (!(f->names_seen & (1u << i)))
			fprintf(stderr, "gotracectl: trigger %s never applied: no thread named %s, nor "
				"of a process named so, was seen running\n",
				r->opts->flight.triggers[i].spec, r->opts->flight.triggers[i].name);
}

void gt_record_started(struct gt_record_run *r)
{
	if (r->gotrace && gt_gotrace_start(r->gotrace))
		fprintf(stderr, "gotracectl: --go-trace: %s\n", r->gotrace->why);
}

/* --go-trace: the kernel's side goes to a file beside OUT, the merge to
 * OUT; 0 or 1 (said why). */
static int gotrace_setup(struct gt_record_opts *o, struct gt_gotrace *g, char *kpath, size_t len)
{
	if (gt_gotrace_init(g, o->go_trace, o->duration_ns) ||
	    snprintf(kpath, len, "%s.kernel-%d", o->out, (int)getpid()) >= (int)len) {
		fprintf(stderr, "gotracectl: --go-trace URL or -o FILE too long\n");
		return 1;
	}
	o->out = kpath;
	/* a backstop only: the recording ends once the fetch is over
	 * (gt_gotrace_over), which its timeout bounds */
	o->duration_ns += GT_GOTRACE_MARGIN_NS + (uint64_t)g->timeout_ms * 1000000ull;
	return 0;
}

static int gotrace_end(struct gt_record_run *r, const char *kpath, const char *out)
{
	int rc = gt_gotrace_finish(r->gotrace, kpath, out);

	if (rc)
		fprintf(stderr, "gotracectl: the kernel's recording is kept at %s\n", kpath);
	else
		unlink(kpath);
	return rc;
}

int cmd_record(int argc, char **argv)
{
	static struct gt_gotrace gotrace;
	static char kpath[4200];
	struct gt_record_opts opts;
	struct gt_record_run r;
	const char *final_out;
	uint64_t launched = gt_now_ns(), started, committing, done;
	int rc = gt_record_parse(argc, argv, &opts);

	if (rc)
		return rc == 1 ? 0 : 2;
	if (resolve_cgroup(&opts) || gt_record_check_names(&opts))
		return 1;
	if (opts.detach)
		return gt_record_detached(&opts);
	memset(&r, 0, sizeof(r));
	r.opts = &opts;
	final_out = opts.out;
	if (opts.go_trace) {
		if (gotrace_setup(&opts, &gotrace, kpath, sizeof(kpath)))
			return 1;
		r.gotrace = &gotrace;
	}
	r.fig.launched_ns = launched;
	install_signals(opts.flight_on);
	if (gt_output_open(&r.out, opts.out, r.why, sizeof(r.why))) {
		fprintf(stderr, "gotracectl: %s\n", r.why);
		return 1;
	}
	if (opts.cmd) {
		r.child.heap_interpose = opts.heap == GT_HEAP_INTERPOSE;
		r.child.alloc_every = opts.alloc_stack_every;
		if (gt_child_prepare(&r.child, opts.cmd, r.why, sizeof(r.why))) {
			fprintf(stderr, "gotracectl: %s\n", r.why);
			gt_output_discard(&r.out);
			return 1;
		}
		r.have_child = 1;
		opts.pids[0] = r.child.pid;
		opts.npids = 1;
	}
	gt_record_warn_children(&opts);
	started = gt_now_ns();
	rc = run(&r);
	r.fig.wall_ns = gt_now_ns() - started;
	if (r.have_child && r.child.go_fd >= 0)
		gt_child_abort(&r.child); /* never released: the session failed */
	committing = gt_now_ns();
	finish_child(&r);
	r.fig.reap_ns = gt_now_ns() - committing;
	committing += r.fig.reap_ns;
	if (!rc && !opts.flight_on)
		rc = gt_output_commit(&r.out, r.why, sizeof(r.why));
	else
		gt_output_discard(&r.out); /* --flight: only its dumps are files */
	done = gt_now_ns(); /* the file is complete */
	r.fig.commit_ns = done - committing;
	if (rc) {
		fprintf(stderr, "gotracectl: %s\n", r.why[0] ? r.why : strerror(-rc));
		return 1;
	}
	if (opts.flight_on)
		flight_summary(&r);
	else
		gt_record_summary(&r.fig, r.reason, opts.out);
	if (r.gotrace && gotrace_end(&r, kpath, final_out))
		return 1;
	if (opts.verbose)
		gt_record_timing(&r.fig, done);
	return 0;
}
