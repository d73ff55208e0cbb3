/* Threads alive at start, from /proc/TGID/task/TID/{stat,syscall}. */
#include "proc_snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Reads a small /proc file into buf (NUL-terminated); bytes read or -errno. */
static int read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, size - 1);
	int err = errno;
	close(fd);
	if (n < 0)
		return -err;
	buf[n] = '\0';
	return (int)n;
}

/* stat: "tid (comm) S ppid ..."; comm may hold spaces and ')' so the
 * fields after it are found from the last ')'.  Field 39 is the CPU. */
static int parse_stat(const char *buf, struct gt_thread_snapshot *s)
{
	const char *open = strchr(buf, '(');
	const char *close = strrchr(buf, ')');
	if (!open || !close || close < open || close[1] != ' ' || !close[2])
		return -EINVAL;
	size_t len = (size_t)(close - open - 1);
	if (len >= sizeof(s->comm))
		len = sizeof(s->comm) - 1;
	memcpy(s->comm, open + 1, len);
	s->comm[len] = '\0';
	s->state = close[2];
	/* After ") " comes field 3 (state); skip to field 39 (processor). */
	const char *p = close + 2;
	for (int field = 3; field < 39 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	s->cpu = p ? atoi(p) : -1;
	return 0;
}

/* syscall: "NR args..." when blocked in a syscall, "-1 ..." when blocked
 * outside one, "running" when on a CPU. */
static int64_t parse_syscall(const char *buf)
{
	if (buf[0] < '0' || buf[0] > '9')
		return -1;
	return strtoll(buf, NULL, 10);
}

int gt_proc_snapshot_thread(pid_t tgid, pid_t tid, struct gt_thread_snapshot *out)
{
	char path[96], buf[1024];
	memset(out, 0, sizeof(*out));
	out->tid = (uint32_t)tid;
	out->tgid = (uint32_t)tgid;
	out->syscall_nr = -1;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)tgid, (int)tid);
	int err = read_small(path, buf, sizeof(buf));
	if (err < 0)
		return err;
	if (parse_stat(buf, out) < 0)
		return -EINVAL;
	/* Needs ptrace access; without it the thread is just "not in a syscall". */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)tgid, (int)tid);
	if (out->state != 'R' && read_small(path, buf, sizeof(buf)) > 0)
		out->syscall_nr = parse_syscall(buf);
	return 0;
}

static int add_thread(struct gt_thread_snapshot **v, int *n, int *cap,
		      const struct gt_thread_snapshot *s)
{
	if (*n == *cap) {
		int ncap = *cap ? *cap * 2 : 16;
		struct gt_thread_snapshot *nv = realloc(*v, (size_t)ncap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = ncap;
	}
	(*v)[(*n)++] = *s;
	return 0;
}

int gt_proc_snapshot(pid_t tgid, struct gt_thread_snapshot **out, int *n)
{
	char path[64];
	*out = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)tgid);
	DIR *d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	struct gt_thread_snapshot *v = NULL, s;
	int cnt = 0, cap = 0, err = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);
		if (*end || tid <= 0)
			continue;
		int r = gt_proc_snapshot_thread(tgid, (pid_t)tid, &s);
		if (r == -ENOENT || r == -ESRCH)
			continue; /* exited while we read */
		if (r < 0) {
			err = r;
			break;
		}
		if ((err = add_thread(&v, &cnt, &cap, &s)) < 0)
			break;
	}
	closedir(d);
	if (err < 0) {
		free(v);
		return err;
	}
	*out = v;
	*n = cnt;
	return 0;
}
