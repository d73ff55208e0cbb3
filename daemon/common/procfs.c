/* /proc readers (see procfs.h). */
#include "procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int gt_proc_read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	err = errno;
	close(fd);
	if (n < 0)
		return -err;
	buf[n] = '\0';
	return (int)n;
}

/* The field after `from` spaces past p (p points at field 3, the state). */
static const char *field_after(const char *p, int skip)
{
	for (int i = 0; i < skip && p; i++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	return p;
}

/* "tid (comm) S ppid ...": comm may hold spaces and ')', so the fields
 * after it are counted from the last ')'. */
int gt_proc_stat_parse(const char *line, struct gt_proc_stat *out)
{
	const char *open = strchr(line, '('), *close = strrchr(line, ')'), *p;
	size_t len;

	memset(out, 0, sizeof(*out));
	out->cpu = -1;
	if (!open || !close || close < open || close[1] != ' ' || !close[2])
		return -EINVAL;
	len = (size_t)(close - open - 1);
	if (len >= sizeof(out->comm))
		len = sizeof(out->comm) - 1;
	memcpy(out->comm, open + 1, len);
	out->state = close[2];
	p = field_after(close + 2, 4 - 3);
	if (p)
		out->ppid = (pid_t)atoi(p);
	p = field_after(close + 2, 9 - 3);
	if (p)
		out->flags = strtoul(p, NULL, 10);
	p = field_after(close + 2, 39 - 3);
	if (p)
		out->cpu = atoi(p);
	return 0;
}

int gt_proc_stat(pid_t tgid, pid_t tid, struct gt_proc_stat *out)
{
	char path[96], buf[1024];
	int n;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)tgid, (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)tgid);
	n = gt_proc_read_small(path, buf, sizeof(buf));
	if (n < 0)
		return n == -ESRCH ? -ENOENT : n;
	return gt_proc_stat_parse(buf, out);
}

int gt_proc_state_alive(char state)
{
	return state != 'Z' && state != 'X' && state != 'x';
}

enum gt_proc_life gt_proc_life_of(int rc, const struct gt_proc_stat *st)
{
	if (rc == -ENOENT || rc == -ESRCH)
		return GT_PROC_DEAD;
	if (rc)
		return GT_PROC_UNKNOWN;
	return gt_proc_state_alive(st->state) ? GT_PROC_ALIVE : GT_PROC_DEAD;
}

enum gt_proc_life gt_proc_alive(pid_t pid)
{
	struct gt_proc_stat st;

	return gt_proc_life_of(gt_proc_stat(pid, 0, &st), &st);
}

/* Whether the controller list of a v1 line ("cpu,cpuacct") names c. */
static int names_controller(const char *list, size_t n, const char *c)
{
	size_t clen = strlen(c);

	for (const char *p = list; p < list + n; p += strcspn(p, ",:") + 1)
		if (strcspn(p, ",:") == clen && !strncmp(p, c, clen))
			return 1;
	return 0;
}

int gt_proc_cgroup(pid_t pid, const char *controller, char *out, size_t outlen)
{
	char path[64], line[4096];
	int rc = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	while (rc && fgets(line, sizeof(line), f)) {
		/* "ID:CONTROLLERS:PATH"; v2 is "0::PATH" */
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
		size_t n;

		if (!b)
			continue;
		n = (size_t)(b - a - 1);
		if (controller ? n && names_controller(a + 1, n, controller)
			       : !n && !strncmp(line, "0:", 2)) {
			b[1 + strcspn(b + 1, "\n")] = '\0';
			snprintf(out, outlen, "%s", b + 1);
			rc = 0;
		}
	}
	fclose(f);
	return rc;
}
