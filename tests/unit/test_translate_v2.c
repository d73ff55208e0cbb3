/* The translator's v2 output (record --go-version 1.22|1.23), one shape at
 * a time: hand-built kernel events go through the real translator into the
 * v2 encoder; the test reads the file's raw events back and holds it to Go
 * 1.22/1.23's readers and Go 1.23's viewer (tests/lib/gocheck.sh).
 *
 * Threads 100..199 are traced (pid 100), tid 0 is the idle task.  Two CPUs.
 * A goroutine's id is its thread's tid (docs/mapping.md). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gt_test.h"
#include "engine/proc_snapshot.h"
#include "translate/translate.h"
#include "v2/gt_v2.h"
#include "v2/gt_v2enc.h"

#define TGID 100
#define NCPU 2
#define S_SLEEP 1 /* TASK_INTERRUPTIBLE */
#define PSEUDO_M 1000000000ull /* GT_TR_M_BASE: a P's own M */

struct tv {
	char path[64];
	int fd;
	struct gt_v2enc e;
	struct gt_translator *t;
	uint8_t *data;
	size_t len;
};

static uint32_t sess(uint32_t tid)
{
	return tid >= 100 && tid < 1000 ? 1 : 0;
}

static void hdr(struct gt_kev_hdr *h, int type, uint64_t ts, int cpu, uint32_t tid)
{
	h->ts = ts;
	h->type = (uint16_t)type;
	h->cpu = (uint16_t)cpu;
	h->tid = tid;
	h->tgid = sess(tid) ? TGID : tid;
	h->sessions = sess(tid);
}

static void feed(struct tv *x, const void *ev, size_t len)
{
	int r = gt_translator_event(x->t, ev, len);

	GT_CHECK(r == 0, "gt_translator_event: %d (%s)", r, x->e.failed ? x->e.error : "");
}

static void sw(struct tv *x, uint64_t ts, int cpu, uint32_t prev, int64_t state, uint32_t next)
{
	struct gt_kev_switch e = {0};

	hdr(&e.hdr, GT_KEV_SWITCH, ts, cpu, prev);
	e.hdr.sessions = sess(prev) | sess(next);
	e.next_tid = next;
	e.next_tgid = sess(next) ? TGID : next;
	e.prev_state = state;
	e.prev_sessions = sess(prev);
	e.next_sessions = sess(next);
	e.prev_ustack = e.prev_kstack = -1;
	e.prev_sysnr = -1;
	snprintf(e.prev_comm, sizeof(e.prev_comm), "t%u", prev);
	snprintf(e.next_comm, sizeof(e.next_comm), "t%u", next);
	feed(x, &e, sizeof(e));
}

static void wake(struct tv *x, uint64_t ts, int cpu, uint32_t waker, uint32_t target)
{
	struct gt_kev_wakeup e = {0};

	hdr(&e.hdr, GT_KEV_WAKEUP, ts, cpu, waker);
	e.target_tid = target;
	e.target_tgid = TGID;
	e.target_cpu = (uint32_t)cpu;
	e.waker_sessions = sess(waker);
	e.waker_ustack = -1;
	feed(x, &e, sizeof(e));
}

static void snap(struct gt_thread_snapshot *s, uint32_t tid, char state, int cpu)
{
	memset(s, 0, sizeof(*s));
	s->tid = tid;
	s->tgid = TGID;
	s->state = state;
	s->syscall_nr = -1;
	s->cpu = cpu;
	snprintf(s->comm, sizeof(s->comm), "t%u", tid);
}

static int tv_open(struct tv *x, int version, const struct gt_thread_snapshot *s, int n)
{
	struct gt_translator_opts o = {.ncpus = NCPU, .go_version = 1000 + version, .v2 = &x->e};
	int r;

	memset(x, 0, sizeof(*x));
	snprintf(x->path, sizeof(x->path), "/tmp/gt-test-translate-v2-XXXXXX");
	x->fd = mkstemp(x->path);
	if (x->fd < 0)
		return -errno;
	if ((r = gt_v2enc_init(&x->e, version, 1000000000ull, gt_test_fd_write, &x->fd)))
		return r;
	if ((r = gt_translator_new(&x->t, NULL, &o)))
		return r;
	return gt_translator_begin(x->t, 1000, s, n);
}

/* Ends the translation and reads the file back whole. */
static int tv_finish(struct tv *x, uint64_t ts)
{
	struct stat st;
	int r = gt_translator_end(x->t, ts);

	if (!r)
		r = gt_v2enc_finish(&x->e);
	GT_CHECK(r == 0, "end: %d (%s)", r, x->e.failed ? x->e.error : "");
	gt_translator_free(x->t);
	x->t = NULL;
	if (r || fstat(x->fd, &st) || !st.st_size)
		return -1;
	x->len = (size_t)st.st_size;
	x->data = malloc(x->len);
	if (!x->data || pread(x->fd, x->data, x->len, 0) != (ssize_t)x->len)
		return -1;
	return 0;
}

static void tv_close(struct tv *x)
{
	gt_translator_free(x->t);
	gt_v2enc_free(&x->e);
	free(x->data);
	if (x->fd >= 0)
		close(x->fd);
	if (getenv("GT_KEEP"))
		fprintf(stderr, "kept %s\n", x->path);
	else
		unlink(x->path);
}

/* What the file says of goroutine g: its GoCreate(Blocked) events, and its
 * 0 ns runs (a GoStart of g and the same M's next event a GoBlock at the
 * same time). */
struct shape {
	int create, create_blocked, zero_runs, events;
	char err[256];
};

static int read_shape(const struct tv *x, uint64_t g, struct shape *sh)
{
	struct gt_v2_file f;
	struct gt_v2_batch b;
	int r;

	memset(sh, 0, sizeof(*sh));
	if (gt_v2_open(&f, x->data, x->len)) {
		snprintf(sh->err, sizeof(sh->err), "%s", f.error);
		return -1;
	}
	while ((r = gt_v2_next_batch(&f, &b)) == 1) {
		struct gt_v2_cursor c;
		struct gt_v2_ev ev;
		bool started = false;
		uint64_t start_ts = 0;

		if (b.kind != GT_V2_K_EVENTS)
			continue;
		gt_v2_cursor_init(&c, &f, &b);
		while ((r = gt_v2_next_event(&c, &ev, sh->err, sizeof(sh->err))) == 1) {
			sh->events++;
			if ((ev.type == GT_V2_GO_CREATE || ev.type == GT_V2_GO_CREATE_BLOCKED) &&
			    ev.args[1] == g) {
				sh->create += ev.type == GT_V2_GO_CREATE;
				sh->create_blocked += ev.type == GT_V2_GO_CREATE_BLOCKED;
			}
			if (started && ev.type == GT_V2_GO_BLOCK && ev.ts == start_ts)
				sh->zero_runs++;
			started = ev.type == GT_V2_GO_START && ev.args[1] == g;
			start_ts = ev.ts;
		}
		if (r < 0)
			return -1;
	}
	if (r < 0)
		snprintf(sh->err, sizeof(sh->err), "%s", f.error);
	return r < 0 ? -1 : 0;
}

/* A thread first seen by its wakeup after the snapshot (the repair
 * "midflight"): in a Go 1.23 file it is created waiting, GoCreateBlocked,
 * as the runtime writes a goroutine that starts parked; a Go 1.22 file,
 * which has no such event, creates it and runs it for 0 ns into a block. */
static void test_midflight_create_blocked(void)
{
	static const int versions[] = {23, 22};

	for (int i = 0; i < 2; i++) {
		int v = versions[i];
		struct tv x;
		struct shape sh;
		struct gt_thread_snapshot s[2];
		char why[2048];

		snap(&s[0], 101, 'R', 0);
		snap(&s[1], 102, 'S', 1);
		GT_REQUIRE(tv_open(&x, v, s, 2) == 0, "open 1.%d: %s", v, x.e.error);
		wake(&x, 2000, 0, 101, 150);       /* 150: never seen, waiting */
		sw(&x, 2100, 1, 0, 0, 150);         /* it runs on CPU 1 */
		sw(&x, 2200, 1, 150, S_SLEEP, 0);
		wake(&x, 2300, 0, 101, 102);
		sw(&x, 2400, 1, 0, 0, 102);
		if (tv_finish(&x, 5000) == 0 && read_shape(&x, 150, &sh) == 0) {
			if (v == 23) {
				GT_CHECK(sh.create_blocked == 1 && sh.create == 0,
					 "1.23: %d GoCreateBlocked, %d GoCreate of 150",
					 sh.create_blocked, sh.create);
				GT_CHECK(sh.zero_runs == 0, "1.23: %d 0 ns runs of 150", sh.zero_runs);
			} else {
				GT_CHECK(sh.create == 1 && sh.create_blocked == 0,
					 "1.22: %d GoCreate, %d GoCreateBlocked of 150", sh.create,
					 sh.create_blocked);
				GT_CHECK(sh.zero_runs == 1, "1.22: %d 0 ns runs of 150", sh.zero_runs);
			}
			GT_CHECK(gt_test_gocheck(x.path, why, sizeof(why)) == 0, "1.%d: %s", v, why);
		} else {
			GT_CHECK(0, "1.%d: no file to read: %s", v, sh.err);
		}
		tv_close(&x);
	}
}

/* A GoCreate after the snapshot not followed by its GoWaiting (a new task,
 * runnable from its creation) stays a GoCreate in a Go 1.23 file, even as
 * the translation's last event. */
static void test_create_runnable_stays(void)
{
	struct tv x;
	struct shape sh;
	struct gt_thread_snapshot s[1];
	struct gt_kev_fork f = {0};
	char why[2048];

	snap(&s[0], 101, 'R', 0);
	GT_REQUIRE(tv_open(&x, 23, s, 1) == 0, "open: %s", x.e.error);
	hdr(&f.hdr, GT_KEV_FORK, 2000, 0, 101);
	f.child_tid = 151;
	f.child_tgid = TGID;
	f.parent_ustack = -1;
	snprintf(f.child_comm, sizeof(f.child_comm), "t151");
	feed(&x, &f, sizeof(f));
	if (tv_finish(&x, 5000) == 0 && read_shape(&x, 151, &sh) == 0) {
		GT_CHECK(sh.create == 1 && sh.create_blocked == 0, "%d GoCreate, %d blocked",
			 sh.create, sh.create_blocked);
		GT_CHECK(gt_test_gocheck(x.path, why, sizeof(why)) == 0, "%s", why);
	} else {
		GT_CHECK(0, "no file to read: %s", sh.err);
	}
	tv_close(&x);
}

int main(void)
{
	GT_RUN(test_midflight_create_blocked);
	GT_RUN(test_create_runnable_stays);
	return gt_test_done();
}
