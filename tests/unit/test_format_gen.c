/* Randomized model-based test of the writer: generates LEGAL scheduling
 * histories of N threads on M CPUs, writes them with gt_writer and holds
 * every file to Go's reader (go tool trace -d + viewer pass) and to our
 * checker (gt_check_file).  Files are mostly version 1.19, some 1.11, and
 * some 1.21, which the local Go 1.19 cannot read: those meet our checker
 * only.
 *
 * The model tracks what Go's parser tracks: each goroutine's state and
 * sequence counter c (c++ at GoWaiting/GoInSyscall; GoStart, GoUnblock and
 * GoSysExit do c++ and write c), each P's running flag and current G.  It
 * covers the initial snapshot (threads created by G0, some waiting, some in
 * a syscall, some running), one Gomaxprocs right after it, creation,
 * blocking of every kind, syscalls that block and that do not, wakeups from
 * other CPUs and from G0 on idle CPUs, exits, heap counters, CPU samples,
 * user logs, and at the end every G descheduled and every P stopped.
 *
 * Each file prints `seed=N`; GT_SEED=N reproduces one file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check/gt_check.h"
#include "gt_test.h"
#include "writer/gt_writer.h"

#define GEN_MAX_P 8
#define GEN_STACKS 48

enum gen_gstate { G_DEAD, G_RUNNABLE, G_RUNNING, G_WAITING, G_SYSCALL };

struct gen_g {
	int state;
	uint64_t c; /* sequence counter */
};

struct gen_p {
	int started;
	uint64_t g; /* running G, 0 = none */
};

struct gen {
	struct gt_writer *w;
	uint64_t rng;
	uint64_t t;
	int version;
	int np;
	struct gen_p ps[GEN_MAX_P];
	struct gen_g *gs;   /* indexed by goroutine id; 0 unused */
	uint64_t next_g, cap_g;
	uint64_t *alive;    /* ids not dead */
	int nalive, max_alive;
	uint64_t stacks[GEN_STACKS];
	uint64_t log_key;
	int err;            /* first refused event */
	long events;
};

static uint64_t rnd(struct gen *s, uint64_t n)
{
	/* xorshift64* */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return n ? (s->rng * 0x2545f4914f6cdd1dULL >> 11) % n : 0;
}

/* Writes one event a little after the previous one (sometimes much later). */
static void emit(struct gen *s, int p, int type, const uint64_t *a, int n)
{
	int err;

	s->t += 1 + rnd(s, 2000) + (rnd(s, 500) == 0 ? 5000000 : 0);
	err = gt_writer_event(s->w, p, type, s->t, a, n);
	if (err && !s->err) {
		s->err = err;
		fprintf(stderr, "event %s on p %d refused: %d\n", gt_event_descs[type].name, p, err);
	}
	s->events++;
}

#define EMIT(s, p, type, ...) \
	emit((s), (p), (type), (const uint64_t[]){__VA_ARGS__}, \
	     (int)(sizeof((uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t)))
#define EMIT0(s, p, type) emit((s), (p), (type), NULL, 0)

static uint64_t any_stack(struct gen *s)
{
	return rnd(s, 8) == 0 ? 0 : s->stacks[rnd(s, GEN_STACKS)];
}

/* A thread's identity stack: one frame named like the thread (so the
 * viewer groups threads by name), file "[thread]", line = TID. */
static uint64_t identity_stack(struct gen *s, uint64_t g)
{
	static const char *names[] = {"main", "worker", "io", "timer", "gc", "net"};
	struct gt_frame f = {0x10000 + g * 16, names[g % 6], "[thread]", 1000 + g};

	return gt_writer_stack(s->w, &f, 1);
}

static void make_stacks(struct gen *s)
{
	static const char *fns[] = {"main", "run", "loop", "futex_wait", "read", "write",
				    "epoll_wait", "nanosleep", "malloc", "compute"};
	struct gt_frame fr[200];

	for (int i = 0; i < GEN_STACKS; i++) {
		/* Mostly shallow, some deep enough to be capped at 128. */
		int n = i % 12 == 0 ? 150 + (int)rnd(s, 50) : 1 + (int)rnd(s, 30);

		for (int k = 0; k < n; k++) {
			uint64_t pc = 0x400000 + rnd(s, 1 << 20);

			fr[k] = (struct gt_frame){pc, fns[pc % 10], pc % 3 ? "app.c" : NULL,
						  pc % 1000};
		}
		s->stacks[i] = gt_writer_stack(s->w, fr, n);
	}
	s->log_key = gt_writer_string(s->w, "phase");
}

static uint64_t new_g(struct gen *s)
{
	uint64_t g = s->next_g++;

	if (g >= s->cap_g) {
		s->cap_g *= 2;
		s->gs = realloc(s->gs, s->cap_g * sizeof(*s->gs));
	}
	s->gs[g] = (struct gen_g){G_RUNNABLE, 0};
	s->alive[s->nalive++] = g;
	return g;
}

static void kill_g(struct gen *s, uint64_t g)
{
	s->gs[g].state = G_DEAD;
	for (int i = 0; i < s->nalive; i++) {
		if (s->alive[i] == g) {
			s->alive[i] = s->alive[--s->nalive];
			return;
		}
	}
}

/* A random alive G in state st, or 0. */
static uint64_t pick_g(struct gen *s, int st)
{
	int start = (int)rnd(s, (uint64_t)s->nalive);

	for (int i = 0; i < s->nalive; i++) {
		uint64_t g = s->alive[(start + i) % s->nalive];

		if (s->gs[g].state == st)
			return g;
	}
	return 0;
}

/* ---- transitions ---------------------------------------------------------- */

static void go_start(struct gen *s, int p, uint64_t g)
{
	EMIT(s, p, GT_EV_GO_START, g, ++s->gs[g].c);
	s->gs[g].state = G_RUNNING;
	s->ps[p].g = g;
}

/* Unblock g by whoever runs on p (G 0 if p runs no G). */
static void go_unblock(struct gen *s, int p, uint64_t g)
{
	EMIT(s, p, GT_EV_GO_UNBLOCK, g, ++s->gs[g].c, s->ps[p].g ? any_stack(s) : 0);
	s->gs[g].state = G_RUNNABLE;
}

static void deschedule(struct gen *s, int p, int type, int state)
{
	uint64_t g = s->ps[p].g;

	if (gt_event_descs[type].has_stack)
		EMIT(s, p, type, any_stack(s));
	else
		EMIT0(s, p, type);
	s->ps[p].g = 0;
	if (state == G_DEAD)
		kill_g(s, g);
	else
		s->gs[g].state = state;
}

static void initial_snapshot(struct gen *s, int nthreads)
{
	uint64_t running[GEN_MAX_P];
	int nrun = 0;

	for (int i = 0; i < nthreads; i++) {
		uint64_t g = new_g(s);

		EMIT(s, 0, GT_EV_GO_CREATE, g, identity_stack(s, g), 0);
		switch (rnd(s, 4)) {
		case 0:
			EMIT(s, 0, GT_EV_GO_WAITING, g);
			s->gs[g].c++;
			s->gs[g].state = G_WAITING;
			break;
		case 1:
			/* As the translator writes it for Go 1.22+: on a P of
			 * its own (np), started by its thread and stopped. */
			EMIT(s, s->np, GT_EV_PROC_START, 7000 + g);
			EMIT(s, s->np, GT_EV_GO_IN_SYSCALL, g);
			EMIT0(s, s->np, GT_EV_PROC_STOP);
			s->gs[g].c++;
			s->gs[g].state = G_SYSCALL;
			break;
		case 2:
			if (nrun < s->np)
				running[nrun++] = g;
			break;
		}
	}
	for (int p = 0; p < nrun; p++) {
		EMIT(s, p, GT_EV_PROC_START, 5000 + (uint64_t)p);
		s->ps[p].started = 1;
		go_start(s, p, running[p]);
	}
	EMIT(s, 0, GT_EV_GOMAXPROCS, (uint64_t)s->np, 0);
}

static const int block_kinds[] = {GT_EV_GO_BLOCK, GT_EV_GO_BLOCK_SYNC, GT_EV_GO_BLOCK_SELECT,
				  GT_EV_GO_BLOCK_NET, GT_EV_GO_SLEEP};

/* One step of a P that runs a G. */
static void step_running(struct gen *s, int p)
{
	uint64_t r = rnd(s, 100), other;

	if (r < 10 && (other = pick_g(s, G_WAITING))) {
		go_unblock(s, p, other);
	} else if (r < 16 && s->nalive < s->max_alive) {
		uint64_t g = new_g(s);

		EMIT(s, p, GT_EV_GO_CREATE, g, identity_stack(s, g), any_stack(s));
	} else if (r < 22) {
		EMIT(s, p, GT_EV_GO_SYSCALL, any_stack(s));
	} else if (r < 30) {
		EMIT(s, p, GT_EV_GO_SYSCALL, any_stack(s));
		deschedule(s, p, GT_EV_GO_SYSBLOCK, G_SYSCALL);
		/* The runtime's shape, which Go 1.22+ needs: the blocked
		 * syscall releases its P (else the P's next stop would stop
		 * the goroutine again, wherever it runs by then). */
		EMIT0(s, p, GT_EV_PROC_STOP);
		s->ps[p].started = 0;
	} else if (r < 45) {
		deschedule(s, p, block_kinds[rnd(s, 5)], G_WAITING);
	} else if (r < 55) {
		deschedule(s, p, GT_EV_GO_PREEMPT, G_RUNNABLE);
	} else if (r < 60) {
		deschedule(s, p, GT_EV_GO_SCHED, G_RUNNABLE);
	} else if (r < 63 && s->nalive > 2) {
		deschedule(s, p, GT_EV_GO_END, G_DEAD);
	} else if (r < 68) {
		EMIT(s, p, rnd(s, 2) ? GT_EV_HEAP_ALLOC : GT_EV_HEAP_GOAL, rnd(s, 1ULL << 32));
	} else if (r < 72 && s->version >= GT_V1_19) {
		EMIT(s, p, GT_EV_CPU_SAMPLE, s->t + 1, (uint64_t)p, s->ps[p].g, any_stack(s));
	} else if (r < 74) {
		int err;

		s->t += 1 + rnd(s, 100);
		err = gt_writer_user_log(s->w, p, s->t, 0, s->log_key, any_stack(s), "step");
		if (err && !s->err)
			s->err = err;
	} else {
		deschedule(s, p, GT_EV_GO_PREEMPT, G_RUNNABLE);
	}
}

/* One step of a started P that runs no G. */
static void step_idle(struct gen *s, int p)
{
	uint64_t r = rnd(s, 10), g;

	if (r < 5 && (g = pick_g(s, G_RUNNABLE)))
		go_start(s, p, g);
	else if (r < 6 && (g = pick_g(s, G_WAITING)))
		go_unblock(s, p, g); /* from G 0: an interrupt or untraced task */
	else if (r < 8 && (g = pick_g(s, G_SYSCALL))) {
		EMIT(s, p, GT_EV_GO_SYSEXIT, g, ++s->gs[g].c, 0);
		s->gs[g].state = G_RUNNABLE;
	} else if (r < 9) {
		EMIT0(s, p, GT_EV_PROC_STOP);
		s->ps[p].started = 0;
	} else {
		EMIT(s, p, GT_EV_HEAP_ALLOC, rnd(s, 1ULL << 30));
	}
}

static void step(struct gen *s)
{
	int p = (int)rnd(s, (uint64_t)s->np);
	uint64_t g;

	if (!s->ps[p].started) {
		if (rnd(s, 5) == 0 && (g = pick_g(s, G_WAITING))) {
			go_unblock(s, p, g); /* G 0 on a stopped CPU */
		} else {
			EMIT(s, p, GT_EV_PROC_START, 5000 + (uint64_t)p);
			s->ps[p].started = 1;
		}
	} else if (s->ps[p].g) {
		step_running(s, p);
	} else {
		step_idle(s, p);
	}
	/* Keep the history alive: recreate work when everything died down. */
	if (s->nalive < 2) {
		for (int q = 0; q < s->np; q++) {
			if (!s->ps[q].g) {
				g = new_g(s);
				EMIT(s, q, GT_EV_GO_CREATE, g, identity_stack(s, g), 0);
				break;
			}
		}
	}
}

static void finish(struct gen *s)
{
	for (int p = 0; p < s->np; p++) {
		if (s->ps[p].g)
			deschedule(s, p, GT_EV_GO_PREEMPT, G_RUNNABLE);
		if (s->ps[p].started) {
			EMIT0(s, p, GT_EV_PROC_STOP);
			s->ps[p].started = 0;
		}
	}
}

/* Generates one file; returns 0 or -1 with why filled. */
static int generate(const char *path, uint64_t seed, long nevents, int np, int version,
		    struct gt_writer_stats *st, char *why, size_t whylen)
{
	struct gen s = {0};
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), err;

	s.rng = seed * 0x9e3779b97f4a7c15ULL + 1;
	s.np = np;
	s.version = version;
	s.t = 1000000;
	s.cap_g = 64;
	s.gs = calloc(s.cap_g, sizeof(*s.gs));
	s.next_g = 1;
	s.max_alive = 4 + (int)rnd(&s, 40);
	s.alive = calloc((size_t)s.max_alive + 8, sizeof(*s.alive));
	if (fd < 0 || gt_writer_open(&s.w, fd, version, 1000000000) != 0) {
		snprintf(why, whylen, "cannot open writer on %s", path);
		return -1;
	}
	make_stacks(&s);
	initial_snapshot(&s, 1 + (int)rnd(&s, (uint64_t)s.max_alive));
	while (s.events < nevents && !s.err)
		step(&s);
	finish(&s);
	gt_writer_stats(s.w, st);
	err = gt_writer_close(s.w);
	close(fd);
	free(s.gs);
	free(s.alive);
	if (s.err || err) {
		snprintf(why, whylen, "writer refused: event %d, close %d", s.err, err);
		return -1;
	}
	return 0;
}

static void run_one(const char *dir, int index, uint64_t seed, long nevents, int np, int version)
{
	char path[256], name[128], why[4096] = "";
	struct gt_writer_stats st;
	struct gt_check_report rep;
	int ok = 1, rc;

	snprintf(path, sizeof(path), "%s/gen_%llu.trace", dir, (unsigned long long)seed);
	/* The name stays the same from run to run; the seed is on its own line. */
	snprintf(name, sizeof(name), "gen_random_%d", index);
	printf("# %s: seed %llu (rerun: GT_SEED=%llu), %ld events, %d procs, version %d\n",
	       name, (unsigned long long)seed, (unsigned long long)seed, nevents, np, version);
	fflush(stdout);
	if (generate(path, seed, nevents, np, version, &st, why, sizeof(why)) != 0) {
		gt_test_report(name, 0, why);
		printf("     also: rerun with GT_SEED=%llu\n", (unsigned long long)seed);
		return;
	}
	memset(&rep, 0, sizeof(rep));
	rc = gt_check_file(path, &rep);
	if (rc != 0) {
		snprintf(why, sizeof(why), "our checker: rc %d: %s (file kept: %s)", rc, rep.error, path);
		ok = 0;
	} else if (version != GT_V1_21 && gt_test_gocheck(path, why, sizeof(why)) != 0) {
		/* Go 1.19 does not read 1.21 files: those meet our checker only. */
		size_t n = strlen(why);

		snprintf(why + n, sizeof(why) - n, " (file kept: %s)", path);
		ok = 0;
	} else if (nevents >= 100000 && st.batches < 2 * (uint64_t)np) {
		snprintf(why, sizeof(why), "large file flushed only %llu batches for %d Ps",
			 (unsigned long long)st.batches, np);
		ok = 0;
	}
	{
		struct stat sb;
		long long size = stat(path, &sb) == 0 ? (long long)sb.st_size : -1;

		printf("   %llu events, %lld bytes (%.2f B/event), %llu batches before close, "
		       "%llu strings, %llu stacks\n",
		       (unsigned long long)st.events, size,
		       st.events ? (double)size / (double)st.events : 0.0,
		       (unsigned long long)st.batches, (unsigned long long)st.strings,
		       (unsigned long long)st.stacks);
	}
	if (ok)
		unlink(path);
	gt_test_report(name, ok, why);
	if (!ok)
		printf("     also: rerun with GT_SEED=%llu\n", (unsigned long long)seed);
}

int main(void)
{
	char dir[] = "/tmp/gt_gen_test.XXXXXX";
	const char *env = getenv("GT_SEED");
	uint64_t base;

	if (!mkdtemp(dir)) {
		printf("FAIL setup: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	if (env) {
		/* Reproduce one file: sizes and versions derive from the seed. */
		base = strtoull(env, NULL, 0);
	} else {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		base = ((uint64_t)ts.tv_sec * 1000003ULL ^ (uint64_t)ts.tv_nsec) % 1000000000ULL;
	}
	for (int i = 0; i < (env ? 1 : 20); i++) {
		uint64_t seed = base + (uint64_t)i;
		/* Shape from the seed alone, so GT_SEED reproduces it exactly. */
		int kind = (int)(seed % 20);
		long n = kind < 15 ? 100 + (long)(seed * 7919 % 5000)
			 : kind < 18 ? 15000 + (long)(seed % 20000)
				     : 110000 + (long)(seed % 40000);
		int np = kind >= 18 ? 2 + (int)(seed % 2)
				    : 1 + (int)((seed * 2654435761ULL >> 7) % GEN_MAX_P);
		int version = kind % 5 == 1 ? GT_V1_11 : kind % 5 == 3 && kind < 15 ? GT_V1_21 : GT_V1_19;

		run_one(dir, i, seed, n, np, version);
	}
	rmdir(dir);
	return gt_test_done();
}
