/* What a selection leaves out, said before recording starts.
 *
 * `-p MASTER` records the master only: a server whose workers are child
 * processes (nginx, postgres, gunicorn) gives a trace of an idle process.
 * We count the existing descendants from /proc at the start and say how
 * many are left out, rather than judging afterwards whether the master's
 * own threads were idle: the count is exact, known before the user waits
 * through a recording, and does not depend on what the trace shows.
 * Descendants that -p names too are recorded: they are not counted. */
#include "record_run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/proc_select.h"

static int listed(const struct gt_record_opts *o, pid_t pid)
{
	for (int i = 0; i < o->npids; i++)
		if (o->pids[i] == pid)
			return 1;
	return 0;
}

/* Descendants of root that -p does not name itself (and so are left out). */
static int left_out(const struct gt_record_opts *o, const struct gt_proc_entry *list, int n,
		    pid_t root, pid_t *found_pids)
{
	int found = gt_proc_descendants(list, n, &root, 1, found_pids), out = 0;

	for (int i = 0; i < found; i++)
		out += !listed(o, found_pids[i]);
	return out;
}

void gt_record_warn_children(const struct gt_record_opts *o)
{
	struct gt_proc_entry *list;
	pid_t *pids;
	int n, found;

	if (o->children || o->cmd || o->npids == 0 || gt_proc_list(&list, &n))
		return;
	pids = calloc((size_t)n + 1, sizeof(*pids));
	for (int i = 0; i < o->npids && pids; i++) {
		found = left_out(o, list, n, o->pids[i], pids);
		if (found > 0)
			fprintf(stderr, "gotracectl: warning: pid %d has %d child process%s that "
				"will not be recorded (only processes it starts from now on are); "
				"add --children to record them too\n",
				(int)o->pids[i], found, found == 1 ? "" : "es");
	}
	free(pids);
	free(list);
}

/* -n NAME with no process of that name running records an empty trace
 * unless one execs it later: without --wait that is said, not recorded. */
int gt_record_check_names(const struct gt_record_opts *o)
{
	struct gt_proc_entry *list;
	int n, named = 0;

	if (!o->nnames || o->wait || gt_proc_list(&list, &n))
		return 0;
	for (int i = 0; i < n && !named; i++)
		for (int j = 0; j < o->nnames && !named && !list[i].kthread; j++)
			named = list[i].pid != getpid() && gt_proc_is_named(list[i].pid, o->names[j]);
	free(list);
	if (named)
		return 0;
	fprintf(stderr, "gotracectl: no process is named %s", o->names[0]);
	for (int j = 1; j < o->nnames; j++)
		fprintf(stderr, "%s%s", j + 1 == o->nnames ? " or " : ", ", o->names[j]);
	fprintf(stderr, " (comm, executable or argv[0]); add --wait to record the ones that "
		"start later\n");
	return -ESRCH;
}
