/* Flight recording triggers (docs/design.md, "Flight recorder"): what each
 * thread of the session last did, from the kernel records themselves (not
 * the translator's repaired model), and whether it just ran again after
 * too long a wait. */
#include "flight.h"

#include <string.h>

struct trig_thread {
	uint64_t off_ts;        /* switched out to sleep, 0 = not asleep */
	uint64_t runnable_ts;   /* runnable since (woken or preempted), 0 = not */
	int64_t sysnr;          /* the syscall it sleeps in, -1 none */
	char comm[16];          /* its name, as last seen */
};

void gt_flight_trig_init(struct gt_flight_trig *tr)
{
	memset(tr, 0, sizeof(*tr));
	gt_idmap_init(&tr->threads, 1, sizeof(struct trig_thread));
}

void gt_flight_trig_free(struct gt_flight_trig *tr)
{
	gt_idmap_free(&tr->threads);
}

static struct trig_thread *thread(struct gt_flight_trig *tr, uint32_t tid)
{
	int isnew;
	struct trig_thread *th = gt_idmap_put(&tr->threads, tid, &isnew);

	if (th && isnew)
		th->sysnr = -1;
	return th;
}

/* The span trigger k measures for a thread that runs again at ts, 0 if it
 * does not apply. */
static uint64_t span_of(const struct gt_flight_trigger *k, const struct trig_thread *th,
			uint64_t ts)
{
	switch (k->kind) {
	case GT_FLIGHT_SCHED_DELAY:
		return th->runnable_ts && ts > th->runnable_ts ? ts - th->runnable_ts : 0;
	case GT_FLIGHT_OFFCPU:
		return th->off_ts && ts > th->off_ts ? ts - th->off_ts : 0;
	case GT_FLIGHT_SYSCALL:
		if (!th->off_ts || th->sysnr < 0 || (k->sysnr >= 0 && k->sysnr != th->sysnr))
			return 0;
		return ts > th->off_ts ? ts - th->off_ts : 0;
	}
	return 0;
}

/* Whether trigger k is for thread th of process tgid (--trigger ...@NAME). */
static int named(struct gt_flight_trig *tr, const struct gt_flight_trigger *k,
		 const struct trig_thread *th, uint32_t tgid)
{
	const struct trig_thread *main_th;

	if (!k->name[0] || !strncmp(th->comm, k->name, sizeof(th->comm)))
		return 1;
	main_th = gt_idmap_get(&tr->threads, tgid);
	return main_th && !strncmp(main_th->comm, k->name, sizeof(main_th->comm));
}

static int switched_in(struct gt_flight_trig *tr, const struct gt_flight_opts *o, uint32_t tid,
		       uint32_t tgid, const char *comm, uint64_t ts, struct gt_flight_fired *out)
{
	struct trig_thread *th = gt_idmap_get(&tr->threads, tid);
	int fired = 0;

	if (!th)
		return 0; /* first seen running: no span known */
	memcpy(th->comm, comm, sizeof(th->comm) - 1);
	for (int i = 0; i < o->ntriggers; i++)
		if (o->triggers[i].name[0] && !(tr->names_seen & (1u << i)) &&
		    named(tr, &o->triggers[i], th, tgid))
			tr->names_seen |= 1u << i; /* status: the name matched */
	for (int i = 0; i < o->ntriggers && !fired; i++) {
		uint64_t span = span_of(&o->triggers[i], th, ts);

		if (span <= o->triggers[i].threshold_ns || !named(tr, &o->triggers[i], th, tgid))
			continue;
		memset(out, 0, sizeof(*out));
		out->trigger = i;
		out->tid = tid;
		out->tgid = tgid;
		memcpy(out->comm, comm, sizeof(out->comm) - 1);
		out->sysnr = th->sysnr;
		out->ts = ts;
		out->span_ns = span;
		fired = 1;
	}
	th->off_ts = 0;
	th->runnable_ts = 0;
	th->sysnr = -1;
	return fired;
}

static void switched_out(struct gt_flight_trig *tr, const struct gt_kev_switch *sw)
{
	struct trig_thread *th = thread(tr, sw->hdr.tid);

	if (!th)
		return;
	memcpy(th->comm, sw->prev_comm, sizeof(th->comm) - 1);
	if (sw->prev_state == 0) { /* still runnable: preempted or yielded */
		th->off_ts = 0;
		th->runnable_ts = sw->hdr.ts;
		th->sysnr = -1;
	} else {
		th->off_ts = sw->hdr.ts;
		th->runnable_ts = 0;
		th->sysnr = sw->prev_sysnr;
	}
}

int gt_flight_trig_event(struct gt_flight_trig *tr, const struct gt_flight_opts *o,
			 uint32_t mask, const struct gt_kev_hdr *ev, struct gt_flight_fired *out)
{
	if (!o->ntriggers)
		return 0;
	if (ev->type == GT_KEV_SWITCH) {
		const struct gt_kev_switch *sw = (const void *)ev;

		if (sw->hdr.tid && (sw->prev_sessions & mask))
			switched_out(tr, sw);
		if (sw->next_tid && (sw->next_sessions & mask))
			return switched_in(tr, o, sw->next_tid, sw->next_tgid, sw->next_comm,
					   ev->ts, out);
	} else if (ev->type == GT_KEV_WAKEUP) {
		const struct gt_kev_wakeup *wk = (const void *)ev;
		struct trig_thread *th = gt_idmap_get(&tr->threads, wk->target_tid);

		if (th && !th->runnable_ts)
			th->runnable_ts = ev->ts;
	} else if (ev->type == GT_KEV_EXIT) {
		gt_idmap_del(&tr->threads, ev->tid);
	}
	return 0;
}
