/* cgroup id -> path in the cpu controller's hierarchy (cgroup_id.h).
 * Since Linux 5.5 a cgroup's kernfs id is its directory's inode number
 * (on 64-bit).  The id asked for is a task's own cpu cgroup or one of its
 * ancestors (a throttled task's quota owner), so the task's cgroup is read
 * from /proc/TID/cgroup and only its directory and its parents' are
 * stat()ed: never a walk of the tree, which on a node with thousands of
 * cgroups (or a user's delegated subtree of 100k empty ones) would stall
 * the caller, gotraced's event loop. */
#include "cgroup_id.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_DEPTH 64 /* parents stat()ed: deeper than any runtime nests its cgroups */

/* Whether the comma-separated list s, ended by any of `end`, has the word w. */
static bool has_word(const char *s, const char *w, const char *end)
{
	size_t n = strlen(w);

	for (const char *p = s; p; p = strchr(p, ',')) {
		if (*p == ',')
			p++;
		if (!strncmp(p, w, n) && (p[n] == ',' || p[n] == 0 || strchr(end, p[n])))
			return true;
		if (strcspn(p, end) < strcspn(p, ","))
			return false;
	}
	return false;
}

/* The cpu controller's hierarchy: its mount point into mnt, the part of
 * the hierarchy mounted there (mountinfo's root field: "/" unless a
 * subtree was bind-mounted) into root, whether it is cgroup v1. */
struct cpu_mount {
	char mnt[PATH_MAX], root[PATH_MAX];
	bool v1;
};

static int cpu_mount(struct cpu_mount *m)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], point[PATH_MAX], root[PATH_MAX], type[64], opts[1024];
	struct cpu_mount v2 = {0};
	int rc = -ENOENT;

	if (!f)
		return -errno;
	while (rc && fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - ");

		/* id parent maj:min root MOUNTPOINT opts ... - FSTYPE src SUPEROPTS */
		if (!sep || sscanf(sep, " - %63s %*s %1023s", type, opts) != 2 ||
		    sscanf(line, "%*s %*s %*s %4095s %4095s", root, point) != 2 ||
		    strchr(point, '\\') || strchr(root, '\\'))
			continue;
		if (!strcmp(type, "cgroup") && has_word(opts, "cpu", " \n")) {
			snprintf(m->mnt, sizeof(m->mnt), "%s", point);
			snprintf(m->root, sizeof(m->root), "%s", root);
			m->v1 = true;
			rc = 0;
		} else if (!strcmp(type, "cgroup2") && !v2.mnt[0]) {
			snprintf(v2.mnt, sizeof(v2.mnt), "%s", point);
			snprintf(v2.root, sizeof(v2.root), "%s", root);
		}
	}
	fclose(f);
	if (rc == -ENOENT && v2.mnt[0])
		*m = v2, rc = 0;
	return rc;
}

/* Task tid's cgroup in that hierarchy (as /proc/TID/cgroup gives it:
 * v1 the line whose controllers have "cpu", v2 the "0::" line) into out. */
static int task_cgroup(int tid, bool v1, char *out, size_t len)
{
	char path[64], line[PATH_MAX + 128];
	int rc = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", tid);
	if (!(f = fopen(path, "re")))
		return -errno;
	while (rc && fgets(line, sizeof(line), f)) {
		char *ctl = strchr(line, ':'), *cg = ctl ? strchr(ctl + 1, ':') : NULL;

		if (!cg || (v1 ? !has_word(ctl + 1, "cpu", ":") : strncmp(line, "0::", 3)))
			continue;
		cg[strcspn(cg, "\n")] = 0;
		rc = snprintf(out, len, "%s", cg + 1) < (int)len ? 0 : -ENAMETOOLONG;
	}
	fclose(f);
	return rc;
}

int gt_cgroup_id_path(uint64_t id, int tid, char *out, size_t len)
{
	struct cpu_mount m;
	char cg[PATH_MAX], dir[2 * PATH_MAX];
	size_t nroot;
	int rc;

	if (len < 2)
		return -ENAMETOOLONG;
	out[0] = 0;
	if ((rc = cpu_mount(&m)) < 0 || (rc = task_cgroup(tid, m.v1, cg, sizeof(cg))) < 0)
		return rc;
	/* a bind of a subtree: only cgroups under its root are reachable */
	nroot = strcmp(m.root, "/") ? strlen(m.root) : 0;
	if (nroot && (strncmp(cg, m.root, nroot) || (cg[nroot] && cg[nroot] != '/')))
		return -ENOENT;
	for (int i = 0; i < MAX_DEPTH; i++) {
		struct stat st;
		char *slash;

		snprintf(dir, sizeof(dir), "%s%s", m.mnt, cg + nroot);
		if (!stat(dir, &st) && (uint64_t)st.st_ino == id)
			return snprintf(out, len, "%s", cg[0] ? cg : "/") < (int)len ? 0 : -ENAMETOOLONG;
		if (strlen(cg) <= nroot || !(slash = strrchr(cg, '/')))
			break;
		*slash = 0; /* the parent ("" the hierarchy's root) */
	}
	return -ENOENT;
}
