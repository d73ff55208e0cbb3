// tier: system (BPF, root or real programs: not in make check-unit)
/* CPU samples on the real kernel: a CPU-bound workload recorded
 * with --cpu-profile has CPUSample events whose stacks name its hot
 * function; samples of other processes are filtered out in BPF; the perf
 * events are closed when the session ends.  Needs BPF (root);
 * GOTRACED_SKIP_BPF=1 skips. */
#include <inttypes.h>
#include <pthread.h>

#include <bpf/libbpf.h>

#include "memtrack/memtrack.h"
#include "engine/session_memtrack.h"
#include "mem_test_util.h"
#include "engine/testing.h"

#define HZ 1000
#define SPIN_MS 500

static struct gt_engine *engine;
static struct mt_trace *trace;

static void note_open(struct gt_engine *e, struct mt_child *c, void *arg)
{
	struct gt_memtrack_stats st;

	(void)c;
	if (gt_engine_memtrack(e)) {
		gt_memtrack_stats(gt_engine_memtrack(e), &st);
		*(int *)arg = st.cpu_events_open;
	}
}

/* A busy loop of our own while the workload is recorded: its samples
 * must not reach the trace (the BPF filter keeps the session's threads). */
static void *bystander(void *arg)
{
	volatile int *stop = arg;
	volatile uint64_t x = 0;

	while (!*stop)
		x++;
	return NULL;
}

static void test_hot_function_sampled(void)
{
	struct gt_session_opts o = { .heap = GT_HEAP_OFF, .cpu_profile_hz = HZ };
	struct gt_memtrack_stats st;
	struct mt_child c;
	struct mt_lines lines = { .n = 0 };
	char path[700], why[600];
	size_t hot = 0, with_stack = 0;
	long long spun = 0;
	uint64_t want;
	volatile int stop = 0;
	int open_during = 0;
	pthread_t by;

	GT_REQUIRE(mt_start_workload(&c, "cpu_hot", "500") == 0, "cpu_hot did not start");
	snprintf(path, sizeof(path), "%s/tests/cpu_sample.trace", mt_build);
	pthread_create(&by, NULL, bystander, (void *)&stop);
	int rc = mt_record_file(engine, &o, &c, path, &lines, note_open, &open_during, why,
				sizeof(why));
	stop = 1;
	pthread_join(by, NULL);
	GT_REQUIRE(rc == 0, "%s", why);
	GT_CHECK(open_during == libbpf_num_possible_cpus() || open_during > 0,
		 "%d perf events open while recording", open_during);
	gt_memtrack_stats(gt_engine_memtrack(engine), &st);
	GT_CHECK(st.cpu_events_open == 0, "%d perf events still open after the session",
		 st.cpu_events_open);
	mt_check_valid(path);
	GT_REQUIRE(mt_scan(path, trace) == 0, "cannot read back %s", path);
	/* one sample per ms of the workload's CPU time (it spins SPIN_MS of
	 * CPU time, printed as cpu_ns); our bystander spinning meanwhile
	 * would add about as many if the BPF filter leaked */
	for (int i = 0; i < lines.n; i++)
		sscanf(lines.l[i], "cpu_ns %lld", &spun);
	GT_REQUIRE(spun >= SPIN_MS * 1000000LL, "cpu_hot spun %lld ns", spun);
	want = (uint64_t)spun / (1000000000ull / HZ);
	GT_CHECK(trace->samples >= want * 7 / 10 && trace->samples <= want * 13 / 10,
		 "%" PRIu64 " samples for %lld ns of CPU time at %d Hz (want ~%" PRIu64 ")",
		 trace->samples, spun, HZ, want);
	for (size_t i = 0; i < trace->nsample_stacks; i++) {
		const char *s = mt_stack(trace, trace->sample_stacks[i]);

		with_stack += *s != 0;
		hot += strstr(s, "cpu_hot_spin") != NULL;
		GT_CHECK(!strstr(s, "bystander"), "a sample of the untraced test thread: %s", s);
	}
	GT_CHECK(hot * 10 >= trace->nsample_stacks * 8, "%zu of %zu sample stacks name cpu_hot_spin",
		 hot, trace->nsample_stacks);
	printf("# %" PRIu64 " samples, %zu with stacks, %zu in cpu_hot_spin\n", trace->samples,
	       with_stack, hot);
	mt_free(trace);
}

/* Older trace versions have no CPUSample: the session records without
 * them and the file stays valid. */
static void test_old_version_no_samples(void)
{
	struct gt_session_opts o = { .heap = GT_HEAP_OFF, .cpu_profile_hz = HZ,
				     .go_version = GT_V1_11 };
	struct mt_child c;
	char path[700], why[600];

	GT_REQUIRE(mt_start_workload(&c, "cpu_hot", "100") == 0, "cpu_hot did not start");
	snprintf(path, sizeof(path), "%s/tests/cpu_sample_111.trace", mt_build);
	int rc = mt_record_file(engine, &o, &c, path, NULL, NULL, NULL, why, sizeof(why));
	GT_REQUIRE(rc == 0, "%s", why);
	mt_check_valid(path);
	GT_REQUIRE(mt_scan(path, trace) == 0, "cannot read back %s", path);
	GT_CHECK(trace->samples == 0, "%" PRIu64 " CPUSample in a 1.11 trace", trace->samples);
	mt_free(trace);
}

static void bpf_cases(void)
{
	GT_RUN(test_hot_function_sampled);
	GT_RUN(test_old_version_no_samples);
}

int main(int argc, char **argv)
{
	mt_find_build(argc, argv);
	mt_run_bpf("test_cpu_sample", &engine, &trace, bpf_cases);
	return gt_test_done();
}
