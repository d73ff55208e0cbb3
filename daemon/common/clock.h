/* The one clock of the daemon: CLOCK_MONOTONIC in nanoseconds, the clock
 * BPF's bpf_ktime_get_ns() reads, so user-space times and event stamps
 * compare directly. */
#ifndef GT_COMMON_CLOCK_H
#define GT_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t gt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
