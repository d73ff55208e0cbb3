/* Who a non-root user may record: the kernel's ptrace rule, decided in this
 * one place for every process that enters a non-root session from /proc
 * (the targets the server authorizes, and the descendants, cgroup members
 * and named processes the engine's snapshot finds).  What happens later
 * (forks, execs, credential changes) is BPF's to re-check with the same
 * rule at every event (bpf/common.bpf.h, unfollowable).
 *
 * The rule is __ptrace_may_access() for PTRACE_MODE_ATTACH_REALCREDS, the
 * mode of ptrace(PTRACE_ATTACH), for a tracer without capabilities:
 *  - the target's real, effective, saved and filesystem uids are all the
 *    tracer's uid, and its four gids the tracer's gid (/proc/PID/status);
 *  - it is dumpable (SUID_DUMP_USER): the kernel then owns its /proc/PID
 *    files by its euid, else by root (task_dump_owner), so /proc/PID/environ
 *    owned by the tracer's uid says so;
 *  - it holds no permitted capability (CapPrm): the client counts as
 *    holding none, whatever SO_PEERCRED's pid holds (that pid can be gone
 *    and reused; the strict reading needs no race);
 *  - Yama's kernel.yama.ptrace_scope: 0 nothing more; 1 only descendants of
 *    the client process (SO_PEERCRED's pid): `record -- CMD` is one, `-p`
 *    of a sibling is refused, and selections that let processes join later
 *    (--cgroup) are refused because their newcomers cannot be checked for
 *    it; 2 and 3 refuse every non-root client.
 * Root (uid 0) may record anything.
 *
 * Return convention: 0 allowed, or -errno (-EPERM refused, -ESRCH no such
 * process); why gets a message for the client and the log.
 */
#ifndef GT_COMMON_PTRACE_RULE_H
#define GT_COMMON_PTRACE_RULE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The client on whose behalf a session records. */
struct gt_tracer {
	uid_t uid;
	gid_t gid;
	pid_t pid;       /* the client process (Yama scope 1); 0 unknown */
	int yama_scope;  /* kernel.yama.ptrace_scope when it asked, 0 without Yama */
};

/* kernel.yama.ptrace_scope, 0 when Yama is not there; a value that cannot
 * be read counts as 3 (refuse: the rule must not open by mistake). */
int gt_yama_scope(void);

/* The tracer for a client, with the scope read now. */
struct gt_tracer gt_tracer_of(uid_t uid, gid_t gid, pid_t pid);

/* What the decision needs to know of a target. */
struct gt_ptrace_target {
	uint32_t uid[4];        /* real, effective, saved, fs */
	uint32_t gid[4];
	uint64_t cap_prm;       /* permitted capabilities */
	int dumpable;
	int descendant;         /* of the tracer's process */
};

/* The decision on facts already read (for tests): 0 or -EPERM and why. */
int gt_ptrace_decide(const struct gt_tracer *t, pid_t pid, const struct gt_ptrace_target *x,
		     char *why, size_t whylen);

/* Reads PID's facts from /proc and decides. */
int gt_ptrace_may(const struct gt_tracer *t, pid_t pid, char *why, size_t whylen);

/* Whether a selection whose processes may join while it records (a
 * cgroup: what: "--cgroup") is allowed: not for non-root under Yama
 * scope 1 or more. */
int gt_ptrace_may_open_set(const struct gt_tracer *t, const char *what, char *why,
			   size_t whylen);

#endif
