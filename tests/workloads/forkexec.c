/* forkexec [--wait] N [self]: after the go, forks N children one after the
 * other; each execs /bin/true, or with `self` re-executes this program as
 * `forkexec --child`, which names itself fe-child, sleeps 1 ms and exits.
 * Prints `child PID` per child; the trace should show each as a new
 * goroutine (and, after exec, the new comm). */
#include <sys/wait.h>

#include "wl_common.h"

__attribute__((noinline)) static void child_after_exec(void)
{
	struct timespec ts = {.tv_nsec = 1000000};

	prctl(PR_SET_NAME, "fe-child", 0, 0, 0);
	nanosleep(&ts, NULL);
}

__attribute__((noinline)) static void fork_and_exec(long n, int self)
{
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			wl_die("fork");
		if (pid == 0) {
			if (self)
				execl("/proc/self/exe", "forkexec", "--child", (char *)NULL);
			else
				execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		wl_say("child %d\n", (int)pid);
		if (waitpid(pid, NULL, 0) < 0)
			wl_die("waitpid");
	}
}

int main(int argc, char **argv)
{
	int wait, self;
	long n;

	if (argc == 2 && !strcmp(argv[1], "--child")) {
		child_after_exec();
		return 0;
	}
	wait = wl_take_wait_flag(&argc, &argv);
	n = wl_arg(argc, argv, 1, 3);
	self = argc > 2 && !strcmp(argv[2], "self");
	wl_start_main("wl-forkexec");
	wl_wait_go(wait);
	fork_and_exec(n, self);
	wl_wait_end(wait);
	return 0;
}
