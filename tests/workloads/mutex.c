/* mutex [--wait] THREADS ITERS: THREADS threads (named mutex-0..) each take
 * one shared pthread mutex ITERS times and do a little work while holding
 * it, so they contend and block in futex (GoBlockSync in the trace).  The
 * function names (contend_on_mutex, hold_the_lock) are distinctive so tests
 * can find them in the trace's stacks.
 *
 * Debian's libc has no frame pointers: a frame-pointer unwind from inside
 * pthread_mutex_lock skips the innermost frame of ours (its return address
 * is never pushed as a frame).  take_the_lock is that sacrificial frame, so
 * contend_on_mutex and worker do show in the stacks of the futex waits. */
#include "wl_common.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct wl_gates gates;
static long iters;
static volatile unsigned long shared_counter;

__attribute__((noinline)) static void hold_the_lock(void)
{
	/* Enough work inside the lock that others pile up on it. */
	for (int i = 0; i < 2000; i++)
		shared_counter++;
}

__attribute__((noinline)) static void take_the_lock(void)
{
	pthread_mutex_lock(&lock);
}

__attribute__((noinline)) static void contend_on_mutex(long n)
{
	for (long i = 0; i < n; i++) {
		take_the_lock();
		hold_the_lock();
		pthread_mutex_unlock(&lock);
	}
}

static void *worker(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "mutex-%ld", (long)(intptr_t)arg);
	wl_announce(name);
	wl_gates_before_work(&gates);
	contend_on_mutex(iters);
	wl_gates_after_work(&gates);
	return NULL;
}

int main(int argc, char **argv)
{
	int wait = wl_take_wait_flag(&argc, &argv);
	long n = wl_arg(argc, argv, 1, 4);

	iters = wl_arg(argc, argv, 2, 20000);
	if (n < 1 || n > 64) {
		fprintf(stderr, "mutex: THREADS must be 1..64\n");
		return 2;
	}
	wl_start_main("wl-mutex");
	wl_run_workers(&gates, n, worker, wait);
	wl_say("counter %lu\n", shared_counter);
	return 0;
}
