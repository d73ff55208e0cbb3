/* The v2 encoder's scheduling model (gt_v2enc.h): Ms, Ps and goroutines as
 * Go's reader sees them (go 1.23 internal/trace/order.go), their sequence
 * numbers, and the statuses that open each generation.  Each call checks
 * the rule order.go applies to its event before writing it. */
#include <errno.h>

#include "v2/gt_v2.h"
#include "v2/gt_v2enc.h"

#define ULL(x) ((unsigned long long)(x))

static struct gt_v2enc_p *pget(struct gt_v2enc *e, uint64_t p)
{
	return gt_idmap_get(&e->ps, p);
}

static struct gt_v2enc_g *gget(struct gt_v2enc *e, uint64_t g)
{
	return gt_idmap_get(&e->gs, g);
}

static int ev(struct gt_v2enc *e, uint64_t m, uint64_t ts, unsigned type, uint64_t a0,
	      uint64_t a1, uint64_t a2)
{
	const uint64_t a[3] = { a0, a1, a2 };

	return gt_v2enc_emit(e, m, ts, type, a, gt_v2_descs[type].nargs - 1);
}

/* The M's state with a P (and no running goroutine when !may_g). */
static struct gt_v2enc_m *need_p(struct gt_v2enc *e, const char *what, uint64_t m, int no_g)
{
	struct gt_v2enc_m *s = e->failed ? NULL : gt_v2enc_mstate(e, m);

	if (!s)
		return NULL;
	if (s->p == GT_V2ENC_NONE) {
		gt_v2enc_fail(e, "%s on M %llu: it holds no P", what, ULL(m));
		return NULL;
	}
	if (no_g && s->g != GT_V2ENC_NONE) {
		gt_v2enc_fail(e, "%s on M %llu: goroutine %llu runs there", what, ULL(m), ULL(s->g));
		return NULL;
	}
	return s;
}

/* The running goroutine of M m (with a P), status want. */
static struct gt_v2enc_g *need_g(struct gt_v2enc *e, const char *what, uint64_t m, int want)
{
	struct gt_v2enc_m *s = need_p(e, what, m, 0);
	struct gt_v2enc_g *g;

	if (!s)
		return NULL;
	if (s->g == GT_V2ENC_NONE || !(g = gget(e, s->g)) || g->status != want) {
		gt_v2enc_fail(e, "%s on M %llu: no goroutine %s there", what, ULL(m),
			      want == GT_V2_G_SYSCALL ? "in a syscall" : "running");
		return NULL;
	}
	return g;
}

static int put_p(struct gt_v2enc *e, uint64_t m, uint64_t p, int status)
{
	int isnew;
	struct gt_v2enc_p *ps = gt_idmap_put(&e->ps, p, &isnew);
	struct gt_v2enc_m *s = gt_v2enc_mstate(e, m);

	if (!ps || !s)
		return gt_v2enc_fail(e, "out of memory");
	ps->status = (uint8_t)status;
	ps->seq = 0;
	ps->m = GT_V2ENC_NONE;
	if (status == GT_V2_P_RUNNING || status == GT_V2_P_SYSCALL) {
		ps->m = m;
		s->p = p;
	}
	return 0;
}

int gt_v2enc_proc_status(struct gt_v2enc *e, uint64_t m, uint64_t ts, uint64_t p, int status)
{
	struct gt_v2enc_m *s = e->failed ? NULL : gt_v2enc_mstate(e, m);

	if (!s)
		return -EINVAL;
	if (e->gen != 1 || pget(e, p))
		return gt_v2enc_fail(e, "ProcStatus of P %llu: only a P not seen yet, in the "
				     "first generation", ULL(p));
	if (status < GT_V2_P_RUNNING || status > GT_V2_P_SYSCALL)
		return gt_v2enc_fail(e, "ProcStatus of P %llu: status %d", ULL(p), status);
	if (status != GT_V2_P_IDLE && s->p != GT_V2ENC_NONE)
		return gt_v2enc_fail(e, "ProcStatus of P %llu on M %llu: it holds P %llu", ULL(p),
				     ULL(m), ULL(s->p));
	return put_p(e, m, p, status) ? -EINVAL : ev(e, m, ts, GT_V2_PROC_STATUS, p, status, 0);
}

static int put_g(struct gt_v2enc *e, uint64_t m, uint64_t g, int status)
{
	int isnew;
	struct gt_v2enc_g *gs = gt_idmap_put(&e->gs, g, &isnew);
	struct gt_v2enc_m *s = gt_v2enc_mstate(e, m);

	if (!gs || !s)
		return gt_v2enc_fail(e, "out of memory");
	gs->status = (uint8_t)status;
	gs->seq = 0;
	gs->m = GT_V2ENC_NONE;
	if (status == GT_V2_G_RUNNING || status == GT_V2_G_SYSCALL) {
		gs->m = m;
		s->g = g;
	}
	return 0;
}

int gt_v2enc_go_status_stack(struct gt_v2enc *e, uint64_t m, uint64_t ts, uint64_t g,
			     int status, uint64_t stack)
{
	struct gt_v2enc_m *s = e->failed ? NULL : gt_v2enc_mstate(e, m);
	int bind = status == GT_V2_G_RUNNING || status == GT_V2_G_SYSCALL;
	uint64_t a[4] = { g, bind ? m : GT_V2ENC_NONE, (uint64_t)status, stack };

	if (!s)
		return -EINVAL;
	if (e->gen != 1 || gget(e, g))
		return gt_v2enc_fail(e, "GoStatus of goroutine %llu: only one not seen yet, in the "
				     "first generation", ULL(g));
	if (status < GT_V2_G_RUNNABLE || status > GT_V2_G_WAITING || !g)
		return gt_v2enc_fail(e, "GoStatus of goroutine %llu: status %d", ULL(g), status);
	if (bind && s->g != GT_V2ENC_NONE)
		return gt_v2enc_fail(e, "GoStatus of goroutine %llu on M %llu: goroutine %llu "
				     "runs there", ULL(g), ULL(m), ULL(s->g));
	if (stack && e->version == 22)
		return gt_v2enc_fail(e, "GoStatusStack is Go 1.23's: not in a go 1.22 trace");
	if (put_g(e, m, g, status))
		return -EINVAL;
	if (stack)
		return gt_v2enc_emit(e, m, ts, GT_V2_GO_STATUS_STACK, a, 4);
	return gt_v2enc_emit(e, m, ts, GT_V2_GO_STATUS, a, 3);
}

int gt_v2enc_go_status(struct gt_v2enc *e, uint64_t m, uint64_t ts, uint64_t g, int status)
{
	return gt_v2enc_go_status_stack(e, m, ts, g, status, 0);
}

int gt_v2enc_proc_start(struct gt_v2enc *e, uint64_t m, uint64_t ts, uint64_t p)
{
	struct gt_v2enc_m *s = e->failed ? NULL : gt_v2enc_mstate(e, m);
	struct gt_v2enc_p *ps;
	int rc;

	if (!s)
		return -EINVAL;
	if (s->p != GT_V2ENC_NONE)
		return gt_v2enc_fail(e, "ProcStart of P %llu on M %llu: it holds P %llu", ULL(p),
				     ULL(m), ULL(s->p));
	if (!pget(e, p) && e->gen == 1 && (rc = gt_v2enc_proc_status(e, m, ts, p, GT_V2_P_IDLE)))
		return rc;
	if (!(ps = pget(e, p)) || ps->status != GT_V2_P_IDLE)
		return gt_v2enc_fail(e, "ProcStart of P %llu: it is not idle", ULL(p));
	ps->status = GT_V2_P_RUNNING;
	ps->m = m;
	s->p = p;
	return ev(e, m, ts, GT_V2_PROC_START, p, ++ps->seq, 0);
}

int gt_v2enc_proc_stop(struct gt_v2enc *e, uint64_t m, uint64_t ts)
{
	struct gt_v2enc_m *s = need_p(e, "ProcStop", m, 0);
	struct gt_v2enc_p *ps;

	if (!s)
		return -EINVAL;
	ps = pget(e, s->p);
	ps->status = GT_V2_P_IDLE;
	ps->m = GT_V2ENC_NONE;
	s->p = GT_V2ENC_NONE;
	return ev(e, m, ts, GT_V2_PROC_STOP, 0, 0, 0);
}

int gt_v2enc_proc_steal(struct gt_v2enc *e, uint64_t m, uint64_t ts, uint64_t p)
{
	struct gt_v2enc_p *ps = e->failed ? NULL : pget(e, p);
	struct gt_v2enc_m *victim;
	uint64_t vm;

	if (e->failed)
		return -EINVAL;
	if (!ps || ps->status != GT_V2_P_SYSCALL)
		return gt_v2enc_fail(e, "ProcSteal of P %llu: it is not in a syscall", ULL(p));
	vm = ps->m;
	if (vm == m)
		return gt_v2enc_fail(e, "ProcSteal of P %llu by M %llu: its own", ULL(p), ULL(m));
	if (!gt_v2enc_mstate(e, m) || !(victim = gt_v2enc_mstate(e, vm)))
		return -ENOMEM;
	victim->p = GT_V2ENC_NONE;
	ps->status = GT_V2_P_IDLE;
	ps->m = GT_V2ENC_NONE;
	return ev(e, m, ts, GT_V2_PROC_STEAL, p, ++ps->seq, vm);
}

/* GoCreate (runnable) or GoCreateBlocked (waiting): both need a P, and a
 * running goroutine if the M has one (order.go, advanceGoCreate). */
static int create(struct gt_v2enc *e, unsigned type, uint64_t m, uint64_t ts, uint64_t g,
		  uint64_t stack, uint64_t parent_stack)
{
	const char *name = gt_v2_descs[type].name;
	struct gt_v2enc_m *s = need_p(e, name, m, 0);
	struct gt_v2enc_g *cur;

	if (!s)
		return -EINVAL;
	if (s->g != GT_V2ENC_NONE && (cur = gget(e, s->g)) && cur->status != GT_V2_G_RUNNING)
		return gt_v2enc_fail(e, "%s on M %llu: its goroutine %llu is not running", name,
				     ULL(m), ULL(s->g));
	if (!g || gget(e, g))
		return gt_v2enc_fail(e, "%s of goroutine %llu: it exists", name, ULL(g));
	if (put_g(e, m, g, type == GT_V2_GO_CREATE ? GT_V2_G_RUNNABLE : GT_V2_G_WAITING))
		return -EINVAL;
	return ev(e, m, ts, type, g, stack, parent_stack);
}

int gt_v2enc_go_create(struct gt_v2enc *e, uint64_t m, uint64_t ts, uint64_t g, uint64_t stack,
		       uint64_t parent_stack)
{
	return create(e, GT_V2_GO_CREATE, m, ts, g, stack, parent_stack);
}

int gt_v2enc_go_create_blocked(struct gt_v2enc *e, uint64_t m, uint64_t ts, uint64_t g,
			       uint64_t stack, uint64_t parent_stack)
{
	if (e->failed)
		return -EINVAL;
	if (e->version == 22)
		return gt_v2enc_fail(e, "GoCreateBlocked is Go 1.23's: not in a go 1.22 trace");
	return create(e, GT_V2_GO_CREATE_BLOCKED, m, ts, g, stack, parent_stack);
}

int gt_v2enc_go_start(struct gt_v2enc *e, uint64_t m, uint64_t ts, uint64_t g)
{
	struct gt_v2enc_m *s = need_p(e, "GoStart", m, 1);
	struct gt_v2enc_g *gs;
	int rc;

	if (!s)
		return -EINVAL;
	if (!gget(e, g) && e->gen == 1 &&
	    (rc = gt_v2enc_go_status(e, m, ts, g, GT_V2_G_RUNNABLE)))
		return rc;
	if (!(gs = gget(e, g)) || gs->status != GT_V2_G_RUNNABLE)
		return gt_v2enc_fail(e, "GoStart of goroutine %llu: it is not runnable", ULL(g));
	gs->status = GT_V2_G_RUNNING;
	gs->m = m;
	s->g = g;
	return ev(e, m, ts, GT_V2_GO_START, g, ++gs->seq, 0);
}

/* GoStop, GoBlock, GoDestroy: the running goroutine leaves m. */
static int go_leave(struct gt_v2enc *e, uint64_t m, uint64_t ts, unsigned type, int status,
		    uint64_t reason, uint64_t stack)
{
	struct gt_v2enc_g *gs = need_g(e, gt_v2_name(type), m, GT_V2_G_RUNNING);
	struct gt_v2enc_m *s = gt_v2enc_mstate(e, m);
	uint64_t g;

	if (!gs || !s)
		return -EINVAL;
	g = s->g;
	s->g = GT_V2ENC_NONE;
	gs->m = GT_V2ENC_NONE;
	gs->status = (uint8_t)status;
	if (type == GT_V2_GO_DESTROY)
		gt_idmap_del(&e->gs, g);
	return ev(e, m, ts, type, reason, stack, 0);
}

int gt_v2enc_go_stop(struct gt_v2enc *e, uint64_t m, uint64_t ts, uint64_t reason,
		     uint64_t stack)
{
	return go_leave(e, m, ts, GT_V2_GO_STOP, GT_V2_G_RUNNABLE, reason, stack);
}

int gt_v2enc_go_block(struct gt_v2enc *e, uint64_t m, uint64_t ts, uint64_t reason,
		      uint64_t stack)
{
	return go_leave(e, m, ts, GT_V2_GO_BLOCK, GT_V2_G_WAITING, reason, stack);
}

int gt_v2enc_go_destroy(struct gt_v2enc *e, uint64_t m, uint64_t ts)
{
	return go_leave(e, m, ts, GT_V2_GO_DESTROY, 0, 0, 0);
}

int gt_v2enc_go_unblock(struct gt_v2enc *e, uint64_t m, uint64_t ts, uint64_t g, uint64_t stack)
{
	struct gt_v2enc_g *gs;
	int rc;

	if (e->failed || !gt_v2enc_mstate(e, m))
		return -EINVAL;
	if (!gget(e, g) && e->gen == 1 &&
	    (rc = gt_v2enc_go_status(e, m, ts, g, GT_V2_G_WAITING)))
		return rc;
	if (!(gs = gget(e, g)) || gs->status != GT_V2_G_WAITING)
		return gt_v2enc_fail(e, "GoUnblock of goroutine %llu: it is not waiting", ULL(g));
	gs->status = GT_V2_G_RUNNABLE;
	return ev(e, m, ts, GT_V2_GO_UNBLOCK, g, ++gs->seq, stack);
}

int gt_v2enc_syscall_begin(struct gt_v2enc *e, uint64_t m, uint64_t ts, uint64_t stack)
{
	struct gt_v2enc_g *gs = need_g(e, "GoSyscallBegin", m, GT_V2_G_RUNNING);
	struct gt_v2enc_p *ps;

	if (!gs)
		return -EINVAL;
	ps = pget(e, gt_v2enc_mstate(e, m)->p);
	gs->status = GT_V2_G_SYSCALL;
	ps->status = GT_V2_P_SYSCALL;
	return ev(e, m, ts, GT_V2_GO_SYSCALL_BEGIN, ++ps->seq, stack, 0);
}

int gt_v2enc_syscall_end(struct gt_v2enc *e, uint64_t m, uint64_t ts)
{
	struct gt_v2enc_m *s = e->failed ? NULL : gt_v2enc_mstate(e, m);
	struct gt_v2enc_g *gs;
	struct gt_v2enc_p *ps;

	if (!s)
		return -EINVAL;
	if (s->g == GT_V2ENC_NONE || !(gs = gget(e, s->g)) || gs->status != GT_V2_G_SYSCALL)
		return gt_v2enc_fail(e, "GoSyscallEnd on M %llu: no goroutine in a syscall there",
				     ULL(m));
	ps = s->p == GT_V2ENC_NONE ? NULL : pget(e, s->p);
	if (ps && ps->status == GT_V2_P_SYSCALL) {
		gs->status = GT_V2_G_RUNNING;
		ps->status = GT_V2_P_RUNNING;
		return ev(e, m, ts, GT_V2_GO_SYSCALL_END, 0, 0, 0);
	}
	/* Its P was taken: the goroutine waits for one, runnable. */
	gs->status = GT_V2_G_RUNNABLE;
	gs->m = GT_V2ENC_NONE;
	s->g = GT_V2ENC_NONE;
	return ev(e, m, ts, GT_V2_GO_SYSCALL_END_BLOCKED, 0, 0, 0);
}

/* ---- the statuses of a new generation ----------------------------------- */

struct restate {
	struct gt_v2enc *e;
	uint64_t ts, first_m;
	int rc;
};

static void restate_m(uint64_t m, void *val, void *arg)
{
	struct restate *r = arg;
	struct gt_v2enc_m *s = val;
	struct gt_v2enc_p *ps;
	struct gt_v2enc_g *gs;

	if (m < r->first_m)
		r->first_m = m;
	if (r->rc)
		return;
	if (s->p != GT_V2ENC_NONE && (ps = pget(r->e, s->p))) {
		ps->seq = 0;
		r->rc = ev(r->e, m, r->ts, GT_V2_PROC_STATUS, s->p, ps->status, 0);
	}
	if (!r->rc && s->g != GT_V2ENC_NONE && (gs = gget(r->e, s->g))) {
		gs->seq = 0;
		r->rc = ev(r->e, m, r->ts, GT_V2_GO_STATUS, s->g, m, gs->status);
	}
}

static void restate_p(uint64_t p, void *val, void *arg)
{
	struct restate *r = arg;
	struct gt_v2enc_p *ps = val;

	if (r->rc || ps->m != GT_V2ENC_NONE)
		return;
	ps->seq = 0;
	r->rc = ev(r->e, r->first_m, r->ts, GT_V2_PROC_STATUS, p, ps->status, 0);
}

static void restate_g(uint64_t g, void *val, void *arg)
{
	struct restate *r = arg;
	struct gt_v2enc_g *gs = val;

	if (r->rc || gs->m != GT_V2ENC_NONE)
		return;
	gs->seq = 0;
	r->rc = ev(r->e, r->first_m, r->ts, GT_V2_GO_STATUS, g, GT_V2ENC_NONE, gs->status);
}

/* Each M states the P it holds and its goroutine on its own batch (a
 * goroutine in a syscall too: its M is named); idle Ps and runnable or
 * waiting goroutines go on the lowest M's. */
int gt_v2enc_restate(struct gt_v2enc *e, uint64_t ts)
{
	struct restate r = { e, ts, GT_V2ENC_NONE, 0 };

	gt_idmap_each(&e->ms, restate_m, &r);
	if (!r.rc && r.first_m != GT_V2ENC_NONE) {
		gt_idmap_each(&e->ps, restate_p, &r);
		if (!r.rc)
			gt_idmap_each(&e->gs, restate_g, &r);
	}
	return r.rc;
}
