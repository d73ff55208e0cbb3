/* Translator lifecycle, initial snapshot, event dispatch and the end. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/procfs.h"


/* The calls gt_translator_new accepts: options with 1..GT_MAX_P CPUs (P
 * ncpus is the spare), and an output: o->v2 (a Go 1.22+ trace; w, if
 * given too, is not used) or else the v1 writer w. */
static int translator_args_valid(const struct gt_writer *w, const struct gt_translator_opts *o)
{
	if (!o)
		return 0;
	if (o->ncpus <= 0 || o->ncpus > GT_MAX_P)
		return 0;
	return o->v2 || w;
}

int gt_translator_new(struct gt_translator **out, struct gt_writer *w,
		      const struct gt_translator_opts *o)
{
	*out = NULL;
	if (!translator_args_valid(w, o))
		return -EINVAL;
	struct gt_translator *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->w = o->v2 ? NULL : w;
	t->ncpus = o->ncpus;
	t->stacks = o->stacks;
	t->titles = o->titles;
	t->golabels = o->golabels;
	t->cgroup_path = o->cgroup_path;
	t->version = o->go_version ? o->go_version : GT_V1_19;
	t->mask = o->session_mask;
	t->next_goid = GT_TR_REUSED_GOID; /* 0 is G 0, never a thread */
	gt_idmap_init(&t->threads, 1, sizeof(struct gt_thread *));
	t->cpus = calloc((size_t)o->ncpus + 1, sizeof(*t->cpus));
	t->frames = calloc(GT_MAX_STACK_FRAMES, sizeof(*t->frames));
	int err = o->v2 ? gt_tr_v2_new(&t->v2, o->v2, o->ncpus) : 0;
	if (!t->cpus || !t->frames || err) {
		gt_translator_free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

void gt_translator_free(struct gt_translator *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->threads.cap; i++) {
		struct gt_thread *th = gt_tr_thread_at(t, i);

		if (th)
			free(th->held);
		free(th);
	}
	gt_idmap_free(&t->threads);
	gt_tr_heap_free(t);
	free(t->cpus);
	free(t->frames);
	free(t->cgroups);
	gt_tr_v2_free(t->v2);
	free(t->tid_used);
	gt_tr_stack_free(t);
	gt_tr_names_free(t);
	free(t);
}

/* One thread of the snapshot: GoCreate by G 0 on P 0, then GoWaiting when
 * it is blocked (only legal right after GoCreate).  Blocked in a syscall
 * too, not GoInSyscall: its waker then shows, as for any block
 * (syscall_class.h).  Go 1.22+ gives it its state by a GoStatus, which
 * forgets its name.
 *
 * Only the GoCreates may carry the snapshot's time; everything after them
 * is written 1 ns later.  Go 1.22+ counts time from the first event and
 * drops the GoCreates of the snapshot; its viewer starts a goroutine
 * running since the start at the first event left, and reads a start at
 * time 0 as unset: it panics when that goroutine stops (gstate.go,
 * startRunningTime). */
static void snapshot_thread(struct gt_translator *t, const struct gt_thread_snapshot *s)
{
	if (s->tid == 0 || !gt_proc_state_alive(s->state) ||
	    gt_tr_lookup(t, s->tid))
		return;
	char comm[GT_COMM_LEN];
	memcpy(comm, s->comm, sizeof(comm));
	comm[GT_COMM_LEN - 1] = '\0';
	struct gt_thread *th = gt_tr_create(t, 0, 0, s->tid, s->tgid, comm);
	t->now = t->begin_ts + 1;
	if (!th)
		return;
	th->unnamed122 = true;
	if (s->state == 'R')
		return;
	th->snap_sysnr = s->syscall_nr;
	uint64_t a[1] = {th->goid};
	gt_tr_emit(t, 0, GT_EV_GO_WAITING, a, 1);
	th->state = GT_TH_WAITING;
	th->last_p = 0;
	th->seq++;
}

int gt_translator_begin(struct gt_translator *t, uint64_t ts,
			const struct gt_thread_snapshot *threads, int n)
{
	if (t->begun)
		return -EALREADY;
	t->begun = true;
	t->now = ts <= GT_TS_MAX ? ts : 0;
	t->begin_ts = t->now;
	for (int i = 0; i < n && !t->err; i++)
		snapshot_thread(t, &threads[i]);
	/* Runnable threads are assumed on the CPU they last ran on, if free. */
	for (int i = 0; i < n && !t->err; i++) {
		const struct gt_thread_snapshot *s = &threads[i];
		struct gt_thread *th = gt_tr_lookup(t, s->tid);
		if (th && s->state == 'R' && th->state == GT_TH_RUNNABLE &&
		    s->cpu >= 0 && s->cpu < t->ncpus && !t->cpus[s->cpu].cur)
			gt_tr_start(t, th, s->cpu);
	}
	uint64_t a[2] = {(uint64_t)t->ncpus, 0};
	gt_tr_emit(t, 0, GT_EV_GOMAXPROCS, a, 2);
	t->snapshot_done = true;
	return t->err;
}

/* Events that say "hdr.tid is current on hdr.cpu" need a real P. */
static bool needs_cpu(int type)
{
	return type != GT_KEV_WAKEUP && type != GT_KEV_HEAP && type != GT_KEV_RSS &&
	       type != GT_KEV_RENAME && type != GT_KEV_ALLOC_SAMPLE;
}

static void dispatch(struct gt_translator *t, const struct gt_kev_hdr *ev)
{
	switch (ev->type) {
	case GT_KEV_SWITCH: gt_tr_on_switch(t, (const void *)ev); break;
	case GT_KEV_WAKEUP: gt_tr_on_wakeup(t, (const void *)ev); break;
	case GT_KEV_FORK: gt_tr_on_fork(t, (const void *)ev); break;
	case GT_KEV_EXEC: gt_tr_on_exec(t, (const void *)ev); break;
	case GT_KEV_EXIT: gt_tr_on_exit(t, (const void *)ev); break;
	case GT_KEV_SYS_ENTER: gt_tr_on_sys_enter(t, (const void *)ev); break;
	case GT_KEV_RENAME: gt_tr_on_rename(t, (const void *)ev); break;
	case GT_KEV_HEAP: gt_tr_on_heap(t, (const void *)ev); break;
	case GT_KEV_RSS: gt_tr_on_rss(t, (const void *)ev); break;
	case GT_KEV_CPU_SAMPLE: gt_tr_on_cpu_sample(t, (const void *)ev); break;
	case GT_KEV_ALLOC_SAMPLE: gt_tr_on_alloc_sample(t, (const void *)ev); break;
	case GT_KEV_LEAVE: gt_tr_on_leave(t, (const void *)ev); break;
	case GT_KEV_GOID: gt_tr_on_goid(t, (const void *)ev); break;
	default: break;
	}
}

/* A record whose flag says it has a longer form (base bytes, then a tail
 * up to full): the tail copied where the record holds it, else the flag
 * cleared and the tail zeros. */
static void take_tail(union gt_kev_any *copy, const void *ev, size_t len, size_t base, size_t full,
		      uint32_t *flags, uint32_t flag)
{
	if ((*flags & flag) && len >= full) {
		memcpy(copy, ev, full);
		return;
	}
	memset((char *)copy + base, 0, full - base);
	*flags &= ~flag;
}

int gt_translator_event(struct gt_translator *t, const struct gt_kev_hdr *ev, size_t len)
{
	if (t->err)
		return t->err;
	t->st.events_in++;
	if (t->ended) {
		gt_tr_repair(t, GT_REPAIR_AFTER_END);
		return 0;
	}
	/* Records in a ring buffer may be unaligned for their 8-byte fields:
	 * work on an aligned copy. */
	union gt_kev_any copy;
	if (len < sizeof(copy.hdr)) {
		gt_tr_repair(t, GT_REPAIR_BAD_RECORD);
		return 0;
	}
	memcpy(&copy.hdr, ev, sizeof(copy.hdr));
	int type = copy.hdr.type;
	if (gt_kev_size(type) == 0 || len < gt_kev_size(type) ||
	    gt_kev_size(type) > sizeof(copy)) {
		gt_tr_repair(t, GT_REPAIR_BAD_RECORD);
		return 0;
	}
	memcpy(&copy, ev, gt_kev_size(type));
	/* the wakeup's sender, the switch's syscall entry: a longer form */
	if (type == GT_KEV_WAKEUP)
		take_tail(&copy, ev, len, sizeof(copy.wk), sizeof(copy.wks), &copy.wk.flags,
			  GT_WAKEUP_SENDER);
	else if (type == GT_KEV_SWITCH)
		take_tail(&copy, ev, len, sizeof(copy.sw), sizeof(copy.swe), &copy.sw.flags,
			  GT_SWITCH_ENTRY);
	if (!t->begun)
		gt_translator_begin(t, copy.hdr.ts, NULL, 0);
	if (copy.hdr.cpu >= t->ncpus) {
		gt_tr_repair(t, GT_REPAIR_BAD_CPU);
		if (needs_cpu(type))
			return t->err;
	}
	if (copy.hdr.ts > GT_TS_MAX)
		gt_tr_repair(t, GT_REPAIR_BAD_TIME);
	else if (copy.hdr.ts < t->now) {
		/* clamped forward; the snapshot's own 1 ns is no lateness */
		if (copy.hdr.ts != t->begin_ts)
			gt_tr_repair(t, GT_REPAIR_LATE_EVENT);
	} else
		t->now = copy.hdr.ts;
	dispatch(t, &copy.hdr);
	return t->err;
}

/* Go 1.22+ names a goroutine whose state came from a GoStatus (every
 * thread of the snapshot) after the root frame of the first stack of a
 * later transition of its own: GoUnblock and GoStart carry none, the
 * snapshot's GoCreate is dropped.  A thread that never ran during the
 * recording would be "(Inactive, no stack trace sampled)" there.  So each
 * one still unnamed at the stop is started for 0 ns on the spare P (not a
 * CPU), by G 0, and stops again at once with its identity stack: blocked
 * as it was (in the syscall the snapshot saw), or preempted if it was
 * runnable.  docs/mapping.md: "Threads that never ran". */
static void name_idle(struct gt_translator *t)
{
	int p = t->ncpus;

	for (size_t i = 0; i < t->threads.cap && !t->err; i++) {
		struct gt_thread *th = gt_tr_thread_at(t, i);

		if (!th || !th->unnamed122 || !th->ident ||
		    (th->state != GT_TH_WAITING && th->state != GT_TH_RUNNABLE))
			continue;
		bool waiting = th->state == GT_TH_WAITING;
		gt_tr_proc_start(t, p);
		if (waiting)
			gt_tr_make_runnable(t, th, p, 0);
		gt_tr_start(t, th, p);
		gt_tr_deschedule(t, th, waiting ? gt_tr_block_type(th->snap_sysnr) : GT_EV_GO_PREEMPT,
				 0);
	}
	gt_tr_stop_p(t, p);
}

/* The end of the recording at ts (the caller's stop time; never earlier
 * than an event already translated: time only moves forward).  Closing
 * events carry it, and when none is needed (nothing runs: an idle
 * process) P 0 starts and stops at ts, an empty slice that makes the
 * trace span the whole recording, not end at its last event. */
int gt_translator_end(struct gt_translator *t, uint64_t ts)
{
	if (t->err)
		return t->err;
	if (t->ended)
		return 0;
	if (!t->begun)
		gt_translator_begin(t, ts, NULL, 0);
	if (ts > t->now && ts <= GT_TS_MAX)
		t->now = ts;
	uint64_t written = t->st.events_out;
	gt_tr_late_settle(t, 0, true); /* the names the perf maps give now */
	for (int c = 0; c < t->ncpus; c++) {
		gt_tr_flush_syscall(t, c);
		if (t->cpus[c].cur)
			gt_tr_deschedule(t, t->cpus[c].cur, GT_EV_GO_PREEMPT, 0);
		gt_tr_stop_p(t, c);
	}
	/* Samples still waiting for a thread that did not run again are
	 * lost, not written by its 0 ns start in name_idle at the stop: a
	 * sample belongs to a time the thread ran. */
	for (size_t i = 0; i < t->threads.cap; i++) {
		struct gt_thread *th = gt_tr_thread_at(t, i);

		if (th)
			gt_tr_alloc_drop(t, th);
	}
	name_idle(t);
	/* Nothing written at the end (an idle process), or nothing Go 1.22+
	 * keeps (it drops the snapshot's GoCreates and Gomaxprocs, and refuses
	 * a file left with no event): one idle P, started and stopped at the
	 * end, says "nothing ran" and makes the trace reach the stop. */
	if (t->st.events_out == written || !t->survivors) {
		gt_tr_proc_start(t, 0);
		gt_tr_stop_p(t, 0);
	}
	/* Goroutines still alive are named by their comm at the end. */
	for (size_t i = 0; i < t->threads.cap; i++) {
		struct gt_thread *th = gt_tr_thread_at(t, i);

		if (th)
			gt_tr_identity_define(t, th);
	}
	if (t->v2 && !t->err)
		t->err = gt_tr_v2_end(t->v2);
	t->ended = true;
	return t->err;
}

uint64_t gt_translator_dropped(const struct gt_translator *t)
{
	return gt_tr_v2_dropped(t->v2);
}

void gt_translator_stats(const struct gt_translator *t, struct gt_translator_stats *st)
{
	*st = t->st;
}
