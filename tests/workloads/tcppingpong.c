/* tcppingpong [--wait] N [strict]: two processes, "tcp-ping" and its child
 * "tcp-pong", pass one byte back and forth over a TCP connection on
 * 127.0.0.1 (a random port), exactly N round trips.  Prints `roundtrips N`
 * and `elapsed_ns T` (ping's loop only; the overhead bench uses it), and
 * `cpu_ns C` (both processes' CPU time, wl_cpu_ns).
 *
 * Unlike pingpong's socketpair, every wakeup here arrives through the
 * loopback device's receive softirq, run on the sender's CPU in its
 * context: the path gotraced names loopback wakers on (docs/mapping.md).
 * With `strict` both processes are pinned to CPU 0 and run SCHED_FIFO
 * (needs root), as in pingpong: one sleep and one wakeup per round trip
 * each, and far steadier timings.  --wait as in wl_common.h (ping reads
 * the bytes; pong waits in recv meanwhile). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "wl_common.h"

static void make_strict(void)
{
	struct sched_param sp = {.sched_priority = 1};
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set) || sched_setscheduler(0, SCHED_FIFO, &sp)) {
		fprintf(stderr, "tcppingpong: strict mode needs CPU 0 and SCHED_FIFO: %s\n",
			strerror(errno));
		exit(1);
	}
}

static void nodelay(int fd)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		wl_die("setsockopt TCP_NODELAY");
}

static void send_byte(int fd)
{
	char c = 'x';

	if (send(fd, &c, 1, 0) != 1)
		wl_die("send");
}

static void recv_byte(int fd)
{
	char c;

	if (recv(fd, &c, 1, 0) != 1)
		wl_die("recv");
}

/* A listening socket on 127.0.0.1, port chosen by the kernel. */
static int listen_lo(struct sockaddr_in *a)
{
	socklen_t len = sizeof(*a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)a, sizeof(*a)) || listen(fd, 1) ||
	    getsockname(fd, (struct sockaddr *)a, &len))
		wl_die("listen on 127.0.0.1");
	return fd;
}

__attribute__((noinline)) static void pong_loop(int fd, long rounds)
{
	for (long i = 0; i < rounds; i++) {
		recv_byte(fd);
		send_byte(fd);
	}
}

__attribute__((noinline)) static void ping_loop(int fd, long rounds)
{
	for (long i = 0; i < rounds; i++) {
		send_byte(fd);
		recv_byte(fd);
	}
}

static void pong(const struct sockaddr_in *a, long rounds, int strict)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	prctl(PR_SET_NAME, "tcp-pong", 0, 0, 0);
	if (strict)
		make_strict();
	if (fd < 0 || connect(fd, (const struct sockaddr *)a, sizeof(*a)))
		wl_die("connect to 127.0.0.1");
	nodelay(fd);
	pong_loop(fd, rounds);
	_exit(0);
}

int main(int argc, char **argv)
{
	int go = wl_take_wait_flag(&argc, &argv);
	long rounds = wl_arg(argc, argv, 1, 10000);
	int strict = argc > 2 && !strcmp(argv[2], "strict"), lfd, fd, status;
	struct sockaddr_in a;
	uint64_t t0, elapsed;
	pid_t child;

	if (argc > 3 || (argc > 2 && !strict)) {
		fprintf(stderr, "usage: tcppingpong [--wait] N [strict]\n");
		return 2;
	}
	prctl(PR_SET_NAME, "tcp-ping", 0, 0, 0);
	lfd = listen_lo(&a);
	child = fork();
	if (child < 0)
		wl_die("fork");
	if (child == 0)
		pong(&a, rounds, strict);
	if (strict)
		make_strict();
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		wl_die("accept");
	nodelay(fd);
	wl_wait_go(go);
	t0 = wl_now_ns();
	ping_loop(fd, rounds);
	elapsed = wl_now_ns() - t0;
	wl_wait_end(go);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
		wl_die("tcp-pong failed");
	wl_say("roundtrips %ld\nelapsed_ns %llu\ncpu_ns %llu\n", rounds, (unsigned long long)elapsed,
	       wl_cpu_ns());
	return 0;
}
