/* The shared /proc readers: stat lines with hostile comms, this process's
 * own stat and cgroup as the kernel writes them. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gt_test.h"
#include "common/proc_select.h"
#include "common/procfs.h"

static void test_stat_parse_hostile_comm(void)
{
	/* comm "a) (b c" holds spaces and both parentheses */
	const char *line = "42 (a) (b c) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
			   "123 4096 10 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0";
	struct gt_proc_stat st;

	GT_REQUIRE(gt_proc_stat_parse(line, &st) == 0, "parse");
	GT_CHECK(!strcmp(st.comm, "a) (b c"), "comm '%s'", st.comm);
	GT_CHECK(st.state == 'S', "state %c", st.state);
	GT_CHECK(st.flags == 4194560ul, "flags %lu", st.flags);
	GT_CHECK(st.cpu == 3, "cpu %d", st.cpu);
	GT_CHECK(st.ppid == 1, "ppid %d", (int)st.ppid);
}

static void test_stat_parse_refuses_garbage(void)
{
	struct gt_proc_stat st;

	GT_CHECK(gt_proc_stat_parse("", &st) == -EINVAL, "empty");
	GT_CHECK(gt_proc_stat_parse("1 (x", &st) == -EINVAL, "no close");
	GT_CHECK(gt_proc_stat_parse("1 )x( S", &st) == -EINVAL, "reversed");
	GT_CHECK(gt_proc_stat_parse("1 (x)", &st) == -EINVAL, "nothing after comm");
	/* a short line: state known, later fields unknown */
	GT_REQUIRE(gt_proc_stat_parse("1 (x) R 0", &st) == 0, "short line");
	GT_CHECK(st.state == 'R' && st.cpu == -1, "short: %c %d", st.state, st.cpu);
}

static void test_stat_of_self(void)
{
	struct gt_proc_stat st;
	char comm[32] = "";
	FILE *f = fopen("/proc/self/comm", "r");

	GT_REQUIRE(f && fgets(comm, sizeof(comm), f), "read own comm");
	fclose(f);
	comm[strcspn(comm, "\n")] = 0;
	GT_REQUIRE(gt_proc_stat(getpid(), 0, &st) == 0, "own stat");
	GT_CHECK(st.state == 'R', "running, state %c", st.state);
	GT_CHECK(!strcmp(st.comm, comm), "comm '%s' vs '%s'", st.comm, comm);
	GT_CHECK(st.cpu >= 0, "cpu %d", st.cpu);
	GT_REQUIRE(gt_proc_stat(getpid(), getpid(), &st) == 0, "own task stat");
	GT_CHECK(gt_proc_stat(0x3fffffff, 0, &st) == -ENOENT, "no such process");
}

/* A tree 1 -> 10 -> {11, 12 -> 13}, and 20 beside it, listed out of
 * order: the descendants of 10 are 11, 12 and 13, found whatever the
 * order; none of 13 (a leaf). */
static void test_descendants(void)
{
	const struct gt_proc_entry list[] = {
		{13, 12, 0}, {1, 0, 0}, {20, 1, 0}, {11, 10, 0}, {12, 10, 0}, {10, 1, 0},
	};
	pid_t root = 10, leaf = 13, out[6] = {0};
	int n = gt_proc_descendants(list, 6, &root, 1, out), seen = 0;

	GT_REQUIRE(n == 3, "descendants of 10: %d, want 3", n);
	for (int i = 0; i < n; i++)
		seen |= out[i] == 11 ? 1 : out[i] == 12 ? 2 : out[i] == 13 ? 4 : 8;
	GT_CHECK(seen == 7, "found 11, 12 and 13 only (mask %d)", seen);
	GT_CHECK(gt_proc_descendants(list, 6, &leaf, 1, NULL) == 0, "a leaf has none");
}

/* This process by its comm and by its executable's name; not by another. */
static void test_named_self(void)
{
	struct gt_proc_stat st;

	GT_REQUIRE(gt_proc_stat(getpid(), 0, &st) == 0, "own stat");
	GT_CHECK(gt_proc_is_named(getpid(), st.comm), "by comm '%s'", st.comm);
	GT_CHECK(gt_proc_is_named(getpid(), "test_procfs"), "by executable");
	GT_CHECK(!gt_proc_is_named(getpid(), "no-such-name"), "not by another name");
	GT_CHECK(!gt_proc_is_named(0x3fffffff, st.comm), "not a missing process");
}

static void test_cgroup_of_self(void)
{
	char want[4096] = "", got[4096], line[4096];
	FILE *f = fopen("/proc/self/cgroup", "r");

	GT_REQUIRE(f, "open /proc/self/cgroup");
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(want, sizeof(want), "%s", line + 3);
		}
	fclose(f);
	GT_REQUIRE(want[0], "this machine has a cgroup v2 line");
	GT_REQUIRE(gt_proc_cgroup(getpid(), NULL, got, sizeof(got)) == 0, "v2 path");
	GT_CHECK(!strcmp(got, want), "'%s' vs '%s'", got, want);
	GT_CHECK(gt_proc_cgroup(getpid(), "no_such_controller", got, sizeof(got)) == -ENOENT,
		 "unknown controller");
	GT_CHECK(gt_proc_cgroup(0x3fffffff, NULL, got, sizeof(got)) == -ENOENT, "no process");
}

int main(void)
{
	GT_RUN(test_stat_parse_hostile_comm);
	GT_RUN(test_stat_parse_refuses_garbage);
	GT_RUN(test_stat_of_self);
	GT_RUN(test_cgroup_of_self);
	GT_RUN(test_descendants);
	GT_RUN(test_named_self);
	return gt_test_done();
}
