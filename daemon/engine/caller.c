/* The caller a frame-pointer walk loses at a syscall: see caller.h. */
#include "caller.h"

#include <errno.h>
#include <string.h>

#include "sym/symbolize.h"
#include "translate/translate.h"

int gt_caller_slot(struct gt_symbolizer *sym, uint32_t tgid, uint64_t frame0)
{
	struct gt_ra_rule r;

	if (!frame0 || gt_symbolize_ra(sym, (pid_t)tgid, frame0, &r))
		return GT_RA_NONE;
	if (r.where == GT_RA_LINK)
		return GT_RA_LR;
	/* the copied words are 8-byte aligned slots above sp */
	if (r.sp_off % 8 || r.sp_off / 8 >= GT_UTOP_WORDS)
		return GT_RA_NONE;
	return (int)(r.sp_off / 8);
}

int gt_caller_insert(struct gt_symbolizer *sym, uint32_t tgid, uint64_t *ips, int n, int max,
		     uint64_t caller)
{
	struct gt_sym s;
	int rc;

	if (!caller || n < 1 || n >= max || (n > 1 && ips[1] == caller))
		return n;
	/* looked up as the return address it is (the call's last byte):
	 * mapped means known (0) or mapped without a symbol (-ENOENT) */
	rc = gt_symbolize_user(sym, (pid_t)tgid, caller - 1, &s);
	if (rc && rc != -ENOENT)
		return n;
	memmove(ips + 2, ips + 1, (size_t)(n - 1) * sizeof(*ips));
	ips[1] = caller;
	return n + 1;
}
