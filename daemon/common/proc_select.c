/* See proc_select.h. */
#include "proc_select.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"

#define PF_KTHREAD_ 0x00200000 /* include/linux/sched.h */

static int numeric(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

static int push(struct gt_proc_entry **v, int *n, int *cap, const struct gt_proc_entry *e)
{
	if (*n == *cap) {
		int c = *cap ? 2 * *cap : 1024;
		struct gt_proc_entry *g = realloc(*v, (size_t)c * sizeof(**v));

		if (!g)
			return -ENOMEM;
		*v = g;
		*cap = c;
	}
	(*v)[(*n)++] = *e;
	return 0;
}

int gt_proc_list(struct gt_proc_entry **out, int *n)
{
	struct gt_proc_entry *v = NULL, e;
	struct gt_proc_stat st;
	struct dirent *de;
	int cap = 0, rc = 0;
	DIR *d = opendir("/proc");

	*out = NULL;
	*n = 0;
	if (!d)
		return -errno;
	while (!rc && (de = readdir(d))) {
		if (!numeric(de->d_name))
			continue;
		e.pid = (pid_t)atoi(de->d_name);
		if (gt_proc_stat(e.pid, 0, &st))
			continue; /* gone meanwhile */
		e.ppid = st.ppid;
		e.kthread = !!(st.flags & PF_KTHREAD_);
		rc = push(&v, n, &cap, &e);
	}
	closedir(d);
	if (rc) {
		free(v);
		*n = 0;
		return rc;
	}
	*out = v;
	return 0;
}

static int in(const pid_t *v, int n, pid_t p)
{
	for (int i = 0; i < n; i++)
		if (v[i] == p)
			return 1;
	return 0;
}

/* Marks the descendants level by level: a pass over the list adds every
 * process whose parent is marked, until a pass adds none (a process tree is
 * rarely deeper than a few levels, and a pass is a walk over an array). */
int gt_proc_descendants(const struct gt_proc_entry *list, int n, const pid_t *roots,
			int nroots, pid_t *out)
{
	char *mark = calloc((size_t)n + 1, 1);
	int found = 0, added = 1;

	if (!mark)
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		mark[i] = in(roots, nroots, list[i].pid) ? 1 : 0;
	while (added) {
		added = 0;
		for (int i = 0; i < n; i++) {
			if (mark[i])
				continue;
			for (int j = 0; j < n; j++) {
				if (mark[j] && list[j].pid == list[i].ppid) {
					mark[i] = 2;
					added = 1;
					if (out)
						out[found] = list[i].pid;
					found++;
					break;
				}
			}
		}
	}
	free(mark);
	return found;
}

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

int gt_proc_is_named(pid_t pid, const char *name)
{
	char path[64], buf[PATH_MAX];
	struct gt_proc_stat st;
	ssize_t len;
	int n;

	if (gt_proc_stat(pid, 0, &st))
		return 0;
	if (!strcmp(st.comm, name))
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	len = readlink(path, buf, sizeof(buf) - 1);
	if (len > 0) {
		buf[len] = '\0';
		if (!strcmp(base(buf), name))
			return 1;
	}
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	n = gt_proc_read_small(path, buf, sizeof(buf));
	return n > 0 && !strcmp(base(buf), name); /* argv[0] ends at its NUL */
}
