/* A session's targets: processes by PID (and their descendants), a cgroup
 * v2 subtree, processes by name, or every process.  Attaching sets the BPF
 * filters first and reads /proc afterwards, so that nothing happening after
 * the snapshot is missed; events stamped before the snapshot's time are
 * dropped by the dispatcher.
 *
 * A cgroup, name or all-process session has an open set of targets
 * (s->by_cgroup): processes join it while it records, so it never ends
 * because "the targets exited". */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "common/parse_args.h"
#include "dwarf_stacks.h"
#include "proc_snapshot.h"
#include "common/proc_select.h"
#include "common/procfs.h"
#include "sym/symbolize.h"
#include "translate/translate.h"

#define CGROUP2_SUPER_MAGIC 0x63677270
#define MAX_CGROUP_DEPTH 64

struct snapshot {
	struct gt_thread_snapshot *threads;
	int n;
};

static int add_process_snapshot(struct snapshot *snap, pid_t pid)
{
	struct gt_thread_snapshot *t = NULL, *grown;
	int n = 0, err = gt_proc_snapshot(pid, &t, &n);

	if (err)
		return err;
	grown = realloc(snap->threads, (size_t)(snap->n + n) * sizeof(*t) + 1);
	if (!grown) {
		free(t);
		return -ENOMEM;
	}
	memcpy(grown + snap->n, t, (size_t)n * sizeof(*t));
	snap->threads = grown;
	snap->n += n;
	free(t);
	return 0;
}

static void see_process(struct gt_engine *e, pid_t pid)
{
	/* a process followed already: a new session's snapshot reads its
	 * maps again */
	if (gt_idmap_has(&e->symbolized, (uint32_t)pid))
		gt_symbolizer_add_process(e->sym, pid);
	else
		gt_engine_process_seen(e, (uint32_t)pid);
}

/* ptrace's rule for the session's owner (common/ptrace_rule.h): 0, or
 * -EPERM with why.  Root's sessions read nothing. */
static int may_follow(const struct gt_session *s, pid_t pid, char *why, size_t whylen)
{
	if (s->tracer.uid == 0)
		return 0;
	return gt_ptrace_may(&s->tracer, pid, why, whylen);
}

/* Adds the threads of pid to the snapshot, if the session's owner may
 * trace it: decided after /proc was read, so that what the snapshot holds
 * was the owner's to see (a process that gains privileges stays
 * privileged: a set-user-ID exec is undumpable until its next exec).
 * -EPERM (counted, nothing kept) when it may not, -ESRCH when it is gone. */
static int snapshot_followable(struct gt_session *s, struct snapshot *snap, pid_t pid)
{
	int before = snap->n, err = add_process_snapshot(snap, pid);
	char why[256];

	if (err)
		return err;
	err = may_follow(s, pid, why, sizeof(why));
	if (err) {
		snap->n = before;
		if (err == -EPERM)
			s->refused++;
	}
	return err;
}

/* Adds one process found in /proc (already in the BPF filter, for
 * sessions by name) to the initial snapshot; a process gone meanwhile is
 * fine, one the owner may not trace is left out (and out of the filter). */
static void take_found(struct gt_session *s, struct snapshot *snap, const struct gt_proc_entry *p)
{
	if (snapshot_followable(s, snap, p->pid)) {
		gt_capture_trace_tgid(s->engine->capture, (uint32_t)p->pid, s->bit, 0);
		return;
	}
	if (!p->kthread) /* no user memory to symbolize */
		see_process(s->engine, p->pid);
}

/* record -a: the BPF filter takes every task from now on, /proc gives the
 * ones already there; neither the recorder nor the client that asked (in
 * embedded mode, the same process). */
static int attach_all(struct gt_session *s, const struct gt_session_opts *o,
		      struct snapshot *snap)
{
	struct gt_engine *e = s->engine;
	struct gt_proc_entry *list;
	pid_t client = o->owner_pid > 0 && o->owner_pid != getpid() ? o->owner_pid : 0;
	int n, err = 0;

	s->by_cgroup = 1;
	if (client) /* before the bit: no event of the client is the session's */
		err = gt_capture_all_except(e->capture, (uint32_t)client, s->bit, 1);
	if (!err)
		err = gt_capture_trace_all(e->capture, s->bit, o->kernel_threads, 1);
	if (!err)
		err = gt_proc_list(&list, &n);
	if (err) {
		snprintf(e->err, sizeof(e->err), "cannot record every process: %s", strerror(-err));
		return err;
	}
	for (int i = 0; i < n; i++)
		if (list[i].pid != 2 && list[i].pid != getpid() && /* 2: kthreadd; not us */
		    list[i].pid != client &&
		    (!list[i].kthread || o->kernel_threads))
			take_found(s, snap, &list[i]);
	free(list);
	return 0;
}

/* record --name: new processes are recognised by BPF at their exec (by
 * comm), those already running here (by comm, exe or argv[0]). */
static int attach_names(struct gt_session *s, const struct gt_session_opts *o,
			struct snapshot *snap)
{
	struct gt_engine *e = s->engine;
	struct gt_proc_entry *list;
	int n, err = 0;

	s->by_cgroup = 1;
	for (int i = 0; i < o->nnames && !err; i++)
		err = gt_capture_trace_name(e->capture, o->names[i], s->bit, 1);
	if (!err)
		err = gt_proc_list(&list, &n);
	if (err) {
		snprintf(e->err, sizeof(e->err), "cannot record processes by name: %s", strerror(-err));
		return err;
	}
	for (int i = 0; i < n; i++) {
		int named = 0;

		for (int j = 0; j < o->nnames && !named && !list[i].kthread; j++)
			named = gt_proc_is_named(list[i].pid, o->names[j]);
		if (named && !gt_capture_trace_tgid(e->capture, (uint32_t)list[i].pid, s->bit, 1))
			take_found(s, snap, &list[i]);
	}
	free(list);
	return 0;
}

/* --children: the targets and their descendants alive now (the ones
 * forked later follow their parent in BPF).  *all is malloc'ed. */
static int with_descendants(struct gt_engine *e, const struct gt_session_opts *o,
			    pid_t **all, int *nall)
{
	struct gt_proc_entry *list;
	int n, found, err = gt_proc_list(&list, &n);

	*all = NULL;
	if (!err && !(*all = malloc(((size_t)n + (size_t)o->npids) * sizeof(pid_t))))
		err = -ENOMEM;
	if (err) {
		free(list);
		snprintf(e->err, sizeof(e->err), "cannot find the child processes: %s", strerror(-err));
		return err;
	}
	memcpy(*all, o->pids, (size_t)o->npids * sizeof(pid_t));
	found = gt_proc_descendants(list, n, o->pids, o->npids, *all + o->npids);
	free(list);
	if (found < 0) {
		free(*all);
		snprintf(e->err, sizeof(e->err), "cannot find the child processes: %s", strerror(-found));
		return found;
	}
	*nall = o->npids + found;
	return 0;
}

/* Attaches o's pids; those from index required on (descendants found in
 * /proc) may have exited meanwhile. */
static int attach_pid_list(struct gt_session *s, const struct gt_session_opts *o,
			   int required, struct snapshot *snap);

static int attach_pids(struct gt_session *s, const struct gt_session_opts *o,
		       struct snapshot *snap)
{
	struct gt_session_opts wide = *o;
	pid_t *all;
	int err;

	if (!o->children || o->from_exec)
		return attach_pid_list(s, o, o->npids, snap);
	err = with_descendants(s->engine, o, &all, &wide.npids);
	if (err)
		return err;
	wide.pids = all;
	err = attach_pid_list(s, &wide, o->npids, snap);
	free(all);
	return err;
}

static int attach_pid_list(struct gt_session *s, const struct gt_session_opts *o,
			   int required, struct snapshot *snap)
{
	struct gt_engine *e = s->engine;
	char why[256];

	if (o->npids <= 0) {
		snprintf(e->err, sizeof(e->err), "nothing to record: give PIDs, a cgroup or a command");
		return -EINVAL;
	}
	for (int i = 0; i < o->npids; i++) {
		pid_t pid = o->pids[i];
		int err = gt_args_target_pid(pid, why, sizeof(why));

		if (!err)
			err = may_follow(s, pid, why, sizeof(why));
		if (err && i >= required) {
			/* a descendant that exited since /proc was read, or
			 * one its owner may not trace (a set-user-ID child) */
			s->refused += err == -EPERM;
			continue;
		}
		if (!err) {
			err = gt_capture_trace_tgid(e->capture, (uint32_t)pid, s->bit, 1);
			if (!err && gt_idmap_add(&s->targets, (uint32_t)pid) < 0)
				err = -ENOMEM;
			if (!err && o->from_exec &&
			    gt_idmap_add(&s->awaiting_exec, (uint32_t)pid) < 0)
				err = -ENOMEM;
			if (err)
				snprintf(why, sizeof(why), "%s", strerror(-err));
		}
		if (err) {
			snprintf(e->err, sizeof(e->err), "cannot attach to pid %d: %s", (int)pid, why);
			return err;
		}
	}
	for (int i = 0; i < o->npids && !o->from_exec; i++) {
		pid_t pid = o->pids[i];
		int err;

		if (!gt_idmap_has(&s->targets, (uint32_t)pid))
			continue; /* left out above */
		err = snapshot_followable(s, snap, pid);
		if (err == -EPERM && i >= required) {
			/* it changed since: out of the filter, and not a target */
			gt_capture_trace_tgid(e->capture, (uint32_t)pid, s->bit, 0);
			gt_idmap_del(&s->targets, (uint32_t)pid);
			continue;
		}
		if (err == -ENOENT || err == -ESRCH)
			continue; /* exited meanwhile: its exit event ends it */
		if (err) {
			snprintf(e->err, sizeof(e->err), "cannot read the threads of pid %d: %s",
				 (int)pid, err == -EPERM ? "its owner may no longer trace it" :
				 strerror(-err));
			return err;
		}
		see_process(e, pid);
	}
	return 0;
}

/* Adds every process of the cgroup directory dir and of its children. */
static int snapshot_cgroup_tree(struct gt_session *s, const char *dir, int depth,
				struct snapshot *snap)
{
	char path[4096];
	FILE *f;
	DIR *d;
	struct dirent *de;
	int pid;

	if (depth > MAX_CGROUP_DEPTH)
		return 0;
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	/* a process gone meanwhile is fine; one its owner may not trace
	 * (root's, moved into a user's cgroup) is left out here, and BPF
	 * keeps its events out of the session; one it may is a member that a
	 * GT_KEV_LEAVE may end (session.c, process_left) */
	while (fscanf(f, "%d", &pid) == 1) {
		if (snapshot_followable(s, snap, pid))
			continue;
		see_process(s->engine, pid);
		if (s->tracer.uid != 0)
			gt_idmap_add(&s->targets, (uint32_t)pid);
	}
	fclose(f);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= sizeof(path))
			continue;
		snapshot_cgroup_tree(s, path, depth + 1, snap);
	}
	closedir(d);
	return 0;
}

static int attach_cgroup(struct gt_session *s, const char *path, struct snapshot *snap)
{
	struct gt_engine *e = s->engine;
	struct statfs fs;
	struct stat st;
	int err;

	if (statfs(path, &fs) < 0 || stat(path, &st) < 0) {
		err = -errno;
		snprintf(e->err, sizeof(e->err), "cannot use cgroup %s: %s", path, strerror(-err));
		return err;
	}
	if (fs.f_type != CGROUP2_SUPER_MAGIC || !S_ISDIR(st.st_mode)) {
		snprintf(e->err, sizeof(e->err), "cannot use cgroup %s: not a cgroup v2 directory", path);
		return -ENOTDIR;
	}
	s->by_cgroup = 1;
	s->cgroup_id = (uint64_t)st.st_ino;
	err = gt_capture_trace_cgroup(e->capture, s->cgroup_id, s->bit, 1);
	if (err) {
		snprintf(e->err, sizeof(e->err), "cannot trace cgroup %s: %s", path, strerror(-err));
		return err;
	}
	return snapshot_cgroup_tree(s, path, 0, snap);
}

_Static_assert(GT_MAX_DWARF_STACK == GT_DWARF_STACK_MAX, "one limit for the CLI and BPF");

/* --call-graph=dwarf: the engine's unwinder from the first session that
 * asks, then BPF copies this session's stacks. */
static int gt_session_dwarf_stacks(struct gt_session *s, unsigned bytes)
{
	struct gt_engine *e = s->engine;
	int err;

	if (bytes && !e->dwarf) {
		e->dwarf = gt_dwarf_stacks_new(e->capture);
		if (!e->dwarf) {
			snprintf(e->err, sizeof(e->err), "--call-graph=dwarf: out of memory");
			return -ENOMEM;
		}
		e->resolver.dwarf = e->dwarf;
	}
	err = gt_capture_dwarf_stacks(e->capture, s->bit, bytes);
	if (err)
		snprintf(e->err, sizeof(e->err), "--call-graph=dwarf,%u: %s", bytes, strerror(-err));
	return err;
}

int gt_session_attach_targets(struct gt_session *s, const struct gt_session_opts *o)
{
	struct snapshot snap = {0};
	int err;

	gt_capture_kernel_stacks(s->engine->capture, s->bit, o->kernel_stacks);
	err = gt_session_dwarf_stacks(s, o->dwarf_stack_bytes);
	if (err)
		return err;
	if (o->cgroup_path && *o->cgroup_path)
		err = attach_cgroup(s, o->cgroup_path, &snap);
	else if (o->all_processes)
		err = attach_all(s, o, &snap);
	else if (o->nnames > 0)
		err = attach_names(s, o, &snap);
	else
		err = attach_pids(s, o, &snap);
	/* a launched command's trace begins at its exec (window.c) */
	if (!err && !s->awaiting_exec.count) {
		gt_session_window_open(s, gt_now_ns());
		err = s->flight ? gt_flight_begin(s->flight, s->started_ns, snap.threads, snap.n)
				: gt_translator_begin(s->tr, s->started_ns, snap.threads, snap.n);
		if (err)
			snprintf(s->engine->err, sizeof(s->engine->err),
				 "cannot start the trace: %s", strerror(-err));
	}
	free(snap.threads);
	return err;
}

/* Only all of them dead ends the session: the set itself follows the
 * events, which come later than /proc shows (a target found dead here
 * may not have its exit translated yet, and the last exit translated is
 * the end of the trace: see gt_session_targets_gone).  A process we never
 * saw exit (its exit event lost, or a zombie never reaped) is no longer a
 * reason to keep recording; one /proc cannot tell about (EMFILE, ...)
 * still is, as it was at the last check. */
void gt_session_check_liveness(struct gt_session *s)
{
	if (s->by_cgroup || s->ended)
		return;
	for (size_t i = 0; i < s->targets.cap; i++) {
		uint32_t pid = (uint32_t)gt_idmap_slot(&s->targets, i);
		if (pid && gt_proc_alive((pid_t)pid) != GT_PROC_DEAD)
			return;
	}
	s->targets_dead = 1;
}
