/* pingpong [--wait] N [strict]: threads "ping" and "pong" pass one byte
 * back and forth over two pipes, exactly N round trips.  Prints
 * `roundtrips N` and `elapsed_ns T` (the measured loop only; the overhead
 * bench uses it).
 *
 * On several CPUs a reply can land before the other thread has gone to
 * sleep in read, so the number of sleeps and wakeups is less than N.  With
 * `strict` both threads are pinned to one CPU and run SCHED_FIFO (needs
 * root): a wakeup never preempts the waker, so every round trip is exactly
 * one sleep and one wakeup per thread (N GoUnblock each way). */
#include <sched.h>

#include "wl_common.h"

static int to_pong[2], to_ping[2];
static long rounds;
static struct wl_gates gates;
static uint64_t elapsed_ns;
static int strict;

static void make_strict(void)
{
	struct sched_param sp = {.sched_priority = 1};
	cpu_set_t set;
	int err;

	if (!strict)
		return;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (!err)
		err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (err) {
		fprintf(stderr, "pingpong: strict mode needs CPU 0 and SCHED_FIFO: %s\n",
			strerror(err));
		exit(1);
	}
}

__attribute__((noinline)) static void ping_loop(void)
{
	char c = 'x';

	for (long i = 0; i < rounds; i++) {
		if (write(to_pong[1], &c, 1) != 1 || read(to_ping[0], &c, 1) != 1)
			wl_die("ping");
	}
}

__attribute__((noinline)) static void pong_loop(void)
{
	char c;

	for (long i = 0; i < rounds; i++) {
		if (read(to_pong[0], &c, 1) != 1 || write(to_ping[1], &c, 1) != 1)
			wl_die("pong");
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
	strict = argc > 2 && !strcmp(argv[2], "strict");
	if (pipe(to_pong) || pipe(to_ping))
		wl_die("pipe");
	wl_start_main("wl-pingpong");
	wl_gates_init(&gates, 3);
	/* Create pong first so its `thread` line comes before ping's. */
	if (pthread_create(&b, NULL, pong, NULL) || pthread_create(&a, NULL, ping, NULL))
		wl_die("pthread_create");
	wl_gates_main(&gates, wait);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	wl_say("roundtrips %ld\nelapsed_ns %llu\n", rounds, (unsigned long long)elapsed_ns);
	return 0;
}
