/* A switch-out by CFS bandwidth throttling (GT_SWITCH_THROTTLED,
 * bpf/throttle.bpf.h) as a UserLog "throttled" on the thread, message
 * "cgroup PATH" (the cgroup whose CPU quota is spent), just before its
 * GoPreempt: the thread stays runnable, as the kernel keeps it, and the
 * log says why it waits (docs/mapping.md, "CFS bandwidth throttling"):
 * `report` totals the waits by cgroup, the merge names its region by it
 * instead of the next task. */
#include <inttypes.h>
#include <stdio.h>

#include "internal.h"

/* The cgroup's path, or its id: looked up once per new cgroup (a walk of
 * the hierarchy), and throttled switch-outs come in runs of one. */
static const char *cgroup_name(struct gt_translator *t, uint64_t id)
{
	char path[sizeof(t->cgroup) - 8];

	if (t->cgroup[0] && t->cgroup_id == id)
		return t->cgroup;
	t->cgroup_id = id;
	if (id && t->cgroup_path && t->cgroup_path(id, path, sizeof(path)) >= 0 && path[0])
		snprintf(t->cgroup, sizeof(t->cgroup), "cgroup %s", path);
	else if (id)
		snprintf(t->cgroup, sizeof(t->cgroup), "cgroup id %" PRIu64, id);
	else
		snprintf(t->cgroup, sizeof(t->cgroup), "cgroup unknown");
	return t->cgroup;
}

void gt_tr_throttle_log(struct gt_translator *t, int p, const struct gt_kev_switch *e)
{
	int r;

	if (t->err)
		return;
	r = gt_tr_out_user_log(t, p, "throttled", 0, cgroup_name(t, e->prev_cgroup));
	if (r < 0) {
		t->err = r;
		return;
	}
	t->st.events_out++, t->survivors++;
	t->st.throttled++;
}
