/* Forcing a block instead of hoping for one (header-only, like wl_common.h).
 *
 * A test that counts blocks must not depend on the scheduler's timing: on
 * a busy machine a waiter may arrive after the event it should wait for
 * (the lock already free, the byte already in the pipe) and never block.
 * A workload makes the block certain by holding the event back until the
 * kernel shows the waiter asleep in the very syscall that should block:
 * /proc/self/task/TID/syscall gives a sleeping thread's syscall number and
 * arguments ("running" while it runs).
 *
 * The polling waits in ppoll (a select block in the trace, one voluntary
 * switch in /proc), never in nanosleep, so it adds nothing to the sleep
 * counts tests hold workloads to. */
#ifndef WL_ASLEEP_H
#define WL_ASLEEP_H

#include <fcntl.h>
#include <poll.h>

#include "wl_common.h"

/* True if thread tid (of this process) sleeps in syscall nr with first
 * argument arg0. */
static inline int wl_asleep_in(pid_t tid, long nr, unsigned long arg0)
{
	char path[64], buf[256];
	unsigned long a0;
	long got;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		wl_die(path);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return sscanf(buf, "%ld %lx", &got, &a0) == 2 && got == nr && a0 == arg0;
}

/* Returns once thread tid sleeps in syscall nr with first argument arg0. */
static inline void wl_wait_asleep_in(pid_t tid, long nr, unsigned long arg0)
{
	const struct timespec pause = {0, 200000};

	while (!wl_asleep_in(tid, nr, arg0))
		ppoll(NULL, 0, &pause, NULL);
}

#endif
