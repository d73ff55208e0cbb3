/* See session_memtrack.h.  Every memtrack call runs as a job on the
 * engine's worker (worker.h): attaching and detaching uprobes and perf
 * events took 1.6-2.3 s per session with --heap malloc, and the rings were
 * not read meanwhile.  The worker alone touches e->mem; the completions
 * (errors, final heap values, the end of a session) come back on the
 * engine's thread.  What the engine's thread reads itself passes through
 * a job: a --heap interpose record leaves memtrack on the worker, inside
 * the START job, and reaches the session with its completion; after an
 * exec the EXEC job brings the process's new modes (session_record.c). */
#include "session_memtrack.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrack/memtrack.h"
#include "internal.h"
#include "testing.h"

/* STOP reads the final values; DETACH, posted once they are in the trace
 * and the file finished, takes the probes down (seconds with uprobes: the
 * kernel unregisters them one by one, threads or not). */
enum mem_job_kind { MEM_START, MEM_EXEC, MEM_STOP, MEM_DETACH };

struct mem_job {
	struct gt_job job;
	struct gt_engine *e;
	struct gt_session *s;        /* START, STOP */
	enum mem_job_kind kind;
	struct gt_memtrack_req req;  /* START (its pids owned by the job) */
	int explicit_req;
	int bit;                     /* STOP, DETACH */
	pid_t pid;                   /* EXEC */
	enum gt_heap_mode modes[GT_MAX_SESSIONS]; /* EXEC: pid's, by session bit */
	struct gt_mt_interpose *record; /* START: taken from memtrack, the job's
					 * until start_done hands it over */
	uint64_t end_ns;             /* STOP: the final values' stamp */
	int err;
	char why[400];
	union gt_kev_any *finals;    /* STOP: read before the detach */
	uint32_t *lens;
	int nfinals, cap;
};

static int explicit_request(const struct gt_session_opts *o)
{
	return o->heap == GT_HEAP_MALLOC || o->heap == GT_HEAP_RSS ||
	       o->heap == GT_HEAP_INTERPOSE || o->cpu_profile_hz || o->alloc_stack_every;
}

static void free_job(struct mem_job *j)
{
	free((void *)j->req.pids);
	gt_memtrack_record_close(j->record); /* never handed over */
	free(j->finals);
	free(j->lens);
	free(j);
}

/* ---- on the worker ----------------------------------------------------------- */

static int open_mem(struct mem_job *j)
{
	if (j->e->mem)
		return 0;
	/* the one session's memory programs only (gotracectl embedded) */
	return gt_memtrack_open(&j->e->mem, j->e->capture, j->e->one_session ? &j->req : NULL,
				j->why, sizeof(j->why));
}

static int keep_final(void *ctx, const struct gt_kev_hdr *ev, size_t len)
{
	struct mem_job *j = ctx;

	if (len > sizeof(union gt_kev_any))
		return 0;
	if (j->nfinals == j->cap) {
		int cap = j->cap ? 2 * j->cap : 16;
		union gt_kev_any *f = realloc(j->finals, (size_t)cap * sizeof(*f));
		uint32_t *l = f ? realloc(j->lens, (size_t)cap * sizeof(*l)) : NULL;

		if (f)
			j->finals = f;
		if (!l)
			return 0; /* a final value less: the trace keeps the last seen */
		j->lens = l;
		j->cap = cap;
	}
	memcpy(&j->finals[j->nfinals], ev, len);
	j->lens[j->nfinals++] = (uint32_t)len;
	return 0;
}

static void run_mem_job(struct gt_job *job)
{
	struct mem_job *j = (struct mem_job *)job;
	struct gt_memtrack *m;

	if (j->kind == MEM_START) {
		j->err = open_mem(j);
		if (!j->err)
			j->err = gt_memtrack_start(j->e->mem, &j->req, j->why, sizeof(j->why));
		if (!j->err)
			j->record = gt_memtrack_take_record(j->e->mem, j->req.bit);
		return;
	}
	m = j->e->mem;
	if (!m)
		return;
	if (j->kind == MEM_EXEC) {
		j->err = gt_memtrack_exec(m, j->pid, j->why, sizeof(j->why));
		for (int i = 0; i < GT_MAX_SESSIONS; i++)
			j->modes[i] = gt_memtrack_mode(m, i, j->pid);
	} else if (j->kind == MEM_DETACH)
		gt_memtrack_stop(m, j->bit);
	else /* read now, stamped at the trace's end (before the teardown) */
		gt_memtrack_final(m, j->bit, j->end_ns, keep_final, j);
}

/* ---- back on the engine's thread ------------------------------------------- */

static void start_done(struct mem_job *j)
{
	struct gt_session *s = j->s;

	s->mem_pending--;
	s->starting = 0;
	if (!j->err) {
		s->mem_active = 1;
		s->heap_record = j->record; /* the engine's thread's from now on */
		j->record = NULL;
		if (s->closing) /* stopped while attaching: its stop found none */
			gt_session_record_close(s);
		return;
	}
	s->engine->mem_bits &= ~(1u << s->bit); /* memtrack let it go */
	if (!j->explicit_req)
		return; /* the default heap mode is best effort */
	snprintf(s->start_why, sizeof(s->start_why), "memory/CPU tracking: %s", j->why);
	s->start_err = j->err;
}

static void post_detach(struct gt_engine *e, int bit);

static void stop_done(struct mem_job *j)
{
	struct gt_session *s = j->s;

	for (int i = 0; i < j->nfinals; i++)
		gt_session_deliver(s, &j->finals[i].hdr, j->lens[i]);
	s->mem_active = 0;
	s->mem_pending--;
	post_detach(j->e, j->bit);
}

static void exec_done(struct mem_job *j)
{
	if (j->err) /* the process stays in RSS mode or unprobed */
		snprintf(j->e->err, sizeof(j->e->err), "memory tracking after exec: %s", j->why);
	gt_engine_records_exec(j->e, j->pid, j->modes);
}

static void mem_job_done(struct gt_job *job)
{
	struct mem_job *j = (struct mem_job *)job;
	struct gt_session *s = j->s;

	if (j->kind == MEM_START)
		start_done(j);
	else if (j->kind == MEM_STOP)
		stop_done(j);
	else if (j->kind == MEM_DETACH)
		j->e->mem_bits &= ~(1u << j->bit); /* the bit may serve again */
	else
		exec_done(j);
	free_job(j);
	if (s)
		gt_session_mem_settled(s);
}

static struct mem_job *new_job(struct gt_engine *e, struct gt_session *s, enum mem_job_kind k)
{
	struct mem_job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->job.run = run_mem_job;
	j->job.done = mem_job_done;
	j->e = e;
	j->s = s;
	j->kind = k;
	return j;
}

int gt_session_mem_start(struct gt_session *s, const struct gt_session_opts *o)
{
	struct gt_engine *e = s->engine;
	struct mem_job *j;
	pid_t *pids = NULL;

	if (!gt_memtrack_wanted(o->heap, o->cpu_profile_hz, o->alloc_stack_every))
		return 0;
	if (gt_engine_record_stacks(e, o))
		return -ENOMEM;
	j = new_job(e, s, MEM_START);
	if (!s->by_cgroup && o->npids > 0)
		pids = malloc((size_t)o->npids * sizeof(*pids));
	if (!j || (!s->by_cgroup && o->npids > 0 && !pids)) {
		free(j);
		free(pids);
		snprintf(e->err, sizeof(e->err), "memory/CPU tracking: out of memory");
		return -ENOMEM;
	}
	j->req = (struct gt_memtrack_req){
		.bit = s->bit, .heap = o->heap, .cpu_hz = o->cpu_profile_hz,
		.alloc_every = o->alloc_stack_every, .by_cgroup = s->by_cgroup,
	};
	if (pids) {
		memcpy(pids, o->pids, (size_t)o->npids * sizeof(*pids));
		j->req.pids = pids;
		j->req.npids = o->npids;
	}
	j->explicit_req = explicit_request(o);
	e->mem_used = 1;
	e->mem_bits |= 1u << s->bit;
	s->mem_pending++;
	s->starting = 1;
	gt_worker_post(&e->worker, &j->job);
	/* inline (no thread): done already; an explicit request refused
	 * fails the start */
	if (!s->starting && s->start_err) {
		snprintf(e->err, sizeof(e->err), "%s", s->start_why);
		return s->start_err;
	}
	return 0;
}

int gt_session_mem_stop(struct gt_session *s)
{
	struct mem_job *j;

	/* the engine's thread lets go of the record before the worker stops
	 * the session (a START still pending: its completion closes it) */
	gt_session_record_close(s);
	if (!s->mem_active && !s->mem_pending)
		return 0;
	j = new_job(s->engine, s, MEM_STOP);
	if (!j)
		return 0; /* no final values; probes go with the next stop or the engine */
	j->end_ns = s->end_ns;
	j->bit = s->bit;
	s->mem_pending++;
	gt_worker_post(&s->engine->worker, &j->job);
	return s->mem_pending;
}

static void post_detach(struct gt_engine *e, int bit)
{
	struct mem_job *j = new_job(e, NULL, MEM_DETACH);

	if (!j)
		return; /* the probes stay until the engine closes: so does the bit */
	j->bit = bit;
	gt_worker_post(&e->worker, &j->job);
}

void gt_engine_mem_preload(struct gt_capture *c, void *engine)
{
	struct gt_engine *e = engine;
	const struct gt_session_opts *o = e->only;
	struct gt_memtrack_req req = {
		.heap = o->heap, .cpu_hz = o->cpu_profile_hz, .alloc_every = o->alloc_stack_every,
	};
	char why[400];

	if (!e->mem && gt_memtrack_wanted(o->heap, o->cpu_profile_hz, o->alloc_stack_every) &&
	    gt_memtrack_open(&e->mem, c, &req, why, sizeof(why)))
		e->mem = NULL;
}

void gt_engine_mem_close(struct gt_engine *e)
{
	gt_worker_stop(&e->worker);
	gt_memtrack_close(e->mem);
	e->mem = NULL;
	gt_memtrack_stacks_free(e->mem_stacks);
	e->mem_stacks = NULL;
}

void gt_engine_mem_event(struct gt_engine *e, const struct gt_kev_hdr *ev)
{
	struct mem_job *j;

	if (ev->type != GT_KEV_EXEC || !e->mem_used)
		return;
	j = new_job(e, NULL, MEM_EXEC);
	if (!j)
		return;
	j->pid = (pid_t)ev->tgid;
	gt_worker_post(&e->worker, &j->job);
}

struct gt_memtrack *gt_engine_memtrack(struct gt_engine *e)
{
	return e->mem;
}
