/* See gt_bigtrace.h. */
#include "gt_bigtrace.h"

#include <errno.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wire/gt_events.h"
#include "writer/gt_writer.h"

#define NP 8
#define NG 64

struct big {
	struct gt_writer *w;
	uint64_t t, seq[NG + 1], rng, stk[4];
	int cur[NP];          /* goroutine running on each P, 0 = none */
	uint8_t blocked[NG + 1];
	long long events;
};

static uint64_t rnd(struct big *b, uint64_t n)
{
	b->rng ^= b->rng << 13;
	b->rng ^= b->rng >> 7;
	b->rng ^= b->rng << 17;
	return b->rng % n;
}

static int ev(struct big *b, int p, int type, uint64_t a0, uint64_t a1, uint64_t a2, int n)
{
	uint64_t a[3] = {a0, a1, a2};

	b->t += 50 + rnd(b, 200);
	b->events++;
	return gt_writer_event(b->w, p, type, b->t, a, n);
}

/* A blocked goroutine, or 0. */
static int any_blocked(struct big *b)
{
	int g0 = 1 + (int)rnd(b, NG);

	for (int k = 0; k < NG; k++) {
		int g = 1 + (g0 + k) % NG;

		if (b->blocked[g])
			return g;
	}
	return 0;
}

/* A runnable goroutine that lives on P p (g % NP == p), or 0. */
static int runnable_on(struct big *b, int p)
{
	for (int g = p ? p : NP; g <= NG; g += NP) {
		int on_a_p = 0;

		for (int q = 0; q < NP; q++)
			on_a_p |= b->cur[q] == g;
		if (!b->blocked[g] && !on_a_p && rnd(b, 2))
			return g;
	}
	return 0;
}

/* One step of P p: its goroutine acts, or a goroutine starts. */
static int step(struct big *b, int p)
{
	uint64_t r = rnd(b, 100), stk = b->stk[rnd(b, 4)];
	int g = b->cur[p], u;

	if (!g) {
		if ((g = runnable_on(b, p))) {
			b->cur[p] = g;
			return ev(b, p, GT_EV_GO_START, (uint64_t)g, ++b->seq[g], 0, 2);
		}
		if ((u = any_blocked(b))) { /* a wakeup from an interrupt: G 0 */
			b->blocked[u] = 0;
			return ev(b, p, GT_EV_GO_UNBLOCK, (uint64_t)u, ++b->seq[u], 0, 3);
		}
		return ev(b, p, GT_EV_HEAP_ALLOC, 1000000 + rnd(b, 1 << 20), 0, 0, 1);
	}
	if (r < 50)
		return ev(b, p, GT_EV_GO_SYSCALL, stk, 0, 0, 1);
	if (r < 90 && r >= 80 && (u = any_blocked(b))) {
		b->blocked[u] = 0;
		return ev(b, p, GT_EV_GO_UNBLOCK, (uint64_t)u, ++b->seq[u], stk, 3);
	}
	b->cur[p] = 0;
	if (r < 80)
		return ev(b, p, r < 65 ? GT_EV_GO_PREEMPT : GT_EV_GO_SCHED, stk, 0, 0, 1);
	b->blocked[g] = 1;
	return ev(b, p, GT_EV_GO_BLOCK_SYNC, stk, 0, 0, 1);
}

static int start(struct big *b)
{
	struct gt_frame fr[3] = {{0x401000, "main", "/src/big.c", 10},
				 {0x402000, "worker", "/src/big.c", 20},
				 {0x403000, "spin", "/src/big.c", 30}};
	int rc = 0;

	for (int i = 0; i < 4; i++)
		b->stk[i] = gt_writer_stack(b->w, fr + (i % 3), 3 - (i % 3));
	for (int g = 1; g <= NG && !rc; g++)
		rc = ev(b, 0, GT_EV_GO_CREATE, (uint64_t)g, b->stk[1], 0, 3);
	if (!rc)
		rc = ev(b, 0, GT_EV_GOMAXPROCS, NP, 0, 0, 2);
	for (int p = 0; p < NP && !rc; p++)
		rc = ev(b, p, GT_EV_PROC_START, 1000 + (uint64_t)p, 0, 0, 1);
	return rc;
}

/* Every running goroutine yields, every P stops. */
static int finish(struct big *b)
{
	int rc = 0;

	for (int p = 0; p < NP && !rc; p++) {
		if (b->cur[p])
			rc = ev(b, p, GT_EV_GO_SCHED, 0, 0, 0, 1);
		if (!rc)
			rc = ev(b, p, GT_EV_PROC_STOP, 0, 0, 0, 0);
	}
	return rc;
}

long long gt_bigtrace_write(int fd, uint64_t bytes)
{
	struct big b = {.rng = 88172645463325252ULL, .t = 1000};
	struct stat st;
	int rc = gt_writer_open(&b.w, fd, GT_V1_19, 1000000000);

	if (rc)
		return rc < 0 ? rc : -EINVAL;
	rc = start(&b);
	/* about 4 bytes an event: look at the file now and then */
	for (long long i = 0; !rc; i++) {
		if (i % (1 << 20) == 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_size >= bytes)
			break;
		rc = step(&b, (int)(i % NP));
	}
	if (!rc)
		rc = finish(&b);
	if (!rc)
		rc = gt_writer_close(b.w); /* frees it */
	else
		gt_writer_free(b.w);
	return rc ? (rc < 0 ? rc : -EIO) : b.events;
}

int gt_run_measured(char *const argv[], char *out, size_t outlen, int *status,
		    long *maxrss_kib, double *secs, double *cpu)
{
	struct timespec t0, t1;
	struct rusage ru;
	size_t n = 0;
	ssize_t k;
	int fd[2];
	pid_t pid;

	if (pipe(fd) < 0)
		return -errno;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fd[1]);
	while ((k = read(fd[0], out + n, outlen - 1 - n)) > 0)
		n += (size_t)k;
	out[n] = 0;
	close(fd[0]);
	if (wait4(pid, status, 0, &ru) < 0)
		return -errno;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*maxrss_kib = ru.ru_maxrss;
	*cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
	*secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	return 0;
}
