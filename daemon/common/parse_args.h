/* Parsers for command-line values shared by gotracectl and gotraced. */
#ifndef GT_PARSE_ARGS_H
#define GT_PARSE_ARGS_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* "500ms", "2s", "1.5m", "1h", "750us", "10" (seconds) -> ns.  0 or -EINVAL. */
int gt_args_duration(const char *s, uint64_t *ns);

/* A size as every size option spells it (--ring-size, --flight-size,
 * gotraced's --ring-size and --flight-size): bytes, or a number with K, M
 * or G (powers of 1024; "KiB", "MiB", "GiB" too), within [min, max].
 * 0 or -EINVAL. */
int gt_args_size(const char *s, uint64_t min, uint64_t max, uint64_t *bytes);

/* A trace format version as --go-version spells it: "1.11", "1.19",
 * "1.21", "1.22" or "1.23" -> GT_V1_* / GT_GO_1_* (session_opts.h).
 * 0 or -EINVAL. */
int gt_args_go_version(const char *s, int *v);

/* "12,34" -> pids (at most max).  Returns the count or -EINVAL / -E2BIG. */
/* Removes repeated PIDs in place, keeping the first of each; returns the
 * new count.  A PID named twice is one process, traced once (a list of one
 * PID repeated 1024 times attached its probes 1024 times). */
int gt_pids_dedup(pid_t *pids, int n);

int gt_args_pids(const char *s, pid_t *pids, int max);

/* Checks that pid names a live user-space process.  0, or -ESRCH (no such
 * process), -EPERM (a kernel thread), with a message in why. */
int gt_args_target_pid(pid_t pid, char *why, size_t whylen);

/* A daemon session's id as gotracectl status shows it: a decimal number
 * from 1 to 2^31-1, nothing else.  0 or -EINVAL. */
int gt_args_session_id(const char *s, uint32_t *id);

/* The options of gotracectl's daemon commands (status, stop): --socket
 * PATH and --help.  Returns -1 to go on (*sock_path set, optind at the
 * first operand), or the exit code: 0 after --help (usage on stdout), 2
 * after a bad option (usage on stderr). */
int gt_args_socket_opts(int argc, char **argv, void (*usage)(FILE *), const char **sock_path);

#endif
