/* The --call-graph=dwarf unwinder (daemon/sym/unwind.h) and its sessions
 * across an exec: a child of this test takes what BPF copies at a block
 * (the registers and 8 KiB of stack, inside qsort()'s callback, as
 * tests/bench/bench_unwind.c does) and hands it over; the unwinder gives
 * its frames while the child lives, and still after it exited when told
 * of an exec older than its session (the engine hears of an exec seconds
 * late when the rings are read behind, as under qemu: the session read
 * since is the new image's, and dropping it lost every later stack of a
 * process gone by then); a session older than the exec is dropped. */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gt_test.h"
#include "gt_ucopy.h"
#include "sym/unwind.h"

#define COPY GT_UCOPY_BYTES

static struct gt_ucopy cp;
static int taken;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void take(void)
{
	gt_ucopy_take(&cp);
	taken = 1;
}

static int cmp(const void *a, const void *b)
{
	if (!taken)
		take();
	return *(const int *)a - *(const int *)b;
}

/* In the child: the copy, taken below qsort, with 8 KiB of stack above. */
__attribute__((noinline)) static void child_take(void)
{
	volatile char pad[COPY];
	int v[32];

	pad[0] = pad[COPY - 1] = 0;
	for (int i = 0; i < 32; i++)
		v[i] = (i * 7919) % 32;
	qsort(v, 32, sizeof(v[0]), cmp);
}

static int read_all(int fd, void *buf, size_t len)
{
	for (size_t got = 0; got < len;) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

/* A child that took its copy into *c and waits; its pid, or -1. *go: write
 * a byte to let it exit. */
static pid_t start_child(struct gt_ucopy *c, int *go)
{
	int to_parent[2], to_child[2];
	pid_t pid;
	char b;

	if (pipe(to_parent) || pipe(to_child))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(to_parent[0]);
		close(to_child[1]);
		child_take();
		if (write(to_parent[1], &cp, sizeof(cp)) != (ssize_t)sizeof(cp))
			_exit(1);
		_exit(read(to_child[0], &b, 1) == 1 ? 0 : 1);
	}
	close(to_parent[1]);
	close(to_child[0]);
	if (pid < 0 || read_all(to_parent[0], c, sizeof(*c))) {
		if (pid > 0)
			kill(pid, SIGKILL), waitpid(pid, NULL, 0);
		close(to_parent[0]);
		close(to_child[1]);
		return -1;
	}
	close(to_parent[0]);
	*go = to_child[1];
	return pid;
}

static void stop_child(pid_t pid, int go)
{
	if (write(go, "x", 1) != 1)
		kill(pid, SIGKILL);
	close(go);
	waitpid(pid, NULL, 0);
}

static int unwind(struct gt_unwinder *u, pid_t pid, const struct gt_ucopy *c)
{
	uint64_t ips[64];
	struct gt_unwind_in in = {
		.tgid = pid, .tid = pid, .ip = c->ip, .sp = c->sp,
		.regs = c->regs, .stack = c->stack, .size = COPY,
	};

	return gt_unwind(u, &in, ips, 64);
}

/* An exec before the session opened: the session is the new image's and
 * outlives the process (the engine's late exec record). */
static void test_exec_before_session_keeps_it(void)
{
	static struct gt_ucopy c;
	struct gt_unwinder *u = gt_unwinder_new();
	uint64_t exec_ns = now_ns();
	int go, n0, n1;
	pid_t pid;

	GT_REQUIRE(u, "no unwinder");
	pid = start_child(&c, &go);
	GT_REQUIRE(pid > 0, "no child");
	n0 = unwind(u, pid, &c); /* opens the session: the child lives */
	stop_child(pid, go);
	/* main, child_take, qsort's frames, cmp: past libc (no frame pointers) */
	GT_CHECK(n0 >= 4, "%d frames while the child lived", n0);
	gt_unwinder_forget(u, pid, exec_ns);
	n1 = unwind(u, pid, &c);
	GT_CHECK(n1 == n0, "%d frames after a late exec record and the exit, %d before", n1, n0);
	gt_unwinder_free(u);
}

/* An exec after the session opened: the session is the old image's and
 * goes; the process gone, a copy gives its first frame only. */
static void test_exec_after_session_drops_it(void)
{
	static struct gt_ucopy c;
	struct gt_unwinder *u = gt_unwinder_new();
	int go, n0, n1;
	pid_t pid;

	GT_REQUIRE(u, "no unwinder");
	pid = start_child(&c, &go);
	GT_REQUIRE(pid > 0, "no child");
	n0 = unwind(u, pid, &c);
	stop_child(pid, go);
	GT_CHECK(n0 >= 4, "%d frames while the child lived", n0);
	gt_unwinder_forget(u, pid, now_ns());
	n1 = unwind(u, pid, &c);
	GT_CHECK(n1 == 1, "%d frames from a session older than the exec", n1);
	gt_unwinder_free(u);
}

int main(void)
{
	GT_RUN(test_exec_before_session_keeps_it);
	GT_RUN(test_exec_after_session_drops_it);
	return gt_test_done();
}
