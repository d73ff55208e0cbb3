/* Waits by CFS bandwidth throttling in a gotraced recording (struct
 * gt_an_throttle): the UserLog "throttled" a throttled switch-out writes
 * just before its GoPreempt names the cgroup whose CPU quota is spent; the
 * wait after that stop, to the thread's next start, is that cgroup's. */
#include <errno.h>
#include <string.h>

#include "gt_analyze_internal.h"
#include "util/gt_grow.h"

/* Cgroups kept apart; a file naming more (a hostile one: each new name
 * is looked for among the kept ones) has the rest under one row. */
#define GT_AN_THROTTLE_MAX 256
static const char others[] = "(other cgroups)";

static int64_t find(const struct gt_analysis *a, const char *val, size_t vlen)
{
	for (size_t i = 0; i < a->nthrottles; i++)
		if (!strncmp(a->throttles[i].cgroup, val, vlen) && !a->throttles[i].cgroup[vlen])
			return (int64_t)i;
	return -1;
}

/* The index of cgroup (val, vlen) in a->throttles, added if new; -1 if
 * out of memory. */
static int64_t cgroup_index(struct gt_analysis *a, const char *val, size_t vlen)
{
	struct gt_an_throttle *r;
	int64_t i;

	if (vlen >= sizeof(r->cgroup))
		vlen = sizeof(r->cgroup) - 1;
	if ((i = find(a, val, vlen)) >= 0)
		return i;
	if (a->nthrottles >= GT_AN_THROTTLE_MAX - 1) {
		val = others;
		vlen = sizeof(others) - 1;
		if ((i = find(a, val, vlen)) >= 0)
			return i;
	}
	if (gt_grow(&a->throttles, &a->priv->capthrottles, a->nthrottles + 1, sizeof(*r)))
		return -1;
	r = &a->throttles[a->nthrottles];
	memset(r, 0, sizeof(*r));
	memcpy(r->cgroup, val, vlen);
	return (int64_t)a->nthrottles++;
}

int gt_an_throttle_log(struct gt_analysis *a, uint64_t g, const char *val, size_t vlen)
{
	struct gt_an_thread *t = gt_an_thread_get(a, g);
	int64_t i;

	if (!t || (i = cgroup_index(a, val, vlen)) < 0)
		return -ENOMEM;
	t->throttle_log = (size_t)i + 1;
	return 0;
}

void gt_an_throttle_end(struct gt_analysis *a, struct gt_an_thread *t, uint64_t off)
{
	struct gt_an_throttle *r = &a->throttles[t->stop_throttle - 1];

	r->count++;
	r->ns += off;
	if (off > r->max_ns)
		r->max_ns = off;
}
