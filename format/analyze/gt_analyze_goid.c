/* Goroutines of Go programs in a gotraced recording: the UserLog
 * "goroutine N" a thread's switch-out writes just before its stop names
 * the goroutine that stop stopped (docs/mapping.md, "Goroutines of Go
 * programs"); the stop's off-CPU time (to its next start, as the
 * thread's own) is counted for that goroutine on that thread, with the
 * pprof labels the log gives after the id ("goroutine N {k=v}").  Only the
 * category "goroutine" is a stop's ("goroutine.wake" and ".sample" are
 * not).  A file without such logs (a runtime's own trace, a C program) has
 * none. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gt_analyze_internal.h"

#define KIND_GOID (UINT64_MAX - 1) /* aggmap key beside the wakers' */

static const char category[] = "goroutine";
static const char prefix[] = "goroutine ";

int gt_an_goid_log(struct gt_analysis *a, uint64_t g, const char *key, size_t klen,
		   const char *val, size_t vlen)
{
	const size_t digits = sizeof(prefix) - 1; /* where the id starts */
	struct gt_an_thread *t;
	uint64_t id = 0;
	size_t i = digits, n;

	if (g && key && val && klen == 9 && !memcmp(key, "throttled", 9))
		return gt_an_throttle_log(a, g, val, vlen);
	if (!g || !key || !val || klen != sizeof(category) - 1 || memcmp(key, category, klen) ||
	    vlen <= digits || memcmp(val, prefix, digits))
		return 0;
	for (; i < vlen && val[i] != ' '; i++) {
		if (val[i] < '0' || val[i] > '9' || i - digits >= 19)
			return 0;
		id = id * 10 + (uint64_t)(val[i] - '0');
	}
	if (i == digits)
		return 0;
	if (!(t = gt_an_thread_get(a, g)))
		return -ENOMEM;
	t->goid_log = id;
	/* "goroutine N {k=v, ...}": its pprof labels, cut to fit */
	n = i + 1 < vlen ? vlen - i - 1 : 0;
	if (n >= sizeof(t->goid_labels))
		n = sizeof(t->goid_labels) - 1;
	if (n)
		memcpy(t->goid_labels, val + i + 1, n);
	t->goid_labels[n] = 0;
	return 0;
}

int gt_an_goid_stop_end(struct gt_analysis *a, struct gt_an_thread *t, int reason, uint64_t off)
{
	struct gt_an_goroutine *r;
	int64_t i = gt_an_map_get(&a->priv->aggmap, t->id, KIND_GOID, t->stop_goid);

	if (i < 0) {
		if (gt_grow(&a->goros, &a->priv->capgoros, a->ngoros + 1, sizeof(*a->goros)) ||
		    gt_an_map_put(&a->priv->aggmap, t->id, KIND_GOID, t->stop_goid,
				  (uint32_t)a->ngoros))
			return -ENOMEM;
		i = (int64_t)a->ngoros++;
		memset(&a->goros[i], 0, sizeof(a->goros[i]));
		a->goros[i].thread = t->id;
		a->goros[i].goid = t->stop_goid;
	}
	r = &a->goros[i];
	r->stops++;
	r->offcpu_ns += off;
	if (t->stop_labels[0]) /* the last it had: pprof.Do drops them on its way out */
		memcpy(r->labels, t->stop_labels, sizeof(r->labels));
	if (reason == GT_BLK_PREEMPT && !t->stop_throttle) {
		r->preempts++;
		r->preempt_ns += off;
		if (off > r->preempt_max_ns)
			r->preempt_max_ns = off;
	}
	return 0;
}
