/* A large valid trace on demand, for the tests and benchmarks that show the
 * checker's memory does not grow with the file: 8 Ps, 64 goroutines that
 * start, make syscalls, yield, block and wake each other across Ps (so the
 * merge has sequence numbers to follow), written with format/writer/gt_writer. */
#ifndef GT_BIGTRACE_H
#define GT_BIGTRACE_H

#include <stddef.h>
#include <stdint.h>

/* Writes to fd (left open) a Go 1.19 trace of about bytes bytes that meets
 * the contract of docs/format.md.  Returns the events written, or -errno. */
long long gt_bigtrace_write(int fd, uint64_t bytes);

/* Runs argv[0] (a path) with argv, its stdout into out (NUL-terminated,
 * cut to outlen - 1), and waits: *status as wait(2), *maxrss_kib its peak
 * RSS (ru_maxrss), *secs the wall time, *cpu its user + system time (the
 * figure that holds on a busy machine).  0 or -errno. */
int gt_run_measured(char *const argv[], char *out, size_t outlen, int *status,
		    long *maxrss_kib, double *secs, double *cpu);

#endif
