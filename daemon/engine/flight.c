/* A flight recording's segments: kept, cut, dropped, and dumped
 * (docs/design.md, "Flight recorder").
 *
 * The live model is a translator whose output is dropped: it follows the
 * records as a recording's would, resolves their stacks (recorded in the
 * current segment: flight_stacks.c), and at each segment's start gives
 * the snapshot that segment begins from; it is then rebuilt from that
 * snapshot, so what it holds (strings, stacks, threads long gone) never
 * outlives a segment.  A dump begins a fresh translator at the oldest
 * kept segment's snapshot and feeds it every kept record, through the v1
 * writer or, for --go-version 1.22|1.23, the v2 encoder (its generations
 * cut by the translator's output as a recording's are, each restating
 * every thread and P: docs/format.md "Recording v2").  The live model
 * writes v1 whatever the dump's format: only its state matters. */
#include "flight_seg.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cgroup_id.h"
#include "common/fs_ids.h"
#include "common/session_opts.h"
#include "titles.h"
#include "translate/syscall_class.h"
#include "v2/gt_v2enc.h"

#define SEG_NS_MAX 1000000000ull   /* a segment covers at most 1 s */
#define SEG_NS_MIN 10000000ull
#define SEGS_PER_CAP 8             /* a segment holds at most cap / 8 */
#define CHUNK_MAX (256u << 10)
#define CHUNK_MIN (4u << 10)

static long discard(void *ctx, int fd, const void *buf, size_t n)
{
	(void)ctx;
	(void)fd;
	(void)buf;
	return (long)n;
}

/* Where a dump's v2 bytes go: fd, with as's file-system ids if as. */
struct v2_out {
	int fd;
	const struct gt_fs_ids *as;
};

static int v2_write(void *ctx, const void *p, size_t n)
{
	const struct v2_out *o = ctx;

	return gt_fs_write_all(o->as ? gt_fs_write_as : NULL, (void *)o->as, o->fd, p, n);
}

/* A translator writing to fd: the v1 writer *w, or, when v2 is given (a
 * Go 1.22+ dump), the v2 encoder *v2 (initialized here on out). */
static int translator_on(const struct gt_flight_params *p, const struct gt_title_source *titles,
			 struct gt_writer **w, struct gt_v2enc *v2, struct v2_out *out,
			 struct gt_translator **t, int fd, const struct gt_stack_source *stacks,
			 const struct gt_fs_ids *as)
{
	/* the live model's output is dropped: no cgroup lookups for it */
	struct gt_translator_opts to = { .cgroup_path = fd < 0 ? NULL : gt_cgroup_id_path };
	/* the live model's version: a v1 one even for a v2 dump */
	int ver = p->go_version >= GT_GO_1_22 ? GT_V1_19 : p->go_version;
	int err;

	*w = NULL;
	if (v2) {
		out->fd = fd;
		out->as = as;
		err = gt_v2enc_init(v2, p->go_version - 1000, 1000000000ull, v2_write, out);
		if (err) {
			gt_v2enc_free(v2);
			return err;
		}
		ver = p->go_version;
	} else {
		/* fd -1: the live model's, its bytes dropped (fd 0 is never
		 * written); as: a user's file, written with the user's
		 * file-system ids */
		err = gt_writer_open_with(w, fd < 0 ? 0 : fd, ver, 1000000000ull,
					  fd < 0 ? discard : as ? gt_fs_write_as : NULL,
					  (void *)(uintptr_t)as);
		if (err)
			return err;
	}
	to.ncpus = p->ncpus;
	to.stacks = stacks;
	to.titles = titles;
	to.go_version = ver;
	to.session_mask = p->mask;
	to.v2 = v2;
	err = gt_translator_new(t, *w, &to);
	if (err) {
		gt_writer_free(*w);
		*w = NULL;
		if (v2)
			gt_v2enc_free(v2);
	}
	return err;
}

static void live_free(struct gt_flight *f)
{
	gt_translator_free(f->lt);
	gt_writer_free(f->lw);
	f->lt = NULL;
	f->lw = NULL;
}

static void seg_free(struct gt_flight_seg *s)
{
	struct gt_flight_chunk *c = s->first, *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
	gt_flight_seg_stacks_free(s);
	free(s->snap);
	free(s);
}

static void drop_oldest(struct gt_flight *f)
{
	struct gt_flight_seg *s = f->head;

	f->head = s->next;
	f->held -= s->bytes;
	f->st.dropped++;
	if (!s->pins) {
		seg_free(s);
		return;
	}
	s->next = f->unlinked; /* a dump reads it: freed when it is done */
	f->unlinked = s;
}

/* The cap wins over the window; the current segment always stays.  While
 * a trigger waits for --after, the window is the one before the trigger. */
static void retain(struct gt_flight *f)
{
	uint64_t ref = f->pending && f->pend.ts < f->last_ts ? f->pend.ts : f->last_ts;

	if (f->freezing)
		return; /* a dump's cut: what it writes was chosen already */
	while (f->head != f->tail && f->held > f->o.size_bytes)
		drop_oldest(f);
	/* the oldest goes once the next one alone covers the window */
	while (f->head != f->tail && f->head->next->start_ts + f->o.window_ns <= ref)
		drop_oldest(f);
}

/* A new segment at ts, from snapshot snap (taken; n threads). */
static int segment_open(struct gt_flight *f, uint64_t ts, struct gt_thread_snapshot *snap, int n)
{
	struct gt_flight_seg *s = calloc(1, sizeof(*s));
	int err;

	if (!s) {
		free(snap);
		return -ENOMEM;
	}
	s->start_ts = s->last_ts = ts;
	s->snap = snap;
	s->nsnap = n;
	s->bytes = sizeof(*s) + (uint64_t)n * sizeof(*snap);
	gt_idmap_init(&s->stacks, 4, sizeof(struct gt_flight_frames *));
	gt_idmap_init(&s->ra, 2, sizeof(int));
	if (f->tail)
		f->tail->next = s;
	else
		f->head = s;
	f->tail = s;
	f->held += s->bytes;
	gt_flight_codec_reset(&f->enc);
	live_free(f);
	err = translator_on(&f->p, f->p.titles, &f->lw, NULL, NULL, &f->lt, -1, &f->rec, NULL);
	if (!err)
		err = gt_translator_begin(f->lt, ts, snap, n);
	retain(f);
	return err;
}

int gt_flight_begin(struct gt_flight *f, uint64_t ts, const struct gt_thread_snapshot *threads,
		    int n)
{
	struct gt_thread_snapshot *copy = calloc(n > 0 ? (size_t)n : 1, sizeof(*copy));

	if (!copy)
		return -ENOMEM;
	if (n > 0)
		memcpy(copy, threads, (size_t)n * sizeof(*copy));
	f->last_ts = ts;
	return segment_open(f, ts, copy, n);
}

/* The next segment, from the live model's state now (every record before
 * ts translated). */
static int segment_cut(struct gt_flight *f, uint64_t ts)
{
	struct gt_thread_snapshot *snap;
	int n, err = gt_translator_snapshot(f->lt, &snap, &n);

	return err ? err : segment_open(f, ts, snap, n);
}

static int append(struct gt_flight *f, const struct gt_kev_hdr *ev, size_t len)
{
	struct gt_flight_seg *s = f->tail;
	struct gt_flight_chunk *c = s->last;
	size_t need = GT_FLIGHT_ENC_MAX(len);

	if (!c || c->cap - c->len < need) {
		size_t cap = need > f->chunk_size ? need : f->chunk_size;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return -ENOMEM;
		c->next = NULL;
		c->len = 0;
		c->cap = cap;
		if (s->last)
			s->last->next = c;
		else
			s->first = c;
		s->last = c;
		s->bytes += sizeof(*c) + cap;
		f->held += sizeof(*c) + cap;
	}
	c->len += gt_flight_encode(&f->enc, ev, len, c->data + c->len);
	s->records++;
	s->last_ts = ev->ts;
	return 0;
}

/* A trigger fired: accepted unless one is pending, within the holdoff of
 * the last one, or past --max-dumps. */
static void consider(struct gt_flight *f, const struct gt_flight_fired *fi)
{
	uint64_t holdoff = f->o.holdoff_set ? f->o.holdoff_ns : f->o.window_ns;

	int max = f->o.max_dumps && f->triggered >= f->o.max_dumps;

	if (f->pending || max || (f->accepted_any && fi->ts < f->last_accept_ts + holdoff)) {
		f->st.ignored++;
		/* a longer stall than the one taken, not dumped: said at once
		 * (the user would otherwise see only the first, maybe noise) */
		if (!max && f->accepted_any && fi->span_ns > f->last_span &&
		    fi->span_ns > f->held_max_span) {
			f->held_max_span = fi->span_ns;
			f->st.held_longer++;
			f->held_fi = *fi;
			f->held_fi.held = 1;
			f->held_fi.pending = f->pending;
			f->held_fi.taken_ts = f->last_accept_ts;
			f->held_fi.taken_span_ns = f->last_span;
			f->have_held = 1;
		}
		return;
	}
	f->accepted_any = 1;
	f->last_span = fi->span_ns;
	f->held_max_span = 0;
	f->last_accept_ts = fi->ts;
	f->triggered++;
	f->pending = 1;
	f->pend = *fi;
	f->have_fired = 1;
	f->fired = *fi;
	f->st.fired++;
}

int gt_flight_event(struct gt_flight *f, const struct gt_kev_hdr *ev, size_t len)
{
	union gt_kev_any copy; /* aligned: ring records may not be */
	const struct gt_kev_hdr *rec = &copy.hdr;
	struct gt_flight_fired fi;
	int err;

	if (len > sizeof(copy))
		len = sizeof(copy);
	if (len < sizeof(*ev))
		return 0;
	memcpy(&copy, ev, len);
	if (!f->tail && (err = gt_flight_begin(f, rec->ts, NULL, 0)))
		return err;
	if (rec->ts > f->tail->start_ts &&
	    (rec->ts - f->tail->start_ts >= f->seg_ns || f->tail->bytes >= f->seg_max) &&
	    (err = segment_cut(f, rec->ts)))
		return err;
	if ((err = append(f, rec, len)))
		return err;
	if (rec->ts > f->last_ts)
		f->last_ts = rec->ts;
	if (gt_flight_trig_event(&f->trig, &f->o, f->p.mask, rec, &fi))
		consider(f, &fi);
	err = gt_translator_event(f->lt, rec, len);
	if (f->held > f->o.size_bytes)
		retain(f);
	return err;
}

int gt_flight_fired(struct gt_flight *f, struct gt_flight_fired *out)
{
	if (f->have_fired) {
		f->have_fired = 0;
		*out = f->fired;
		return 1;
	}
	if (!f->have_held)
		return 0;
	f->have_held = 0;
	*out = f->held_fi;
	return 1;
}

/* Past --after by the wall clock too: a quiet target sends no record. */
#define DUE_SLACK_NS 200000000ull

int gt_flight_due(struct gt_flight *f, uint64_t now, int force, struct gt_flight_fired *out)
{
	uint64_t due;

	if (!f->pending)
		return 0;
	due = f->pend.ts + f->o.after_ns;
	if (!force && f->last_ts < due && now < due + DUE_SLACK_NS)
		return 0;
	f->pending = 0;
	*out = f->pend;
	return 1;
}

/* The wall-clock time (UTC) of CLOCK_MONOTONIC stamp ts, as
 * "YYYY-MM-DD HH:MM:SS.mmm UTC": the time the terminal said it fired. */
static void wall_utc(uint64_t ts, char *buf, size_t len)
{
	struct timespec rt, mono;
	uint64_t now, ns;
	time_t sec;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	now = (uint64_t)mono.tv_sec * 1000000000ull + (uint64_t)mono.tv_nsec;
	ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec - (now > ts ? now - ts : 0);
	sec = (time_t)(ns / 1000000000ull);
	gmtime_r(&sec, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf + strlen(buf), len - strlen(buf), ".%03u UTC",
		 (unsigned)(ns % 1000000000ull / 1000000));
}

/* The trigger's UserLog (docs/format.md "Flight dumps"): what fired, how
 * long, which thread, in which syscall, and when by the wall clock. */
static void mark_text(const struct gt_flight *f, const struct gt_flight_fired *m, char *buf,
		      size_t len)
{
	const char *sys = m->sysnr >= 0 ? gt_syscall_name(m->sysnr) : NULL;
	char when[48];

	wall_utc(m->ts, when, sizeof(when));
	snprintf(buf, len, "%s fired: %.3f ms, thread %u (%.16s) of process %u%s%s, at %s",
		 f->o.triggers[m->trigger].spec, m->span_ns / 1e6, m->tid, m->comm, m->tgid,
		 sys ? " in " : "", sys ? sys : "", when);
}

/* Every record of segment s into t (the mark before the first record
 * after its time). */
static int replay_segment(const struct gt_flight_seg *s, struct gt_translator *t,
			  const struct gt_flight_fired *m, const char *text, int *marked)
{
	struct gt_flight_codec *dec = malloc(sizeof(*dec));
	union gt_kev_any rec;
	int err = dec ? 0 : -ENOMEM;

	if (dec)
		gt_flight_codec_reset(dec);
	for (const struct gt_flight_chunk *c = s->first; c && !err; c = c->next)
		for (size_t off = 0, len, n; off < c->len && !err; off += n) {
			n = gt_flight_decode(dec, c->data + off, c->len - off, (void *)&rec, &len);
			if (!n) {
				err = -EIO; /* our own bytes: a bug */
				break;
			}
			if (!*marked && rec.hdr.ts > m->ts) {
				err = gt_translator_mark(t, m->tid, "gotraced.trigger", text);
				*marked = 1;
			}
			if (!err)
				err = gt_translator_event(t, &rec.hdr, len);
		}
	free(dec);
	return err;
}

/* A dump: the segments it reads (pinned, immutable), what it writes
 * where, and, once its thread is done, how that went. */
struct dump_job {
	struct gt_flight_params p;
	struct gt_flight_segs segs;
	struct gt_stack_source stacks;
	struct gt_titles titles;      /* a copy: the engine's changes meanwhile */
	struct gt_fs_ids as;
	int has_as, fd, has_mark;
	struct gt_flight_fired mark;
	char mark_text[256];
	uint64_t end_ts;
	int err;
	char why[256];
	atomic_int done;
};

static int replay(struct dump_job *j, struct gt_translator *t)
{
	const struct gt_flight_fired *m = j->has_mark ? &j->mark : NULL;
	int marked = !m, err;

	err = gt_translator_begin(t, j->segs.v[0]->start_ts, j->segs.v[0]->snap,
				  j->segs.v[0]->nsnap);
	for (int i = 0; i < j->segs.n && !err; i++)
		err = replay_segment(j->segs.v[i], t, m, j->mark_text, &marked);
	if (!marked && !err)
		err = gt_translator_mark(t, m->tid, "gotraced.trigger", j->mark_text);
	if (!err)
		err = gt_translator_end(t, j->end_ts);
	return err;
}

/* A dump's thread yields to the thread that reads the rings and, in
 * gotraced, answers every client: 10 nice levels below it (the kernel
 * then gives it about a tenth of the reader's share of a busy CPU).  A
 * dump is background work; a reader or a loop that waits costs drops and
 * other users' control times. */
#define DUMP_NICE 10

static void dump_yields(void)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);
	int now;

	errno = 0;
	now = getpriority(PRIO_PROCESS, (id_t)tid);
	if (errno == 0)
		setpriority(PRIO_PROCESS, (id_t)tid, now + DUMP_NICE > 19 ? 19 : now + DUMP_NICE);
}

/* The dump's own thread (or the caller's, without a pump): a fresh
 * translator and writer (v1) or encoder (v2) over the pinned segments. */
static void *dump_main(void *arg)
{
	struct dump_job *j = arg;
	struct gt_writer *w = NULL;
	struct gt_v2enc v2;
	struct v2_out out;
	int is_v2 = j->p.go_version >= GT_GO_1_22;
	struct gt_translator *t = NULL;
	int err = translator_on(&j->p, j->p.titles, &w, is_v2 ? &v2 : NULL, &out, &t, j->fd,
				&j->stacks, j->has_as ? &j->as : NULL);

	if (err) {
		snprintf(j->why, sizeof(j->why), "cannot start the trace: %.200s",
			 is_v2 && v2.failed ? v2.error : strerror(-err));
	} else {
		err = replay(j, t);
		gt_translator_free(t);
		if (is_v2) {
			if (!err)
				err = gt_v2enc_finish(&v2);
			if (err && v2.failed)
				snprintf(j->why, sizeof(j->why), "writing the trace failed: %.200s",
					 v2.error);
			gt_v2enc_free(&v2);
		} else if (err) {
			gt_writer_free(w);
		} else {
			err = gt_writer_close(w);
		}
		if (err && !j->why[0])
			snprintf(j->why, sizeof(j->why), "writing the trace failed: %.200s",
				 strerror(-err));
	}
	j->err = err;
	atomic_store(&j->done, 1);
	return NULL;
}

/* The first segment a dump reads.  A trigger's: every one kept (the
 * window before the trigger, however long --after was).  A requested
 * one: the window up to the dump, from the last segment that begins at
 * or before end - WINDOW. */
static struct gt_flight_seg *first_of(struct gt_flight *f, const struct gt_flight_fired *mark,
				      uint64_t from)
{
	struct gt_flight_seg *first = f->head;

	if (mark)
		return first;
	for (struct gt_flight_seg *s = f->head; s && s->start_ts <= from; s = s->next)
		first = s;
	return first;
}

static void *thread_main(void *arg)
{
	dump_yields();
	return dump_main(arg);
}

/* The segments a dump ending at end reads, closed by cutting a new one
 * for what comes while it is written (their records, stacks and
 * snapshots are then never touched again, and a segment dropped
 * meanwhile waits on f->unlinked).  A target quiet for longer than the
 * window gets a segment cut at end - WINDOW first (the live model's state
 * then: no record came since), so the dump is that quiet window, not the
 * last busy one again.  0, -ENODATA (nothing yet) or -ENOMEM. */
static int freeze(struct gt_flight *f, const struct gt_flight_fired *mark, uint64_t end,
		  struct gt_flight_segs *segs)
{
	uint64_t from = end > f->o.window_ns ? end - f->o.window_ns : 0;
	struct gt_flight_seg *first;
	int n = 0, err = 0;

	if (!f->head || (f->head == f->tail && !f->tail->records && !f->tail->nsnap))
		return -ENODATA;
	f->freezing = 1; /* a triggered dump's window, due now, is the one
			    kept before its trigger: not cut away here */
	if (!mark && from > f->last_ts && from > f->tail->start_ts) {
		err = segment_cut(f, from);
		f->last_ts = from; /* the model's time: nothing came until then */
	}
	first = first_of(f, mark, from);
	if (!err && (f->tail->records || first == f->tail))
		err = segment_cut(f, f->last_ts > f->tail->start_ts ? f->last_ts : f->tail->start_ts);
	f->freezing = 0;
	if (err)
		return err;
	for (struct gt_flight_seg *s = first; s != f->tail; s = s->next)
		n++;
	segs->v = calloc((size_t)n, sizeof(*segs->v));
	if (!segs->v)
		return -ENOMEM;
	segs->n = n;
	n = 0;
	for (struct gt_flight_seg *s = first; s != f->tail; s = s->next) {
		s->pins++;
		segs->v[n++] = s;
	}
	/* what the cuts left behind the window goes now (pinned: once this
	 * dump is done), not at the next record: the dumps of an idle
	 * target would pile up segments until then */
	retain(f);
	return 0;
}

static void thaw(struct gt_flight *f, struct gt_flight_segs *segs)
{
	struct gt_flight_seg **pp = &f->unlinked;

	for (int i = 0; i < segs->n; i++)
		segs->v[i]->pins--;
	while (*pp) {
		struct gt_flight_seg *s = *pp;

		if (s->pins) {
			pp = &s->next;
			continue;
		}
		*pp = s->next;
		seg_free(s);
	}
	free(segs->v);
}

static int job_init(struct gt_flight *f, struct dump_job *j, int fd,
		    const struct gt_flight_fired *mark, const struct gt_fs_ids *as, uint64_t end)
{
	j->p = f->p;
	j->fd = fd;
	j->end_ts = end;
	if (as) {
		j->as = *as;
		j->has_as = 1;
	}
	if (mark) {
		j->mark = *mark;
		j->has_mark = 1;
		mark_text(f, mark, j->mark_text, sizeof(j->mark_text));
	}
	if (f->p.title_cache) {
		gt_titles_copy(&j->titles, f->p.title_cache);
		j->p.titles = gt_titles_source(&j->titles);
	}
	gt_flight_replay_source(&j->segs, &j->stacks);
	atomic_init(&j->done, 0);
	return 0;
}

int gt_flight_dump(struct gt_flight *f, int fd, const struct gt_flight_fired *mark, uint64_t now,
		   char *why, size_t whylen)
{
	return gt_flight_dump_as(f, fd, mark, NULL, now, NULL, NULL, why, whylen);
}

/* A dump under way (gt_flight_dump_begin): its job, and its thread. */
struct gt_flight_dump {
	struct dump_job *j;
	pthread_t th;
	int threaded;
};

int gt_flight_dump_begin(struct gt_flight *f, int fd, const struct gt_flight_fired *mark,
			 const struct gt_fs_ids *as, uint64_t now, int threaded,
			 struct gt_flight_dump **out, char *why, size_t whylen)
{
	struct gt_flight_dump *d = calloc(1, sizeof(*d));
	struct dump_job *j = d ? calloc(1, sizeof(*j)) : NULL;
	/* the trace ends at the dump (the records' time, never earlier) */
	uint64_t end = now > f->last_ts ? now : f->last_ts;
	int err = j ? freeze(f, mark, end, &j->segs) : -ENOMEM;

	*out = NULL;
	if (err) {
		snprintf(why, whylen, "%s", err == -ENODATA ? "nothing recorded yet" : strerror(-err));
		free(j);
		free(d);
		return err;
	}
	job_init(f, j, fd, mark, as, end);
	d->j = j;
	/* the caller keeps reading the rings meanwhile, so that the kernel
	 * drops nothing while a long window is written */
	d->threaded = threaded && !pthread_create(&d->th, NULL, thread_main, j);
	if (d->threaded)
		pthread_setname_np(d->th, "gotraced-dump"); /* top -H, perf */
	else
		dump_main(j);
	f->dumping++;
	*out = d;
	return 0;
}

int gt_flight_dump_done(const struct gt_flight_dump *d)
{
	return atomic_load(&d->j->done);
}

int gt_flight_dump_end(struct gt_flight *f, struct gt_flight_dump *d, char *why, size_t whylen)
{
	struct dump_job *j = d->j;
	int err;

	if (d->threaded)
		pthread_join(d->th, NULL);
	err = j->err;
	if (err)
		snprintf(why, whylen, "%s", j->why);
	else
		f->st.dumps++;
	thaw(f, &j->segs);
	gt_titles_free(&j->titles);
	free(j);
	free(d);
	f->dumping--;
	/* the dump's translator and writer were freed on its thread: that
	 * thread's malloc arena keeps the pages unless asked (an always-on
	 * recorder would hold its largest dump's memory for ever) */
	malloc_trim(0);
	return err;
}

int gt_flight_dump_as(struct gt_flight *f, int fd, const struct gt_flight_fired *mark,
		      const struct gt_fs_ids *as, uint64_t now, void (*pump)(void *),
		      void *pump_ctx, char *why, size_t whylen)
{
	struct gt_flight_dump *d;
	int err = gt_flight_dump_begin(f, fd, mark, as, now, pump != NULL, &d, why, whylen);

	if (err)
		return err;
	while (!gt_flight_dump_done(d))
		pump(pump_ctx);
	return gt_flight_dump_end(f, d, why, whylen);
}

int gt_flight_new(struct gt_flight **out, const struct gt_flight_params *p)
{
	struct gt_flight *f = calloc(1, sizeof(*f));

	*out = NULL;
	if (!f)
		return -ENOMEM;
	f->o = *p->opts;
	f->p = *p;
	f->p.opts = &f->o;
	if (!f->o.window_ns)
		f->o.window_ns = GT_FLIGHT_DEFAULT_WINDOW_NS;
	if (!f->o.size_bytes)
		f->o.size_bytes = GT_FLIGHT_DEFAULT_SIZE;
	f->seg_ns = f->o.window_ns / SEGS_PER_CAP;
	if (f->seg_ns > SEG_NS_MAX)
		f->seg_ns = SEG_NS_MAX;
	if (f->seg_ns < SEG_NS_MIN)
		f->seg_ns = SEG_NS_MIN;
	f->seg_max = f->o.size_bytes / SEGS_PER_CAP;
	f->chunk_size = f->seg_max / 8;
	if (f->chunk_size > CHUNK_MAX)
		f->chunk_size = CHUNK_MAX;
	if (f->chunk_size < CHUNK_MIN)
		f->chunk_size = CHUNK_MIN;
	gt_flight_stacks_init(f);
	gt_flight_trig_init(&f->trig);
	*out = f;
	return 0;
}

void gt_flight_free(struct gt_flight *f)
{
	if (!f)
		return;
	if (f->dumping)  /* a dump's thread reads its segments: a bug */
		abort(); /* of the caller's (gt_flight_dump_end first) */
	live_free(f);
	while (f->unlinked) { /* none pinned: no dump runs now */
		struct gt_flight_seg *s = f->unlinked;
		f->unlinked = s->next;
		seg_free(s);
	}
	while (f->head) {
		struct gt_flight_seg *s = f->head;
		f->head = s->next;
		seg_free(s);
	}
	gt_flight_trig_free(&f->trig);
	free(f);
}

void gt_flight_stats(const struct gt_flight *f, struct gt_flight_stats *st)
{
	struct gt_translator_stats ts = {0};

	*st = f->st;
	st->held_bytes = f->held;
	for (const struct gt_flight_seg *s = f->head; s; s = s->next) {
		st->segments++;
		st->records += s->records;
	}
	st->span_ns = f->head && f->last_ts > f->head->start_ts ? f->last_ts - f->head->start_ts : 0;
	if (f->lt)
		gt_translator_stats(f->lt, &ts);
	st->threads = ts.threads;
	st->names_seen = f->trig.names_seen;
	for (int i = 0; i < f->o.ntriggers; i++)
		if (!f->o.triggers[i].name[0])
			st->names_seen |= 1u << i;
}
