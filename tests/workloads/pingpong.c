/* pingpong [--wait] N [strict] [pipe|socket|futex]: threads "ping" and
 * "pong" pass one byte back and forth, exactly N round trips, over two
 * pipes (read/write: syscall blocks in the trace), a socketpair
 * (send/recv: net blocks) or a futex word (sync blocks).  Prints
 * `roundtrips N`, `elapsed_ns T` (the measured loop only; the overhead
 * bench uses it) and `cpu_ns C` (the process's CPU time, wl_cpu_ns).
 *
 * On several CPUs a reply can land before the other thread has gone to
 * sleep in read, so the number of sleeps and wakeups is less than N.  With
 * `strict` both threads are pinned to one CPU and run SCHED_FIFO (needs
 * root): a wakeup never preempts the waker, so every round trip is exactly
 * one sleep and one wakeup per thread (N GoUnblock each way). */
#include <linux/futex.h>
#include <sys/socket.h>

#include "wl_common.h"

enum transport { PIPE, SOCKET, FUTEX };

static int to_pong[2], to_ping[2]; /* pipes; with SOCKET to_pong is the pair */
static enum transport transport;
static volatile int turn;          /* FUTEX: 1 = pong's turn, 0 = ping's */
static long rounds;
static struct wl_gates gates;
static uint64_t elapsed_ns;
static int strict;

static void make_strict(void)
{
	if (strict)
		wl_pin_fifo_cpu0("pingpong: strict mode");
}

static void futex_wait_while(int val)
{
	while (turn == val)
		syscall(SYS_futex, &turn, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_pass(int val)
{
	turn = val;
	syscall(SYS_futex, &turn, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Pipes: ping writes to_pong, reads to_ping.  Socket: each end of the pair. */
static void send_byte(int pipe_fd, int sock_fd)
{
	char c = 'x';

	if (transport == SOCKET ? send(sock_fd, &c, 1, 0) != 1 : write(pipe_fd, &c, 1) != 1)
		wl_die("send");
}

static void recv_byte(int pipe_fd, int sock_fd)
{
	char c;

	if (transport == SOCKET ? recv(sock_fd, &c, 1, 0) != 1 : read(pipe_fd, &c, 1) != 1)
		wl_die("recv");
}

__attribute__((noinline)) static void ping_loop(void)
{
	for (long i = 0; i < rounds; i++) {
		if (transport == FUTEX) {
			futex_pass(1);
			futex_wait_while(1);
		} else {
			send_byte(to_pong[1], to_pong[0]);
			recv_byte(to_ping[0], to_pong[0]);
		}
	}
}

__attribute__((noinline)) static void pong_loop(void)
{
	for (long i = 0; i < rounds; i++) {
		if (transport == FUTEX) {
			futex_wait_while(0);
			futex_pass(0);
		} else {
			recv_byte(to_pong[0], to_pong[1]);
			send_byte(to_ping[1], to_pong[1]);
		}
	}
}

static void *ping(void *arg)
{
	uint64_t t0;

	(void)arg;
	make_strict();
	wl_announce("ping");
	wl_gates_before_work(&gates);
	t0 = wl_now_ns();
	ping_loop();
	elapsed_ns = wl_now_ns() - t0;
	wl_gates_after_work(&gates);
	return NULL;
}

static void *pong(void *arg)
{
	(void)arg;
	make_strict();
	wl_announce("pong");
	wl_gates_before_work(&gates);
	pong_loop();
	wl_gates_after_work(&gates);
	return NULL;
}

int main(int argc, char **argv)
{
	int wait = wl_take_wait_flag(&argc, &argv);
	pthread_t a, b;

	rounds = wl_arg(argc, argv, 1, 10000);
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "strict"))
			strict = 1;
		else if (!strcmp(argv[i], "socket"))
			transport = SOCKET;
		else if (!strcmp(argv[i], "futex"))
			transport = FUTEX;
		else if (strcmp(argv[i], "pipe")) {
			fprintf(stderr, "pingpong: unknown option '%s'\n", argv[i]);
			return 2;
		}
	}
	if (transport == SOCKET ? socketpair(AF_UNIX, SOCK_STREAM, 0, to_pong) :
	    pipe(to_pong) || pipe(to_ping))
		wl_die("pipe/socketpair");
	wl_start_main("wl-pingpong");
	wl_gates_init(&gates, 3);
	/* Create pong first so its `thread` line comes before ping's. */
	if (pthread_create(&b, NULL, pong, NULL) || pthread_create(&a, NULL, ping, NULL))
		wl_die("pthread_create");
	wl_gates_main(&gates, wait);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	wl_say("roundtrips %ld\nelapsed_ns %llu\ncpu_ns %llu\n", rounds,
	       (unsigned long long)elapsed_ns, wl_cpu_ns());
	return 0;
}
