/* Why a goroutine stopped running: the reasons `inspect --goroutines`
 * and `report` count, from the event that stopped it. */
#include "gt_events.h"

const char *const gt_block_reason_names[GT_BLK_COUNT] = {
	"sync", "sleep", "select", "net", "syscall", "block", "preempt", "sched",
};

enum gt_block_reason gt_block_reason_of(int type)
{
	switch (type) {
	case GT_EV_GO_BLOCK_SYNC: case GT_EV_GO_BLOCK_COND:
	case GT_EV_GO_BLOCK_SEND: case GT_EV_GO_BLOCK_RECV:
		return GT_BLK_SYNC;
	case GT_EV_GO_SLEEP: return GT_BLK_SLEEP;
	case GT_EV_GO_BLOCK_SELECT: return GT_BLK_SELECT;
	case GT_EV_GO_BLOCK_NET: return GT_BLK_NET;
	case GT_EV_GO_SYSBLOCK: return GT_BLK_SYSCALL;
	case GT_EV_GO_PREEMPT: return GT_BLK_PREEMPT;
	case GT_EV_GO_SCHED: return GT_BLK_SCHED;
	}
	return GT_BLK_BLOCK;
}
