/* See jit.h. */
#include "jit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "loader.h"
#include "perfmap.h"

#define JIT_REREAD_MIN_NS 1000000ull
#define JIT_REREAD_MAX_NS 250000000ull

struct gt_jit {
	int root_fd;            /* the process's root, O_PATH; -1 none */
	uid_t owner;            /* the process's user: the map must be its or root's */
	char path[64];          /* /tmp/perf-NSPID.map */
	struct gt_perfmap pm;
	struct gt_perfmap_stamp seen;
	struct gt_sym_job *job; /* a read under way */
	uint64_t held;          /* bytes of lines pm was built from */
	uint64_t read_ns, gap;  /* the last read posted, the wait before the next */
};

/* pid as its own pid namespace numbers it: the last NSpid field. */
static pid_t ns_pid(pid_t pid)
{
	char path[64], line[256];
	pid_t ns = pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + 6, *end;

		if (strncmp(line, "NSpid:", 6))
			continue;
		for (long v; (v = strtol(p, &end, 10)) > 0 && end != p; p = end)
			ns = (pid_t)v;
		break;
	}
	fclose(f);
	return ns;
}

struct gt_jit *gt_jit_new(pid_t pid)
{
	struct gt_jit *j = calloc(1, sizeof(*j));
	char path[64];
	struct stat st;

	if (!j)
		return NULL;
	j->root_fd = -1;
	j->gap = JIT_REREAD_MIN_NS;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st))
		return j;
	j->owner = st.st_uid;
	snprintf(j->path, sizeof(j->path), "/tmp/perf-%d.map", (int)ns_pid(pid));
	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	j->root_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return j;
}

/* Takes a finished read's result. */
static void take(struct gt_jit *j, int wait)
{
	struct gt_perfmap got = { 0 };
	int rc;

	if (!j->job || !gt_sym_job_wait(j->job, wait))
		return;
	uint64_t used = j->seen.used;

	rc = gt_sym_perfmap_take(j->job, &got, &j->seen);
	gt_sym_job_drop(j->job);
	j->job = NULL;
	/* a map written again keeps the names of code it no longer lists
	 * (stacks taken before may hold it), while all that was read stays
	 * within one map's limit */
	if (rc == 0 && j->held + j->seen.used <= GT_PERFMAP_READ_MAX &&
	    !gt_perfmap_merge(&j->pm, &got)) {
		j->held += j->seen.used;
	} else if (rc == 0) {
		gt_perfmap_free(&j->pm);
		j->pm = got;
		memset(&got, 0, sizeof(got));
		j->held = j->seen.used;
	} else if (rc == 1 && gt_perfmap_merge(&j->pm, &got)) {
		j->seen = (struct gt_perfmap_stamp){ 0 }; /* read it whole next time */
	} else if (rc == 1) {
		j->held += j->seen.used - used;
	}
	gt_perfmap_free(&got);
	/* a JIT that writes keeps being read soon; a quiet one less often */
	if (rc >= 0)
		j->gap = JIT_REREAD_MIN_NS;
	else
		j->gap = j->gap * 2 < JIT_REREAD_MAX_NS ? j->gap * 2 : JIT_REREAD_MAX_NS;
}

const char *gt_jit_name(struct gt_jit *j, uint64_t ip, int wait)
{
	const char *name;
	uint64_t now;

	if (j->root_fd < 0)
		return NULL;
	take(j, wait);
	name = gt_perfmap_find(&j->pm, ip);
	now = gt_now_ns();
	if (name || j->job || (j->read_ns && now - j->read_ns < j->gap))
		return name;
	j->read_ns = now;
	j->job = gt_sym_perfmap_post(j->root_fd, j->path, j->owner, &j->seen);
	take(j, wait);
	return gt_perfmap_find(&j->pm, ip);
}

void gt_jit_recheck(struct gt_jit *j)
{
	j->read_ns = 0;
	j->gap = JIT_REREAD_MIN_NS;
}

void gt_jit_free(struct gt_jit *j)
{
	if (!j)
		return;
	gt_sym_job_drop(j->job);
	gt_perfmap_free(&j->pm);
	if (j->root_fd >= 0)
		close(j->root_fd);
	free(j);
}
