/* pingpong [--wait] N: threads "ping" and "pong" pass one byte back and
 * forth over two pipes exactly N round trips, so each wakes the other
 * exactly N times (N GoUnblock each way).  Prints `roundtrips N` and
 * `elapsed_ns T` (the measured loop only; the overhead bench uses it). */
#include "wl_common.h"

static int to_pong[2], to_ping[2];
static long rounds;
static struct wl_gates gates;
static uint64_t elapsed_ns;

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
