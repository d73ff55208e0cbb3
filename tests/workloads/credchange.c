/* credchange [--wait] HOW N USEC: on the go, the main thread changes its
 * credentials, says `changed`, then does N nanosleeps of USEC microseconds
 * (GoSleep in a trace that may still follow it).  HOW is `undumpable`
 * (prctl PR_SET_DUMPABLE 0: its owner may no longer ptrace it) or
 * `UID:GID` (setresgid/setresuid to them: a root process becoming a user).
 * Tests of who may trace a process whose privileges changed. */
#include <sys/prctl.h>

#include "wl_common.h"

static void change(const char *how)
{
	unsigned long uid, gid;

	if (!strcmp(how, "undumpable")) {
		if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
			wl_die("prctl(PR_SET_DUMPABLE, 0)");
		return;
	}
	if (sscanf(how, "%lu:%lu", &uid, &gid) != 2)
		wl_die("HOW is neither undumpable nor UID:GID");
	if (setresgid((gid_t)gid, (gid_t)gid, (gid_t)gid) || setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid))
		wl_die("setresgid/setresuid");
}

int main(int argc, char **argv)
{
	int wait = wl_take_wait_flag(&argc, &argv);
	long n = wl_arg(argc, argv, 2, 100), usec = wl_arg(argc, argv, 3, 1000);
	struct timespec ts = {.tv_sec = usec / 1000000, .tv_nsec = (usec % 1000000) * 1000};

	if (argc < 2)
		wl_die("usage: credchange [--wait] undumpable|UID:GID N USEC");
	wl_start_main("credchange");
	wl_wait_go(wait);
	change(argv[1]);
	wl_say("changed\n");
	for (long i = 0; i < n; i++)
		nanosleep(&ts, NULL);
	wl_say("done\n");
	wl_wait_end(wait);
	return 0;
}
