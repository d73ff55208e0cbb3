/* P transitions of a v2 file: ProcsChange, ProcStart, ProcStop,
 * ProcStatus, ProcSteal, and the syscall events' effect on the M's P, with
 * each P's status and sequence number kept as Go's order.go keeps them
 * (the heads waiting on a P look again when it changes). */
#include <errno.h>
#include <stdio.h>

#include "gt_analyze_v2_run.h"
#include "wire/gt_events.h"

/* P p changed (status, sequence number, M): the heads waiting on it look
 * again. */
static void p_changed(struct v2run *r, uint64_t p)
{
	gt_an_v2_wake(r, PKEY(p));
}

/* P p is in status st at sequence number seq of this generation. */
static void p_set(struct v2run *r, struct pstate *ps, uint64_t p, int st, uint64_t seq)
{
	ps->status = (uint8_t)st;
	ps->gen = r->genidx;
	ps->seq = seq;
	p_changed(r, p);
}

/* ProcStatus: the P's status (a syscall stays one when restated as
 * abandoned, as in Go), its sequence number from 0.  It binds the P to
 * the M that states it only when stated running or in a syscall: an
 * abandoned syscall is stated by another M (the one about to steal it),
 * which keeps its own P (order.go's advanceProcStatus). */
static int on_proc_status(struct v2run *r, const struct v2e *e, struct mstate *ms)
{
	uint64_t p = e->args[0], st = e->args[1], stated = st;
	struct pstate *ps = pst(r, p);
	int rc;

	if (!ps)
		return -ENOMEM;
	if (st < GT_V2_P_RUNNING || st > GT_V2_P_SYSCALL_ABANDONED)
		return gt_an_v2_fail(r, "statuses", "proc status %llu is not one", st);
	if (st == GT_V2_P_SYSCALL_ABANDONED &&
	    (ps->status == GT_V2_P_SYSCALL || ps->status == GT_V2_P_SYSCALL_ABANDONED))
		st = ps->status;
	if (ps->status && ps->status != st &&
	    (rc = gt_an_v2_anomaly(r, "statuses", "ProcStatus of P %llu restates another status",
				   p)))
		return rc;
	if (stated == GT_V2_P_RUNNING || stated == GT_V2_P_SYSCALL) {
		ms->p = (int64_t)p;
		ms->pre &= (uint8_t)~PRE_P;
	}
	p_set(r, ps, p, (int)st, 0);
	return 0;
}

/* ProcSteal (it went: its P was in a syscall at the number before). */
static int on_proc_steal(struct v2run *r, const struct v2e *e, struct mstate *ms)
{
	uint64_t p = e->args[0], victim = e->args[2];
	struct pstate *ps = pst(r, p);
	struct mstate *vm;
	int old, rc;

	if (!ps)
		return -ENOMEM;
	old = ps->status;
	p_set(r, ps, p, GT_V2_P_IDLE, e->args[1]);
	if (old == GT_V2_P_SYSCALL_ABANDONED)
		return 0; /* Go: its M is not known any more */
	if (!(vm = victim == e->m ? ms : mst(r, victim)))
		return -ENOMEM;
	if (vm->p != (int64_t)p &&
	    (rc = gt_an_v2_anomaly(r, "statuses",
				   "ProcSteal of P %llu from an M that does not hold it", p)))
		return rc;
	if (vm->p == (int64_t)p)
		vm->p = -1, vm->pre &= (uint8_t)~PRE_P;
	return vm->g ? gt_an_v2_sys_block(r, vm->g, (int64_t)p, e->ts) : 0;
}

static int on_proc_stop(struct v2run *r, const struct v2e *e, struct mstate *ms)
{
	struct pstate *ps;
	int rc;

	if (ms->p < 0)
		return gt_an_v2_anomaly(r, "statuses", "ProcStop on M %llu, which holds no P", e->m);
	rc = gt_an_v2_emit(r, GT_EV_PROC_STOP, 0, ms->p, 0, 0, 0, e->ts);
	if ((ps = pst(r, (uint64_t)ms->p)))
		ps->status = GT_V2_P_IDLE;
	p_changed(r, (uint64_t)ms->p);
	ms->p = -1;
	return rc;
}

int gt_an_v2_on_proc(struct v2run *r, const struct v2e *e, struct mstate *ms)
{
	struct pstate *ps;

	switch (e->type) {
	case GT_V2_PROCS_CHANGE:
		return gt_an_v2_emit(r, GT_EV_GOMAXPROCS, 0, ms->p, e->args[0], 0, 0, e->ts);
	case GT_V2_PROC_START:
		if (!(ps = pst(r, e->args[0])))
			return -ENOMEM;
		ms->p = (int64_t)e->args[0];
		p_set(r, ps, e->args[0], GT_V2_P_RUNNING, e->args[1]);
		return gt_an_v2_emit(r, GT_EV_PROC_START, 0, ms->p, e->m, 0, 0, e->ts);
	case GT_V2_PROC_STOP:
		return on_proc_stop(r, e, ms);
	case GT_V2_PROC_STATUS:
		return on_proc_status(r, e, ms);
	case GT_V2_PROC_STEAL:
		return on_proc_steal(r, e, ms);
	}
	return 0;
}

/* GoSyscallBegin must carry its P's next sequence number (order.go fails
 * at once when it does not: "can't make sequence"); unless the generation
 * has gone out of order already. */
static int check_syscall_seq(struct v2run *r, const struct v2e *e, const struct pstate *ps,
			     uint64_t p)
{
	char msg[160];

	if (r->disorder || (ps->gen == r->genidx && e->args[0] == ps->seq + 1))
		return 0;
	snprintf(msg, sizeof(msg), "GoSyscallBegin on P %llu with sequence number %llu: "
		 "the P is at %llu%s", (unsigned long long)p,
		 (unsigned long long)e->args[0], (unsigned long long)ps->seq,
		 ps->gen != r->genidx ? " of an earlier generation" : "");
	return gt_an_v2_anomaly_msg(r, "P sequence", msg);
}

/* GoSyscallBegin and GoSyscallEnd move the M's P into and out of the
 * syscall.  GoDestroySyscall leaves the M's P abandoned in its syscall
 * (Go 1.23's order.go). */
int gt_an_v2_syscall_p(struct v2run *r, const struct v2e *e, struct mstate *ms)
{
	uint64_t p = (uint64_t)ms->p;
	struct pstate *ps = ms->p < 0 ? NULL : gt_idmap_find(&r->ps, &p);
	int rc;

	if (e->type == GT_V2_GO_DESTROY_SYSCALL) {
		/* Go 1.23: the thread lets its P go (its id may be reused) */
		if (ps) {
			ps->status = GT_V2_P_SYSCALL_ABANDONED;
			ms->p = -1;
			p_changed(r, p);
		}
		return 0;
	}
	if (!ps || !ps->status)
		return gt_an_v2_anomaly(r, "statuses",
					"a syscall event on M %llu, which holds no stated P", e->m);
	if (e->type == GT_V2_GO_SYSCALL_END) {
		ps->status = GT_V2_P_RUNNING;
		p_changed(r, p);
		return 0;
	}
	if ((rc = check_syscall_seq(r, e, ps, p)))
		return rc;
	p_set(r, ps, p, GT_V2_P_SYSCALL, e->args[0]);
	return 0;
}

static const char *p_status_name(int st)
{
	static const char *names[] = { "not stated", "running", "idle", "in a syscall",
				       "in an abandoned syscall" };

	return st >= 0 && st <= GT_V2_P_SYSCALL_ABANDONED ? names[st] : "?";
}

void gt_an_v2_p_stuck(struct v2run *r, const struct v2e *e, char *msg, size_t len)
{
	const struct mstate *ms = gt_idmap_find(&r->ms, &e->m);
	uint64_t p = e->type == GT_V2_GO_SYSCALL_END_BLOCKED ? (uint64_t)ms->p : e->args[0];
	const struct pstate *ps = gt_idmap_find(&r->ps, &p);
	int st = ps ? ps->status : 0;

	if (e->type == GT_V2_PROC_START && ms && ms->p >= 0) {
		snprintf(msg, len, "ProcStart of P %llu on M %llu, which holds P %lld",
			 (unsigned long long)p, (unsigned long long)e->m, (long long)ms->p);
		return;
	}
	if (e->type == GT_V2_GO_SYSCALL_END_BLOCKED) {
		snprintf(msg, len, "GoSyscallEndBlocked on M %llu: its P %llu never leaves the "
			 "syscall", (unsigned long long)e->m, (unsigned long long)p);
		return;
	}
	if (ps && st && ps->gen != r->genidx) {
		snprintf(msg, len, "%s of P %llu with sequence number %llu: the P has no status "
			 "in this generation", gt_v2_name(e->type), (unsigned long long)p,
			 (unsigned long long)e->args[1]);
		return;
	}
	snprintf(msg, len, "%s of P %llu with sequence number %llu: the P is %s at %llu",
		 gt_v2_name(e->type), (unsigned long long)p, (unsigned long long)e->args[1],
		 p_status_name(st), ps ? (unsigned long long)ps->seq : 0ull);
}
