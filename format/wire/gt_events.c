#include "gt_events.h"

const struct gt_event_desc gt_event_descs[GT_EV_COUNT] = {
#define GT_X_DESC(e, num, name, minver, stack, nargs) [e] = {name, minver, stack, nargs},
	GT_EVENT_LIST(GT_X_DESC)
#undef GT_X_DESC
};

int gt_version_known(int version)
{
	switch (version) {
	case GT_V1_5: case GT_V1_7: case GT_V1_8: case GT_V1_9: case GT_V1_10:
	case GT_V1_11: case GT_V1_19: case GT_V1_21:
		return 1;
	}
	return 0;
}
