/* The shared /proc readers: stat lines with hostile comms, this process's
 * own stat and cgroup as the kernel writes them. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gt_test.h"
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
	return gt_test_done();
}
