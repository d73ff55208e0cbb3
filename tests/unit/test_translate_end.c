/* The end of a recording (gt_translator_end): the trace spans from the
 * snapshot to the stop time the caller gives, whether the process was
 * idle (nothing to close: the trace would end at its last event) or busy
 * (its closing GoPreempt carries the stop time), and a stop time earlier
 * than an event already translated never sends time backwards.
 *
 * Each case writes a file through the real translator and writer and
 * holds it to our checker (its duration) and to Go's reader and viewer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check/gt_check.h"
#include "gt_test.h"
#include "writer/gt_writer.h"
#include "translate/translate.h"

#define TGID 100
#define NCPU 2

struct run {
	char path[64];
	int fd;
	struct gt_writer *w;
	struct gt_translator *t;
};

static int run_open(struct run *r, char state, uint64_t begin)
{
	struct gt_thread_snapshot snap = {.tid = TGID, .tgid = TGID, .state = state,
					  .syscall_nr = -1, .cpu = 0, .comm = "worker"};
	struct gt_translator_opts o = {.ncpus = NCPU};
	int err;

	memset(r, 0, sizeof(*r));
	snprintf(r->path, sizeof(r->path), "/tmp/gt-test-end-XXXXXX");
	r->fd = mkstemp(r->path);
	if (r->fd < 0)
		return -errno;
	if ((err = gt_writer_open(&r->w, r->fd, GT_V1_19, 1000000000ull)) < 0 ||
	    (err = gt_translator_new(&r->t, r->w, &o)) < 0)
		return err;
	return gt_translator_begin(r->t, begin, &snap, 1);
}

/* A switch on CPU 0 from prev to next (0 = the idle task). */
static int run_switch(struct run *r, uint64_t ts, uint32_t prev, int64_t state, uint32_t next)
{
	struct gt_kev_switch e = {0};

	e.hdr.ts = ts;
	e.hdr.type = GT_KEV_SWITCH;
	e.hdr.tid = prev;
	e.hdr.tgid = prev ? TGID : 0;
	e.hdr.sessions = 1;
	e.prev_sessions = prev ? 1 : 0;
	e.next_sessions = next ? 1 : 0;
	e.next_tid = next;
	e.next_tgid = next ? TGID : 0;
	e.prev_state = state;
	e.prev_sysnr = -1;
	e.prev_ustack = e.prev_kstack = -1;
	snprintf(e.prev_comm, sizeof(e.prev_comm), "%s", prev ? "worker" : "swapper/0");
	snprintf(e.next_comm, sizeof(e.next_comm), "%s", next ? "worker" : "swapper/0");
	return gt_translator_event(r->t, &e.hdr, sizeof(e));
}

/* Ends at ts, closes the file and checks it: valid for us and for Go,
 * lasting want_ns. */
static void run_finish(struct run *r, uint64_t ts, uint64_t want_ns)
{
	struct gt_check_report rep;
	char why[512];
	int err = gt_translator_end(r->t, ts);

	GT_CHECK(err == 0, "gt_translator_end: %d", err);
	err = gt_writer_close(r->w);
	GT_CHECK(err == 0, "gt_writer_close: %d", err);
	gt_translator_free(r->t);
	close(r->fd);
	err = gt_check_file(r->path, &rep);
	GT_CHECK(err == 0, "our checker rejects %s: %s", r->path, rep.error);
	GT_CHECK(rep.duration_ticks == want_ns, "trace lasts %llu ns, want %llu",
		 (unsigned long long)rep.duration_ticks, (unsigned long long)want_ns);
	GT_CHECK(gt_test_gocheck(r->path, why, sizeof(why)) == 0, "Go rejects %s: %s", r->path, why);
	if (!gt_test_failed_now)
		unlink(r->path);
}

/* A thread asleep all along: nothing to close, the trace still spans the
 * recording (it used to end at the snapshot). */
static void test_end_idle(void)
{
	struct run r;

	GT_REQUIRE(run_open(&r, 'S', 1000) == 0, "cannot start the translator");
	run_finish(&r, 4000001000ull, 4000000000ull);
}

/* Idle after some activity: the trace ends at the stop, not at the
 * thread's last block. */
static void test_end_idle_after_work(void)
{
	struct run r;

	GT_REQUIRE(run_open(&r, 'S', 1000) == 0, "cannot start the translator");
	GT_CHECK(run_switch(&r, 2000, 0, 0, TGID) == 0, "switch in");
	GT_CHECK(run_switch(&r, 3000, TGID, 1, 0) == 0, "switch out");
	run_finish(&r, 2000001000ull, 2000000000ull);
}

/* A thread running at the stop: descheduled at the stop time. */
static void test_end_busy(void)
{
	struct run r;

	GT_REQUIRE(run_open(&r, 'S', 1000) == 0, "cannot start the translator");
	GT_CHECK(run_switch(&r, 2000, 0, 0, TGID) == 0, "switch in");
	run_finish(&r, 3000001000ull, 3000000000ull);
}

/* A stop time before the last translated event: the closing events take
 * that event's time (time never goes backwards on a P). */
static void test_end_before_last_event(void)
{
	struct run r;

	GT_REQUIRE(run_open(&r, 'S', 1000) == 0, "cannot start the translator");
	GT_CHECK(run_switch(&r, 5000, 0, 0, TGID) == 0, "switch in");
	run_finish(&r, 3000, 4000);
}

int main(void)
{
	GT_RUN(test_end_idle);
	GT_RUN(test_end_idle_after_work);
	GT_RUN(test_end_busy);
	GT_RUN(test_end_before_last_event);
	return gt_test_done();
}
