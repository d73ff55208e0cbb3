/* The goroutine a Go thread ran when it switched out (bpf/goid.bpf.h):
 * a UserLog with category "goroutine" and message "goroutine N" on the
 * thread, at the switch-out, just before its stop event (GoPreempt,
 * GoBlock*, ...) and after the GoSysCall of a call that blocks there, so
 * the viewer shows it on the slice that ends there and `report` names the
 * goroutine each stop was (docs/mapping.md, "Goroutines of Go programs"). */
#include <inttypes.h>
#include <stdio.h>

#include "internal.h"

void gt_tr_goid_log(struct gt_translator *t, int p, uint64_t goid)
{
	char value[40];
	int r;

	if (t->err || !goid)
		return;
	/* a GoSysCall held for this block goes first, at its own time: after
	 * the log, the writer would clamp it to the switch-out's (the call's
	 * time before it blocked lost) */
	gt_tr_flush_syscall(t, p);
	if (t->err)
		return;
	snprintf(value, sizeof(value), "goroutine %" PRIu64, goid);
	r = gt_tr_out_user_log(t, p, "goroutine", 0, value);
	if (r < 0)
		t->err = r;
	else
		t->st.events_out++, t->survivors++;
}
