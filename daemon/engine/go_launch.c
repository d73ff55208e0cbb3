/* Go processes gotracectl launches (`record -- CMD`): the program CMD
 * names is read while the BPF programs load, before the held child execs
 * it, so that the exec finds its goroutine offsets ready and the
 * program's first switches carry their goroutine ids (docs/mapping.md,
 * "Goroutines of Go programs").  Read after the exec (go_procs.c), the
 * answer came after the runtime had started its threads: one read of the
 * file on a fast machine, seconds of its DWARF on an emulated one.
 *
 * The read is the recorder's, of its user's own file, on a loader thread
 * still (a file system that never answers holds that thread, never the
 * recorder's); the recorder only compares two links (readlink, no file
 * system call) once the exec is done: the file read must be the one the
 * child runs, else the program is read after its exec as any other. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "session.h"
#include "sym/goinfo.h"
#include "sym/loader.h"
#include "sym/safe_open.h"

struct gt_go_preread {
	struct gt_sym_job *job;
};

struct preread_arg {
	char *cmd, *path_env; /* CMD and the PATH execvp searches */
	char link[PATH_MAX];  /* the file read, as /proc names it */
	struct gt_goinfo gi;
};

static void arg_free(void *p)
{
	struct preread_arg *a = p;

	free(a->cmd);
	free(a->path_env);
	free(a);
}

/* The O_PATH descriptor of what execvp would run for cmd: cmd itself if it
 * has a slash, else the first executable regular file dir/cmd of PATH.  A
 * wrong guess costs nothing but the early ids (the links differ). */
static int resolve(const struct preread_arg *a)
{
	char path[PATH_MAX];
	const char *dir = a->path_env, *end;
	struct stat st;

	if (strchr(a->cmd, '/'))
		return open(a->cmd, O_PATH | O_CLOEXEC);
	for (; dir; dir = *end ? end + 1 : NULL) {
		int fd;

		end = strchrnul(dir, ':');
		if (snprintf(path, sizeof(path), "%.*s/%s", (int)(end - dir), end == dir ? "." : dir,
			     a->cmd) >= (int)sizeof(path))
			continue;
		if (access(path, X_OK) || (fd = open(path, O_PATH | O_CLOEXEC)) < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
			return fd;
		close(fd);
	}
	return -1;
}

static int read_cmd(void *p)
{
	struct preread_arg *a = p;
	char proc[64];
	ssize_t n;
	int pfd = resolve(a), fd = -1, err = -ENOENT;

	if (pfd >= 0) {
		fd = gt_sym_reopen(pfd, a->cmd, NULL, GT_SYM_FILE_MAX);
		close(pfd);
	}
	if (fd < 0)
		return err;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, a->link, sizeof(a->link) - 1);
	if (n > 0) {
		a->link[n] = 0;
		err = gt_goinfo_read(fd, &a->gi);
	}
	close(fd);
	return err;
}

struct gt_go_preread *gt_engine_go_preread(const char *cmd)
{
	struct gt_go_preread *pr = calloc(1, sizeof(*pr));
	struct preread_arg *a = calloc(1, sizeof(*a));
	const char *path = getenv("PATH");

	if (!pr || !a || !(a->cmd = strdup(cmd)) ||
	    !(a->path_env = strdup(path ? path : "/bin:/usr/bin"))) /* glibc's default */
		goto fail;
	pr->job = gt_sym_call_post(getpid(), cmd, read_cmd, a, arg_free);
	if (pr->job)
		return pr;
fail:
	if (a)
		arg_free(a);
	free(pr);
	return NULL;
}

void gt_engine_go_preread_drop(struct gt_go_preread *pr)
{
	if (!pr)
		return;
	gt_sym_job_drop(pr->job);
	free(pr);
}

void gt_engine_go_preread_wait(struct gt_go_preread *pr)
{
	if (pr)
		gt_sym_job_wait(pr->job, 1);
}

/* Whether tgid runs the file pr read, which was Go: its offsets in *gp. */
static int preread_fits(struct gt_go_preread *pr, uint32_t tgid, struct gt_go_proc *gp)
{
	const struct preread_arg *a;
	char proc[64], link[PATH_MAX];
	ssize_t n;
	int err;

	if (!pr || !gt_sym_job_wait(pr->job, 0))
		return 0; /* not read yet: read after the exec */
	a = gt_sym_call_result(pr->job, &err);
	if (err)
		return 0;
	snprintf(proc, sizeof(proc), "/proc/%u/exe", tgid);
	n = readlink(proc, link, sizeof(link) - 1);
	if (n <= 0)
		return 0;
	link[n] = 0;
	if (strcmp(link, a->link))
		return 0;
	gp->tls_off = a->gi.tls_off;
	gp->goid_off = a->gi.goid_off;
	gp->labels_off = a->gi.labels_off;
	gp->m_off = a->gi.m_off;
	gp->curg_off = a->gi.curg_off;
	return 1;
}

void gt_engine_exec_seen(struct gt_engine *e, uint32_t tgid, struct gt_go_preread *pr)
{
	struct gt_go_proc gp = {0};

	/* else the read its exec event posts replaces this one, keeping the
	 * entry this one put (see gt_engine_go_proc) */
	if (preread_fits(pr, tgid, &gp))
		gt_engine_go_proc_known(e, tgid, &gp);
	else
		gt_engine_go_proc(e, tgid);
	gt_engine_go_preread_drop(pr);
}
