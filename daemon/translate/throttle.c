/* A switch-out by CFS bandwidth throttling (GT_SWITCH_THROTTLED,
 * bpf/throttle.bpf.h) as a UserLog "throttled" on the thread, message
 * "cgroup PATH" (the cgroup whose CPU quota is spent), just before its
 * GoPreempt: the thread stays runnable, as the kernel keeps it, and the
 * log says why it waits (docs/mapping.md, "CFS bandwidth throttling"):
 * `report` totals the waits by cgroup, the merge names its region by it
 * instead of the next task. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

/* The name of cgroup id, the quota owner of task tid: remembered by id
 * (GT_TR_CGROUPS, the oldest replaced), a failed lookup too ("cgroup id
 * N", not tried again), so that cgroup_path (a few reads and stat()s on
 * the caller's thread, gotraced's event loop) runs once per cgroup. */
static const char *cgroup_name(struct gt_translator *t, uint64_t id, int tid)
{
	char path[sizeof(t->cgroups->name) - 8];
	struct gt_tr_cgroup *c;

	if (!t->cgroups && !(t->cgroups = calloc(GT_TR_CGROUPS, sizeof(*t->cgroups))))
		return id ? "cgroup id ?" : "cgroup unknown";
	for (unsigned i = 0; i < t->ncgroups && i < GT_TR_CGROUPS; i++)
		if (t->cgroups[i].id == id)
			return t->cgroups[i].name;
	c = &t->cgroups[t->ncgroups++ % GT_TR_CGROUPS];
	c->id = id;
	if (id && t->cgroup_path && t->cgroup_path(id, tid, path, sizeof(path)) >= 0 && path[0])
		snprintf(c->name, sizeof(c->name), "cgroup %s", path);
	else if (id)
		snprintf(c->name, sizeof(c->name), "cgroup id %" PRIu64, id);
	else
		snprintf(c->name, sizeof(c->name), "cgroup unknown");
	return c->name;
}

void gt_tr_throttle_log(struct gt_translator *t, int p, const struct gt_kev_switch *e)
{
	int r;

	/* a GoSysCall held for this switch goes first, at its own time (as
	 * before the goroutine's log, goid.c): after the log, the writer
	 * would clamp it to the switch-out's */
	gt_tr_flush_syscall(t, p);
	if (t->err)
		return;
	r = gt_tr_out_user_log(t, p, "throttled", 0,
			       cgroup_name(t, e->prev_cgroup, (int)e->hdr.tid));
	if (r < 0) {
		t->err = r;
		return;
	}
	t->st.events_out++, t->survivors++;
	t->st.throttled++;
}
