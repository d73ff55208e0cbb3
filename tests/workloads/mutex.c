/* mutex [--wait] THREADS ITERS: THREADS threads (named mutex-0..) contend
 * on one shared pthread mutex, so they block in futex (GoBlockSync in the
 * trace).  The function names (contend_on_mutex, hold_the_lock) are
 * distinctive so tests can find them in the trace's stacks.
 *
 * The contention is forced, not hoped for: first THREADS rounds, in round r
 * thread r takes the lock and keeps it until the kernel shows every other
 * thread asleep in futex on it (wl_asleep.h), so each
 * thread blocks on the mutex at least THREADS-1 times however the
 * scheduler runs them (a busy machine may otherwise serialize them and no
 * one ever waits).  Then each takes the lock ITERS times with a little work
 * inside, contending as the scheduler lets them.  Prints `forced N`: the
 * blocks on the mutex each thread is certain to have done.
 *
 * Debian's libc has no frame pointers: a frame-pointer unwind from inside
 * pthread_mutex_lock skips the innermost frame of ours (its return address
 * is never pushed as a frame).  take_the_lock is that sacrificial frame, so
 * contend_on_mutex and worker do show in the stacks of the futex waits. */
#include "wl_common.h"
#include "wl_asleep.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct wl_gates gates;
static long iters, nthreads;
static volatile unsigned long shared_counter;
static pid_t tids[64];

/* The rounds' bookkeeping, under its own mutex and condition. */
static pthread_mutex_t round_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t round_cv = PTHREAD_COND_INITIALIZER;
static long round_open = -1;     /* the round whose holder has the lock */
static long round_done = -1;     /* the last round every thread passed */
static long round_passed;        /* waiters of round_open through the lock */

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

static void wait_all_asleep_on_lock(long self)
{
	for (long i = 0; i < nthreads; i++)
		if (i != self)
			wl_wait_asleep_in(tids[i], SYS_futex, (unsigned long)(uintptr_t)&lock);
}

static void set_round(long *field, long value)
{
	pthread_mutex_lock(&round_mu);
	*field = value;
	pthread_cond_broadcast(&round_cv);
	pthread_mutex_unlock(&round_mu);
}

static void wait_round(const long *field, long value)
{
	pthread_mutex_lock(&round_mu);
	while (*field != value)
		pthread_cond_wait(&round_cv, &round_mu);
	pthread_mutex_unlock(&round_mu);
}

/* Round r as its holder: lock (free: the others wait for round_open),
 * open the round, keep the lock until all others sleep on it, let them
 * through, close the round once all passed. */
static void hold_round(long r)
{
	wait_round(&round_done, r - 1);
	take_the_lock();
	set_round(&round_open, r);
	wait_all_asleep_on_lock(r);
	pthread_mutex_unlock(&lock);
	pthread_mutex_lock(&round_mu);
	while (round_passed != nthreads - 1)
		pthread_cond_wait(&round_cv, &round_mu);
	round_passed = 0;
	round_done = r;
	pthread_cond_broadcast(&round_cv);
	pthread_mutex_unlock(&round_mu);
}

/* Round r as a waiter: once it is open, block on the held lock. */
static void wait_in_round(long r)
{
	wait_round(&round_open, r);
	take_the_lock();
	hold_the_lock();
	pthread_mutex_unlock(&lock);
	pthread_mutex_lock(&round_mu);
	round_passed++;
	pthread_cond_broadcast(&round_cv);
	pthread_mutex_unlock(&round_mu);
}

__attribute__((noinline)) static void contend_on_mutex(long self, long n)
{
	for (long r = 0; r < nthreads; r++) {
		if (r == self)
			hold_round(r);
		else
			wait_in_round(r);
	}
	for (long i = 0; i < n; i++) {
		take_the_lock();
		hold_the_lock();
		pthread_mutex_unlock(&lock);
	}
}

static void *worker(void *arg)
{
	long self = (long)(intptr_t)arg;
	char name[16];

	snprintf(name, sizeof(name), "mutex-%ld", self);
	tids[self] = wl_tid();
	wl_announce(name);
	wl_gates_before_work(&gates);
	contend_on_mutex(self, iters);
	wl_gates_after_work(&gates);
	return NULL;
}

int main(int argc, char **argv)
{
	int wait = wl_take_wait_flag(&argc, &argv);

	nthreads = wl_arg(argc, argv, 1, 4);
	iters = wl_arg(argc, argv, 2, 20000);
	if (nthreads < 1 || nthreads > 64) {
		fprintf(stderr, "mutex: THREADS must be 1..64\n");
		return 2;
	}
	wl_start_main("wl-mutex");
	wl_say("forced %ld\n", nthreads - 1);
	wl_run_workers(&gates, nthreads, worker, wait);
	wl_say("counter %lu\n", shared_counter);
	return 0;
}
