/* Attaching and detaching the allocator probes of --heap malloc:
 * how long memtrack takes to attach them (gt_memtrack_start) and to take
 * them away (gt_memtrack_stop, what a stopping recording waits for), with
 * uprobe_multi links (Linux 6.6+: one link per program and binary) and
 * with the perf-event links of older kernels (one per function; what
 * GOTRACED_NO_UPROBE_MULTI=1 forces).  Two cases: one process busy in
 * malloc/free (tests/workloads/malloc_loop), and 4 idle processes (the
 * same, parked).  Median of 3 runs; target: stop <= 1 s.  Figures only,
 * nothing asserted.  Needs root. */
#include "../unit/mem_test_util.h"

#include "capture/capture.h"
#include "memtrack/memtrack.h"
#include "memtrack/testing.h"
#include "memtrack/uprobe_multi.h"

#define RUNS 3
#define MAX_PROCS 4

struct figures {
	double attach_ms[RUNS], stop_ms[RUNS];
	int funcs;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double median(double *v)
{
	for (int i = 1; i < RUNS; i++)
		for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
			double t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return v[RUNS / 2];
}

/* n malloc_loop processes: churning (busy) or parked on stdin. */
static int spawn(struct mt_child *c, int n, int busy)
{
	static char path[600];
	char line[256];
	char *busy_argv[] = { path, "1000000000000", NULL };
	char *idle_argv[] = { path, "--wait", "1", NULL };

	snprintf(path, sizeof(path), "%s/workloads/malloc_loop", mt_build);
	for (int i = 0; i < n; i++) {
		if (mt_spawn(&c[i], busy ? busy_argv : idle_argv) ||
		    mt_expect(&c[i], "pid", line, sizeof(line), 10000) ||
		    mt_expect(&c[i], "ready", line, sizeof(line), 10000)) {
			fprintf(stderr, "bench_uprobe_stop: %s did not start\n", path);
			return -1;
		}
	}
	return 0;
}

/* RUNS sessions of --heap malloc on pids: start, 300 ms, stop. */
static int measure(struct gt_memtrack *m, const pid_t *pids, int n, struct figures *f)
{
	struct gt_memtrack_req r = { .bit = 0, .heap = GT_HEAP_MALLOC, .pids = pids, .npids = n };
	char why[512];

	for (int i = 0; i < RUNS; i++) {
		double t0 = now_ms();
		int up, ret;

		if (gt_memtrack_start(m, &r, why, sizeof(why))) {
			fprintf(stderr, "bench_uprobe_stop: %s\n", why);
			return -1;
		}
		f->attach_ms[i] = now_ms() - t0;
		gt_memtrack_probe_count(m, 0, &up, &ret);
		f->funcs = up + ret;
		usleep(300 * 1000);
		t0 = now_ms();
		gt_memtrack_stop(m, 0);
		f->stop_ms[i] = now_ms() - t0;
	}
	return 0;
}

/* Both cases on memory programs loaded for one kind of link. */
static int one_path(struct gt_capture *cap, int multi, struct mt_child *busy,
		    struct mt_child *idle)
{
	const char *name = multi ? "uprobe_multi" : "perf-event links";
	struct gt_memtrack *m;
	pid_t pids[MAX_PROCS];
	char why[512];
	int rc = 0;

	if (multi)
		unsetenv(GT_NO_UPROBE_MULTI_ENV);
	else
		setenv(GT_NO_UPROBE_MULTI_ENV, "1", 1);
	if (gt_memtrack_open(&m, cap, NULL, why, sizeof(why))) {
		fprintf(stderr, "bench_uprobe_stop: %s\n", why);
		return -1;
	}
	if (gt_memtrack_uses_multi(m) != multi) {
		printf("%-17s not on this kernel: skipped\n", name);
		gt_memtrack_close(m);
		return 0;
	}
	for (int c = 0; c < 2 && !rc; c++) {
		struct figures f;
		int n = c == 0 ? 1 : MAX_PROCS;

		for (int i = 0; i < n; i++)
			pids[i] = c == 0 ? busy->target : idle[i].target;
		rc = measure(m, pids, n, &f);
		if (!rc)
			printf("%-17s %-22s attach %7.1f ms  stop %7.1f ms  (%d functions; "
			       "target stop <= 1000 ms)\n", name,
			       c == 0 ? "1 process, busy" : "4 processes, idle", median(f.attach_ms),
			       median(f.stop_ms), f.funcs);
	}
	gt_memtrack_close(m);
	return rc;
}

int main(int argc, char **argv)
{
	struct gt_capture_opts co = { .load_only = 1 };
	struct mt_child busy, idle[MAX_PROCS];
	struct gt_capture *cap;
	char why[512];
	int rc;

	mt_find_build(argc, argv);
	if (gt_capture_open(&cap, &co, why, sizeof(why))) {
		fprintf(stderr, "bench_uprobe_stop: %s\n", why);
		return 1;
	}
	rc = spawn(&busy, 1, 1) || spawn(idle, MAX_PROCS, 0);
	if (!rc)
		rc = one_path(cap, 1, &busy, idle) || one_path(cap, 0, &busy, idle);
	printf("(median of %d runs; a busy process hits its probes all along)\n", RUNS);
	kill(busy.pid, SIGKILL);
	mt_reap(&busy);
	for (int i = 0; i < MAX_PROCS; i++)
		mt_reap(&idle[i]);
	gt_capture_close(cap);
	return rc ? 1 : 0;
}
