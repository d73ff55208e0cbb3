/* The translator's events as a Go 1.22+ trace (docs/format.md, "Recording
 * v2"): each event the state machine writes (a Go 1.19 event on a P) is
 * turned into the v2 encoder's calls, with M = the thread:
 *
 *   - a thread that runs holds its CPU's P on its own M (its goroutine id,
 *     its TID): GoStart is ProcStart + GoStart on that M, a switch out
 *     GoStop/GoBlock + ProcStop (v1's ProcStart/ProcStop of the CPU's
 *     pseudo-M write nothing);
 *   - what G 0 does (creates, heap counters) goes on the P's pseudo-M
 *     GT_TR_M_BASE + p, which holds the P for that event only; a wakeup
 *     (GoUnblock: no P needed) from interrupt context or from no thread of
 *     ours is on that pseudo-M too;
 *   - the snapshot's threads become GoStatus (GoStatusStack with their
 *     identity stack in Go 1.23 files), waiting or runnable;
 *   - a thread first seen by its wakeup (v1's GoCreate then GoWaiting) is
 *     GoCreateBlocked in Go 1.23 files: a GoCreate after the snapshot is
 *     held until the next event says whether GoWaiting follows;
 *   - a blocking syscall is the waker's shape, as in v1: GoSyscallBegin and
 *     GoSyscallEnd at the entry, then GoBlock with the reason v1's block
 *     event has in Go 1.23's converter ("chan receive" for a read, ...);
 *   - stacks keep the translator's ids for the whole file; each is
 *     interned in the generation that uses it (tables are per generation);
 *   - a generation ends every second or 4 MiB, staged by the encoder.
 * UserLog needs a running goroutine in v2: one from no thread (a marker
 * with none on its CPU) is counted in dropped, not written. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "v2/gt_v2.h"
#include "v2/gt_v2enc.h"

#define GEN_NS 1000000000ull
#define GEN_BYTES (4ull << 20)

struct v2stack {
	struct gt_v2enc_frame *f; /* NULL: reserved, not defined yet */
	uint32_t n;
	bool late;                /* reserved: a thread's identity, whose
				     name may change; each generation takes
				     the name it has at its end */
	uint64_t gen, id;         /* its id in generation gen */
};

struct v2snap {
	uint64_t g, stack;
	bool waiting, stated;
};

/* A GoCreate after the snapshot, held (1.23) to become GoCreateBlocked if
 * the next event is its GoWaiting. */
struct v2create {
	bool held;
	int p;
	uint64_t ts, g, stack, parent;
};

struct gt_tr_v2 {
	struct gt_v2enc *e;
	struct v2create pend;
	int nps;                  /* real Ps + the spare */
	uint64_t *cur;            /* per P: the goroutine (= M) holding it, 0 none */
	bool *started;            /* per P: v1 ProcStart not consumed by a GoStart */
	struct v2stack *stacks;   /* id - 1 */
	size_t nstacks, capstacks;
	struct v2snap *snap;
	size_t nsnap, capsnap;
	uint64_t *late;           /* late stacks used this generation */
	size_t nlate, caplate;
	bool snapshot_done;
	uint64_t procs;           /* ProcsChange to write (it needs a goroutine) */
	uint64_t gen_ts, gen_bytes;
	uint64_t last;            /* the time of the last event (see next_ts) */
	uint64_t dropped;
};

static uint64_t pm(int p)
{
	return GT_TR_M_BASE + (uint64_t)p;
}

int gt_tr_v2_new(struct gt_tr_v2 **out, struct gt_v2enc *e, int ncpus)
{
	struct gt_tr_v2 *v = calloc(1, sizeof(*v));

	*out = NULL;
	if (!v)
		return -ENOMEM;
	v->e = e;
	v->nps = ncpus + 1;
	v->cur = calloc((size_t)v->nps, sizeof(*v->cur));
	v->started = calloc((size_t)v->nps, sizeof(*v->started));
	if (!v->cur || !v->started) {
		gt_tr_v2_free(v);
		return -ENOMEM;
	}
	*out = v;
	return 0;
}

static void free_frames(struct v2stack *s)
{
	for (uint32_t i = 0; i < s->n; i++) {
		free((char *)s->f[i].func);
		free((char *)s->f[i].file);
	}
	free(s->f);
	s->f = NULL;
	s->n = 0;
}

void gt_tr_v2_free(struct gt_tr_v2 *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->nstacks; i++)
		free_frames(&v->stacks[i]);
	free(v->stacks);
	free(v->late);
	free(v->snap);
	free(v->cur);
	free(v->started);
	free(v);
}

uint64_t gt_tr_v2_dropped(const struct gt_tr_v2 *v)
{
	return v ? v->dropped : 0;
}

int gt_tr_v2_busy_p(const struct gt_tr_v2 *v, int p)
{
	if (p >= 0 && p < v->nps && v->cur[p])
		return p;
	for (int q = 0; q < v->nps; q++)
		if (v->cur[q])
			return q;
	return p;
}

/* ---- stacks: the translator's ids, interned per generation -------------- */

static int set_frames(struct v2stack *s, const struct gt_frame *f, int n)
{
	struct gt_v2enc_frame *nf;

	if (n > (int)GT_V2_MAX_FRAMES)
		n = GT_V2_MAX_FRAMES;
	nf = calloc((size_t)(n > 0 ? n : 1), sizeof(*nf));
	if (!nf)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		nf[i].pc = f[i].pc ? f[i].pc : GT_STACK_FALLBACK_PC;
		nf[i].func = strdup(f[i].func ? f[i].func : GT_STACK_FALLBACK_FUNC);
		nf[i].file = strdup(f[i].file ? f[i].file : "");
		nf[i].line = f[i].line;
		if (!nf[i].func || !nf[i].file) {
			struct v2stack tmp = { nf, (uint32_t)i + 1, 0, 0 };
			free_frames(&tmp);
			return -ENOMEM;
		}
	}
	free_frames(s);
	s->f = nf;
	s->n = (uint32_t)n;
	if (!s->late)
		s->gen = 0; /* interned again where next used (a late one keeps
			     * its id: its frames are given at the generation's end) */
	return 0;
}

/* id 0: a new stack (reserved when n is 0); else defines (again) stack id.
 * Returns the id, 0 without memory. */
uint64_t gt_tr_v2_stack(struct gt_tr_v2 *v, uint64_t id, const struct gt_frame *f, int n)
{
	if (!id) {
		if (v->nstacks == v->capstacks) {
			size_t cap = v->capstacks ? v->capstacks * 2 : 256;
			struct v2stack *ns = realloc(v->stacks, cap * sizeof(*ns));

			if (!ns)
				return 0;
			v->stacks = ns;
			v->capstacks = cap;
		}
		memset(&v->stacks[v->nstacks], 0, sizeof(v->stacks[0]));
		v->stacks[v->nstacks].late = n <= 0;
		id = ++v->nstacks;
	}
	if (id > v->nstacks)
		return 0;
	if (n > 0 && set_frames(&v->stacks[id - 1], f, n))
		return 0;
	return id;
}

int gt_tr_v2_stack_rooted(struct gt_tr_v2 *v, uint64_t id, uint64_t base,
			  const struct gt_frame *root)
{
	struct gt_frame f[GT_V2_MAX_FRAMES];
	int n = 0;

	if (base && base <= v->nstacks) {
		const struct v2stack *b = &v->stacks[base - 1];

		for (uint32_t i = 0; i < b->n && n < (int)GT_V2_MAX_FRAMES - 1; i++)
			f[n++] = (struct gt_frame){ b->f[i].pc, b->f[i].func, b->f[i].file,
						    b->f[i].line };
	}
	f[n++] = *root;
	return gt_tr_v2_stack(v, id, f, n) ? 0 : -ENOMEM;
}

/* The v2 id of stack id in the open generation (0: none or undefined). */
static uint64_t sid(struct gt_tr_v2 *v, uint64_t id)
{
	struct v2stack *s;

	if (!id || id > v->nstacks)
		return 0;
	s = &v->stacks[id - 1];
	if (!s->late && !s->n)
		return 0;
	if (s->gen == v->e->gen)
		return s->id;
	if (s->late) {
		if (v->nlate == v->caplate) {
			size_t cap = v->caplate ? v->caplate * 2 : 64;
			uint64_t *nl = realloc(v->late, cap * sizeof(*nl));

			if (!nl) {
				gt_v2enc_fail(v->e, "late stacks: out of memory");
				return 0;
			}
			v->late = nl;
			v->caplate = cap;
		}
		s->id = gt_v2enc_stack_reserve(v->e);
		v->late[v->nlate++] = id;
	} else {
		s->id = gt_v2enc_stack(v->e, s->f, s->n);
	}
	s->gen = v->e->gen;
	return s->id;
}

/* The late stacks this generation used get the frames they have now. */
static int define_late(struct gt_tr_v2 *v)
{
	static const struct gt_v2enc_frame unnamed = { GT_STACK_FALLBACK_PC,
						       GT_STACK_FALLBACK_FUNC, "", 0 };
	int rc = 0;

	for (size_t i = 0; i < v->nlate && !rc; i++) {
		struct v2stack *s = &v->stacks[v->late[i] - 1];

		rc = s->n ? gt_v2enc_stack_define(v->e, s->id, s->f, s->n) :
			    gt_v2enc_stack_define(v->e, s->id, &unnamed, 1);
	}
	v->nlate = 0;
	return rc;
}

static int flush_create(struct gt_tr_v2 *v, bool blocked);

int gt_tr_v2_end(struct gt_tr_v2 *v)
{
	int rc = flush_create(v, false);

	return rc ? rc : define_late(v);
}

/* ---- the snapshot: statuses in the first generation --------------------- */

static struct v2snap *snap_of(struct gt_tr_v2 *v, uint64_t g)
{
	for (size_t i = 0; i < v->nsnap; i++)
		if (v->snap[i].g == g)
			return &v->snap[i];
	return NULL;
}

static int snap_add(struct gt_tr_v2 *v, uint64_t g, uint64_t stack)
{
	if (v->nsnap == v->capsnap) {
		size_t cap = v->capsnap ? v->capsnap * 2 : 64;
		struct v2snap *ns = realloc(v->snap, cap * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		v->snap = ns;
		v->capsnap = cap;
	}
	v->snap[v->nsnap++] = (struct v2snap){ g, stack, false, false };
	return 0;
}

/* GoStatus of a snapshot thread (with its identity stack in Go 1.23). */
/* A snapshot thread on M m.  Go 1.23: GoStatus(Stack), its identity stack
 * naming it.  Go 1.22 has no GoStatusStack, and names a goroutine stated
 * by GoStatus only from its next own stack, which one that runs and exits
 * never has: there it is created by m (which holds a P), and a waiting one
 * blocks at once, for 0 ns, with its identity stack. */
static int state_snap(struct gt_tr_v2 *v, struct v2snap *s, uint64_t m, uint64_t ts)
{
	int st = s->waiting ? GT_V2_G_WAITING : GT_V2_G_RUNNABLE;
	uint64_t stk = sid(v, s->stack);
	int rc;

	if (s->stated)
		return 0;
	s->stated = true;
	if (v->e->version >= 23)
		return gt_v2enc_go_status_stack(v->e, m, ts, s->g, st, stk);
	rc = gt_v2enc_go_create(v->e, m, ts, s->g, stk, 0);
	if (!rc && s->waiting)
		rc = gt_v2enc_go_start(v->e, m, ts, s->g);
	if (!rc && s->waiting)
		rc = gt_v2enc_go_block(v->e, m, ts, gt_v2enc_string(v->e, "unspecified"), stk);
	return rc;
}

static int end_snapshot(struct gt_tr_v2 *v, uint64_t ts)
{
	/* 1.22: created on the spare P, which no thread holds yet */
	int spare = v->nps - 1, rc = 0;
	uint64_t m = v->e->version >= 23 ? pm(0) : pm(spare);

	if (v->e->version < 23 && v->nsnap)
		rc = gt_v2enc_proc_start(v->e, m, ts, (uint64_t)spare);
	for (size_t i = 0; i < v->nsnap && !rc; i++)
		rc = state_snap(v, &v->snap[i], m, ts);
	if (!rc && v->e->version < 23 && v->nsnap)
		rc = gt_v2enc_proc_stop(v->e, m, ts);
	/* every P, idle unless a thread holds it: later generations restate
	 * only the Ps the encoder knows */
	for (int p = 0; p < v->nps && !rc; p++)
		if (!gt_idmap_get(&v->e->ps, (uint64_t)p))
			rc = gt_v2enc_proc_status(v->e, pm(0), ts, (uint64_t)p, GT_V2_P_IDLE);
	free(v->snap);
	v->snap = NULL;
	v->nsnap = v->capsnap = 0;
	v->snapshot_done = true;
	v->gen_ts = ts;
	return rc;
}

/* ---- events ------------------------------------------------------------- */

/* The M that writes a P-bound event of P p: its thread's, or the pseudo-M,
 * which then holds p for the event (*held: release it after). */
static uint64_t hold(struct gt_tr_v2 *v, int p, uint64_t ts, bool *held, int *rc)
{
	*held = !v->cur[p];
	if (!*held)
		return v->cur[p];
	*rc = gt_v2enc_proc_start(v->e, pm(p), ts, (uint64_t)p);
	return pm(p);
}

static int release(struct gt_tr_v2 *v, int p, uint64_t ts, bool held, int rc)
{
	if (held && !rc)
		rc = gt_v2enc_proc_stop(v->e, pm(p), ts);
	return rc;
}

/* v1's block events as Go 1.23's converter names them (oldtrace.go). */
static const char *block_reason(int type)
{
	switch (type) {
	case GT_EV_GO_BLOCK_SEND:   return "chan send";
	case GT_EV_GO_BLOCK_RECV:   return "chan receive";
	case GT_EV_GO_BLOCK_SELECT: return "select";
	case GT_EV_GO_BLOCK_SYNC:   return "sync";
	case GT_EV_GO_BLOCK_COND:   return "sync.(*Cond).Wait";
	case GT_EV_GO_BLOCK_NET:    return "network";
	case GT_EV_GO_SLEEP:        return "sleep";
	case GT_EV_GO_STOP:         return "forever";
	case GT_EV_GO_BLOCK_GC:     return "GC mark assist wait for work";
	default:                    return "unspecified";
	}
}

/* The goroutine on P p leaves it: GoStop/GoBlock/GoDestroy, ProcStop. */
static int leave(struct gt_tr_v2 *v, int p, int type, uint64_t ts, uint64_t stack)
{
	uint64_t m = v->cur[p];
	int rc;

	if (!m)
		return gt_v2enc_fail(v->e, "%s on P %d: no thread of ours runs there",
				     gt_event_descs[type].name, p);
	if (type == GT_EV_GO_END)
		rc = gt_v2enc_go_destroy(v->e, m, ts);
	else if (type == GT_EV_GO_PREEMPT || type == GT_EV_GO_SCHED)
		rc = gt_v2enc_go_stop(v->e, m, ts,
				      gt_v2enc_string(v->e, type == GT_EV_GO_SCHED ?
						      "runtime.Gosched" : "preempted"),
				      sid(v, stack));
	else
		rc = gt_v2enc_go_block(v->e, m, ts, gt_v2enc_string(v->e, block_reason(type)),
				       sid(v, stack));
	v->cur[p] = 0;
	return rc ? rc : gt_v2enc_proc_stop(v->e, m, ts);
}

static int start(struct gt_tr_v2 *v, int p, uint64_t g, uint64_t ts)
{
	struct v2snap *s = v->snapshot_done ? NULL : snap_of(v, g);
	int rc = 0;

	/* its status (1.22: its creation, which needs the P) on its own M: on
	 * another M at the same time it would tie (see next_ts) */
	if (s && v->e->version >= 23)
		rc = state_snap(v, s, g, ts);
	v->started[p] = false;
	if (!rc)
		rc = gt_v2enc_proc_start(v->e, g, ts, (uint64_t)p);
	if (!rc && s && v->e->version < 23)
		rc = state_snap(v, s, g, ts);
	if (!rc)
		rc = gt_v2enc_go_start(v->e, g, ts, g);
	v->cur[p] = g;
	if (!rc && v->procs) {
		/* v1's Gomaxprocs: by the first goroutine that runs, as Go's
		 * reader wants one for it (UserGoReqs) */
		uint64_t a[2] = { v->procs, 0 };

		v->procs = 0;
		rc = gt_v2enc_raw(v->e, g, ts, GT_V2_PROCS_CHANGE, a, 2);
	}
	return rc;
}

static int create(struct gt_tr_v2 *v, int p, const uint64_t *a, uint64_t ts)
{
	bool held;
	int rc = 0;
	uint64_t m;

	if (!v->snapshot_done && !v->cur[p])
		return snap_add(v, a[0], a[1]); /* stated at the snapshot's end */
	if (v->e->version >= 23 && v->snapshot_done) {
		v->pend = (struct v2create){ true, p, ts, a[0], a[1], a[2] };
		return 0;
	}
	m = hold(v, p, ts, &held, &rc);
	if (!rc)
		rc = gt_v2enc_go_create(v->e, m, ts, a[0], sid(v, a[1]), sid(v, a[2]));
	return release(v, p, ts, held, rc);
}

/* The held GoCreate, as GoCreateBlocked when blocked: at its own time, on
 * its P (before any later event, so in its generation). */
static int flush_create(struct gt_tr_v2 *v, bool blocked)
{
	struct v2create c = v->pend;
	bool held;
	int rc = 0;
	uint64_t m;

	if (!c.held)
		return 0;
	v->pend.held = false;
	m = hold(v, c.p, c.ts, &held, &rc);
	if (!rc && blocked)
		rc = gt_v2enc_go_create_blocked(v->e, m, c.ts, c.g, sid(v, c.stack),
						sid(v, c.parent));
	else if (!rc)
		rc = gt_v2enc_go_create(v->e, m, c.ts, c.g, sid(v, c.stack), sid(v, c.parent));
	return release(v, c.p, c.ts, held, rc);
}

/* GoWaiting: right after its GoCreate.  In the snapshot a status; later
 * (a thread first seen by its wakeup) GoCreateBlocked in Go 1.23 files
 * (gt_tr_v2_event), and in Go 1.22 files, which have no event that makes
 * a created goroutine wait, a 0 ns run on the pseudo-M that blocks. */
static int waiting(struct gt_tr_v2 *v, int p, uint64_t g, uint64_t ts)
{
	struct v2snap *s = v->snapshot_done ? NULL : snap_of(v, g);
	bool held;
	int rc = 0;

	if (s) {
		s->waiting = true;
		return 0;
	}
	if (v->cur[p])
		return gt_v2enc_fail(v->e, "GoWaiting on P %d: a thread runs there", p);
	hold(v, p, ts, &held, &rc);
	if (!rc)
		rc = gt_v2enc_go_start(v->e, pm(p), ts, g);
	if (!rc)
		rc = gt_v2enc_go_block(v->e, pm(p), ts, gt_v2enc_string(v->e, "unspecified"), 0);
	return release(v, p, ts, held, rc);
}

/* A P-bound event written as it is (heap counters, ProcsChange). */
static int raw(struct gt_tr_v2 *v, int p, unsigned type, uint64_t ts, const uint64_t *a, int n)
{
	bool held;
	int rc = 0;
	uint64_t m = hold(v, p, ts, &held, &rc);

	if (!rc)
		rc = gt_v2enc_raw(v->e, m, ts, type, a, (unsigned)n);
	return release(v, p, ts, held, rc);
}

static int syscall(struct gt_tr_v2 *v, int p, uint64_t ts, uint64_t stack)
{
	uint64_t m = v->cur[p];
	int rc;

	if (!m)
		return gt_v2enc_fail(v->e, "GoSysCall on P %d: no thread of ours runs there", p);
	rc = gt_v2enc_syscall_begin(v->e, m, ts, sid(v, stack));
	return rc ? rc : gt_v2enc_syscall_end(v->e, m, ts);
}

/* An empty slice of P p (v1's ProcStart then ProcStop with no goroutine):
 * the trace's only events when nothing ran. */
static int proc_stop(struct gt_tr_v2 *v, int p, uint64_t ts)
{
	int rc;

	if (!v->started[p] || v->cur[p])
		return 0;
	v->started[p] = false;
	rc = gt_v2enc_proc_start(v->e, pm(p), ts, (uint64_t)p);
	return rc ? rc : gt_v2enc_proc_stop(v->e, pm(p), ts);
}

/* A new generation every GEN_NS or GEN_BYTES, between two events. */
static int maybe_generation(struct gt_tr_v2 *v, uint64_t ts)
{
	uint64_t bytes = v->e->written + v->e->nstaged;

	if (!v->snapshot_done || (ts < v->gen_ts + GEN_NS && bytes < v->gen_bytes + GEN_BYTES))
		return 0;
	v->gen_ts = ts;
	v->gen_bytes = bytes;
	int rc = define_late(v);
	return rc ? rc : gt_v2enc_generation(v->e, ts);
}

static int event(struct gt_tr_v2 *v, int p, int type, uint64_t ts, const uint64_t *a)
{
	switch (type) {
	case GT_EV_PROC_START:
		v->started[p] = true;
		return 0;
	case GT_EV_PROC_STOP:
		return proc_stop(v, p, ts);
	case GT_EV_GOMAXPROCS:
		v->procs = a[0];
		return end_snapshot(v, ts); /* the next event is 1 ns later */
	case GT_EV_GO_CREATE:
		return create(v, p, a, ts);
	case GT_EV_GO_WAITING:
		return waiting(v, p, a[0], ts);
	case GT_EV_GO_START:
	case GT_EV_GO_START_LOCAL:
		return start(v, p, a[0], ts);
	case GT_EV_GO_END:
		return leave(v, p, type, ts, 0);
	case GT_EV_GO_SYSBLOCK:
		return leave(v, p, GT_EV_GO_BLOCK, ts, 0);
	case GT_EV_GO_PREEMPT: case GT_EV_GO_SCHED: case GT_EV_GO_SLEEP: case GT_EV_GO_BLOCK:
	case GT_EV_GO_BLOCK_SEND: case GT_EV_GO_BLOCK_RECV: case GT_EV_GO_BLOCK_SELECT:
	case GT_EV_GO_BLOCK_SYNC: case GT_EV_GO_BLOCK_COND: case GT_EV_GO_BLOCK_NET:
	case GT_EV_GO_STOP: case GT_EV_GO_BLOCK_GC:
		return leave(v, p, type, ts, a[0]);
	case GT_EV_GO_UNBLOCK:
		return gt_v2enc_go_unblock(v->e, v->cur[p] ? v->cur[p] : pm(p), ts, a[0],
					   sid(v, a[2]));
	case GT_EV_GO_UNBLOCK_LOCAL:
		return gt_v2enc_go_unblock(v->e, v->cur[p] ? v->cur[p] : pm(p), ts, a[0],
					   sid(v, a[1]));
	case GT_EV_GO_SYSEXIT:
		return gt_v2enc_go_unblock(v->e, v->cur[p] ? v->cur[p] : pm(p), ts, a[0], 0);
	case GT_EV_GO_SYSCALL:
		return syscall(v, p, ts, a[0]);
	case GT_EV_HEAP_ALLOC:
		return raw(v, p, GT_V2_HEAP_ALLOC, ts, a, 1);
	case GT_EV_HEAP_GOAL:
		return raw(v, p, GT_V2_HEAP_GOAL, ts, a, 1);
	case GT_EV_CPU_SAMPLE: {
		uint64_t g = a[2], m = g && v->cur[p] == g ? g : pm(p);

		return gt_v2enc_cpu_sample(v->e, a[0], m, a[1], g ? g : GT_V2ENC_NONE,
					   sid(v, a[3]));
	}
	default:
		return gt_v2enc_fail(v->e, "%s: the translator has no v2 form for it",
				     gt_event_descs[type].name);
	}
}

/* Go 1.23's reader, when the earliest event of its frontier cannot go,
 * sorts the frontier and tries all but the first: when two Ms' next events
 * tie in time (a thread's switch out and the next one's switch in on the
 * same CPU), the one that could go may sort first and never be tried, and
 * it stops ("failed to advance", one reading in three).  So no two events
 * written share a time: each is at least 1 ns after the one before (the
 * translator's times never go back). */
static uint64_t next_ts(struct gt_tr_v2 *v, uint64_t ts)
{
	if (ts <= v->last)
		ts = v->last + 1;
	v->last = ts;
	return ts;
}

int gt_tr_v2_event(struct gt_tr_v2 *v, int p, int type, uint64_t ts, const uint64_t *a, int n)
{
	uint64_t ca[4];
	int rc = 0;

	(void)n;
	if (p < 0 || p >= v->nps)
		return gt_v2enc_fail(v->e, "event on P %d: past the spare P", p);
	if (v->pend.held) {
		bool blocked = type == GT_EV_GO_WAITING && a[0] == v->pend.g && p == v->pend.p;

		rc = flush_create(v, blocked);
		if (rc || blocked)
			return rc < 0 ? rc : (v->e->failed ? -EINVAL : 0);
	}
	if (type == GT_EV_CPU_SAMPLE) {
		/* samples are in a batch of their own, ordered by time alone */
		if (!v->snapshot_done)
			return 0;
		memcpy(ca, a, sizeof(ca));
		ca[0] = ca[0] > v->last ? ca[0] : v->last + 1;
		a = ca;
	} else {
		ts = next_ts(v, ts);
		rc = maybe_generation(v, ts);
		if (rc)
			return rc;
		if (v->last == ts && v->gen_ts == ts)
			ts = next_ts(v, ts); /* after the statuses */
	}
	if (!rc)
		rc = event(v, p, type, ts, a);
	return rc < 0 ? rc : (v->e->failed ? -EINVAL : 0);
}

int gt_tr_v2_user_log(struct gt_tr_v2 *v, int p, uint64_t ts, const char *category,
		      uint64_t stack, const char *value)
{
	uint64_t a[4];
	int rc;

	if ((rc = flush_create(v, false)))
		return rc;
	if (p < 0 || p >= v->nps || !v->cur[p]) {
		v->dropped++; /* v2's UserLog belongs to a running goroutine */
		return 0;
	}
	if ((rc = maybe_generation(v, next_ts(v, ts))))
		return rc;
	ts = next_ts(v, ts);
	a[0] = 0;
	a[1] = gt_v2enc_string(v->e, category);
	a[2] = gt_v2enc_string(v->e, value);
	a[3] = sid(v, stack);
	return gt_v2enc_raw(v->e, v->cur[p], ts, GT_V2_USER_LOG, a, 4);
}
