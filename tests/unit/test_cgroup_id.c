// tier: system (BPF, root or real programs: not in make check-unit)
/* A cgroup id (the inode number BPF reads as kn->id) back to its path in
 * the cpu controller's hierarchy (daemon/common/cgroup_id.c), against this
 * machine's tree: the test makes two nested cgroups and a sibling there,
 * moves itself into the inner one (the lookup starts from a task's own
 * cgroup), resolves the directories' inode numbers, moves back and removes
 * them.  Needs root. */
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

static char mnt[PATH_MAX], top[PATH_MAX], sub[PATH_MAX], sib[PATH_MAX], rel[256];
static char base[PATH_MAX], orig[PATH_MAX];

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

/* Writes our pid into dir's cgroup.procs (v1: tasks), moving this process. */
static int enter(const char *dir)
{
	char f[PATH_MAX + 32];
	FILE *fp;

	snprintf(f, sizeof(f), "%s/cgroup.procs", dir);
	if (!(fp = fopen(f, "we")))
		return -1;
	fprintf(fp, "%d\n", (int)getpid());
	return fclose(fp);
}

/* From the task's own cgroup (sub) up: sub itself, its parent, the root;
 * no stat() outside that chain, so a sibling's id is not found. */
static void test_nested(void)
{
	char out[PATH_MAX], want[PATH_MAX];
	int rc = gt_cgroup_id_path(ino(sub), getpid(), out, sizeof(out));

	snprintf(want, sizeof(want), "%s/sub", base);
	GT_CHECK(rc == 0 && !strcmp(out, want), "id of %s: rc %d, %s (want %s)", sub, rc, out,
		 want);
	snprintf(want, sizeof(want), "%s", base);
	rc = gt_cgroup_id_path(ino(top), getpid(), out, sizeof(out));
	GT_CHECK(rc == 0 && !strcmp(out, want), "id of %s: rc %d, %s (want %s)", top, rc, out,
		 want);
	rc = gt_cgroup_id_path(ino(sib), getpid(), out, sizeof(out));
	GT_CHECK(rc == -ENOENT && !out[0], "a sibling %s: rc %d, '%s' (want -ENOENT)", sib, rc,
		 out);
}

static void test_root(void)
{
	char out[16];
	int rc = gt_cgroup_id_path(ino(mnt), getpid(), out, sizeof(out));

	GT_CHECK(rc == 0 && !strcmp(out, "/"), "the root: rc %d, %s", rc, out);
}

/* A task gone: nothing to start from. */
static void test_no_task(void)
{
	char out[64];
	int rc = gt_cgroup_id_path(ino(sub), 0x7ffffff0, out, sizeof(out));

	GT_CHECK(rc < 0 && !out[0], "no such task: rc %d, '%s'", rc, out);
}

static void test_gone(void)
{
	char out[PATH_MAX];
	uint64_t id = ino(sub);
	int rc;

	enter(orig);
	rmdir(sub);
	rc = gt_cgroup_id_path(id, getpid(), out, sizeof(out));
	GT_CHECK(rc == -ENOENT && !out[0], "a removed cgroup: rc %d, '%s' (want -ENOENT, '')", rc,
		 out);
}

/* This process's cgroup in the cpu hierarchy (/proc/self/cgroup) into
 * base, and its directory into orig; the test's cgroups go under it. */
static int own_cgroup(void)
{
	char line[PATH_MAX + 64];
	FILE *f = fopen("/proc/self/cgroup", "re");
	int v1 = !strcmp(mnt, "/sys/fs/cgroup/cpu");

	while (f && fgets(line, sizeof(line), f)) {
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;

		if (!b || (v1 ? !strstr(a, "cpu,") && strncmp(a, ":cpu:", 5) : strncmp(line, "0::", 3)))
			continue;
		b[strcspn(b, "\n")] = 0;
		snprintf(base, sizeof(base), "%s", strcmp(b + 1, "/") ? b + 1 : "");
	}
	if (f)
		fclose(f);
	snprintf(orig, sizeof(orig), "%s%s", mnt, base);
	return f ? 0 : -1;
}

int main(void)
{
	if (geteuid() != 0 || cpu_mount()) {
		printf("FAIL cgroup_id: needs root and a cpu controller's hierarchy under /sys/fs/cgroup\n");
		return 1;
	}
	snprintf(rel, sizeof(rel), "/gt-throttle-idtest-%d", (int)getpid());
	/* v2: a cgroup with processes has no children with controllers, so
	 * the test's tree hangs off the root there, its sub entered */
	if (own_cgroup() || strcmp(mnt, "/sys/fs/cgroup/cpu"))
		base[0] = 0;
	snprintf(top, sizeof(top), "%s%s%s", mnt, base, rel);
	snprintf(sub, sizeof(sub), "%s/sub", top);
	snprintf(sib, sizeof(sib), "%s/sib", top);
	if (mkdir(top, 0755) || mkdir(sub, 0755) || mkdir(sib, 0755) || enter(sub)) {
		printf("FAIL cgroup_id: cannot make and enter %s: %s\n", sub, strerror(errno));
		enter(orig);
		rmdir(sub), rmdir(sib), rmdir(top);
		return 1;
	}
	snprintf(base + strlen(base), sizeof(base) - strlen(base), "%s", rel);
	GT_RUN(test_nested);
	GT_RUN(test_root);
	GT_RUN(test_no_task);
	GT_RUN(test_gone);
	enter(orig);
	rmdir(sub);
	rmdir(sib);
	rmdir(top);
	return gt_test_done();
}
