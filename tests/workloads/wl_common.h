/* Helpers shared by the workloads (header-only: each workload is built from
 * its one .c file).
 *
 * Protocol every workload follows, so a test can hold a trace to ground truth:
 *   stdout: `pid PID`, then one `thread TID NAME` line per thread, then
 *   `ready` once every thread exists and is parked.  With --wait the workload
 *   then reads one byte from stdin (the "go": the recorder is attached by
 *   now), does its measured work, prints `done`, parks again and exits only
 *   on a second byte or EOF, so the test can read /proc after the recording
 *   window while the threads still exist.  Without --wait it runs at once and
 *   exits when done.  Every line is flushed as written.
 */
#ifndef WL_COMMON_H
#define WL_COMMON_H

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static inline pid_t wl_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static inline void wl_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void wl_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

/* Names the calling thread (its comm, hence its goroutine name) and prints
 * the ground-truth line `thread TID NAME`. */
/* CPU time (user + system) of this process and its waited-for children
 * so far: the benchmarks' figure beside elapsed_ns (a tracer's programs
 * run in the traced task and count here; other load on the machine does
 * not, unlike in the wall time). */
static inline unsigned long long wl_cpu_ns(void)
{
	struct rusage s, c;

	getrusage(RUSAGE_SELF, &s);
	getrusage(RUSAGE_CHILDREN, &c);
	return (unsigned long long)(s.ru_utime.tv_sec + s.ru_stime.tv_sec + c.ru_utime.tv_sec +
				    c.ru_stime.tv_sec) * 1000000000ull +
	       (unsigned long long)(s.ru_utime.tv_usec + s.ru_stime.tv_usec + c.ru_utime.tv_usec +
				    c.ru_stime.tv_usec) * 1000ull;
}

/* The calling thread on CPU 0 under SCHED_FIFO (priority 1; needs root):
 * a wakeup never preempts its waker there, so a ping-pong of two such
 * threads is exactly one sleep and one wakeup per thread a round trip.
 * Exits with "WHO: ... needs CPU 0 and SCHED_FIFO" if it cannot. */
static inline void wl_pin_fifo_cpu0(const char *who)
{
	struct sched_param sp = {.sched_priority = 1};
	cpu_set_t set;
	int err;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (!err)
		err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (err) {
		fprintf(stderr, "%s needs CPU 0 and SCHED_FIFO: %s\n", who, strerror(err));
		exit(1);
	}
}

static inline void wl_announce(const char *name)
{
	prctl(PR_SET_NAME, name, 0, 0, 0);
	wl_say("thread %d %s\n", (int)wl_tid(), name);
}

/* Removes a leading --wait from argv; returns 1 if it was there. */
static inline int wl_take_wait_flag(int *argc, char ***argv)
{
	if (*argc > 1 && !strcmp((*argv)[1], "--wait")) {
		(*argv)[1] = (*argv)[0];
		(*argc)--;
		(*argv)++;
		return 1;
	}
	return 0;
}

static inline long wl_arg(int argc, char **argv, int i, long dflt)
{
	char *end;
	long v;

	if (i >= argc)
		return dflt;
	v = strtol(argv[i], &end, 10);
	if (*end || v < 0) {
		fprintf(stderr, "%s: bad number '%s'\n", argv[0], argv[i]);
		exit(2);
	}
	return v;
}

/* Blocks until one byte (or EOF) arrives on stdin. */
static inline void wl_read_stdin_byte(void)
{
	char c;

	while (read(0, &c, 1) < 0)
		;
}

static inline void wl_wait_go(int wait)
{
	wl_say("ready\n");
	if (wait)
		wl_read_stdin_byte();
}

static inline void wl_wait_end(int wait)
{
	wl_say("done\n");
	if (wait)
		wl_read_stdin_byte();
}

static inline uint64_t wl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void wl_die(const char *what)
{
	perror(what);
	exit(1);
}

/* The gates of a multi-threaded workload: workers and main meet at `ready`
 * (all announced), `start` (go received), `end` (work done) and `leave`
 * (second byte received), so between the windows every thread is parked. */
struct wl_gates {
	pthread_barrier_t ready, start, end, leave;
};

static inline void wl_gates_init(struct wl_gates *g, unsigned nthreads_with_main)
{
	pthread_barrier_init(&g->ready, NULL, nthreads_with_main);
	pthread_barrier_init(&g->start, NULL, nthreads_with_main);
	pthread_barrier_init(&g->end, NULL, nthreads_with_main);
	pthread_barrier_init(&g->leave, NULL, nthreads_with_main);
}

/* Main's side: runs the whole protocol around the workers' work. */
static inline void wl_gates_main(struct wl_gates *g, int wait)
{
	pthread_barrier_wait(&g->ready);
	wl_wait_go(wait);
	pthread_barrier_wait(&g->start);
	pthread_barrier_wait(&g->end);
	wl_wait_end(wait);
	pthread_barrier_wait(&g->leave);
}

static inline void wl_gates_before_work(struct wl_gates *g)
{
	pthread_barrier_wait(&g->ready);
	pthread_barrier_wait(&g->start);
}

static inline void wl_gates_after_work(struct wl_gates *g)
{
	pthread_barrier_wait(&g->end);
	pthread_barrier_wait(&g->leave);
}

/* Runs n (1..64, checked by the caller) identical workers fn(index)
 * through the gates' protocol, and joins them. */
static inline void wl_run_workers(struct wl_gates *g, long n, void *(*fn)(void *), int wait)
{
	pthread_t t[64];

	wl_gates_init(g, (unsigned)n + 1);
	for (long i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, fn, (void *)(intptr_t)i))
			wl_die("pthread_create");
	wl_gates_main(g, wait);
	for (long i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

/* Prints `pid PID` and names the main thread (hence the process comm). */
static inline void wl_start_main(const char *name)
{
	wl_say("pid %d\n", (int)getpid());
	wl_announce(name);
}

#endif
