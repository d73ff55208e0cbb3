/* Threads alive at start, from /proc/TGID/task/TID/{stat,syscall}. */
#include "proc_snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/procfs.h"

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
	struct gt_proc_stat st;
	int err = gt_proc_stat(tgid, tid, &st);
	if (err < 0)
		return err;
	memcpy(out->comm, st.comm, sizeof(out->comm));
	out->state = st.state;
	out->cpu = st.cpu;
	/* Needs ptrace access; without it the thread is just "not in a syscall". */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)tgid, (int)tid);
	if (out->state != 'R' && gt_proc_read_small(path, buf, sizeof(buf)) > 0)
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
