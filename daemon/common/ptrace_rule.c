/* The ptrace rule for non-root clients (see ptrace_rule.h). */
#include "ptrace_rule.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "procfs.h"

#define YAMA_PATH "/proc/sys/kernel/yama/ptrace_scope"
#define MAX_ANCESTORS 4096 /* a walk up the process tree ends at pid 1 */

int gt_yama_scope(void)
{
	char buf[32];
	int n = gt_proc_read_small(YAMA_PATH, buf, sizeof(buf));
	char *end;
	long v;

	if (n == -ENOENT)
		return 0; /* no Yama */
	if (n <= 0)
		return 3;
	v = strtol(buf, &end, 10);
	if (end == buf || v < 0 || v > 3)
		return 3;
	return (int)v;
}

struct gt_tracer gt_tracer_of(uid_t uid, gid_t gid, pid_t pid)
{
	struct gt_tracer t = {.uid = uid, .gid = gid, .pid = pid, .yama_scope = 0};

	if (uid != 0)
		t.yama_scope = gt_yama_scope();
	return t;
}

static int refuse(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int refuse(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -EPERM;
}

int gt_ptrace_decide(const struct gt_tracer *t, pid_t pid, const struct gt_ptrace_target *x,
		     char *why, size_t whylen)
{
	unsigned u = (unsigned)t->uid;

	if (t->uid == 0)
		return 0;
	if (t->yama_scope >= 2)
		return refuse(why, whylen, "uid %u may not trace process %d: kernel.yama.ptrace_scope "
			      "is %d (only root may trace)", u, (int)pid, t->yama_scope);
	for (int i = 0; i < 4; i++)
		if (x->uid[i] != (uint32_t)t->uid)
			return refuse(why, whylen, "uid %u may not trace process %d (owned by uid "
				      "%u/%u/%u/%u): only your own processes, or run as root", u,
				      (int)pid, x->uid[0], x->uid[1], x->uid[2], x->uid[3]);
	for (int i = 0; i < 4; i++)
		if (x->gid[i] != (uint32_t)t->gid)
			return refuse(why, whylen, "uid %u may not trace process %d: its gids "
				      "%u/%u/%u/%u are not yours (%u)", u, (int)pid, x->gid[0],
				      x->gid[1], x->gid[2], x->gid[3], (unsigned)t->gid);
	if (!x->dumpable)
		return refuse(why, whylen, "uid %u may not trace process %d: it is not dumpable "
			      "(it changed credentials or runs a privileged program)", u, (int)pid);
	if (x->cap_prm)
		return refuse(why, whylen, "uid %u may not trace process %d: it holds capabilities "
			      "(CapPrm %016" PRIx64 ") you do not", u, (int)pid, x->cap_prm);
	if (t->yama_scope == 1 && !x->descendant)
		return refuse(why, whylen, "uid %u may not trace process %d: kernel.yama.ptrace_scope "
			      "is 1 (only descendants of the recording client, e.g. record -- CMD)",
			      u, (int)pid);
	return 0;
}

/* Uid:, Gid: and CapPrm: of /proc/PID/status. */
static int read_status(pid_t pid, struct gt_ptrace_target *x)
{
	char path[64], line[256];
	unsigned long v[4];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (found != 7 && fgets(line, sizeof(line), f)) {
		uint32_t *dst = NULL;
		int bit = 0;

		if (sscanf(line, "Uid: %lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) == 4)
			dst = x->uid, bit = 1;
		else if (sscanf(line, "Gid: %lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) == 4)
			dst = x->gid, bit = 2;
		else if (sscanf(line, "CapPrm: %" SCNx64, &x->cap_prm) == 1)
			found |= 4;
		for (int i = 0; dst && i < 4; i++)
			dst[i] = (uint32_t)v[i];
		found |= bit;
	}
	fclose(f);
	return found == 7 ? 0 : -EIO;
}

/* Not dumpable: the kernel gives its /proc/PID files to root
 * (task_dump_owner; the directory itself may keep the owner's uid). */
static int read_dumpable(pid_t pid, uid_t uid, int *dumpable)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	if (stat(path, &st))
		return errno == ENOENT ? -ESRCH : -errno;
	*dumpable = st.st_uid == uid;
	return 0;
}

static int is_descendant(pid_t pid, pid_t ancestor)
{
	struct gt_proc_stat st;

	for (int i = 0; i < MAX_ANCESTORS && pid > 1 && ancestor > 0; i++) {
		if (gt_proc_stat(pid, 0, &st))
			return 0;
		if (st.ppid == ancestor)
			return 1;
		pid = st.ppid;
	}
	return 0;
}

int gt_ptrace_may(const struct gt_tracer *t, pid_t pid, char *why, size_t whylen)
{
	struct gt_ptrace_target x = {0};
	int rc = read_status(pid, &x);

	if (!rc)
		rc = read_dumpable(pid, t->uid, &x.dumpable);
	if (rc) {
		if (rc == -ESRCH)
			snprintf(why, whylen, "no such process %d", (int)pid);
		else
			snprintf(why, whylen, "cannot read /proc/%d: %s", (int)pid, strerror(-rc));
		return rc;
	}
	if (t->uid && t->yama_scope == 1)
		x.descendant = is_descendant(pid, t->pid);
	return gt_ptrace_decide(t, pid, &x, why, whylen);
}

int gt_ptrace_may_open_set(const struct gt_tracer *t, const char *what, char *why,
			   size_t whylen)
{
	if (t->uid == 0 || t->yama_scope == 0)
		return 0;
	return refuse(why, whylen, "uid %u may not record with %s: kernel.yama.ptrace_scope is %d "
		      "and processes that join it cannot be checked for it; select your own with "
		      "-p, or run as root", (unsigned)t->uid, what, t->yama_scope);
}
