/* What a selection leaves out, said before recording starts.
 *
 * `-p MASTER` records the master only: a server whose workers are child
 * processes (nginx, postgres, gunicorn) gives a trace of an idle process.
 * We count the existing descendants from /proc at the start and say how
 * many are left out, rather than judging afterwards whether the master's
 * own threads were idle: the count is exact, known before the user waits
 * through a recording, and does not depend on what the trace shows. */
#include "record_run.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/proc_select.h"

void gt_record_warn_children(const struct gt_record_opts *o)
{
	struct gt_proc_entry *list;
	int n, found;

	if (o->children || o->cmd || o->npids == 0 || gt_proc_list(&list, &n))
		return;
	for (int i = 0; i < o->npids; i++) {
		found = gt_proc_descendants(list, n, &o->pids[i], 1, NULL);
		if (found > 0)
			fprintf(stderr, "gotracectl: warning: pid %d has %d child process%s that "
				"will not be recorded (only processes it starts from now on are); "
				"add --children to record them too\n",
				(int)o->pids[i], found, found == 1 ? "" : "es");
	}
	free(list);
}
