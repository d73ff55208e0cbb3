/* HeapGoal = the memory limit of the process's cgroup: v2 memory.max, the
 * tightest one from its cgroup up to the root; on hybrid systems (memory
 * is a v1 controller) memory.limit_in_bytes of its v1 memory cgroup. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cgroup_resolve.h"

/* The process's path in the hierarchy whose /proc/PID/cgroup line starts
 * with prefix ("0::" for v2, a v1 line ends "...:memory:/path"). */
static int read_cgroup_line(pid_t pid, const char *controller, char *out, size_t outlen)
{
	char path[64], line[4096];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
		size_t n;

		if (!b)
			continue;
		n = (size_t)(b - a - 1);
		for (char *c = a + 1; c < b; c += strcspn(c, ",:") + 1) {
			size_t len = strcspn(c, ",:");

			if (len == strlen(controller) && !strncmp(c, controller, len) && n) {
				b[1 + strcspn(b + 1, "\n")] = 0;
				snprintf(out, outlen, "%s", b + 1);
				found = 1;
				break;
			}
		}
	}
	fclose(f);
	return found;
}

/* v1: memory.limit_in_bytes, the tightest up the tree; "unlimited" is a
 * huge page-rounded number (>= 2^62). */
static uint64_t v1_limit(pid_t pid)
{
	char rel[4096], dir[8192], path[8300], buf[64];
	uint64_t best = 0;

	if (!read_cgroup_line(pid, "memory", rel, sizeof(rel)))
		return 0;
	snprintf(dir, sizeof(dir), "/sys/fs/cgroup/memory%s", rel);
	for (;;) {
		FILE *f;
		char *slash;

		if ((size_t)snprintf(path, sizeof(path), "%s/memory.limit_in_bytes", dir) < sizeof(path) &&
		    (f = fopen(path, "re"))) {
			uint64_t v = fgets(buf, sizeof(buf), f) ? strtoull(buf, NULL, 10) : 0;

			fclose(f);
			if (v && v < (1ull << 62) && (!best || v < best))
				best = v;
		}
		slash = strrchr(dir, '/');
		if (!slash || slash - dir < (long)strlen("/sys/fs/cgroup/memory"))
			break;
		*slash = 0;
	}
	return best;
}

static int read_own_cgroup(pid_t pid, char *out, size_t outlen)
{
	char path[64], line[4096];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue; /* a v1 hierarchy line */
		line[strcspn(line, "\n")] = 0;
		snprintf(out, outlen, "%s", line + 3);
		found = 1;
		break;
	}
	fclose(f);
	return found;
}

/* memory.max of one directory: its bytes, or 0 for "max" / missing. */
static uint64_t read_max(const char *dir)
{
	char path[8300], buf[64];
	uint64_t v = 0;
	FILE *f;

	if ((size_t)snprintf(path, sizeof(path), "%s/memory.max", dir) >= sizeof(path))
		return 0;
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f) && strncmp(buf, "max", 3))
		v = strtoull(buf, NULL, 10);
	fclose(f);
	return v;
}

uint64_t gt_mt_cgroup_limit(pid_t pid)
{
	char mnt[4096], rel[4096], dir[8192], err[256];
	uint64_t best = 0;
	char *slash;

	if (gt_cgroup_mount(mnt, sizeof(mnt), err, sizeof(err)) || !read_own_cgroup(pid, rel, sizeof(rel)))
		return v1_limit(pid);
	snprintf(dir, sizeof(dir), "%s%s", mnt, rel);
	for (;;) {
		uint64_t v = read_max(dir);

		if (v && (!best || v < best))
			best = v;
		slash = strrchr(dir, '/');
		if (!slash || (size_t)(slash - dir) < strlen(mnt))
			break;
		*slash = 0;
	}
	return best ? best : v1_limit(pid);
}
