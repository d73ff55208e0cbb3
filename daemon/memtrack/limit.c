/* HeapGoal = the memory limit of the process's cgroup: v2 memory.max, the
 * tightest one from its cgroup up to the root; on hybrid systems (memory
 * is a v1 controller) memory.limit_in_bytes of its v1 memory cgroup. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cgroup_resolve.h"
#include "common/procfs.h"

/* v1: memory.limit_in_bytes, the tightest up the tree; "unlimited" is a
 * huge page-rounded number (>= 2^62). */
static uint64_t v1_limit(pid_t pid)
{
	char rel[4096], dir[8192], path[8300], buf[64];
	uint64_t best = 0;

	if (gt_proc_cgroup(pid, "memory", rel, sizeof(rel)))
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

	if (gt_cgroup_mount(mnt, sizeof(mnt), err, sizeof(err)) || gt_proc_cgroup(pid, NULL, rel, sizeof(rel)))
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
