/* Starting `gotracectl record -- CMD ARGS...`: the child is forked held
 * back on a pipe, so its PID can be put in the BPF filter before it runs a
 * single instruction of CMD; released, it execs CMD.  An exec failure comes
 * back through a close-on-exec pipe, so "no such command" is reported as
 * such, not as a recording of a process that died. */
#ifndef GT_CHILD_LAUNCH_H
#define GT_CHILD_LAUNCH_H

#include <stddef.h>
#include <sys/types.h>

struct gt_child {
	int heap_interpose; /* in: preload the heap interposer (--heap interpose) */
	unsigned alloc_every; /* in: with it, sample every Nth allocation */
	pid_t pid;
	int go_fd;     /* write a byte: exec now */
	int err_fd;    /* EOF: exec succeeded; an int: exec's errno */
};

/* Forks the held child.  With heap_interpose, CMD runs with
 * libgotraced-heap.so first in LD_PRELOAD (found next to gotracectl, or in
 * ../lib/gotraced/, or at $GOTRACED_HEAP_LIB) and a fresh heap record
 * (interpose/heap_shm.h) open at the descriptor GOTRACED_HEAP_FD names;
 * the recorder finds the record through /proc/PID/fd.
 * 0 or -errno with a message in why. */
int gt_child_prepare(struct gt_child *c, char **argv, char *why, size_t whylen);

/* Lets it exec; 0, or -errno (exec failed: why says so; the child is reaped). */
int gt_child_release(struct gt_child *c, const char *cmd, char *why, size_t whylen);

/* Kills and reaps a child that was never released. */
void gt_child_abort(struct gt_child *c);

#endif
