/* ptrace's rule for non-root clients (common/ptrace_rule.h): each of its
 * conditions refuses alone, Yama's scopes (this machine may have no Yama:
 * the decision is tested on given facts), and the /proc reading of this
 * process and of pid 1. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "gt_test.h"
#include "common/ptrace_rule.h"

static char why[512];

/* A target all of user 1000's, dumpable, without capabilities. */
static struct gt_ptrace_target own(void)
{
	struct gt_ptrace_target x = {.dumpable = 1, .descendant = 0};

	for (int i = 0; i < 4; i++) {
		x.uid[i] = 1000;
		x.gid[i] = 100;
	}
	return x;
}

static void test_each_condition_refuses(void)
{
	struct gt_tracer t = {.uid = 1000, .gid = 100, .pid = 42, .yama_scope = 0};
	struct gt_ptrace_target x = own();

	GT_CHECK(gt_ptrace_decide(&t, 7, &x, why, sizeof(why)) == 0, "own process: %s", why);
	for (int i = 0; i < 4; i++) {
		x = own();
		x.uid[i] = 0; /* a set-user-ID root program: euid, saved (or fs) uid root */
		GT_CHECK(gt_ptrace_decide(&t, 7, &x, why, sizeof(why)) == -EPERM &&
			 strstr(why, "owned by uid"), "uid %d: %s", i, why);
		x = own();
		x.gid[i] = 0;
		GT_CHECK(gt_ptrace_decide(&t, 7, &x, why, sizeof(why)) == -EPERM &&
			 strstr(why, "gids"), "gid %d: %s", i, why);
	}
	x = own();
	x.dumpable = 0;
	GT_CHECK(gt_ptrace_decide(&t, 7, &x, why, sizeof(why)) == -EPERM &&
		 strstr(why, "not dumpable"), "undumpable: %s", why);
	x = own();
	x.cap_prm = 1ull << 23; /* CAP_SYS_NICE */
	GT_CHECK(gt_ptrace_decide(&t, 7, &x, why, sizeof(why)) == -EPERM &&
		 strstr(why, "capabilities") && strstr(why, "0000000000800000"), "caps: %s", why);
	/* root decides nothing */
	t.uid = 0;
	GT_CHECK(gt_ptrace_decide(&t, 7, &x, why, sizeof(why)) == 0, "root refused: %s", why);
}

static void test_yama_scopes(void)
{
	struct gt_tracer t = {.uid = 1000, .gid = 100, .pid = 42, .yama_scope = 1};
	struct gt_ptrace_target x = own();

	GT_CHECK(gt_ptrace_decide(&t, 7, &x, why, sizeof(why)) == -EPERM &&
		 strstr(why, "ptrace_scope is 1"), "scope 1, not a descendant: %s", why);
	x.descendant = 1;
	GT_CHECK(gt_ptrace_decide(&t, 7, &x, why, sizeof(why)) == 0, "scope 1, descendant: %s", why);
	GT_CHECK(gt_ptrace_may_open_set(&t, "--cgroup", why, sizeof(why)) == -EPERM &&
		 strstr(why, "--cgroup") && strstr(why, "ptrace_scope is 1"), "scope 1 cgroup: %s", why);
	for (int scope = 2; scope <= 3; scope++) {
		t.yama_scope = scope;
		GT_CHECK(gt_ptrace_decide(&t, 7, &x, why, sizeof(why)) == -EPERM &&
			 strstr(why, "ptrace_scope is"), "scope %d: %s", scope, why);
	}
	t.yama_scope = 0;
	x.descendant = 0;
	GT_CHECK(gt_ptrace_decide(&t, 7, &x, why, sizeof(why)) == 0, "scope 0: %s", why);
	GT_CHECK(gt_ptrace_may_open_set(&t, "--cgroup", why, sizeof(why)) == 0, "scope 0 cgroup");
	t.uid = 0;
	t.yama_scope = 3;
	GT_CHECK(gt_ptrace_decide(&t, 7, &x, why, sizeof(why)) == 0, "root under scope 3: %s", why);
	GT_CHECK(gt_ptrace_may_open_set(&t, "--cgroup", why, sizeof(why)) == 0, "root cgroup");
}

/* From /proc: pid 1 (root's, with capabilities) is refused to anyone
 * else; a missing pid is -ESRCH.  (The tests run as root: a process of
 * another user is the integration tests' business, daemon_ptrace.sh.) */
static void test_from_proc(void)
{
	struct gt_tracer nobody = gt_tracer_of(65534, 65534, getpid());
	struct gt_tracer root = gt_tracer_of(0, 0, getpid());

	GT_CHECK(gt_ptrace_may(&nobody, 1, why, sizeof(why)) == -EPERM, "pid 1: %s", why);
	GT_CHECK(gt_ptrace_may(&root, 1, why, sizeof(why)) == 0, "root, pid 1: %s", why);
	GT_CHECK(gt_ptrace_may(&root, 0x3fffffff, why, sizeof(why)) == -ESRCH, "missing: %s", why);
	GT_CHECK(gt_yama_scope() >= 0 && gt_yama_scope() <= 3, "scope %d", gt_yama_scope());
	GT_CHECK(access("/proc/sys/kernel/yama/ptrace_scope", F_OK) == 0 || gt_yama_scope() == 0,
		 "no Yama but scope %d", gt_yama_scope());
}

int main(void)
{
	GT_RUN(test_each_condition_refuses);
	GT_RUN(test_yama_scopes);
	GT_RUN(test_from_proc);
	return gt_test_done();
}
