/* demo [--wait] [SECONDS]: the README's example, a small process that does
 * a bit of everything for SECONDS (default 3): four workers fight over a
 * mutex (worker-N), ping and pong bounce a byte over pipes, a sleeper naps,
 * a reader waits on a slow pipe, and three spinners compete for the CPUs.
 * In `go tool trace` each thread is a goroutine named after it.
 *
 * At the end it prints `wakes NAME MAX` per thread: how many other threads
 * it could have woken, counting each call that can wake one (a write to a
 * pipe, a close of one, a mutex unlock) plus its own exit (which wakes a
 * joiner).  A trace that credits a thread with more wakeups lies
 * (tests/integration/record_wakeups.sh). */
#include "wl_common.h"

#define NWORKERS 4
#define NSPIN 3

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long guarded;
static int to_pong[2], to_ping[2], slow[2];
static uint64_t deadline;
static volatile int stop;
/* Calls that can wake another thread, per thread, read by main after the
 * joins (the join orders them). */
static unsigned long wakes_worker[NWORKERS], wakes_ping, wakes_pong, wakes_main;

__attribute__((noinline)) static void update_shared_state(void)
{
	for (int i = 0; i < 5000; i++)
		guarded++;
}

static void *worker(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "worker-%ld", (long)(intptr_t)arg);
	wl_announce(name);
	while (!stop) {
		pthread_mutex_lock(&lock);
		update_shared_state();
		pthread_mutex_unlock(&lock);
		wakes_worker[(intptr_t)arg]++;
		usleep(200);
	}
	return NULL;
}

static void *ping(void *arg)
{
	char c = 'p';

	(void)arg;
	wl_announce("ping");
	while (!stop) {
		wakes_ping++;
		if (write(to_pong[1], &c, 1) != 1 || read(to_ping[0], &c, 1) != 1)
			break;
		usleep(500);
	}
	wakes_ping++;
	close(to_pong[1]); /* pong sees EOF and ends */
	return NULL;
}

static void *pong(void *arg)
{
	char c;

	(void)arg;
	wl_announce("pong");
	while (read(to_pong[0], &c, 1) == 1) {
		wakes_pong++;
		if (write(to_ping[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	wl_announce("sleeper");
	while (!stop)
		usleep(10000);
	return NULL;
}

static void *reader(void *arg)
{
	char c;

	(void)arg;
	wl_announce("reader");
	while (read(slow[0], &c, 1) == 1)
		;
	return NULL;
}

__attribute__((noinline)) static void burn_cpu(void)
{
	volatile unsigned long x = 0;

	while (!stop)
		for (int i = 0; i < 100000; i++)
			x++;
}

static void *spinner(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "spinner-%ld", (long)(intptr_t)arg);
	wl_announce(name);
	burn_cpu();
	return NULL;
}

int main(int argc, char **argv)
{
	int wait = wl_take_wait_flag(&argc, &argv);
	long secs = wl_arg(argc, argv, 1, 3);
	pthread_t t[NWORKERS + NSPIN + 4];
	int nt = 0;
	char c = 's';

	if (pipe(to_pong) || pipe(to_ping) || pipe(slow))
		wl_die("pipe");
	wl_start_main("demo");
	wl_wait_go(wait);
	deadline = wl_now_ns() + (uint64_t)secs * 1000000000ull;
	for (long i = 0; i < NWORKERS; i++)
		pthread_create(&t[nt++], NULL, worker, (void *)(intptr_t)i);
	pthread_create(&t[nt++], NULL, pong, NULL);
	pthread_create(&t[nt++], NULL, ping, NULL);
	pthread_create(&t[nt++], NULL, sleeper, NULL);
	pthread_create(&t[nt++], NULL, reader, NULL);
	for (long i = 0; i < NSPIN; i++)
		pthread_create(&t[nt++], NULL, spinner, (void *)(intptr_t)i);
	/* Main feeds the reader slowly until the time is up. */
	while (wl_now_ns() < deadline) {
		usleep(20000);
		wakes_main++;
		if (write(slow[1], &c, 1) != 1)
			wl_die("write");
	}
	stop = 1;
	wakes_main++;
	close(slow[1]);
	for (int i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
	/* + 1 each: a thread's exit wakes its joiner */
	for (int i = 0; i < NWORKERS; i++)
		wl_say("wakes worker-%d %lu\n", i, wakes_worker[i] + 1);
	wl_say("wakes ping %lu\nwakes pong %lu\nwakes demo %lu\n", wakes_ping + 1,
	       wakes_pong + 1, wakes_main + 1);
	wl_say("wakes sleeper 1\nwakes reader 1\n");
	for (int i = 0; i < NSPIN; i++)
		wl_say("wakes spinner-%d 1\n", i);
	wl_say("done\n");
	return 0;
}
