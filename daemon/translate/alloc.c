/* Allocation samples (--alloc-stacks N): every Nth
 * allocation becomes a UserLog with category "alloc", message "<size>
 * bytes" and the allocation's stack, which the Go viewer shows as a log
 * event on the allocating thread. */
#include <inttypes.h>
#include <stdio.h>

#include "internal.h"

void gt_tr_on_alloc_sample(struct gt_translator *t, const struct gt_kev_alloc_sample *e)
{
	struct gt_thread *th = NULL;
	char value[32];
	uint64_t stack;
	int p = 0;

	/* the allocating thread is running (it is inside malloc) on hdr.cpu;
	 * a sample read late (the heap interposer's, no CPU) goes where its
	 * thread runs now, if it does, else on P 0 */
	if (e->hdr.cpu < t->ncpus && (th = gt_tr_current(t, &e->hdr, NULL)))
		p = th->cpu;
	else if (e->hdr.cpu >= t->ncpus && (th = gt_tr_lookup(t, e->hdr.tid)) &&
		 th->state == GT_TH_RUNNING)
		p = th->cpu;
	if (t->err)
		return;
	stack = gt_tr_stack(t, th ? th->tgid : e->hdr.tgid, e->ustack, -1);
	snprintf(value, sizeof(value), "%" PRIu64 " bytes", (uint64_t)e->size);
	int r = gt_tr_out_user_log(t, p, "alloc", stack, value);
	if (r < 0)
		t->err = r;
	else
		t->st.events_out++, t->survivors++;
}
