/* cap_family N: the subject of tests/unit/test_capture.c.
 *
 * Threads "ping" and "pong" do exactly N round trips over two pipes: each
 * does exactly N read() and N write() calls and nothing else that reads or
 * writes.  Before writing, a thread waits until its peer sleeps (state S in
 * /proc, read with pread, a different syscall), so every write wakes the
 * peer: each thread is woken at least N times.  Then the main thread makes
 * exactly N getppid() calls from a non-inlined function (its stack has a
 * frame in this binary), forks a grandchild that makes N getppid() calls and
 * exits with code 7, reaps it, renames itself "cap_renamed", prints `done`,
 * and exits at EOF on stdin. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int to_pong[2], to_ping[2];
static long rounds;
static volatile pid_t tid_of[2]; /* 0 = ping, 1 = pong */

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static char task_state(int fd)
{
	char buf[512];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	char *p;

	if (n <= 0)
		die("pread stat");
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

/* Opens /proc/self/task/PEER/stat once the peer has published its tid. */
static int peer_stat(int peer)
{
	char path[64];
	int fd;

	while (!tid_of[peer])
		sched_yield();
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid_of[peer]);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		die(path);
	return fd;
}

static void wait_sleeping(int fd)
{
	while (task_state(fd) != 'S')
		sched_yield();
}

static void *player(void *arg)
{
	int me = (int)(long)arg, rfd = me ? to_pong[0] : to_ping[0];
	int wfd = me ? to_ping[1] : to_pong[1], st;
	char b = 'x';

	tid_of[me] = (pid_t)syscall(SYS_gettid);
	st = peer_stat(!me);
	for (long i = 0; i < rounds; i++) {
		if (me == 0) { /* ping writes first */
			wait_sleeping(st);
			if (write(wfd, &b, 1) != 1 || read(rfd, &b, 1) != 1)
				die("ping");
		} else {
			if (read(rfd, &b, 1) != 1)
				die("pong read");
			wait_sleeping(st);
			if (write(wfd, &b, 1) != 1)
				die("pong write");
		}
	}
	close(st);
	return NULL;
}

__attribute__((noinline)) static void known_syscalls(long n)
{
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	char c;
	pid_t g;
	int status;

	rounds = argc > 1 ? atol(argv[1]) : 100;
	if (pipe(to_pong) || pipe(to_ping))
		die("pipe");
	for (long i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, player, (void *)i))
			die("pthread_create");
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	known_syscalls(rounds);
	g = fork();
	if (g < 0)
		die("fork");
	if (g == 0) {
		known_syscalls(rounds);
		_exit(7);
	}
	if (waitpid(g, &status, 0) != g)
		die("waitpid");
	prctl(PR_SET_NAME, "cap_renamed");
	printf("grandchild %d\ndone\n", (int)g);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
