/* The engine: one capture (BPF programs, rings) shared by up to
 * GT_MAX_SESSIONS sessions, each with its own translator and writer.
 * Events are routed by the session mask BPF stamps into every header. */
#include "internal.h"

#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <time.h>

#include "writer/gt_writer.h"
#include "memtrack/memtrack.h"
#include "dwarf_stacks.h"
#include "session_memtrack.h"
#include "sym/loader.h"
#include "sym/symbolize.h"
#include "translate/translate.h"
#include "common/cgroup_id.h"

#define LIVENESS_PERIOD_NS 500000000ull

/* GT_WITHOUT_*: what a session with options o will never use. */
static unsigned unused_by(const struct gt_session_opts *o)
{
	return (o->cgroup_path ? 0 : GT_WITHOUT_CGROUPS) |
	       (o->owner_uid ? 0 : GT_WITHOUT_OWNERS) |
	       (o->dwarf_stack_bytes ? 0 : GT_WITHOUT_DWARF) |
	       (o->all_processes ? 0 : GT_WITHOUT_ALL);
}

/* Fixed malloc thresholds: mmap only above 32 MiB (so large blocks come
 * from the arenas, as glibc's dynamic threshold had them after the first
 * large free), and give back the top of an arena above 128 KiB at each
 * free.  Dynamic, glibc raised the trim threshold to twice the largest
 * mmapped block freed: libbpf reads the kernel's BTF (5.5 MiB) once per
 * loading thread, so the threshold went to 11 MiB, and each loading
 * thread's arena kept the ~12 MiB it freed as its top chunk, which
 * malloc_trim does not give back in a thread's arena: 23 of an idle
 * flight recorder's 39 MiB of heap.  (A fixed mmap threshold of 512 KiB
 * instead, every large block mapped and unmapped, made the DWARF
 * unwinding of the kernel matrix's 6.1 guest lose libc's frames.) */
static void hold_no_free_memory(void)
{
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 128 << 10);
}

/* A labelled goroutine record read from the rings: its map's read is
 * posted on a loader thread now, a merge lag before a translator needs
 * the text (engine/golabels.h). */
static int on_goid(void *ctx, const struct gt_kev_goid *ev)
{
	struct gt_engine *e = ctx;

	return gt_golabels_want(&e->golabels, ev->hdr.tgid, ev->labels, ev->labels_hash0,
				ev->labels_count, ev->hdr.ts);
}

int gt_engine_open(struct gt_engine **out, const struct gt_engine_opts *opts,
		   char *why, size_t whylen)
{
	struct gt_capture_opts co = {0};
	struct gt_engine *e = calloc(1, sizeof(*e));
	uint64_t t0 = gt_now_ns();
	int err;

	*out = NULL;
	if (!e) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	hold_no_free_memory();
	if (opts) {
		co.ring_bytes_per_cpu = opts->ring_bytes_per_cpu;
		if (!co.ring_bytes_per_cpu && opts->big_rings)
			co.ring_bytes_per_cpu = 4 * gt_capture_ring_default((int)sysconf(_SC_NPROCESSORS_CONF));
		co.stack_map_entries = opts->stack_map_entries;
		co.verbose = opts->verbose;
		co.no_syscall_entries = opts->no_syscall_entries;
		co.without = opts->only ? unused_by(opts->only) : 0;
		e->only = opts->only;
	}
	/* the one session's memory programs load beside the capture's */
	if (e->only && opts->one_session) {
		co.beside_load = gt_engine_mem_preload;
		co.beside_ctx = e;
	}
	/* loaded now, so load and verifier errors show at start; attached
	 * only while a session records (see session_enter) */
	co.load_only = 1;
	e->sym = gt_symbolizer_new();
	if (!e->sym) {
		snprintf(why, whylen, "out of memory");
		free(e);
		return -ENOMEM;
	}
	if (opts && opts->many_users) {
		gt_symbolizer_set_wait(e->sym, 0);
		gt_symbolizer_per_user_budget();
	}
	/* a launched command almost always maps our libc: parsed (its
	 * compressed debug info inflated) during the BPF load, not while the
	 * command's first stacks wait (docs/mapping.md, Stacks) */
	if (opts && opts->one_session)
		gt_symbolizer_prefetch_libc(e->sym);
	err = gt_capture_open(&e->capture, &co, e->err, sizeof(e->err));
	if (err) {
		snprintf(why, whylen, "%s", e->err[0] ? e->err : strerror(-err));
		gt_memtrack_close(e->mem); /* loaded beside, on maps now gone */
		gt_symbolizer_free(e->sym);
		free(e);
		return err;
	}
	gt_engine_mmaps_start(e);
	gt_capture_set_goid_cb(e->capture, on_goid, e);
	e->py = gt_py_stacks_new(e->capture); /* NULL: native frames only */
	if (opts && opts->many_users)
		gt_py_stacks_async_detect(e->py); /* the loop waits for nobody's files */
	e->resolver.py = e->py;
	e->resolver.capture = e->capture;
	e->resolver.sym = e->sym;
	e->next_id = 1;
	err = opts && opts->background ? gt_worker_start(&e->worker) : 0;
	if (err) {
		snprintf(why, whylen, "starting the engine's worker thread: %s", strerror(-err));
		gt_memtrack_close(e->mem);
		gt_symbolizer_free(e->sym);
		gt_capture_close(e->capture);
		free(e);
		return err;
	}
	/* what the load freed in the bins of the threads' arenas, given back */
	malloc_trim(0);
	e->open_ns = gt_now_ns() - t0;
	e->only = NULL; /* the caller's, valid only during the open */
	e->one_session = opts && opts->one_session;
	*out = e;
	return 0;
}

void gt_engine_timing(const struct gt_engine *e, struct gt_engine_timing *t)
{
	struct gt_capture_timing ct;

	gt_capture_timing(e->capture, &ct);
	t->kernel_check_ns = ct.kernel_check_ns;
	t->open_ns = ct.open_ns;
	t->load_ns = ct.load_ns;
	t->maps_ns = ct.maps_ns;
	_Static_assert(GT_CAPTURE_LOAD_GROUPS == sizeof(t->progs_ns) / sizeof(t->progs_ns[0]),
		       "a figure per group");
	memcpy(t->progs_ns, ct.group_ns, sizeof(t->progs_ns));
	t->mem_ns = ct.beside_ns;
	t->rings_ns = ct.rings_ns;
	t->verified_insns = ct.verified_insns;
	t->probe_ns = ct.probe_ns;
	t->total_ns = e->open_ns;
}

void gt_engine_close(struct gt_engine *e)
{
	if (!e)
		return;
	gt_engine_stop_all(e, "engine closed");
	gt_engine_mem_close(e); /* before the maps it shares go */
	gt_engine_go_procs_forget(e, NULL);
	gt_capture_close(e->capture);
	gt_dwarf_stacks_free(e->dwarf);
	gt_py_stacks_free(e->py);
	gt_symbolizer_free(e->sym);
	gt_titles_free(&e->titles);
	gt_golabels_free(&e->golabels);
	gt_idmap_free(&e->symbolized);
	gt_idmap_free(&e->dying);
	gt_mmap_backlog_free(&e->mmap_backlog);
	free(e);
}

int gt_engine_fd(struct gt_engine *e)
{
	return gt_capture_fd(e->capture);
}

int gt_engine_notify_fd(struct gt_engine *e)
{
	return gt_worker_fd(&e->worker);
}

int gt_engine_calls_fd(struct gt_engine *e)
{
	(void)e;
	return gt_sym_calls_fd();
}

const char *gt_engine_error(struct gt_engine *e)
{
	return e->err;
}

/* Maps of a process must be read while it lives: on first sight, and
 * again after exec replaced them. */
static void follow_process(struct gt_engine *e, const struct gt_kev_hdr *ev)
{
	if (ev->type == GT_KEV_EXEC)
		gt_engine_process_exec(e, ev->tgid);
	else if (ev->type == GT_KEV_FORK)
		gt_engine_process_forked(e, ev->tgid, ((const struct gt_kev_fork *)ev)->child_tgid);
	else if (ev->tgid)
		gt_engine_process_seen(e, ev->tgid);
}

/* A non-root cgroup session keeps the processes it has had (s->targets:
 * its /proc snapshot's, and those it saw since), to know a GT_KEV_LEAVE of
 * its own from one of a process it never had (process_left).  Root's never
 * gets one. */
static bool tracks_members(const struct gt_session *s)
{
	return s->by_cgroup && s->tracer.uid != 0;
}

static void member_seen(struct gt_session *s, uint32_t tgid)
{
	if (tgid)
		gt_idmap_add(&s->targets, tgid);
}

/* The processes of the session's tasks an event is about (a switch's prev
 * and next, a wakeup's waker and target, a fork's parent and child): each
 * is a member from now on; a member's last thread gone ends it. */
static void track_members(struct gt_session *s, const struct gt_kev_hdr *ev)
{
	uint32_t bit = 1u << s->bit;

	if (ev->type == GT_KEV_SWITCH) {
		const struct gt_kev_switch *sw = (const void *)ev;
		if (sw->prev_sessions & bit)
			member_seen(s, ev->tgid);
		if (sw->next_sessions & bit)
			member_seen(s, sw->next_tgid);
	} else if (ev->type == GT_KEV_WAKEUP) {
		const struct gt_kev_wakeup *w = (const void *)ev;
		if (w->waker_sessions & bit)
			member_seen(s, ev->tgid);
		member_seen(s, w->target_tgid); /* hdr.sessions is the target's */
	} else if (ev->type == GT_KEV_EXIT && ((const struct gt_kev_exit *)ev)->group_dead) {
		gt_idmap_del(&s->targets, ev->tgid);
	} else if (ev->type != GT_KEV_LEAVE) {
		if (ev->type == GT_KEV_FORK)
			member_seen(s, ((const struct gt_kev_fork *)ev)->child_tgid);
		member_seen(s, ev->tgid);
	}
}

static void track_targets(struct gt_session *s, const struct gt_kev_hdr *ev)
{
	if (tracks_members(s))
		track_members(s, ev);
	if (s->by_cgroup)
		return;
	if (ev->type == GT_KEV_FORK) {
		const struct gt_kev_fork *f = (const void *)ev;
		if (f->child_tgid != ev->tgid)
			gt_idmap_add(&s->targets, f->child_tgid);
	} else if (ev->type == GT_KEV_EXIT || ev->type == GT_KEV_LEAVE) {
		const struct gt_kev_exit *x = (const void *)ev;
		int gone = ev->type == GT_KEV_LEAVE || x->group_dead;
		if (gone && gt_idmap_del(&s->targets, ev->tgid) == 1 &&
		    s->targets.count == 0)
			gt_session_targets_gone(s, ev->ts);
	}
}

/* A process left the session (GT_KEV_LEAVE: it gained privileges its
 * owner may not trace).  A pid session is told only of its own (BPF
 * followed their tgids); a cgroup session of every such exec or exit in
 * the cgroup (bpf/common.bpf.h, gt_leave_if_privileged), and keeps the
 * record only for a member it had: then, as for a pid session, its
 * goroutines end there and the summary counts it.  Counted even before
 * the window opens: a `--` command that execs a set-user-ID program
 * leaves before its trace can begin. */
static bool process_left(struct gt_session *s, const struct gt_kev_hdr *ev)
{
	if (tracks_members(s) && gt_idmap_del(&s->targets, ev->tgid) != 1)
		return false;
	s->left++;
	return true;
}

static void fail_session(struct gt_session *s, int err, const char *what)
{
	if (!s->err)
		s->err = err;
	snprintf(s->end_reason, sizeof(s->end_reason), "%s: %s", what, strerror(-err));
}

/* Whether the task in the record's header is traced by some session: a
 * switch's prev and a wakeup's waker may be anybody, and a process that
 * left (GT_KEV_LEAVE) is no more the sessions' to symbolize; every other
 * record is about a task of the sessions in hdr.sessions. */
static bool about_traced_task(const struct gt_kev_hdr *ev)
{
	if (ev->type == GT_KEV_LEAVE)
		return false;
	if (ev->type == GT_KEV_SWITCH)
		return ((const struct gt_kev_switch *)ev)->prev_sessions != 0;
	if (ev->type == GT_KEV_WAKEUP)
		return ((const struct gt_kev_wakeup *)ev)->waker_sessions != 0;
	return true;
}

static int on_event(void *ctx, const struct gt_kev_hdr *ev, size_t len)
{
	struct gt_engine *e = ctx;
	uint32_t mask = ev->sessions;

	if (ev->type == GT_KEV_SWITCH) {
		const struct gt_kev_switch *sw = (const void *)ev;
		mask |= sw->prev_sessions | sw->next_sessions;
	}
	/* else events of ended sessions, or of an untraced task that only
	 * switched to or woke a traced one: nobody resolves its stacks (a
	 * neighbour's big binary would be opened and parsed for nothing) */
	if (e->nactive && about_traced_task(ev))
		follow_process(e, ev);
	gt_engine_mem_event(e, ev); /* exec re-decides allocator probes */
	while (mask) {
		int bit = __builtin_ctz(mask);

		mask &= mask - 1;
		if (e->active[bit])
			gt_session_deliver(e->active[bit], ev, len);
	}
	return 0;
}

/* The one way into a session's translator, for the rings' events and for
 * memtrack's final heap values alike: its window, its counts, its targets,
 * and a failure that ends it. */
int gt_session_deliver(struct gt_session *s, const struct gt_kev_hdr *ev, size_t len)
{
	int err;

	if (s->ended || s->err || (!s->tr && !s->flight))
		return 0;
	if (ev->type == GT_KEV_LEAVE && !process_left(s, ev))
		return 0;
	if (!gt_session_in_window(s, ev))
		return 0;
	s->kernel_events++;
	track_targets(s, ev);
	gt_session_record_before_exit(s, ev);
	err = s->flight ? gt_flight_event(s->flight, ev, len) : gt_translator_event(s->tr, ev, len);
	if (err)
		fail_session(s, err, s->flight ? "keeping the flight recording failed"
					       : "translating failed");
	return 0;
}

/* memtrack's attach, done in the background, failed (explicit request). */
static void fail_start(struct gt_session *s)
{
	s->err = s->start_err;
	snprintf(s->end_reason, sizeof(s->end_reason), "%.*s", (int)sizeof(s->end_reason) - 1,
		 s->start_why);
}

static void end_due_sessions(struct gt_engine *e)
{
	uint64_t now = gt_now_ns();
	int check = now - e->last_liveness_ns >= LIVENESS_PERIOD_NS;

	if (check) {
		e->last_liveness_ns = now;
		gt_engine_prune_followed(e);
	}
	for (int i = 0; i < GT_MAX_SESSIONS; i++) {
		struct gt_session *s = e->active[i];

		if (!s)
			continue;
		if (check)
			gt_session_check_liveness(s);
		if (s->start_err && !s->err)
			fail_start(s);
		if (s->err)
			gt_session_stop(s, NULL);
		else if (!s->by_cgroup && (s->targets.count == 0 || s->targets_dead))
			gt_session_stop(s, "targets exited");
		else if (s->duration_ns && !s->awaiting_exec.count &&
			 now - s->started_ns >= s->duration_ns)
			gt_session_stop(s, "duration");
	}
}

int gt_engine_poll(struct gt_engine *e, int timeout_ms)
{
	int n;

	gt_sym_calls_ack(); /* the answers of the reads below are taken now */
	gt_py_stacks_round(e->py); /* a bounded number of code objects read a drain */
	gt_engine_go_procs_poll(e); /* Go build info reads answered since */
	/* goroutines' labels answered since: what waited for them goes */
	gt_capture_hold(e->capture, gt_golabels_poll(&e->golabels, gt_now_ns()));
	n = gt_capture_poll(e->capture, gt_engine_mem_timeout(e, timeout_ms), on_event, e);

	gt_worker_reap(&e->worker); /* starts and stops finished meanwhile */
	gt_engine_mem_tick(e); /* --heap interpose: the heap records */
	end_due_sessions(e);
	return n;
}

/* An idle engine must cost the machine nothing: the tracepoints run on
 * every switch, wakeup and syscall of every process, so they are attached
 * by the first session to start, before it registers its targets and takes
 * its /proc snapshot (events between the two would be lost otherwise). */
static int session_enter(struct gt_engine *e, struct gt_session *s)
{
	uint32_t sys = e->syscall_sessions | (s->syscall_entries ? 1u << s->bit : 0);
	struct gt_capture_timing ct;
	char why[400];
	int err;

	if (e->nactive == 0) {
		err = gt_capture_attach(e->capture, why, sizeof(why));
		if (err) {
			snprintf(e->err, sizeof(e->err), "%s", why);
			return err;
		}
		gt_capture_timing(e->capture, &ct);
		s->phase.perf = ct.perf_events_ns;
	}
	err = gt_capture_syscall_entries(e->capture, sys, why, sizeof(why));
	if (err) {
		snprintf(e->err, sizeof(e->err), "%s", why);
		if (e->nactive == 0)
			gt_capture_detach(e->capture);
		return err;
	}
	e->syscall_sessions = sys;
	e->active[s->bit] = s;
	e->nactive++;
	return 0;
}

/* ...and detached by the last one to leave, after its events were flushed
 * (the syscall entry program by the last one that wanted entries). */
static void session_leave(struct gt_engine *e, struct gt_session *s)
{
	e->active[s->bit] = NULL;
	e->syscall_sessions &= ~(1u << s->bit);
	gt_capture_syscall_entries(e->capture, e->syscall_sessions, NULL, 0);
	if (--e->nactive == 0)
		gt_capture_detach(e->capture);
}

/* Attached, the targets found, the probes on their way: each step timed
 * for the stats (gotracectl record -v). */
static int enter_and_find(struct gt_engine *e, struct gt_session *s,
			  const struct gt_session_opts *o)
{
	uint64_t t0 = gt_now_ns(), t1;
	int err = session_enter(e, s);

	t1 = gt_now_ns();
	s->phase.attach = t1 - t0 - s->phase.perf;
	if (!err) {
		err = gt_capture_session_owner(e->capture, s->bit, o->owner_uid, o->owner_gid);
		if (err)
			snprintf(e->err, sizeof(e->err), "following only what uid %u may ptrace: %s",
				 (unsigned)o->owner_uid, strerror(-err));
	}
	if (!err)
		err = gt_session_attach_targets(s, o);
	t0 = gt_now_ns();
	s->phase.targets = t0 - t1;
	if (!err)
		err = gt_session_mem_start(s, o); /* --heap, --cpu-profile */
	s->phase.probes = gt_now_ns() - t0;
	return err;
}

static int free_bit(struct gt_engine *e)
{
	for (int i = 0; i < GT_MAX_SESSIONS; i++)
		if (!e->active[i] && !(e->mem_bits & (1u << i)))
			return i;
	return -1;
}

/* A recording's writer on its file and its translator. */
static int trace_start(struct gt_engine *e, struct gt_session *s, const struct gt_session_opts *o)
{
	struct gt_translator_opts to = {0};
	int err;

	if (o->go_version >= GT_GO_1_22)
		err = gt_session_v2_open(s, o->go_version);
	else
		err = gt_writer_open_with(&s->writer, o->out_fd, o->go_version ? o->go_version : GT_V1_19,
				  1000000000ull, o->owner_uid ? gt_session_write_as_owner : NULL,
				  s);
	if (err) {
		snprintf(e->err, sizeof(e->err), "cannot start the trace: %s", strerror(-err));
		return err;
	}
	to.ncpus = gt_capture_ncpus(e->capture);
	s->stack_src.frames = gt_resolve_stack;
	s->stack_src.ra_slot = gt_resolve_ra_slot;
	s->stack_src.pending = gt_resolve_pending;
	s->stack_src.clock = gt_resolve_clock;
	s->stack_src.unnamed = gt_resolve_unnamed;
	s->stack_src.recheck = gt_resolve_recheck;
	s->stack_src.rename = gt_resolve_rename;
	s->stack_src.ctx = &e->resolver;
	to.stacks = &s->stack_src;
	to.titles = gt_titles_source(&e->titles);
	to.golabels = gt_golabels_source(&e->golabels);
	to.cgroup_path = gt_cgroup_id_path;
	to.go_version = o->go_version ? o->go_version : GT_V1_19;
	to.session_mask = 1u << s->bit;
	to.v2 = s->v2;
	err = gt_translator_new(&s->tr, s->writer, &to);
	if (err)
		snprintf(e->err, sizeof(e->err), "cannot start the translator: %s", strerror(-err));
	return err;
}

/* A flight recording keeps records, not a file (flight.c). */
static int flight_start(struct gt_engine *e, struct gt_session *s, const struct gt_session_opts *o)
{
	struct gt_flight_params p = {0};
	int err;

	p.opts = o->flight;
	p.ncpus = gt_capture_ncpus(e->capture);
	p.go_version = o->go_version ? o->go_version : GT_V1_19;
	p.mask = 1u << s->bit;
	s->stack_src.frames = gt_resolve_stack;
	s->stack_src.ra_slot = gt_resolve_ra_slot;
	s->stack_src.ctx = &e->resolver;
	p.stacks = &s->stack_src;
	p.titles = gt_titles_source(&e->titles);
	p.title_cache = &e->titles;
	err = gt_flight_new(&s->flight, &p);
	if (err)
		snprintf(e->err, sizeof(e->err), "cannot start the flight recording: %s",
			 strerror(-err));
	return err;
}

int gt_session_start(struct gt_engine *e, const struct gt_session_opts *o,
		     struct gt_session **out)
{
	struct gt_session *s;
	int bit = free_bit(e), err;

	*out = NULL;
	e->err[0] = 0;
	if (bit < 0) {
		snprintf(e->err, sizeof(e->err), "too many recording sessions (at most %d)", GT_MAX_SESSIONS);
		return -EBUSY;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->engine = e;
	s->bit = bit;
	/* before the bit is in any filter: every loss after counts */
	s->drops_at_start = gt_capture_session_drops(e->capture, bit);
	s->id = e->next_id++;
	s->duration_ns = o->duration_ns;
	s->owner_uid = o->owner_uid;
	s->owner_gid = o->owner_gid;
	s->tracer = gt_tracer_of(o->owner_uid, o->owner_gid, o->owner_pid);
	s->syscall_entries = o->all_syscalls;
	s->malloc_probes = o->heap == GT_HEAP_MALLOC ||
			   (o->alloc_stack_every && o->heap != GT_HEAP_INTERPOSE);
	s->end_ns = UINT64_MAX;
	s->out_fd = o->out_fd;
	err = o->flight ? flight_start(e, s, o) : trace_start(e, s, o);
	if (!err)
		err = enter_and_find(e, s, o);
	if (err) {
		gt_capture_forget_session(e->capture, bit);
		if (e->active[bit] == s)
			session_leave(e, s);
		if (s->tr)
			gt_translator_free(s->tr);
		gt_flight_free(s->flight);
		gt_writer_free(s->writer);
		gt_session_v2_free(s);
		gt_idmap_free(&s->targets);
		gt_idmap_free(&s->awaiting_exec);
		free(s);
		return err;
	}
	*out = s;
	return 0;
}

/* The times of the session's start and stop phases. */
static void stats_phases(const struct gt_session *s, struct gt_session_stats *st)
{
	st->start_attach_ns = s->phase.attach;
	st->start_perf_ns = s->phase.perf;
	st->start_targets_ns = s->phase.targets;
	st->start_probes_ns = s->phase.probes;
	st->stop_notice_ns = s->phase.notice;
	st->stop_flush_ns = s->phase.flush;
	st->stop_detach_ns = s->phase.detach;
	st->stop_mem_ns = s->phase.mem;
	st->stop_finish_ns = s->phase.finish;
}

/* The output's figures of a session still recording (or closing). */
static void stats_live(const struct gt_session *s, struct gt_session_stats *st)
{
	struct gt_writer_stats ws = {0};
	struct gt_translator_stats ts = {0};

	if (s->writer)
		gt_writer_stats(s->writer, &ws);
	if (s->tr)
		gt_translator_stats(s->tr, &ts);
	if (s->v2) {
		ws.events = gt_session_v2_events(s);
		ws.bytes = gt_session_v2_bytes(s);
	}
	if (s->flight) {
		struct gt_flight_stats fs;

		gt_flight_stats(s->flight, &fs);
		/* what it holds, not a file: its kernel records and bytes */
		ws.events = fs.records;
		ws.bytes = fs.held_bytes;
		ts.threads = fs.threads;
	}
	st->trace_events = ws.events;
	/* batches are written when full: the open ones count too (status
	 * showed BYTES 16, the header, beside thousands of events) */
	st->bytes = ws.bytes + ws.buffered;
	st->threads = ts.threads;
	st->repairs = ts.repairs;
	st->loopback_anon = ts.loopback_anon;
	st->samples_lost = ts.samples_lost;
	st->drops = s->closing ? s->drops :
		    gt_capture_session_drops(s->engine->capture, s->bit) - s->drops_at_start;
}

void gt_session_stats(const struct gt_session *s, struct gt_session_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->id = s->id;
	st->state = s->ended ? GT_SESSION_ENDED : GT_SESSION_RUNNING;
	st->end_reason = s->end_reason;
	st->started_ns = s->started_ns;
	/* the span of the trace: from its start (0 while a launched command
	 * has not exec'd yet) to its end, or to now while recording */
	if (s->ended || s->closing)
		st->elapsed_ns = s->end_ns - s->started_ns;
	else if (!s->awaiting_exec.count && gt_now_ns() > s->started_ns)
		st->elapsed_ns = gt_now_ns() - s->started_ns;
	st->kernel_events = s->kernel_events;
	st->left = s->left;
	st->refused = s->refused;
	/* measured when its first probe attached (0 until then, and when
	 * every target turned out to be Go or static: no probe at all) */
	st->probe_call_ns = s->malloc_probes ? gt_memtrack_call_cost_known() : 0;
	st->owner_uid = s->owner_uid;
	st->window_start_ns = s->awaiting_exec.count ? 0 : s->started_ns;
	stats_phases(s, st);
	if (!s->ended) {
		stats_live(s, st);
		return;
	}
	st->trace_events = s->last_trace_events;
	st->bytes = s->last_bytes;
	st->threads = s->threads;
	st->repairs = s->repairs;
	st->loopback_anon = s->loopback_anon;
	st->samples_lost = s->samples_lost;
	st->drops = s->drops;
}

/* Bytes in the finished file (the footer included), when fd is a file. */
static uint64_t output_size(int fd, uint64_t fallback)
{
	struct stat st;

	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		return (uint64_t)st.st_size;
	return fallback;
}

static int deliver_pending(void *ctx, const struct gt_kev_hdr *ev, size_t len)
{
	return on_event(ctx, ev, len);
}

/* Out of the rings: what they hold up to the end was translated (by the
 * caller's flush); the session's filters and BPF programs go. */
static void leave_rings(struct gt_session *s, const char *reason)
{
	struct gt_engine *e = s->engine;
	uint64_t t0 = gt_now_ns();

	gt_capture_forget_session(e->capture, s->bit);
	session_leave(e, s);
	s->phase.detach = gt_now_ns() - t0;
	s->closing = 1;
	e->nclosing++;
	s->drops = gt_capture_session_drops(e->capture, s->bit) - s->drops_at_start;
	if (reason && !s->end_reason[0])
		snprintf(s->end_reason, sizeof(s->end_reason), "%s", reason);
}

/* The Go 1.22+ output closed (a failure named in the end reason); its
 * figures into *ws. */
static void finish_v2(struct gt_session *s, struct gt_writer_stats *ws)
{
	const char *why = gt_session_v2_error(s);
	int err;

	if (why && s->err)
		snprintf(s->end_reason, sizeof(s->end_reason),
			 "writing the Go 1.2x trace failed: %s", why);
	err = s->err ? 0 : gt_session_v2_close(s);
	ws->events = gt_session_v2_events(s); /* after the close: its last samples */
	ws->bytes = gt_session_v2_bytes(s);
	if (err)
		fail_session(s, err, "writing the trace failed");
	gt_session_v2_free(s);
}

/* The v1 writer closed (its footer written), or freed after a failure. */
static void finish_writer(struct gt_session *s)
{
	int err;

	if (s->writer && !s->flight) {
		if (s->err)
			gt_writer_free(s->writer);
		else if ((err = gt_writer_close(s->writer)))
			fail_session(s, err, "writing the trace failed");
	}
	s->writer = NULL;
}

/* The translator's figures kept, and its closing events written (a
 * flight session's come from its window instead). */
static void finish_translator(struct gt_session *s)
{
	struct gt_translator_stats ts = {0};
	int err;

	if (s->tr)
		gt_translator_stats(s->tr, &ts);
	s->threads = ts.threads;
	s->repairs = ts.repairs;
	s->loopback_anon = ts.loopback_anon;
	if (s->flight) {
		struct gt_flight_stats fs;

		gt_flight_stats(s->flight, &fs);
		s->threads = fs.threads;
		s->last_bytes = fs.held_bytes;
	} else if (!s->err) {
		err = gt_translator_end(s->tr, s->end_ns);
		if (err)
			fail_session(s, err, "finishing the trace failed");
	}
	/* after the end, which counts the samples still held */
	if (s->tr)
		gt_translator_stats(s->tr, &ts);
	s->samples_lost = ts.samples_lost;
}

/* The closing events at the end, the footer, the file closed. */
static void finish(struct gt_session *s)
{
	struct gt_engine *e = s->engine;
	struct gt_writer_stats ws = {0};
	uint64_t t0 = gt_now_ns();

	s->ended = 1;
	s->ended_ns = s->end_ns;
	e->nclosing--;
	finish_translator(s);
	if (s->writer)
		gt_writer_stats(s->writer, &ws);
	if (s->v2)
		finish_v2(s, &ws);
	s->last_trace_events = ws.events;
	finish_writer(s);
	if (!s->flight)
		s->last_bytes = output_size(s->out_fd, ws.bytes);
	s->phase.finish = gt_now_ns() - t0;
	gt_translator_free(s->tr);
	s->tr = NULL;
	gt_idmap_free(&s->targets);
	gt_idmap_free(&s->awaiting_exec);
	/* not while another session is still closing: a heap record handed
	 * over after its stop is read then, its samples' stacks symbolized */
	if (e->nclosing > 0)
		return;
	for (int i = 0; i < GT_MAX_SESSIONS; i++)
		if (e->active[i])
			return;
	gt_capture_clear_stacks(e->capture);
	gt_engine_forget_followed(e); /* stack ids are gone: so are the maps */
}

/* After the rings: memtrack's final values and detach (in the background
 * with a worker thread), then the file. */
static int close_session(struct gt_session *s, const char *reason)
{
	uint64_t t0;

	leave_rings(s, reason);
	t0 = gt_now_ns();
	gt_session_mem_stop(s); /* without a worker thread: done already */
	s->phase.mem = gt_now_ns() - t0;
	if (!s->ended && !s->mem_pending)
		finish(s);
	return s->ended ? s->err : 0;
}

void gt_session_mem_settled(struct gt_session *s)
{
	/* a refused start fails the session even if it is ending already
	 * (its duration can pass while probes are attached) */
	if (s->start_err && !s->err && !s->ended)
		fail_start(s);
	if (s->closing && !s->ended && !s->mem_pending)
		finish(s);
}

int gt_session_stop(struct gt_session *s, const char *reason)
{
	if (s->ended || s->closing)
		return s->ended ? s->err : 0;
	/* The trace ends now (or earlier: see window.c), whatever the
	 * teardown below costs.  What the rings still hold up to the end
	 * is translated; what is stamped later is dropped. */
	uint64_t t0 = gt_now_ns();

	gt_session_window_close(s, t0);
	gt_capture_flush(s->engine->capture, deliver_pending, s->engine);
	s->phase.flush = gt_now_ns() - t0;
	/* the last exit may come out of the rings only now */
	s->phase.notice = t0 - s->end_ns;
	return close_session(s, reason);
}

/* One instant for every session: the end of all their traces. */
void gt_engine_stop_all(struct gt_engine *e, const char *reason)
{
	uint64_t now = gt_now_ns(), flush;
	int any = 0;

	for (int i = 0; i < GT_MAX_SESSIONS; i++)
		if (e->active[i]) {
			gt_session_window_close(e->active[i], now);
			any = 1;
		}
	if (any)
		gt_capture_flush(e->capture, deliver_pending, e);
	flush = gt_now_ns() - now;
	for (int i = 0; i < GT_MAX_SESSIONS; i++)
		if (e->active[i]) {
			e->active[i]->phase.flush = flush;
			close_session(e->active[i], reason);
		}
	/* until every file is finished; probes may still be going down */
	while (e->nclosing > 0 && gt_worker_reap_wait(&e->worker) >= 0)
		;
}

int gt_session_ended(const struct gt_session *s)
{
	return s->ended;
}

int gt_session_starting(const struct gt_session *s)
{
	return s->starting;
}

void gt_session_free(struct gt_session *s)
{
	if (!s)
		return;
	if (!s->ended)
		gt_session_stop(s, "freed");
	if (!s->ended)
		gt_worker_settle(&s->engine->worker);
	gt_flight_free(s->flight);
	free(s);
}

/* While a dump is written on its thread: the rings are read (every
 * session's records translated, this one's kept in new segments). */
static void pump_rings(void *ctx)
{
	gt_engine_poll(ctx, 2);
}

/* Where a dump's trace ends: now, or the session's end once it stopped
 * (end_ns is UINT64_MAX until then).  What the rings and the merge hold
 * older than the lag is delivered first: the dump then holds every record
 * older than its end by the lag (the last poll may be a 10 ms tick ago,
 * and an embedded recorder's SIGUSR1 interrupts its poll before it
 * drains: dumps ended in up to ~13 ms with no record, the threads there
 * idle in the viewer: tests/integration/record_usr1.sh usr1_tail_*). */
static uint64_t dump_now(struct gt_session *s)
{
	uint64_t now;

	gt_capture_deliver_due(s->engine->capture, on_event, s->engine);
	now = gt_now_ns();

	return s->end_ns < now ? s->end_ns : now;
}

int gt_session_flight_dump(struct gt_session *s, int fd, const struct gt_flight_fired *mark,
			   char *why, size_t whylen)
{
	return gt_session_flight_dump_as(s, fd, mark, NULL, why, whylen);
}

int gt_session_flight_dump_as(struct gt_session *s, int fd, const struct gt_flight_fired *mark,
			      const struct gt_fs_ids *as, char *why, size_t whylen)
{
	if (!s->flight) {
		snprintf(why, whylen, "session %d is not a flight recording", s->id);
		return -EINVAL;
	}
	return gt_flight_dump_as(s->flight, fd, mark, as, dump_now(s), pump_rings, s->engine,
				 why, whylen);
}

int gt_session_flight_dump_begin(struct gt_session *s, int fd, const struct gt_flight_fired *mark,
				 const struct gt_fs_ids *as, struct gt_flight_dump **out,
				 char *why, size_t whylen)
{
	*out = NULL;
	if (!s->flight) {
		snprintf(why, whylen, "session %d is not a flight recording", s->id);
		return -EINVAL;
	}
	return gt_flight_dump_begin(s->flight, fd, mark, as, dump_now(s), 1, out, why, whylen);
}

int gt_session_flight_dump_done(const struct gt_flight_dump *d)
{
	return gt_flight_dump_done(d);
}

int gt_session_flight_dump_end(struct gt_session *s, struct gt_flight_dump *d, char *why,
			       size_t whylen)
{
	return gt_flight_dump_end(s->flight, d, why, whylen);
}

int gt_session_flight_fired(struct gt_session *s, struct gt_flight_fired *out)
{
	return s->flight ? gt_flight_fired(s->flight, out) : 0;
}

int gt_session_flight_due(struct gt_session *s, int force, struct gt_flight_fired *out)
{
	return s->flight ? gt_flight_due(s->flight, gt_now_ns(), force, out) : 0;
}

void gt_session_flight_stats(const struct gt_session *s, struct gt_flight_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (s->flight)
		gt_flight_stats(s->flight, st);
}
