// tier: system (BPF, root or real programs: not in make check-unit)
/* The engine with its worker thread (gotraced's background mode) beside
 * --heap interpose: memtrack attaches and detaches other sessions' uprobes
 * on the worker while the engine's thread reads the interposer's heap
 * record; a session stopped before its attach completed still gets its
 * record's last values.  Built with ThreadSanitizer it checks that the two
 * threads share no memtrack state (the record is handed over with the
 * attach's completion, session_record.c); a merge that ticked the record
 * through memtrack on the engine's thread showed 3 races there:
 *   CFLAGS="-O2 -g -fsanitize=thread -Wno-error=tsan" \
 *   LDFLAGS=-fsanitize=thread make BUILD=build/tsan build/tsan/tests/test_engine_worker \
 *   build/tsan/workloads/heap_mix build/tsan/workloads/sleeper build/tsan/libgotraced-heap.so
 * Needs BPF (root). */
#include <errno.h>
#include <inttypes.h>

#include "heap_shm_util.h"

/* A session's output: a temporary file, removed at the end. */
struct out {
	char path[64];
	int fd;
};

static int out_open(struct out *o)
{
	snprintf(o->path, sizeof(o->path), "/tmp/gt_engine_worker_XXXXXX");
	o->fd = mkstemp(o->path);
	return o->fd < 0 ? -errno : 0;
}

static void out_close(struct out *o)
{
	close(o->fd);
	unlink(o->path);
}

static struct gt_engine *engine_bg(void)
{
	struct gt_engine_opts eo = {.background = 1};
	struct gt_engine *e = NULL;
	char why[512];
	int rc = gt_engine_open(&e, &eo, why, sizeof(why));

	if (rc)
		gt_test_report("engine_open", 0, why);
	return e;
}

static int start(struct gt_engine *e, pid_t *pid, enum gt_heap_mode heap, unsigned every,
		 struct out *o, struct gt_session **s)
{
	struct gt_session_opts so = {.pids = pid, .npids = 1, .heap = heap,
				     .alloc_stack_every = every, .out_fd = o->fd};
	int rc = gt_session_start(e, &so, s);

	if (rc)
		gt_test_fail_at(__FILE__, __LINE__, "start", "gt_session_start: %s: %s",
				strerror(-rc), gt_engine_error(e));
	return rc;
}

/* Polls until pred(s) is false; 0, or -ETIMEDOUT after a minute. */
static int poll_while(struct gt_engine *e, struct gt_session *s,
		      int (*pred)(const struct gt_session *))
{
	for (time_t end = time(NULL) + 60; time(NULL) < end;) {
		if (!pred(s))
			return 0;
		gt_engine_poll(e, 10);
	}
	return -ETIMEDOUT;
}

static int not_ended(const struct gt_session *s)
{
	return !gt_session_ended(s);
}

/* Stops s, waits for its file, frees it; its stop's result. */
static int stop(struct gt_engine *e, struct gt_session *s)
{
	int rc = gt_session_stop(s, "test done");

	if (!gt_session_ended(s)) {
		GT_CHECK(poll_while(e, s, not_ended) == 0, "a session never finished its file");
		rc = gt_session_stop(s, NULL); /* its result, now known */
	}
	gt_session_free(s);
	return rc;
}

/* Spawns heap_mix threads (held) with the interposer, every allocation
 * sampled. */
static int spawn_mix(struct mt_child *c)
{
	static char path[600];
	char *argv[] = { path, "--wait", "threads", NULL };
	char line[256];
	int shm, rc;

	snprintf(path, sizeof(path), "%s/workloads/heap_mix", mt_build);
	rc = mt_spawn_interposed(c, argv, NULL, NULL, 1, &shm);
	if (shm >= 0)
		close(shm);
	if (rc || mt_expect(c, "pid", line, sizeof(line), 10000) ||
	    mt_expect(c, "mark before", line, sizeof(line), 10000))
		return -1;
	return 0;
}

static int spawn_sleeper(struct mt_child *c)
{
	static char path[600];
	char *argv[] = { path, "100000", "10000", NULL };
	int rc;

	snprintf(path, sizeof(path), "%s/workloads/sleeper", mt_build);
	rc = mt_spawn(c, argv);
	c->target = c->pid;
	return rc;
}

static struct mt_trace trace;

/* The record's heap values and samples are in the trace, which is valid. */
static void check_interposed(const char *path, int want_samples)
{
	mt_check_valid(path);
	GT_REQUIRE(mt_scan(path, &trace) == 0, "cannot read %s", path);
	GT_CHECK(trace.nheap > 0, "no HeapAlloc value from the record");
	if (want_samples)
		GT_CHECK(trace.nlogs >= 256, "%zu allocation samples, want 4 x 64", trace.nlogs);
	mt_free(&trace);
}

/* An interposed session records while two --heap malloc sessions attach
 * and detach their uprobes on the worker. */
static void test_record_beside_churn(void)
{
	struct gt_session *a = NULL, *b = NULL, *c = NULL;
	struct mt_child mix, sl;
	struct out oa, ob, oc;
	struct gt_engine *e = engine_bg();
	char line[256] = "";

	GT_REQUIRE(e, "no engine");
	GT_REQUIRE(spawn_mix(&mix) == 0 && spawn_sleeper(&sl) == 0, "workloads did not start");
	GT_REQUIRE(out_open(&oa) == 0 && out_open(&ob) == 0 && out_open(&oc) == 0, "no temp file");
	GT_REQUIRE(start(e, &mix.target, GT_HEAP_INTERPOSE, 1, &oa, &a) == 0, "start a");
	GT_REQUIRE(start(e, &sl.target, GT_HEAP_MALLOC, 0, &ob, &b) == 0, "start b");
	GT_CHECK(poll_while(e, a, gt_session_starting) == 0, "a's attach never completed");
	GT_CHECK(write(mix.in, "g", 1) == 1, "cannot start heap_mix");
	/* a's record is read every few ms while b's uprobes go up and down */
	for (time_t end = time(NULL) + 60; time(NULL) < end && strcmp(line, "done");) {
		gt_engine_poll(e, 10);
		if (mt_line(&mix, line, sizeof(line), 0) != 1)
			line[0] = 0;
	}
	GT_CHECK(!strcmp(line, "done"), "heap_mix never said done");
	GT_CHECK(stop(e, b) == 0, "b's trace");
	GT_REQUIRE(start(e, &sl.target, GT_HEAP_MALLOC, 0, &oc, &c) == 0, "start c");
	for (int i = 0; i < 20; i++)
		gt_engine_poll(e, 10);
	GT_CHECK(stop(e, c) == 0, "c's trace");
	GT_CHECK(stop(e, a) == 0, "a's trace");
	check_interposed(oa.path, 1);
	mt_check_valid(ob.path);
	mt_check_valid(oc.path);
	gt_engine_close(e);
	mt_reap(&mix);
	mt_reap(&sl);
	out_close(&oa);
	out_close(&ob);
	out_close(&oc);
}

/* Stopped before the worker attached anything: the record reaches a
 * closing session, which reads it once and closes it. */
static void test_stop_while_attaching(void)
{
	struct gt_session *s = NULL;
	struct mt_child mix;
	struct out o;
	struct gt_engine *e = engine_bg();
	int rc;

	GT_REQUIRE(e, "no engine");
	GT_REQUIRE(spawn_mix(&mix) == 0, "heap_mix did not start");
	GT_REQUIRE(out_open(&o) == 0, "no temp file");
	GT_REQUIRE(start(e, &mix.target, GT_HEAP_INTERPOSE, 0, &o, &s) == 0, "start");
	GT_CHECK(gt_session_starting(s), "the attach was not in the background");
	rc = stop(e, s);
	GT_CHECK(rc == 0, "the trace: %s", strerror(-rc));
	check_interposed(o.path, 0);
	gt_engine_close(e);
	mt_reap(&mix);
	out_close(&o);
}

int main(int argc, char **argv)
{
	mt_find_build(argc, argv);
	if (gt_test_skip_bpf()) {
		printf("skip test_engine_worker: GOTRACED_SKIP_BPF=1\n");
		return 0;
	}
	GT_RUN(test_record_beside_churn);
	GT_RUN(test_stop_while_attaching);
	return gt_test_done();
}
