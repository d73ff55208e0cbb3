/* bench_capture [SECONDS] [PAIRS]: the capture pipeline under load.
 *
 * A child process runs PAIRS pairs of threads passing a byte back and forth
 * over pipes as fast as they can; it is traced, and this process drains the
 * rings for SECONDS.  Prints events delivered per second (wall clock), the
 * pipeline's capacity (events per CPU-second spent by this process in poll
 * and merge), drops, stack errors, peak merge buffer and peak RSS.  Needs
 * root and BPF.  No assertion: numbers for the report. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture/capture.h"

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

struct counter {
	uint64_t n, last_ts, unordered;
};

static int count_cb(void *ctx, const struct gt_kev_hdr *ev, size_t len)
{
	struct counter *k = ctx;

	(void)len;
	k->unordered += ev->ts < k->last_ts;
	k->last_ts = ev->ts;
	k->n++;
	return 0;
}

/* Lets the rings fill for 200 ms without reading, stops the producer,
 * then times draining them: the merge at full speed on one core. */
static void burst(struct gt_capture *c, struct counter *k, pid_t producer)
{
	uint64_t n0, c0, w0;

	gt_capture_flush(c, count_cb, k);
	usleep(200000);
	kill(producer, SIGSTOP);
	usleep(10000);
	n0 = k->n;
	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	w0 = clock_ns(CLOCK_MONOTONIC);
	gt_capture_flush(c, count_cb, k);
	printf("burst drain: %llu events in %.2f ms (%.0f events/s wall, %.0f events/s per CPU, target >= 2 M/s)\n",
	       (unsigned long long)(k->n - n0), (clock_ns(CLOCK_MONOTONIC) - w0) / 1e6,
	       (k->n - n0) / ((clock_ns(CLOCK_MONOTONIC) - w0) / 1e9),
	       (k->n - n0) / ((clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / 1e9));
	kill(producer, SIGCONT);
}

static void *player(void *arg)
{
	int *fds = arg; /* read fd, write fd, first? */
	char b = 'x';

	if (fds[2] && write(fds[1], &b, 1) != 1)
		return NULL;
	for (;;)
		if (read(fds[0], &b, 1) != 1 || write(fds[1], &b, 1) != 1)
			return NULL;
}

/* The traced child: PAIRS ping-pong pairs, until killed. */
static pid_t spawn_pingpong(int pairs, int go_fd)
{
	pid_t p = fork();
	char c;

	if (p)
		return p;
	if (read(go_fd, &c, 1) != 1)
		_exit(2);
	for (int i = 0; i < pairs; i++) {
		int a[2], b[2];
		static int fds[64][3];
		pthread_t t;

		if (pipe(a) || pipe(b))
			_exit(3);
		fds[2 * i][0] = a[0], fds[2 * i][1] = b[1], fds[2 * i][2] = 1;
		fds[2 * i + 1][0] = b[0], fds[2 * i + 1][1] = a[1], fds[2 * i + 1][2] = 0;
		pthread_create(&t, NULL, player, fds[2 * i]);
		pthread_create(&t, NULL, player, fds[2 * i + 1]);
	}
	pause();
	_exit(0);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	int pairs = argc > 2 ? atoi(argv[2]) : 1, go[2], rc;
	struct gt_capture_opts o = { 0 };
	struct gt_capture_stats st;
	struct counter k = { 0 };
	struct gt_capture *c;
	struct rusage ru;
	uint64_t t0, c0, end;
	char err[512];
	pid_t child;

	if (pairs < 1 || pairs > 32 || pipe(go)) {
		fprintf(stderr, "usage: bench_capture [SECONDS] [PAIRS<=32]\n");
		return 2;
	}
	rc = gt_capture_open(&c, &o, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "bench_capture: %s\n", err);
		return 1;
	}
	child = spawn_pingpong(pairs, go[0]);
	gt_capture_trace_tgid(c, child, 0, 1);
	if (write(go[1], "g", 1) != 1)
		return 1;
	t0 = clock_ns(CLOCK_MONOTONIC);
	c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	end = t0 + (uint64_t)(secs * 1e9);
	while (clock_ns(CLOCK_MONOTONIC) < end) {
		rc = gt_capture_poll(c, 100, count_cb, &k);
		if (rc < 0 && rc != -EINTR) {
			fprintf(stderr, "bench_capture: poll: %s\n", strerror(-rc));
			break;
		}
	}
	burst(c, &k, child);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	gt_capture_flush(c, count_cb, &k);
	{
		double wall = (clock_ns(CLOCK_MONOTONIC) - t0) / 1e9;
		double cpu = (clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0) / 1e9;

		gt_capture_stats(c, &st);
		getrusage(RUSAGE_SELF, &ru);
		printf("bench_capture: %d ping-pong pair(s), %.2f s\n", pairs, wall);
		printf("  events delivered   %llu (%.0f events/s wall)\n",
		       (unsigned long long)k.n, k.n / wall);
		printf("  pipeline capacity  %.0f events/s per consumer CPU (%.2f s CPU; target >= 2 M/s)\n",
		       cpu > 0 ? k.n / cpu : 0, cpu);
		printf("  drops              %llu\n", (unsigned long long)st.drops);
		printf("  stack errors       %llu\n", (unsigned long long)st.stack_errors);
		printf("  out of order       %llu (callback saw %llu)\n",
		       (unsigned long long)st.out_of_order, (unsigned long long)k.unordered);
		printf("  peak merge buffer  %llu events\n", (unsigned long long)st.max_buffered);
		printf("  peak RSS           %ld KiB\n", ru.ru_maxrss);
	}
	gt_capture_close(c);
	return 0;
}
