/* cgroup id -> path in the cpu controller's hierarchy (cgroup_id.h).
 * Since Linux 5.5 a cgroup's kernfs id is its directory's inode number
 * (on 64-bit), so the hierarchy is walked for a directory with it; the
 * lookups are rare (a throttled switch-out's cgroup, once per translator
 * and cgroup), so nothing is indexed. */
#include "cgroup_id.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEPTH 16 /* deeper than any runtime nests its cgroups */

/* Whether the comma-separated options opts have the word w. */
static bool has_opt(const char *opts, const char *w)
{
	size_t n = strlen(w);

	for (const char *p = opts; p; p = strchr(p, ',')) {
		if (*p == ',')
			p++;
		if (!strncmp(p, w, n) && (p[n] == ',' || p[n] == 0 || p[n] == ' ' || p[n] == '\n'))
			return true;
	}
	return false;
}

/* The mount point of the cpu controller's hierarchy into mnt. */
static int cpu_mount(char *mnt, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], point[PATH_MAX], type[64], opts[1024], v2[PATH_MAX] = "";
	int rc = -ENOENT;

	if (!f)
		return -errno;
	while (rc && fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - ");

		/* id parent maj:min root MOUNTPOINT opts ... - FSTYPE src SUPEROPTS */
		if (!sep || sscanf(sep, " - %63s %*s %1023s", type, opts) != 2 ||
		    sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1 || strchr(point, '\\'))
			continue;
		if (!strcmp(type, "cgroup") && has_opt(opts, "cpu"))
			rc = snprintf(mnt, len, "%s", point) < (int)len ? 0 : -ENAMETOOLONG;
		else if (!strcmp(type, "cgroup2") && !v2[0])
			snprintf(v2, sizeof(v2), "%s", point);
	}
	fclose(f);
	if (rc == -ENOENT && v2[0])
		rc = snprintf(mnt, len, "%s", v2) < (int)len ? 0 : -ENAMETOOLONG;
	return rc;
}

/* Depth-first search under directory fd (path rel, of length n in out). */
static int walk(int fd, uint64_t id, char *out, size_t len, size_t n, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	int rc = -ENOENT;

	if (!d) {
		close(fd);
		return -ENOENT;
	}
	while (rc == -ENOENT && (de = readdir(d))) {
		struct stat st;
		int sub;

		if (de->d_type != DT_DIR || de->d_name[0] == '.' ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if ((size_t)snprintf(out + n, len - n, "/%s", de->d_name) >= len - n)
			continue;
		if ((uint64_t)st.st_ino == id)
			rc = 0;
		else if (depth < MAX_DEPTH &&
			 (sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0)
			rc = walk(sub, id, out, len, n + strlen(out + n), depth + 1);
	}
	closedir(d);
	if (rc)
		out[n] = 0;
	return rc;
}

int gt_cgroup_id_path(uint64_t id, char *out, size_t len)
{
	char mnt[PATH_MAX];
	struct stat st;
	int fd, rc;

	if (len < 2)
		return -ENAMETOOLONG;
	out[0] = 0;
	if ((rc = cpu_mount(mnt, sizeof(mnt))) < 0)
		return rc;
	if (!stat(mnt, &st) && (uint64_t)st.st_ino == id) {
		snprintf(out, len, "/");
		return 0;
	}
	fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return walk(fd, id, out, len, 0, 1);
}
