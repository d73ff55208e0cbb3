/* Bounds of the recording options (see session_opts.h). */
#include "session_opts.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int known_version(int v)
{
	return v == 0 || v == GT_V1_11 || v == GT_V1_19 || v == GT_V1_21 || v == GT_GO_1_22 ||
	       v == GT_GO_1_23;
}

/* The numbers' bounds and the trace format: 0 or -EINVAL with why. */
static int check_format(const struct gt_session_opts *o, char *why, size_t whylen)
{
#define CHECK_MAX_(type, name, wire, max, what)                                              \
	if ((uint64_t)o->name > (uint64_t)(max)) {                                           \
		snprintf(why, whylen, "%s %llu is out of range (at most %llu)", what,        \
			 (unsigned long long)o->name, (unsigned long long)(max));            \
		return -EINVAL;                                                              \
	}
	GT_SESSION_NUMBERS(CHECK_MAX_)
#undef CHECK_MAX_
	if (o->dwarf_stack_bytes && (o->dwarf_stack_bytes % 8 ||
				     o->dwarf_stack_bytes < GT_MIN_DWARF_STACK)) {
		snprintf(why, whylen, "--call-graph=dwarf stack copy of %u bytes: want a multiple "
			 "of 8 from %u to %u", o->dwarf_stack_bytes, GT_MIN_DWARF_STACK,
			 GT_MAX_DWARF_STACK);
		return -EINVAL;
	}
	if (!known_version(o->go_version)) {
		snprintf(why, whylen, "trace format version %d is not one of 1.11, 1.19, 1.21, "
			 "1.22 or 1.23 (%d, %d, %d, %d, %d)", o->go_version, GT_V1_11, GT_V1_19,
			 GT_V1_21, GT_GO_1_22, GT_GO_1_23);
		return -EINVAL;
	}
	return 0;
}

/* The program names (--name): 0 or -EINVAL with why. */
static int check_names(const struct gt_session_opts *o, char *why, size_t whylen)
{
	if (o->nnames < 0 || o->nnames > GT_MAX_NAMES || (o->nnames > 0 && !o->names)) {
		snprintf(why, whylen, "%d names (at most %d)", o->nnames, GT_MAX_NAMES);
		return -EINVAL;
	}
	for (int i = 0; i < o->nnames; i++) {
		size_t n = strlen(o->names[i]);

		if (n == 0 || n > GT_MAX_NAME_LEN || strchr(o->names[i], '/')) {
			snprintf(why, whylen, "name '%.40s' is empty, longer than %d bytes or "
				 "has a '/' (give a program name, not a path)",
				 o->names[i], GT_MAX_NAME_LEN);
			return -EINVAL;
		}
	}
	return 0;
}

/* What -a, --children and -p go with: 0 or -EINVAL with why. */
static int check_selection(const struct gt_session_opts *o, char *why, size_t whylen)
{
	if (o->kernel_threads && !o->all_processes) {
		snprintf(why, whylen, "kernel threads are recorded only with -a");
		return -EINVAL;
	}
	/* the memory object's filter has no all-processes mask (yet) */
	if (o->all_processes && (o->heap == GT_HEAP_MALLOC || o->heap == GT_HEAP_RSS ||
				 o->cpu_profile_hz || o->alloc_stack_every)) {
		snprintf(why, whylen, "--heap, --cpu-profile and --alloc-stacks are not "
			 "available with -a");
		return -EINVAL;
	}
	if (o->children && o->npids == 0) {
		snprintf(why, whylen, "--children needs -p PID");
		return -EINVAL;
	}
	if (o->npids < 0 || (o->npids > 0 && !o->pids)) {
		snprintf(why, whylen, "a process list of %d entries", o->npids);
		return -EINVAL;
	}
	return 0;
}

int gt_session_opts_check(const struct gt_session_opts *o, char *why, size_t whylen)
{
	int rc;

	if ((rc = check_format(o, why, whylen)) || (rc = check_names(o, why, whylen)))
		return rc;
	return check_selection(o, why, whylen);
}
