// tier: system (BPF, root or real programs: not in make check-unit)
/* A cgroup id (the inode number BPF reads as kn->id) back to its path in
 * the cpu controller's hierarchy (daemon/common/cgroup_id.c), against this
 * machine's tree: the test makes two nested cgroups there, resolves their
 * directories' inode numbers, and removes them.  Needs root. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cgroup_id.h"
#include "gt_test.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

static char mnt[PATH_MAX], top[PATH_MAX], sub[PATH_MAX], rel[256];

/* The cpu controller's mount, as the code under test finds it: v1's
 * "cpu" mount, else the cgroup v2 mount. */
static int cpu_mount(void)
{
	if (!access("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", F_OK)) {
		snprintf(mnt, sizeof(mnt), "/sys/fs/cgroup/cpu");
		return 0;
	}
	if (!access("/sys/fs/cgroup/cgroup.controllers", F_OK)) {
		snprintf(mnt, sizeof(mnt), "/sys/fs/cgroup");
		return 0;
	}
	return -1;
}

static uint64_t ino(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (uint64_t)st.st_ino;
}

static void test_nested(void)
{
	char out[PATH_MAX], want[PATH_MAX];
	int rc = gt_cgroup_id_path(ino(sub), out, sizeof(out));

	snprintf(want, sizeof(want), "%s/sub", rel);
	GT_CHECK(rc == 0 && !strcmp(out, want), "id of %s: rc %d, %s (want %s)", sub, rc, out,
		 want);
	rc = gt_cgroup_id_path(ino(top), out, sizeof(out));
	GT_CHECK(rc == 0 && !strcmp(out, rel), "id of %s: rc %d, %s (want %s)", top, rc, out, rel);
}

static void test_root(void)
{
	char out[16];
	int rc = gt_cgroup_id_path(ino(mnt), out, sizeof(out));

	GT_CHECK(rc == 0 && !strcmp(out, "/"), "the root: rc %d, %s", rc, out);
}

static void test_gone(void)
{
	char out[PATH_MAX];
	uint64_t id = ino(sub);
	int rc;

	rmdir(sub);
	rc = gt_cgroup_id_path(id, out, sizeof(out));
	GT_CHECK(rc == -ENOENT && !out[0], "a removed cgroup: rc %d, '%s' (want -ENOENT, '')", rc,
		 out);
}

int main(void)
{
	if (geteuid() != 0 || cpu_mount()) {
		printf("FAIL cgroup_id: needs root and a cpu controller's hierarchy under /sys/fs/cgroup\n");
		return 1;
	}
	snprintf(rel, sizeof(rel), "/gt-throttle-idtest-%d", (int)getpid());
	snprintf(top, sizeof(top), "%s%s", mnt, rel);
	snprintf(sub, sizeof(sub), "%s/sub", top);
	if (mkdir(top, 0755) || mkdir(sub, 0755)) {
		printf("FAIL cgroup_id: cannot make %s: %s\n", sub, strerror(errno));
		rmdir(top);
		return 1;
	}
	GT_RUN(test_nested);
	GT_RUN(test_root);
	GT_RUN(test_gone);
	rmdir(sub);
	rmdir(top);
	return gt_test_done();
}
