#include <string.h>

#include "gt_events.h"

#define GT_UNPAREN(...) __VA_ARGS__
/* How many names a parenthesized list holds (0 for ()). */
#define GT_COUNT(A) ((int)(sizeof((const char *[]){NULL, GT_UNPAREN A}) / sizeof(const char *)) - 1)
/* 1 if the last of n arguments is a stack id. */
#define GT_ENDS_WITH_STACK(n, stacks) ((n) > 0 && ((stacks) >> ((n) > 0 ? (n) - 1 : 0)) & 1u)

const struct gt_event_desc gt_event_descs[GT_EV_COUNT] = {
#define GT_X_DESC(e, num, nm, minver, A, S, T)                                              \
	[e] = {                                                                             \
		.name = nm,                                                                 \
		.min_version = minver,                                                      \
		.has_stack = GT_ENDS_WITH_STACK(GT_COUNT(A), S),                            \
		.nargs = GT_COUNT(A) - GT_ENDS_WITH_STACK(GT_COUNT(A), S),                  \
		.args = {GT_UNPAREN A},                                                     \
		.stack_args = S,                                                            \
		.string_args = T,                                                           \
	},
	GT_EVENT_LIST(GT_X_DESC)
#undef GT_X_DESC
};

int gt_event_arg(int type, const char *name)
{
	if (type < 0 || type >= GT_EV_COUNT)
		return -1;
	for (int i = 0; i < GT_EVENT_MAX_ARGS && gt_event_descs[type].args[i]; i++)
		if (strcmp(gt_event_descs[type].args[i], name) == 0)
			return i;
	return -1;
}

int gt_version_known(int version)
{
	switch (version) {
	case GT_V1_5: case GT_V1_7: case GT_V1_8: case GT_V1_9: case GT_V1_10:
	case GT_V1_11: case GT_V1_19: case GT_V1_21:
		return 1;
	}
	return 0;
}
