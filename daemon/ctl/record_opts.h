/* `gotracectl record` options, parsed from argv. */
#ifndef GT_RECORD_OPTS_H
#define GT_RECORD_OPTS_H

#include <stdint.h>
#include <sys/types.h>

#include "common/session_opts.h"

#define GT_RECORD_MAX_PIDS 1024

enum gt_record_mode { GT_MODE_AUTO, GT_MODE_STANDALONE, GT_MODE_DAEMON };

struct gt_record_opts {
	pid_t pids[GT_RECORD_MAX_PIDS];
	int npids;
	const char *names[GT_MAX_NAMES]; /* -n NAME, repeatable */
	int nnames;
	int wait;                 /* -n: no process of the names yet is fine */
	const char *cgroup;       /* as given */
	const char *container;    /* as given */
	const char *pod;          /* --pod UID or NAMESPACE/NAME, as given */
	char cgroup_path[4096];   /* resolved absolute cgroup directory */
	const char *out;
	char **cmd;               /* after "--" */
	GT_SESSION_OPTION_FIELDS  /* what the session records (-d, --heap, ...) */
	unsigned ring_bytes;
	enum gt_record_mode mode;
	const char *socket;
	int quiet;
	int verbose;
	int flight_on;            /* --flight: -o names the dumps */
	int detach;               /* --detach: in gotraced; -o is a directory */
	struct gt_flight_opts flight;
	const char *go_trace;     /* --go-trace URL: the runtime's trace to merge */
};

/* 0 ok, 1 help printed (exit 0), 2 usage error (message printed). */
int gt_record_parse(int argc, char **argv, struct gt_record_opts *o);

/* The session these options ask for, in embedded mode or from the daemon
 * (out_fd and owner_uid are left for the caller). */
void gt_record_session_opts(const struct gt_record_opts *o, struct gt_session_opts *so);

#endif
