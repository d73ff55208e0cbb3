/* The translator's model as a snapshot, and a marker in the trace: what a
 * flight recording needs to start a trace anywhere in its stream
 * (docs/design.md, "Flight recorder"). */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void snap_one(const struct gt_thread *th, struct gt_thread_snapshot *s)
{
	memset(s, 0, sizeof(*s));
	s->tid = th->tid;
	s->tgid = th->tgid;
	s->syscall_nr = -1;
	s->cpu = -1;
	memcpy(s->comm, th->comm, sizeof(s->comm));
	s->comm[sizeof(s->comm) - 1] = '\0';
	switch (th->state) {
	case GT_TH_RUNNING:
		s->state = 'R';
		s->cpu = th->cpu;
		break;
	case GT_TH_RUNNABLE:
		s->state = 'R'; /* cpu -1: left runnable, not started */
		break;
	default:
		s->state = 'S';
		s->syscall_nr = th->snap_sysnr;
		break;
	}
}

int gt_translator_snapshot(const struct gt_translator *t, struct gt_thread_snapshot **out, int *n)
{
	struct gt_thread_snapshot *v;
	int k = 0;

	*out = NULL;
	*n = 0;
	v = calloc(t->threads.count ? t->threads.count : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < t->threads.cap; i++) {
		const struct gt_thread *th = gt_tr_thread_at(t, i);

		if (th && th->state != GT_TH_DEAD && th->tid)
			snap_one(th, &v[k++]);
	}
	*out = v;
	*n = k;
	return 0;
}

int gt_translator_mark(struct gt_translator *t, uint32_t tid, const char *category,
		       const char *message)
{
	struct gt_thread *th;
	int p = 0, r;

	if (t->err || t->ended)
		return t->err;
	if (!t->begun)
		gt_translator_begin(t, t->now, NULL, 0);
	th = gt_tr_lookup(t, tid);
	if (th && th->state == GT_TH_RUNNING)
		p = th->cpu;
	else if (t->v2)
		p = gt_tr_v2_busy_p(t->v2, p); /* v2's UserLog needs a goroutine */
	gt_tr_flush_syscall(t, p);
	r = gt_tr_out_user_log(t, p, category, 0, message);
	if (r < 0)
		t->err = r;
	else
		t->st.events_out++, t->survivors++;
	return t->err;
}
