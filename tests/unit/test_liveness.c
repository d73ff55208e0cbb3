/* One liveness rule (common/procfs.c, gt_proc_alive): every state letter
 * and every error, on real processes (this one, a zombie, a reaped child,
 * /proc unreadable for lack of descriptors), and the engine's pruning of
 * followed processes keeping its verdict when /proc cannot tell. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gt_test.h"
#include "common/procfs.h"
#include "engine/internal.h"
#include "sym/symbolize.h"

static enum gt_proc_life of_state(char state)
{
	struct gt_proc_stat st;

	memset(&st, 0, sizeof(st));
	st.state = state;
	return gt_proc_life_of(0, &st);
}

static void test_every_state(void)
{
	static const char alive[] = "RSDTtWPKI";
	static const char dead[] = "ZXx";

	for (const char *c = alive; *c; c++)
		GT_CHECK(of_state(*c) == GT_PROC_ALIVE && gt_proc_state_alive(*c),
			 "state %c: alive", *c);
	for (const char *c = dead; *c; c++)
		GT_CHECK(of_state(*c) == GT_PROC_DEAD && !gt_proc_state_alive(*c),
			 "state %c: dead", *c);
}

static void test_every_error(void)
{
	static const int unknown[] = {EACCES, EMFILE, ENFILE, ENOMEM, EINVAL, EIO, EPERM};
	struct gt_proc_stat poisoned;

	/* what an error leaves in the struct is never read */
	memset(&poisoned, 'Z', sizeof(poisoned));
	GT_CHECK(gt_proc_life_of(-ENOENT, &poisoned) == GT_PROC_DEAD, "ENOENT: dead");
	GT_CHECK(gt_proc_life_of(-ESRCH, &poisoned) == GT_PROC_DEAD, "ESRCH: dead");
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
		GT_CHECK(gt_proc_life_of(-unknown[i], &poisoned) == GT_PROC_UNKNOWN,
			 "%s: unknown", strerror(unknown[i]));
}

/* A child that exits at once: a zombie until reaped. */
static pid_t zombie(void)
{
	pid_t pid = fork();
	struct gt_proc_stat st;

	if (pid == 0)
		_exit(0);
	for (int i = 0; pid > 0 && i < 10000; i++) {
		if (gt_proc_stat(pid, 0, &st) == 0 && st.state == 'Z')
			break;
		usleep(1000);
	}
	return pid;
}

/* Lowers the descriptor limit to the lowest free descriptor: opening
 * /proc then fails with EMFILE.  Returns the old limit for release_fds. */
static struct rlimit exhaust_fds(void)
{
	struct rlimit old, low;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	getrlimit(RLIMIT_NOFILE, &old);
	low = old;
	if (fd >= 0) {
		close(fd);
		low.rlim_cur = (rlim_t)fd;
		setrlimit(RLIMIT_NOFILE, &low);
	}
	return old;
}

static void release_fds(struct rlimit old)
{
	setrlimit(RLIMIT_NOFILE, &old);
}

static void test_real_processes(void)
{
	pid_t z = zombie();
	struct rlimit first;
	enum gt_proc_life life;

	GT_REQUIRE(z > 0, "fork");
	GT_CHECK(gt_proc_alive(getpid()) == GT_PROC_ALIVE, "this process lives");
	GT_CHECK(gt_proc_alive(z) == GT_PROC_DEAD, "a zombie is dead");
	waitpid(z, NULL, 0);
	GT_CHECK(gt_proc_alive(z) == GT_PROC_DEAD, "a reaped child is dead");
	first = exhaust_fds();
	life = gt_proc_alive(getpid());
	release_fds(first);
	GT_CHECK(life == GT_PROC_UNKNOWN, "EMFILE: unknown, got %d", (int)life);
}

/* Leaves 'R' bytes where the next call's frame goes: a struct read before
 * it was written shows a live state, deterministically. */
static __attribute__((noinline)) void poison_stack(void)
{
	volatile char junk[16384];

	memset((char *)junk, 'R', sizeof(junk));
}

static __attribute__((noinline)) void prune_without_fds(struct gt_engine *e)
{
	struct rlimit first = exhaust_fds();

	poison_stack();
	gt_engine_prune_followed(e);
	release_fds(first);
}

/* A followed process found dead is forgotten at the second check that
 * finds it dead; a check in between that cannot read /proc must neither
 * revive it nor count as one of the two. */
static void test_prune_keeps_verdict(void)
{
	struct gt_engine e;
	pid_t z = zombie();

	GT_REQUIRE(z > 0, "fork");
	waitpid(z, NULL, 0);
	memset(&e, 0, sizeof(e));
	e.sym = gt_symbolizer_new();
	e.nactive = 1;
	GT_REQUIRE(e.sym && gt_idmap_add(&e.symbolized, (uint32_t)z) == 1, "setup");
	gt_engine_prune_followed(&e);
	GT_CHECK(gt_idmap_has(&e.dying, (uint32_t)z), "dying after the first check");
	prune_without_fds(&e);
	GT_CHECK(gt_idmap_has(&e.dying, (uint32_t)z), "still dying after a blind check");
	GT_CHECK(gt_idmap_has(&e.symbolized, (uint32_t)z), "not forgotten by a blind check");
	gt_engine_prune_followed(&e);
	GT_CHECK(!gt_idmap_has(&e.symbolized, (uint32_t)z), "forgotten at the second check");
	e.nactive = 0;
	gt_engine_forget_followed(&e);
	gt_symbolizer_free(e.sym);
}

int main(void)
{
	GT_RUN(test_every_state);
	GT_RUN(test_every_error);
	GT_RUN(test_real_processes);
	GT_RUN(test_prune_keeps_verdict);
	return gt_test_done();
}
