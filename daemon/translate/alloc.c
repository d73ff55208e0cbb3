/* Allocation samples (--alloc-stacks N): every Nth
 * allocation becomes a UserLog with category "alloc", message "<size>
 * bytes" and the allocation's stack, which the Go viewer shows as a log
 * event on the allocating thread.
 *
 * A UserLog belongs to the goroutine running on its P (v1: the P's
 * current G; v2: the M's running goroutine), so a sample is written only
 * while its own thread runs.  One read late (the heap interposer's, no
 * CPU) whose thread is off CPU then waits on that thread and is written
 * when it next starts; one that cannot be placed so is counted in
 * samples_lost, never written on another goroutine (docs/mapping.md
 * "Heap and samples"). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

static void write_sample(struct gt_translator *t, int p, uint64_t stack, uint64_t size)
{
	char value[32];

	if (t->err)
		return;
	snprintf(value, sizeof(value), "%" PRIu64 " bytes", size);
	int r = gt_tr_out_user_log(t, p, "alloc", stack, value);
	if (r < 0)
		t->err = r;
	else
		t->st.events_out++, t->survivors++;
}

/* Keeps a sample on off-CPU th until it starts again. */
static void hold(struct gt_translator *t, struct gt_thread *th, uint64_t stack, uint64_t size)
{
	if (!th->held && !(th->held = calloc(GT_TR_HELD_MAX, sizeof(*th->held)))) {
		t->err = -ENOMEM;
		return;
	}
	if (th->nheld == GT_TR_HELD_MAX) {
		t->st.samples_lost++;
		return;
	}
	th->held[th->nheld].stack = stack;
	th->held[th->nheld].size = size;
	th->nheld++;
}

void gt_tr_on_alloc_sample(struct gt_translator *t, const struct gt_kev_alloc_sample *e)
{
	struct gt_thread *th = NULL;
	uint64_t stack;

	/* the allocating thread is running (it is inside malloc) on hdr.cpu;
	 * a sample read late (the heap interposer's, no CPU) goes where its
	 * thread runs now, if it does, else waits for its next start */
	if (e->hdr.cpu < t->ncpus)
		th = gt_tr_current(t, &e->hdr, NULL);
	else if ((th = gt_tr_lookup(t, e->hdr.tid)) &&
		 (th->state == GT_TH_DEAD || th->tgid != e->hdr.tgid))
		th = NULL; /* ended (it never runs again), or its tid reused */
	if (t->err)
		return;
	if (!th) {
		t->st.samples_lost++; /* not a thread of ours (any more) */
		return;
	}
	stack = gt_tr_stack(t, th->tgid, e->ustack, -1);
	if (th->state == GT_TH_RUNNING)
		write_sample(t, th->cpu, stack, e->size);
	else
		hold(t, th, stack, e->size);
}

void gt_tr_alloc_flush(struct gt_translator *t, struct gt_thread *th)
{
	for (unsigned i = 0; i < th->nheld; i++)
		write_sample(t, th->cpu, th->held[i].stack, th->held[i].size);
	th->nheld = 0;
}

void gt_tr_alloc_drop(struct gt_translator *t, struct gt_thread *th)
{
	t->st.samples_lost += th->nheld;
	th->nheld = 0;
	free(th->held);
	th->held = NULL;
}
