/* Go goroutines' pprof labels, cached (golabels.h).  A pprof.Do installs
 * a new map and never writes it after, so its text is the same at every
 * switch-out of its goroutine; the map may be freed once no goroutine
 * holds it, and another allocated at the same address: BPF's hash seed
 * (random per map) and count tell them apart.
 *
 * The target owns the memory read: a page of it may be a FUSE file's
 * that never answers, or a userfaultfd range.  The read runs on a loader
 * thread (gt_sym_call_post, on the owner's budget of calls, as the Go
 * build info does); the event loop only posts it and takes its answer. */
#include "golabels.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "sym/golabels.h"
#include "sym/loader.h"

/* A read's own state (the job's arg): the map, and the answer. */
struct read_arg {
	uint32_t tgid, hash0, count;
	uint64_t map;
	char text[GT_GOLABELS_TEXT];
};

/* The first entry of the map's set. */
static size_t set_of(uint32_t tgid, uint64_t map, uint32_t hash0)
{
	uint64_t h = (map >> 4) ^ ((uint64_t)tgid * 0x9e3779b97f4a7c15ull) ^ hash0;

	return (size_t)((h ^ (h >> 29)) % (GT_GOLABELS_CACHE / GT_GOLABELS_WAYS)) *
	       GT_GOLABELS_WAYS;
}

/* On a loader thread: may wait as long as the target's page faults do. */
static int read_labels(void *p)
{
	struct read_arg *a = p;
	char path[32];
	int fd, r;

	snprintf(path, sizeof(path), "/proc/%u/mem", a->tgid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	r = gt_golabels_read(fd, a->map, a->hash0, a->count, a->text, sizeof(a->text));
	close(fd);
	return r;
}

static void drop_job(struct gt_golabels *gl, struct gt_golabels_entry *e)
{
	if (!e->job)
		return;
	gt_sym_job_drop(e->job);
	e->job = NULL;
	gl->pending--;
}

static void post(struct gt_golabels *gl, struct gt_golabels_entry *e)
{
	struct read_arg *a = calloc(1, sizeof(*a));
	char what[64];

	e->len = -ENOMEM;
	e->hold_ts = 0;
	if (!a)
		return;
	a->tgid = e->tgid, a->map = e->map, a->hash0 = e->hash0, a->count = e->count;
	snprintf(what, sizeof(what), "/proc/%u/mem (pprof labels)", e->tgid);
	e->job = gt_sym_call_post((pid_t)e->tgid, what, read_labels, a, free);
	if (!e->job) {
		free(a);
		return;
	}
	e->posted_ns = gt_now_ns();
	gl->pending++;
	gl->reads++;
}

/* The answer, if the read has one now: 1 answered (or never posted), 0 not yet. */
static int take(struct gt_golabels *gl, struct gt_golabels_entry *e)
{
	const struct read_arg *a;
	int rc;

	if (!e->job)
		return 1;
	if (!gt_sym_job_wait(e->job, 0))
		return 0;
	a = gt_sym_call_result(e->job, &rc);
	e->len = rc;
	if (rc >= 0)
		snprintf(e->text, sizeof(e->text), "%s", a->text);
	else
		gl->failed++;
	gt_idmap_del(&gl->slow, e->tgid); /* it answers again */
	drop_job(gl, e);
	return 1;
}

/* The way of set `set` to give a new map: an empty one, else the least
 * recently used without a read under way (or with one past the hold: a
 * target whose page faults never answer must not keep ways from the
 * others' maps), else the least recently used. */
static struct gt_golabels_entry *victim(struct gt_golabels *gl, size_t set)
{
	struct gt_golabels_entry *idle = NULL, *any = NULL;
	uint64_t now = gt_now_ns();

	for (size_t i = set; i < set + GT_GOLABELS_WAYS; i++) {
		struct gt_golabels_entry *e = &gl->cache[i];
		int stuck = e->job && now - e->posted_ns >= GT_GOLABELS_HOLD_NS;

		if (!e->tgid)
			return e;
		if ((!e->job || stuck) && (!idle || e->used < idle->used))
			idle = e;
		if (!any || e->used < any->used)
			any = e;
	}
	return idle ? idle : any;
}

/* The entry of that map, found or made (its read posted); NULL without memory. */
static struct gt_golabels_entry *entry(struct gt_golabels *gl, uint32_t tgid, uint64_t map,
				       uint32_t hash0, uint32_t count, int *made)
{
	struct gt_golabels_entry *e;
	size_t set;

	*made = 0;
	if (!gl->cache && !(gl->cache = calloc(GT_GOLABELS_CACHE, sizeof(*gl->cache))))
		return NULL;
	set = set_of(tgid, map, hash0);
	for (size_t i = set; i < set + GT_GOLABELS_WAYS; i++) {
		e = &gl->cache[i];
		if (e->tgid == tgid && e->map == map && e->hash0 == hash0 && e->count == count) {
			e->used = ++gl->uses;
			return e;
		}
	}
	e = victim(gl, set);
	drop_job(gl, e); /* another map's, not needed any more */
	e->tgid = tgid, e->map = map, e->hash0 = hash0, e->count = count;
	e->used = ++gl->uses;
	post(gl, e);
	*made = 1;
	return e;
}

int gt_golabels_want(struct gt_golabels *gl, uint32_t tgid, uint64_t map, uint32_t hash0,
		     uint32_t count, uint64_t ts)
{
	struct gt_golabels_entry *e;
	int made;

	if (!tgid || !map || !(e = entry(gl, tgid, map, hash0, count, &made)) || !e->job)
		return 0;
	if (!made && !e->hold_ts)
		return 0; /* asked before, and not waited for (or no more) */
	if (gt_idmap_has(&gl->slow, tgid))
		return 0;
	if (!e->hold_ts || ts < e->hold_ts)
		e->hold_ts = ts ? ts : 1;
	return 1;
}

uint64_t gt_golabels_poll(struct gt_golabels *gl, uint64_t now_ns)
{
	uint64_t hold = UINT64_MAX;

	for (size_t i = 0; gl->pending && i < GT_GOLABELS_CACHE; i++) {
		struct gt_golabels_entry *e = &gl->cache[i];

		if (!e->job || take(gl, e) || !e->hold_ts)
			continue;
		if (now_ns - e->posted_ns >= GT_GOLABELS_HOLD_NS) {
			e->hold_ts = 0; /* not worth more of every session's delay */
			(void)gt_idmap_add(&gl->slow, e->tgid);
		} else if (e->hold_ts < hold) {
			hold = e->hold_ts;
		}
	}
	return hold;
}

static int labels_of(void *ctx, uint32_t tgid, uint64_t map, uint32_t hash0, uint32_t count,
		     char *out, size_t len)
{
	struct gt_golabels *gl = ctx;
	struct gt_golabels_entry *e;
	int made;

	if (!tgid || !len || !(e = entry(gl, tgid, map, hash0, count, &made)))
		return -1;
	if (!take(gl, e)) {
		gl->late++;
		return -EAGAIN;
	}
	if (e->len <= 0)
		return -1;
	snprintf(out, len, "%s", e->text);
	return (int)strlen(out);
}

const struct gt_golabels_source *gt_golabels_source(struct gt_golabels *gl)
{
	gl->src.labels = labels_of;
	gl->src.ctx = gl;
	return &gl->src;
}

void gt_golabels_forget(struct gt_golabels *gl, uint32_t tgid)
{
	for (size_t i = 0; gl->cache && i < GT_GOLABELS_CACHE; i++)
		if (gl->cache[i].tgid == tgid) {
			drop_job(gl, &gl->cache[i]);
			gl->cache[i].tgid = 0;
		}
	gt_idmap_del(&gl->slow, tgid);
}

void gt_golabels_free(struct gt_golabels *gl)
{
	for (size_t i = 0; gl->cache && i < GT_GOLABELS_CACHE; i++)
		drop_job(gl, &gl->cache[i]);
	free(gl->cache);
	gl->cache = NULL;
	gt_idmap_free(&gl->slow);
}
