// tier: system (BPF, root or real programs: not in make check-unit)
/* The capture layer against the real kernel: loads the BPF programs, traces
 * tests/workloads/cap_family (a child started stopped, added to the filter,
 * then exec'd, as `record -- CMD` does) and a cgroup, and holds the events
 * to what the workloads are known to do.  Needs root and BPF; skipped only
 * with GOTRACED_SKIP_BPF=1. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture/capture.h"
#include "gt_test.h"
#include "capture/testing.h"

#define ROUNDS 200
#define NR_READ 0
#define NR_WRITE 1
#define NR_GETPPID 110

static struct gt_capture *cap;
static char cap_err[512];

/* ---- recording events --------------------------------------------------- */

struct rec {
	uint32_t len;
	union gt_kev_any ev;
};

struct recording {
	struct rec *v;
	size_t n, cap;
	uint64_t last_ts;
	uint64_t unordered;  /* events older than the one before */
	uint64_t too_long;
};

static int record_cb(void *ctx, const struct gt_kev_hdr *ev, size_t len)
{
	struct recording *r = ctx;

	if (ev->ts < r->last_ts)
		r->unordered++;
	r->last_ts = ev->ts;
	if (r->n == r->cap) {
		size_t ncap = r->cap ? 2 * r->cap : 4096;
		struct rec *v = realloc(r->v, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = ncap;
	}
	if (len > sizeof(r->v[0].ev)) {
		r->too_long++;
		len = sizeof(r->v[0].ev);
	}
	memset(&r->v[r->n], 0, sizeof(r->v[0]));
	r->v[r->n].len = len;
	memcpy(&r->v[r->n].ev, ev, len);
	r->n++;
	return 0;
}

/* Whether the event shows process tgid as a traced task (a switch also
 * names an untraced prev or next when the other one is traced). */
static int about_traced(const struct rec *e, uint32_t tgid)
{
	switch (e->ev.hdr.type) {
	case GT_KEV_SWITCH:
		return (e->ev.hdr.tgid == tgid && e->ev.sw.prev_sessions) ||
		       (e->ev.sw.next_tgid == tgid && e->ev.sw.next_sessions);
	case GT_KEV_WAKEUP:
		return e->ev.wk.target_tgid == tgid ||
		       (e->ev.hdr.tgid == tgid && e->ev.wk.waker_sessions);
	default:
		return e->ev.hdr.tgid == tgid;
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* A busy machine may run a traced process late: a check that needs N
 * events waits for them (poll_until, up to this long) instead of polling a
 * fixed time and hoping the process ran enough meanwhile. */
#define PATIENCE_MS 60000

/* Polls c into r until enough(r, arg) says so (asked every 100 ms and at
 * the end) or PATIENCE_MS passed; returns its last answer. */
static int poll_until(struct gt_capture *c, struct recording *r,
		      int (*enough)(const struct recording *r, void *arg), void *arg)
{
	uint64_t end = now_ns() + PATIENCE_MS * 1000000ull, next = 0;

	for (;;) {
		int rc = gt_capture_poll(c, 10, record_cb, r);

		if (rc < 0 && rc != -EINTR)
			return 0;
		if (now_ns() >= end)
			break;
		if (now_ns() >= next) {
			if (enough(r, arg))
				return 1;
			next = now_ns() + 100000000ull;
		}
	}
	gt_capture_flush(c, record_cb, r);
	return enough(r, arg);
}

/* Polls for ms milliseconds into r. */
static int poll_for(struct recording *r, int ms)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000;

	while (now_ns() < end) {
		int rc = gt_capture_poll(cap, 10, record_cb, r);

		if (rc < 0 && rc != -EINTR)
			return rc;
	}
	return 0;
}

/* ---- processes ----------------------------------------------------------- */

/* A process that makes syscalls and sleeps in a loop until killed. */
static pid_t spawn_busy(const char *join_cgroup_procs)
{
	pid_t p = fork();

	if (p == 0) {
		if (join_cgroup_procs) {
			int fd = open(join_cgroup_procs, O_WRONLY);

			if (fd < 0 || write(fd, "0", 1) != 1)
				_exit(3);
			close(fd);
		}
		for (;;) {
			for (int i = 0; i < 50; i++)
				syscall(SYS_getppid);
			usleep(1000);
		}
	}
	return p;
}

static void reap(pid_t p)
{
	if (p > 0) {
		kill(p, SIGKILL);
		waitpid(p, NULL, 0);
	}
}

static void workload_path(char *out, size_t n, const char *name)
{
	const char *b = getenv("GT_BUILD");
	char exe[1024];
	ssize_t k;

	if (b) {
		snprintf(out, n, "%s/workloads/%s", b, name);
		return;
	}
	/* BUILD/tests/test_capture -> BUILD/workloads/NAME */
	k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[k > 0 ? k : 0] = 0;
	for (int i = 0; i < 2; i++) {
		char *s = strrchr(exe, '/');

		if (s)
			*s = 0;
	}
	snprintf(out, n, "%s/workloads/%s", exe, name);
}

/* The r-xp mapping of `path` in /proc/PID/maps. */
static int text_range(pid_t pid, const char *path, uint64_t *lo, uint64_t *hi)
{
	char fn[64], line[1024], real[PATH_MAX];
	FILE *f;
	int found = 0;

	if (!realpath(path, real))
		return -errno;
	snprintf(fn, sizeof(fn), "/proc/%d/maps", (int)pid);
	f = fopen(fn, "r");
	if (!f)
		return -errno;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long a, b;
		char perms[8], file[PATH_MAX] = "";

		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %4095s", &a, &b, perms, file) >= 3 &&
		    strcmp(perms, "r-xp") == 0 && strcmp(file, real) == 0) {
			*lo = a;
			*hi = b;
			found = 1;
		}
	}
	fclose(f);
	return found ? 0 : -ENOENT;
}

/* ---- the family test ------------------------------------------------------ */

struct family {
	pid_t pid, grandchild, busy;
	uint64_t text_lo, text_hi;
	int text_rc;
	int pid_left, grandchild_left; /* still in the filter after exiting */
	struct recording r;
};

/* Starts the workload stopped, traces it, lets it exec, records until it
 * says done, reads its maps, lets it exit, drains. */
static int run_family(struct family *f, char *why, size_t wl)
{
	int go[2], out[2], in[2];
	char path[PATH_MAX], buf[256] = "", rounds[16];
	size_t got = 0;
	uint32_t mask;
	int rc;

	workload_path(path, sizeof(path), "cap_family");
	if (access(path, X_OK)) {
		snprintf(why, wl, "workload %.400s missing (make tests)", path);
		return -1;
	}
	f->busy = spawn_busy(NULL); /* before the pipes: it must not hold them */
	if (pipe(go) || pipe(out) || pipe(in)) {
		snprintf(why, wl, "pipe: %s", strerror(errno));
		return -1;
	}
	snprintf(rounds, sizeof(rounds), "%d", ROUNDS);
	f->pid = fork();
	if (f->pid == 0) {
		char c;

		dup2(out[1], 1);
		dup2(in[0], 0);
		close(out[0]);
		close(in[1]);
		close(go[1]);
		if (read(go[0], &c, 1) != 1) /* wait until traced */
			_exit(2);
		execl(path, "cap_family", rounds, (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	close(out[1]);
	close(in[0]);
	rc = gt_capture_trace_tgid(cap, f->pid, 0, 1);
	if (!rc)
		rc = gt_capture_kernel_stacks(cap, 0, 1); /* checked below */
	if (rc) {
		snprintf(why, wl, "gt_capture_trace_tgid: %s", strerror(-rc));
		close(go[1]);
		return -1;
	}
	if (write(go[1], "g", 1) != 1) {
		snprintf(why, wl, "cannot release the child");
		return -1;
	}
	close(go[1]);
	/* record until the workload prints done (or 20 s pass) */
	for (uint64_t end = now_ns() + 20000000000ull; now_ns() < end && !strstr(buf, "done");) {
		struct pollfd p = { out[0], POLLIN, 0 };

		rc = gt_capture_poll(cap, 10, record_cb, &f->r);
		if (rc < 0 && rc != -EINTR) {
			snprintf(why, wl, "gt_capture_poll: %s", strerror(-rc));
			return -1;
		}
		if (poll(&p, 1, 0) == 1) {
			ssize_t k = read(out[0], buf + got, sizeof(buf) - 1 - got);

			if (k <= 0)
				break;
			got += k;
			buf[got] = 0;
		}
	}
	if (!strstr(buf, "done")) {
		int status = 0;

		close(in[1]);
		kill(f->pid, SIGKILL);
		waitpid(f->pid, &status, 0);
		reap(f->busy);
		snprintf(why, wl, "the workload did not finish: output '%s', wait status %#x",
			 buf, status);
		return -1;
	}
	sscanf(buf, "grandchild %d", &f->grandchild);
	f->text_rc = text_range(f->pid, path, &f->text_lo, &f->text_hi);
	close(in[1]); /* EOF: the workload exits */
	waitpid(f->pid, NULL, 0);
	close(out[0]);
	poll_for(&f->r, 100);
	rc = gt_capture_flush(cap, record_cb, &f->r);
	if (rc < 0) {
		snprintf(why, wl, "gt_capture_flush: %s", strerror(-rc));
		return -1;
	}
	/* BPF dropped both processes from the filter at their last switch */
	f->pid_left = gt_capture_tgid_sessions(cap, f->pid, &mask) == 0;
	f->grandchild_left = f->grandchild > 0 &&
			     gt_capture_tgid_sessions(cap, f->grandchild, &mask) == 0;
	gt_capture_trace_tgid(cap, f->pid, 0, 0);
	gt_capture_kernel_stacks(cap, 0, 0);
	reap(f->busy);
	return 0;
}

static struct family fam;
static int fam_ok;
static char fam_why[512];

static void run_family_once(void)
{
	if (!fam_ok && !fam_why[0])
		fam_ok = run_family(&fam, fam_why, sizeof(fam_why)) == 0;
}

struct tid_counts {
	uint32_t tid;
	unsigned reads, writes, getppid, wakeups;
};

static struct tid_counts *counts_of(struct tid_counts *t, int *n, uint32_t tid)
{
	for (int i = 0; i < *n; i++)
		if (t[i].tid == tid)
			return &t[i];
	if (*n == 64)
		return NULL;
	memset(&t[*n], 0, sizeof(t[0]));
	t[*n].tid = tid;
	return &t[(*n)++];
}

static int count_threads(struct tid_counts *t, uint32_t tgid)
{
	int n = 0;

	for (size_t i = 0; i < fam.r.n; i++) {
		const struct rec *e = &fam.r.v[i];
		struct tid_counts *c;

		if (e->ev.hdr.type == GT_KEV_WAKEUP && e->ev.wk.target_tgid == tgid) {
			c = counts_of(t, &n, e->ev.wk.target_tid);
			if (c)
				c->wakeups++;
		}
		if (e->ev.hdr.type != GT_KEV_SYS_ENTER || e->ev.hdr.tgid != tgid)
			continue;
		c = counts_of(t, &n, e->ev.hdr.tid);
		if (!c)
			continue;
		c->reads += e->ev.se.nr == NR_READ;
		c->writes += e->ev.se.nr == NR_WRITE;
		c->getppid += e->ev.se.nr == NR_GETPPID;
	}
	return n;
}

static void test_family_order(void)
{
	run_family_once();
	GT_REQUIRE(fam_ok, "%s", fam_why);
	GT_CHECK(fam.r.n > 4 * ROUNDS, "only %zu events", fam.r.n);
	GT_CHECK(fam.r.unordered == 0, "%llu events delivered out of timestamp order",
		 (unsigned long long)fam.r.unordered);
	GT_CHECK(fam.r.too_long == 0, "records longer than any ABI struct");
	for (size_t i = 0; i < fam.r.n; i++) {
		const struct gt_kev_hdr *h = &fam.r.v[i].ev.hdr;

		GT_REQUIRE(h->sessions & 1, "event %zu (type %u) lacks session bit 0", i, h->type);
		GT_REQUIRE(h->type > 0 && h->type < GT_KEV_TYPE_MAX, "bad type %u", h->type);
		GT_REQUIRE(h->cpu < gt_capture_ncpus(cap), "bad cpu %u", h->cpu);
	}
}

static int is_player(const struct tid_counts *t, int n, uint32_t tid)
{
	for (int i = 0; i < n; i++)
		if (t[i].tid == tid && tid != (uint32_t)fam.pid && t[i].reads == ROUNDS)
			return 1;
	return 0;
}

/* A player blocking in read is switched out in syscall read (from its
 * registers), with a kernel stack (pipe read; asked for with
 * gt_capture_kernel_stacks, as it is inside a syscall) and a user stack;
 * the peer that wakes it is traced, so the wakeup carries the waker's user
 * stack. */
static void check_block_stacks(const struct tid_counts *t, int n)
{
	unsigned blocked = 0, kstacks = 0, ustacks = 0, wakeups = 0, wstacks = 0, in_read = 0;
	uint64_t ips[GT_STACK_DEPTH];

	for (size_t i = 0; i < fam.r.n; i++) {
		const struct rec *e = &fam.r.v[i];

		if (e->ev.hdr.type == GT_KEV_SWITCH && e->ev.sw.prev_state &&
		    is_player(t, n, e->ev.hdr.tid)) {
			int k = e->ev.sw.prev_kstack >= 0 ?
				gt_capture_stack(cap, e->ev.sw.prev_kstack, ips, GT_STACK_DEPTH) : 0;

			blocked++;
			in_read += e->ev.sw.prev_sysnr == SYS_read;
			kstacks += k > 0 && ips[0] >= 0xffff800000000000ull;
			ustacks += e->ev.sw.prev_ustack >= 0 && (e->ev.sw.prev_sessions & 1);
		}
		if (e->ev.hdr.type == GT_KEV_WAKEUP && is_player(t, n, e->ev.wk.target_tid) &&
		    is_player(t, n, e->ev.hdr.tid)) {
			wakeups++;
			wstacks += e->ev.wk.waker_ustack >= 0 && (e->ev.wk.waker_sessions & 1);
		}
	}
	GT_CHECK(blocked >= 2 * ROUNDS, "%u blocking switch-outs of the players, expected >= %d",
		 blocked, 2 * ROUNDS);
	/* each of the ROUNDS messages each way is waited for in read */
	GT_CHECK(in_read >= 2 * ROUNDS, "%u of %u blocking switch-outs say syscall read, expected >= %d",
		 in_read, blocked, 2 * ROUNDS);
	/* a stack can be lost to a hash collision in the stack map: allow 5% */
	GT_CHECK(kstacks * 20 >= blocked * 19, "%u of %u blocking switch-outs have a kernel stack",
		 kstacks, blocked);
	GT_CHECK(ustacks * 20 >= blocked * 19, "%u of %u blocking switch-outs have a user stack",
		 ustacks, blocked);
	GT_CHECK(wakeups >= 2 * ROUNDS, "%u player-to-player wakeups, expected >= %d", wakeups,
		 2 * ROUNDS);
	GT_CHECK(wstacks * 20 >= wakeups * 19, "%u of %u wakeups carry the waker's stack",
		 wstacks, wakeups);
}

static void test_family_pingpong(void)
{
	struct tid_counts t[64];
	int n, players = 0;

	run_family_once();
	GT_REQUIRE(fam_ok, "%s", fam_why);
	n = count_threads(t, fam.pid);
	for (int i = 0; i < n; i++) {
		if (t[i].tid == (uint32_t)fam.pid) {
			GT_CHECK(t[i].getppid == ROUNDS, "main made %u getppid, expected %d",
				 t[i].getppid, ROUNDS);
			continue;
		}
		if (t[i].reads == 0 && t[i].writes == 0)
			continue;
		players++;
		GT_CHECK(t[i].reads == ROUNDS && t[i].writes == ROUNDS,
			 "thread %u: %u reads, %u writes, expected %d each", t[i].tid,
			 t[i].reads, t[i].writes, ROUNDS);
		GT_CHECK(t[i].wakeups >= ROUNDS, "thread %u woken %u times, expected >= %d",
			 t[i].tid, t[i].wakeups, ROUNDS);
	}
	GT_CHECK(players == 2, "%d threads did pipe I/O, expected 2", players);
	check_block_stacks(t, n);
}

/* The players wake each other from write(), in task context: no wakeup
 * between them may carry an interrupt flag, and each names its waker's
 * stack. */
static void test_family_task_wakeups(void)
{
	unsigned peer = 0, irq = 0, nostack = 0;

	run_family_once();
	GT_REQUIRE(fam_ok, "%s", fam_why);
	for (size_t i = 0; i < fam.r.n; i++) {
		const struct rec *e = &fam.r.v[i];

		if (e->ev.hdr.type != GT_KEV_WAKEUP || e->ev.wk.target_tgid != (uint32_t)fam.pid ||
		    e->ev.hdr.tgid != (uint32_t)fam.pid || e->ev.hdr.tid == e->ev.wk.target_tid ||
		    e->ev.hdr.tid == (uint32_t)fam.pid || (e->ev.wk.flags & GT_WAKEUP_NEW))
			continue;
		peer++;
		irq += (e->ev.wk.flags & GT_WAKEUP_IN_IRQ) != 0;
		nostack += e->ev.wk.waker_ustack < 0;
	}
	GT_CHECK(peer >= 2 * ROUNDS, "%u wakeups of a player by the other, expected >= %d",
		 peer, 2 * ROUNDS);
	GT_CHECK(irq == 0, "%u of %u wakeups between the players flagged as from an interrupt",
		 irq, peer);
	GT_CHECK(nostack * 10 <= peer, "%u of %u wakeups between the players without the "
		 "waker's stack", nostack, peer);
}

/* A thread sleeping in nanosleep is woken only by its timer, which
 * expires in hrtimer_interrupt(): every such wakeup must say so (hardirq,
 * timer) and carry no stack of the task it interrupted.  (This assumes
 * high-resolution timers, as /proc/timer_list's hres_active says; in
 * low-resolution mode the tick would expire them, flagged hardirq only.) */
static void test_timer_wakeups(void)
{
	enum { SLEEPS = 20 };
	struct recording r = {0};
	unsigned total = 0, timer = 0, other = 0, stacked = 0;
	uint32_t flags_seen = 0;
	long slept = -1;
	int go[2], back[2];

	GT_REQUIRE(pipe(go) == 0 && pipe(back) == 0, "pipe: %s", strerror(errno));
	pid_t p = fork();
	if (p == 0) {
		char c;
		struct timespec ts = { 0, 2000000 };
		struct rusage r0, r1;

		close(go[1]);
		close(back[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		/* its voluntary switches during the loop alone: the fork's and
		 * the exit's own sleeps (page faults, a busy machine) are not
		 * nanosleeps, nor timer wakeups */
		getrusage(RUSAGE_SELF, &r0);
		for (int i = 0; i < SLEEPS; i++)
			nanosleep(&ts, NULL);
		getrusage(RUSAGE_SELF, &r1);
		slept = r1.ru_nvcsw - r0.ru_nvcsw;
		_exit(write(back[1], &slept, sizeof(slept)) == sizeof(slept) ? 0 : 3);
	}
	close(go[0]);
	close(back[1]);
	GT_REQUIRE(p > 0, "fork: %s", strerror(errno));
	int rc = gt_capture_trace_tgid(cap, p, 0, 1);
	if (write(go[1], "g", 1) != 1)
		rc = -EPIPE;
	close(go[1]);
	if (!rc) {
		if (read(back[0], &slept, sizeof(slept)) != sizeof(slept))
			slept = -1;
		reap(p);
		poll_for(&r, 50);
		rc = gt_capture_flush(cap, record_cb, &r);
	} else {
		reap(p);
	}
	close(back[0]);
	gt_capture_trace_tgid(cap, p, 0, 0);
	for (size_t i = 0; i < r.n; i++) {
		const struct gt_kev_wakeup *w = &r.v[i].ev.wk;

		if (w->hdr.type != GT_KEV_WAKEUP || w->target_tid != (uint32_t)p ||
		    (w->flags & GT_WAKEUP_NEW))
			continue;
		/* our "go" through the pipe, if the child was already asleep
		 * in read(): a task's wakeup, not the timers' */
		if (w->hdr.tid == (uint32_t)getpid() && !(w->flags & GT_WAKEUP_HARDIRQ))
			continue;
		total++;
		flags_seen |= w->flags;
		if ((w->flags & (GT_WAKEUP_HARDIRQ | GT_WAKEUP_TIMER)) ==
		    (GT_WAKEUP_HARDIRQ | GT_WAKEUP_TIMER))
			timer++;
		else
			other++;
		stacked += w->waker_ustack >= 0;
	}
	free(r.v);
	GT_REQUIRE(rc >= 0, "recording the sleeper: %s", strerror(-rc));
	GT_REQUIRE(slept >= 0, "the sleeper did not say how often it slept");
	/* Each time it really slept in the loop, a timer woke it; on a busy
	 * machine a timer may expire before its task got to sleep (no wakeup
	 * then), so the count to reach is the loop's voluntary switches, not
	 * SLEEPS, less one: a switch of the loop may be no nanosleep of its
	 * own (seen once under ASan on a loaded machine: 19 wakeups, 20
	 * switches; the same one switch the count allowed before). */
	GT_CHECK(total + 1 >= (unsigned long)slept && total <= SLEEPS + 1,
		 "the sleeper was woken %u times; it slept %ld times in its loop (%d nanosleeps)",
		 total, slept, SLEEPS);
	GT_CHECK(other == 0, "%u of %u wakeups of the sleeper not flagged hardirq+timer "
		 "(flags seen %#x)", other, total, flags_seen);
	GT_CHECK(stacked == 0, "%u timer wakeups carry a user stack of the interrupted task",
		 stacked);
}

static void test_family_lifecycle(void)
{
	int thread_forks = 0, child_fork = 0, exec = 0, exits = 0, gdead = 0, gexit = -1;
	int renames = 0;
	struct tid_counts t[64];
	unsigned gcalls = 0;
	int n;

	run_family_once();
	GT_REQUIRE(fam_ok, "%s", fam_why);
	GT_REQUIRE(fam.grandchild > 0, "the workload did not report its grandchild");
	for (size_t i = 0; i < fam.r.n; i++) {
		const struct rec *e = &fam.r.v[i];
		uint32_t tgid = e->ev.hdr.tgid;

		if (e->ev.hdr.type == GT_KEV_FORK && tgid == (uint32_t)fam.pid) {
			thread_forks += e->ev.fork.child_tgid == (uint32_t)fam.pid;
			child_fork += e->ev.fork.child_tgid == (uint32_t)fam.grandchild;
		}
		if (e->ev.hdr.type == GT_KEV_EXEC && tgid == (uint32_t)fam.pid)
			exec += strstr(e->ev.exec.filename, "cap_family") != NULL &&
				strcmp(e->ev.exec.comm, "cap_family") == 0;
		if (e->ev.hdr.type == GT_KEV_RENAME && e->ev.hdr.tid == (uint32_t)fam.pid)
			renames += strcmp(e->ev.rn.oldcomm, "cap_family") == 0 &&
				   strcmp(e->ev.rn.newcomm, "cap_renamed") == 0;
		if (e->ev.hdr.type == GT_KEV_EXIT && tgid == (uint32_t)fam.pid) {
			exits++;
			gdead += e->ev.exit.group_dead && e->ev.hdr.tid == (uint32_t)fam.pid;
		}
		if (e->ev.hdr.type == GT_KEV_EXIT && tgid == (uint32_t)fam.grandchild)
			gexit = e->ev.exit.group_dead ? e->ev.exit.exit_code : -2;
	}
	GT_CHECK(exec == 1, "%d exec events of cap_family, expected 1", exec);
	GT_CHECK(renames == 1, "%d renames cap_family -> cap_renamed, expected 1", renames);
	GT_CHECK(thread_forks >= 2, "%d thread creations seen, expected 2", thread_forks);
	GT_CHECK(child_fork == 1, "%d fork events for the grandchild, expected 1", child_fork);
	GT_CHECK(exits == 3, "%d thread exits in the workload, expected 3", exits);
	GT_CHECK(gdead == 1, "the main thread's exit is not marked group_dead");
	GT_CHECK(gexit == 7 << 8, "grandchild exit event: code %d, expected %d", gexit, 7 << 8);
	GT_CHECK(!fam.pid_left && !fam.grandchild_left,
		 "exited processes still in the filter (child %d, grandchild %d)", fam.pid_left,
		 fam.grandchild_left);
	n = count_threads(t, fam.grandchild);
	for (int i = 0; i < n; i++)
		gcalls += t[i].getppid;
	GT_CHECK(gcalls == ROUNDS, "grandchild (auto-traced) made %u getppid, expected %d",
		 gcalls, ROUNDS);
}

static void test_family_stacks(void)
{
	int resolved = 0, inside = 0, tried = 0;
	uint64_t ips[GT_STACK_DEPTH];

	run_family_once();
	GT_REQUIRE(fam_ok, "%s", fam_why);
	GT_REQUIRE(fam.text_rc == 0, "no r-xp mapping of the workload: %s",
		   strerror(-fam.text_rc));
	for (size_t i = 0; i < fam.r.n; i++) {
		const struct rec *e = &fam.r.v[i];
		int n, in = 0;

		if (e->ev.hdr.type != GT_KEV_SYS_ENTER || e->ev.hdr.tid != (uint32_t)fam.pid ||
		    e->ev.se.nr != NR_GETPPID)
			continue;
		tried++;
		if (e->ev.se.ustack < 0)
			continue;
		n = gt_capture_stack(cap, e->ev.se.ustack, ips, GT_STACK_DEPTH);
		if (n <= 0)
			continue;
		resolved++;
		for (int k = 0; k < n; k++)
			in |= ips[k] >= fam.text_lo && ips[k] < fam.text_hi;
		inside += in;
	}
	GT_CHECK(tried == ROUNDS, "%d getppid entries of main, expected %d", tried, ROUNDS);
	GT_CHECK(resolved == tried, "%d of %d sys_enter stacks resolve", resolved, tried);
	GT_CHECK(inside == tried, "%d of %d stacks have a frame in the workload's text [%llx,%llx)",
		 inside, tried, (unsigned long long)fam.text_lo, (unsigned long long)fam.text_hi);
	GT_CHECK(gt_capture_stack(cap, -1, ips, 4) == -EINVAL, "negative id accepted");
}

static void test_family_untraced_and_drops(void)
{
	size_t from_busy = 0;
	struct gt_capture_stats st;

	run_family_once();
	GT_REQUIRE(fam_ok, "%s", fam_why);
	GT_REQUIRE(fam.busy > 0, "no busy process");
	for (size_t i = 0; i < fam.r.n; i++) {
		const struct rec *e = &fam.r.v[i];

		from_busy += about_traced(e, fam.busy);
	}
	GT_CHECK(from_busy == 0, "the untraced busy process produced %zu events", from_busy);
	gt_capture_stats(cap, &st);
	GT_CHECK(gt_capture_drops(cap) == 0, "%llu drops", (unsigned long long)gt_capture_drops(cap));
	GT_CHECK(st.drops == 0 && st.out_of_order == 0, "stats: %llu drops, %llu out of order",
		 (unsigned long long)st.drops, (unsigned long long)st.out_of_order);
	GT_CHECK(st.events >= fam.r.n, "stats count %llu events, %zu were delivered",
		 (unsigned long long)st.events, fam.r.n);
	for (int cpu = 0; cpu < gt_capture_ncpus(cap); cpu++)
		GT_CHECK(gt_capture_drops_cpu(cap, cpu) == 0, "drops on cpu %d", cpu);
}

/* ---- cgroups ------------------------------------------------------------- */

static int cgroup2_mount(char *out, size_t n)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[4096];
	int found = 0;

	if (!f)
		return -errno;
	while (!found && fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], *dash = strstr(line, " - ");

		if (!dash || strncmp(dash + 3, "cgroup2 ", 8))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1) {
			snprintf(out, n, "%s", mnt);
			found = 1;
		}
	}
	fclose(f);
	return found ? 0 : -ENOENT;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), rc = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

struct cg_counts {
	size_t in, out, moved_before, moved_after;
};

static void count_cg(const struct recording *r, pid_t in, pid_t out, pid_t moved,
		     uint64_t t_move, struct cg_counts *k)
{
	memset(k, 0, sizeof(*k));
	for (size_t i = 0; i < r->n; i++) {
		const struct gt_kev_hdr *h = &r->v[i].ev.hdr;

		k->in += about_traced(&r->v[i], in);
		k->out += about_traced(&r->v[i], out);
		if (about_traced(&r->v[i], moved)) {
			if (h->ts < t_move)
				k->moved_before++;
			else
				k->moved_after++;
		}
	}
}

struct cg_want {
	pid_t in, out, moved;
	uint64_t t_move;
};

/* Enough for test_cgroup: 50 events from inside, 50 of the moved process
 * after its move. */
static int cg_enough(const struct recording *r, void *arg)
{
	const struct cg_want *w = arg;
	struct cg_counts k;

	count_cg(r, w->in, w->out, w->moved, w->t_move, &k);
	return k.in > 50 && k.moved_after > 50;
}

static void test_cgroup(void)
{
	char mnt[PATH_MAX], dir[PATH_MAX + 64], sub[PATH_MAX + 96], procs[PATH_MAX + 128];
	struct recording r = { 0 };
	pid_t in = -1, out = -1, moved = -1;
	struct cg_counts k;
	struct stat st;
	uint64_t t_move;
	int rc;

	GT_REQUIRE(cgroup2_mount(mnt, sizeof(mnt)) == 0, "no cgroup2 mount in /proc/self/mountinfo");
	snprintf(dir, sizeof(dir), "%s/gt_test_capture_%d", mnt, (int)getpid());
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	GT_REQUIRE(mkdir(dir, 0755) == 0 && mkdir(sub, 0755) == 0, "mkdir %s: %s", sub,
		   strerror(errno));
	GT_CHECK(stat(dir, &st) == 0, "stat %s", dir);
	rc = gt_capture_trace_cgroup(cap, st.st_ino, 1, 1);
	GT_CHECK(rc == 0, "gt_capture_trace_cgroup: %s", strerror(-rc));
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	in = spawn_busy(procs);
	out = spawn_busy(NULL);
	moved = spawn_busy(NULL);
	poll_for(&r, 150);
	t_move = now_ns();
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", sub);
	{
		char pid[16];

		snprintf(pid, sizeof(pid), "%d", (int)moved);
		rc = write_file(procs, pid);
		GT_CHECK(rc == 0, "moving %d into %s: %s", (int)moved, sub, strerror(-rc));
	}
	poll_until(cap, &r, cg_enough, &(struct cg_want){ in, out, moved, t_move });
	gt_capture_flush(cap, record_cb, &r);
	count_cg(&r, in, out, moved, t_move, &k);
	GT_CHECK(k.in > 50, "the process inside the cgroup gave %zu events", k.in);
	GT_CHECK(k.out == 0, "the process outside gave %zu events", k.out);
	GT_CHECK(k.moved_before == 0, "the moved process gave %zu events before its move",
		 k.moved_before);
	GT_CHECK(k.moved_after > 50, "the process moved into a child cgroup gave %zu events",
		 k.moved_after);
	GT_CHECK(r.unordered == 0, "%llu events out of order", (unsigned long long)r.unordered);
	rc = gt_capture_trace_cgroup(cap, st.st_ino, 1, 0);
	GT_CHECK(rc == 0, "untracing the cgroup: %s", strerror(-rc));
	/* untraced again: no more events from inside */
	t_move = now_ns();
	r.n = 0;
	poll_for(&r, 100);
	gt_capture_flush(cap, record_cb, &r);
	count_cg(&r, in, out, moved, t_move, &k);
	GT_CHECK(k.moved_after == 0, "%zu events of the moved process after the cgroup was "
		 "untraced", k.moved_after);
	count_cg(&r, moved, out, in, t_move, &k);
	GT_CHECK(k.moved_after == 0, "%zu events of the process inside after the cgroup was "
		 "untraced", k.moved_after);
	reap(in);
	reap(out);
	reap(moved);
	GT_CHECK(rmdir(sub) == 0, "rmdir %s: %s", sub, strerror(errno));
	GT_CHECK(rmdir(dir) == 0, "rmdir %s: %s", dir, strerror(errno));
	free(r.v);
}

/* ---- filters and stack map housekeeping ------------------------------------ */

/* Enough for test_filter_api: 21 events of process *arg. */
static int tgid_enough(const struct recording *r, void *arg)
{
	uint32_t tgid = (uint32_t)*(pid_t *)arg;
	size_t n = 0;

	for (size_t i = 0; i < r->n && n <= 20; i++)
		n += about_traced(&r->v[i], tgid) && r->v[i].ev.hdr.tgid == tgid;
	return n > 20;
}

static void test_filter_api(void)
{
	struct recording r = { 0 };
	pid_t p = spawn_busy(NULL);
	size_t seen = 0;
	uint64_t t_both, t_forget, ips[GT_STACK_DEPTH];
	int32_t sid = -1;
	uint32_t mask = 0;

	GT_CHECK(gt_capture_trace_tgid(cap, p, GT_MAX_SESSIONS, 1) == -EINVAL, "bit 32 accepted");
	GT_CHECK(gt_capture_trace_tgid(cap, 0, 0, 1) == -EINVAL, "tgid 0 accepted");
	GT_CHECK(gt_capture_trace_tgid(cap, p, 3, 1) == 0, "trace bit 3");
	GT_CHECK(gt_capture_trace_tgid(cap, p, 5, 1) == 0, "trace bit 5");
	/* the busy child runs on: what it did between the two calls has bit
	 * 3 alone (seen once under load: "mask 0x8") */
	t_both = now_ns();
	GT_CHECK(gt_capture_tgid_sessions(cap, p, &mask) == 0 && mask == ((1u << 3) | (1u << 5)),
		 "filter mask %#x, expected bits 3 and 5", mask);
	poll_until(cap, &r, tgid_enough, &p);
	gt_capture_flush(cap, record_cb, &r);
	for (size_t i = 0; i < r.n; i++)
		if (about_traced(&r.v[i], p) && r.v[i].ev.hdr.tgid == (uint32_t)p &&
		    r.v[i].ev.hdr.ts > t_both) {
			seen++;
			GT_CHECK(r.v[i].ev.hdr.sessions == ((1u << 3) | (1u << 5)),
				 "mask %#x, expected bits 3 and 5", r.v[i].ev.hdr.sessions);
			if (gt_test_failed_now)
				break;
		}
	GT_CHECK(seen > 20, "only %zu events of the traced process", seen);
	for (size_t i = 0; i < r.n && sid < 0; i++)
		if (r.v[i].ev.hdr.type == GT_KEV_SYS_ENTER && r.v[i].ev.hdr.tgid == (uint32_t)p)
			sid = r.v[i].ev.se.ustack;
	GT_CHECK(gt_capture_forget_session(cap, 3) == 0, "forget bit 3");
	GT_CHECK(gt_capture_forget_session(cap, 5) == 0, "forget bit 5");
	t_forget = now_ns();
	r.n = 0;
	poll_for(&r, 50);
	gt_capture_flush(cap, record_cb, &r);
	seen = 0;
	for (size_t i = 0; i < r.n; i++)
		seen += about_traced(&r.v[i], p) && r.v[i].ev.hdr.ts > t_forget;
	GT_CHECK(seen == 0, "%zu events after the sessions were forgotten", seen);
	reap(p);
	GT_CHECK(gt_capture_tgid_sessions(cap, p, &mask) == -ENOENT, "forgotten pid still in the filter");
	GT_REQUIRE(sid >= 0, "no sys_enter stack of the traced process");
	GT_CHECK(gt_capture_stack(cap, sid, ips, GT_STACK_DEPTH) > 0, "stack %d unreadable", sid);
	GT_CHECK(gt_capture_clear_stacks(cap) == 0, "clearing the stack map");
	GT_CHECK(gt_capture_stack(cap, sid, ips, GT_STACK_DEPTH) == -ENOENT,
		 "stack %d survived clearing", sid);
	free(r.v);
}

/* ---- attaching on demand ---------------------------------------------------- */

/* BPF links this process holds (each attached program is one). */
static int count_links(void)
{
	char path[64], target[64];
	int n = 0;

	for (int fd = 0; fd < 4096; fd++) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = 0;
		n += strstr(target, "bpf_link") || strstr(target, "bpf-link");
	}
	return n;
}

/* Events of tgid that c delivers within ms milliseconds. */
static size_t events_of(struct gt_capture *c, pid_t tgid, int ms)
{
	struct recording r = { 0 };
	uint64_t end = now_ns() + (uint64_t)ms * 1000000;
	size_t n = 0;

	while (now_ns() < end)
		gt_capture_poll(c, 10, record_cb, &r);
	gt_capture_flush(c, record_cb, &r);
	for (size_t i = 0; i < r.n; i++)
		n += about_traced(&r.v[i], (uint32_t)tgid);
	free(r.v);
	return n;
}

/* Events of tgid that c delivers until there are more than want (at most
 * PATIENCE_MS: a busy machine may run tgid late). */
static size_t events_beyond(struct gt_capture *c, pid_t tgid, size_t want)
{
	struct recording r = { 0 };
	uint64_t end = now_ns() + PATIENCE_MS * 1000000ull;
	size_t n = 0, seen = 0;

	while (n <= want && now_ns() < end) {
		gt_capture_poll(c, 10, record_cb, &r);
		for (; seen < r.n; seen++)
			n += about_traced(&r.v[seen], (uint32_t)tgid);
	}
	gt_capture_flush(c, record_cb, &r);
	for (; seen < r.n; seen++)
		n += about_traced(&r.v[seen], (uint32_t)tgid);
	free(r.v);
	return n;
}

/* Highest open descriptor of this process. */
static int highest_fd(void)
{
	char path[64];
	int hi = 2;

	for (int fd = 0; fd < 4096; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (access(path, F_OK) == 0)
			hi = fd;
	}
	return hi;
}

/* A descriptor limit that leaves room for one link, not all: the attach
 * fails part way and must undo what it did.  The holes below the highest
 * descriptor are filled first, so exactly one number is free. */
static void check_attach_failure(struct gt_capture *c, int links0)
{
	int fill[4096], nfill = 0, hi = highest_fd(), rc, fd;
	struct rlimit old, low;
	char err[512] = "";

	while (nfill < 4096 && (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0) {
		fill[nfill++] = fd;
		if (fd > hi)
			break;
	}
	if (nfill > 0 && fill[nfill - 1] > hi)
		close(fill[--nfill]); /* the one free number */
	GT_REQUIRE(getrlimit(RLIMIT_NOFILE, &old) == 0, "getrlimit: %s", strerror(errno));
	low = old;
	low.rlim_cur = (rlim_t)hi + 2;
	GT_REQUIRE(setrlimit(RLIMIT_NOFILE, &low) == 0, "setrlimit: %s", strerror(errno));
	rc = gt_capture_attach(c, err, sizeof(err));
	setrlimit(RLIMIT_NOFILE, &old);
	while (nfill > 0)
		close(fill[--nfill]);
	GT_CHECK(rc < 0, "attach succeeded with a descriptor limit of %llu",
		 (unsigned long long)low.rlim_cur);
	GT_CHECK(strstr(err, "attaching the tracepoints") != NULL, "message: '%s'", err);
	GT_CHECK(!gt_capture_attached(c), "attached after a failed attach");
	GT_CHECK(count_links() == links0, "%d links left after a failed attach (%d before)",
		 count_links(), links0);
}

/* A load_only capture runs nothing until attached, and nothing once
 * detached: an idle daemon costs the machine nothing. */
static void test_attach_on_demand(void)
{
	struct gt_capture_opts o = { .ring_bytes_per_cpu = 1 << 20, .load_only = 1 };
	struct gt_capture *c;
	int links0 = count_links(), rc;
	char err[512];
	size_t n;
	pid_t p;

	rc = gt_capture_open(&c, &o, err, sizeof(err));
	GT_REQUIRE(rc == 0, "load-only capture: %s", err);
	GT_CHECK(!gt_capture_attached(c), "attached at open with load_only");
	GT_CHECK(count_links() == links0, "%d links after a load-only open (%d before)",
		 count_links(), links0);
	p = spawn_busy(NULL);
	GT_CHECK(gt_capture_trace_tgid(c, p, 0, 1) == 0, "trace");
	n = events_of(c, p, 200);
	GT_CHECK(n == 0, "%zu events before attaching", n);

	GT_CHECK(gt_capture_attach(c, err, sizeof(err)) == 0, "attach: %s", err);
	GT_CHECK(gt_capture_attached(c), "not attached after attach");
	GT_CHECK(count_links() > links0, "no link after attach");
	GT_CHECK(gt_capture_attach(c, err, sizeof(err)) == 0, "second attach: %s", err);
	n = events_beyond(c, p, 100);
	GT_CHECK(n > 100, "only %zu events while attached", n);
	GT_CHECK(gt_capture_merge_resident(c) > 0, "no merge page resident after %zu events", n);

	gt_capture_detach(c);
	GT_CHECK(!gt_capture_attached(c), "attached after detach");
	GT_CHECK(count_links() == links0, "%d links after detach (%d before)", count_links(),
		 links0);
	events_of(c, p, 20); /* what was in the rings at the detach */
	/* and what buffering them took goes back (a daemon kept 12 MiB) */
	GT_CHECK(gt_capture_merge_resident(c) == 0, "%zu merge pages resident once idle",
		 gt_capture_merge_resident(c));
	n = events_of(c, p, 200);
	GT_CHECK(n == 0, "%zu events after detaching", n);

	check_attach_failure(c, links0);
	GT_CHECK(gt_capture_attach(c, err, sizeof(err)) == 0, "attach after a failure: %s", err);
	n = events_beyond(c, p, 100);
	GT_CHECK(n > 100, "only %zu events when attached again", n);
	reap(p);
	gt_capture_close(c);
	GT_CHECK(count_links() == links0, "%d links after close (%d before)", count_links(),
		 links0);
}

/* A capture loaded for known sessions only (gotracectl embedded): every
 * program is loaded once, shared out between the loading threads; what
 * was left out (cgroup sessions, -a, dwarf copies, a non-root owner's
 * rule) is not in the programs, which the verifier made smaller, and a
 * session asking for it is refused rather than silently not recorded. */
static void test_loaded_without(void)
{
	struct gt_capture_opts o = { .ring_bytes_per_cpu = 1 << 20, .load_only = 1 };
	unsigned all = GT_WITHOUT_CGROUPS | GT_WITHOUT_OWNERS | GT_WITHOUT_DWARF | GT_WITHOUT_ALL;
	uint64_t full = 0, less = 0, vfull, vless;
	struct gt_capture *c;
	int n_full, n_less, rc;
	char err[512];

	n_full = gt_capture_loaded_progs(cap, &full, &vfull);
	GT_CHECK(n_full > 8, "the capture loaded %d programs (-EEXIST: one twice)", n_full);
	o.without = all;
	rc = gt_capture_open(&c, &o, err, sizeof(err));
	GT_REQUIRE(rc == 0, "capture loaded without %#x: %s", all, err);
	n_less = gt_capture_loaded_progs(c, &less, &vless);
	GT_CHECK(n_less == n_full, "%d programs loaded without %#x, %d with everything", n_less,
		 all, n_full);
	GT_CHECK(less > 0 && less < full, "the programs loaded without %#x take %llu bytes, "
		 "with everything %llu", all, (unsigned long long)less, (unsigned long long)full);
	GT_CHECK(gt_capture_trace_cgroup(c, 1, 0, 1) == -EOPNOTSUPP, "a cgroup session accepted");
	GT_CHECK(gt_capture_trace_all(c, 0, 0, 1) == -EOPNOTSUPP, "an -a session accepted");
	GT_CHECK(gt_capture_dwarf_stacks(c, 0, 1024) == -EOPNOTSUPP, "a dwarf session accepted");
	GT_CHECK(gt_capture_session_owner(c, 0, 1000, 1000) == -EOPNOTSUPP,
		 "a non-root owner accepted");
	/* what it has: a root session of pids, off switches */
	GT_CHECK(gt_capture_session_owner(c, 0, 0, 0) == 0, "a root owner refused");
	GT_CHECK(gt_capture_dwarf_stacks(c, 0, 0) == 0, "frame-pointer stacks refused");
	GT_CHECK(gt_capture_trace_all(c, 0, 0, 0) == 0, "-a off refused");
	GT_CHECK(gt_capture_trace_tgid(c, (uint32_t)getpid(), 0, 1) == 0, "a tgid refused");
	gt_capture_trace_tgid(c, (uint32_t)getpid(), 0, 0);
	gt_capture_close(c);
	/* and one loaded with everything takes them (bit 1 traces nothing) */
	GT_CHECK(gt_capture_dwarf_stacks(cap, 1, 1024) == 0, "dwarf refused by the full capture");
	GT_CHECK(gt_capture_session_owner(cap, 1, 1000, 1000) == 0,
		 "a non-root owner refused by the full capture");
	gt_capture_forget_session(cap, 1);
	gt_capture_dwarf_stacks(cap, 1, 0);
	gt_capture_session_owner(cap, 1, 0, 0);
}

/* A ring too small for the load, read late: reservations fail, and every
 * failure is counted on its CPU and for the session that wanted the record
 * (bit 0; bit 1, tracing nothing, lost nothing); everything committed is
 * delivered. */
static void test_drops(void)
{
	struct gt_capture_opts o = { .ring_bytes_per_cpu = 4096 };
	struct recording r = { 0 };
	struct gt_capture *small;
	struct gt_capture_stats st;
	uint64_t per_cpu = 0;
	char err[512];
	pid_t p;
	int rc;

	rc = gt_capture_open(&small, &o, err, sizeof(err));
	GT_REQUIRE(rc == 0, "second capture: %s", err);
	p = spawn_busy(NULL);
	GT_CHECK(gt_capture_trace_tgid(small, p, 0, 1) == 0, "trace");
	/* its syscalls into a 4 KiB ring, unread, until 1000 did not fit
	 * (however late a busy machine runs it) */
	for (uint64_t end = now_ns() + PATIENCE_MS * 1000000ull;
	     gt_capture_drops(small) <= 1000 && now_ns() < end;)
		usleep(10000);
	reap(p);
	rc = gt_capture_flush(small, record_cb, &r);
	GT_CHECK(rc > 0, "flush delivered %d", rc);
	gt_capture_stats(small, &st);
	for (int cpu = 0; cpu < gt_capture_ncpus(small); cpu++)
		per_cpu += gt_capture_drops_cpu(small, cpu);
	GT_CHECK(st.drops > 1000, "only %llu drops", (unsigned long long)st.drops);
	GT_CHECK(per_cpu == st.drops && gt_capture_drops(small) == st.drops,
		 "per-CPU drops sum to %llu, total %llu", (unsigned long long)per_cpu,
		 (unsigned long long)st.drops);
	GT_CHECK(gt_capture_session_drops(small, 0) == st.drops,
		 "session 0 lost %llu of the %llu drops",
		 (unsigned long long)gt_capture_session_drops(small, 0), (unsigned long long)st.drops);
	GT_CHECK(gt_capture_session_drops(small, 1) == 0, "session 1 lost %llu records of others",
		 (unsigned long long)gt_capture_session_drops(small, 1));
	GT_CHECK(st.events == r.n, "%llu records delivered, %zu recorded",
		 (unsigned long long)st.events, r.n);
	GT_CHECK(st.bad_records == 0, "%llu bad records", (unsigned long long)st.bad_records);
	GT_CHECK(r.unordered == 0, "out of order");
	gt_capture_close(small);
	free(r.v);
}

/* Enough for test_stack_spill: two distinct user stacks of the syscall
 * entries of process *arg. */
static int two_stacks(const struct recording *r, void *arg)
{
	uint32_t tgid = (uint32_t)*(pid_t *)arg;
	int32_t first = -1;

	for (size_t i = 0; i < r->n; i++) {
		int32_t id = r->v[i].ev.se.ustack;

		if (r->v[i].ev.hdr.type != GT_KEV_SYS_ENTER || r->v[i].ev.hdr.tgid != tgid || id < 0)
			continue;
		if (first < 0)
			first = id;
		else if (id != first)
			return 1;
	}
	return 0;
}

/* A stack-trace map keeps one stack per hash bucket: with a main map of
 * one bucket, every other distinct stack collides there and must land in
 * the spill map, under an id with GT_STACK_SPILL, and resolve. */
static void test_stack_spill(void)
{
	struct gt_capture_opts o = { .ring_bytes_per_cpu = 1 << 20, .stack_map_entries = 1 };
	struct recording r = { 0 };
	struct gt_capture *one;
	uint64_t ips[GT_STACK_DEPTH];
	int32_t seen[8];
	int nseen = 0, spilled = 0;
	char err[512];
	pid_t p;
	int rc;

	rc = gt_capture_open(&one, &o, err, sizeof(err));
	GT_REQUIRE(rc == 0, "capture with a one-bucket stack map: %s", err);
	p = spawn_busy(NULL); /* getppid and usleep: two call sites */
	GT_CHECK(gt_capture_trace_tgid(one, p, 0, 1) == 0, "trace");
	poll_until(one, &r, two_stacks, &p);
	rc = gt_capture_flush(one, record_cb, &r);
	GT_CHECK(r.n > 0, "nothing delivered (flush %d)", rc);
	for (size_t i = 0; i < r.n; i++) {
		int32_t id = r.v[i].ev.se.ustack;
		int k = 0;

		if (r.v[i].ev.hdr.type != GT_KEV_SYS_ENTER || r.v[i].ev.hdr.tgid != (uint32_t)p || id < 0)
			continue;
		while (k < nseen && seen[k] != id)
			k++;
		if (k < nseen || nseen == 8)
			continue;
		seen[nseen++] = id;
		rc = gt_capture_stack(one, id, ips, GT_STACK_DEPTH);
		GT_CHECK(rc > 0, "stack id %#x does not resolve: %d", (unsigned)id, rc);
		spilled += (id & GT_STACK_SPILL) != 0;
	}
	reap(p);
	GT_CHECK(nseen >= 2, "%d distinct user stacks, expected the two call sites", nseen);
	GT_CHECK(spilled >= 1, "none of %d distinct stacks went to the spill map", nseen);
	gt_capture_close(one);
	free(r.v);
}

/* ---- perf records in the merge ------------------------------------------ */

/* What the callbacks saw, events and perf records alike, in the order the
 * capture delivered them. */
struct one_order {
	uint64_t max_ts;      /* the newest delivered so far */
	uint64_t inversions;  /* delivered older than max_ts */
	uint64_t events, mine; /* events; mappings of this process */
	uint32_t self;
};

static void order_see(struct one_order *o, uint64_t ts)
{
	if (ts < o->max_ts)
		o->inversions++;
	else
		o->max_ts = ts;
}

static int order_event_cb(void *ctx, const struct gt_kev_hdr *ev, size_t len)
{
	struct one_order *o = ctx;

	(void)len;
	order_see(o, ev->ts);
	o->events++;
	return 0;
}

static void order_mmap_cb(void *ctx, struct gt_mmap_held *h)
{
	struct one_order *o = ctx;

	order_see(o, h->r.ts);
	o->mine += h->r.kind == GT_MMAP_MAP && h->r.pid == o->self;
	free(h);
}

/* ---- the user frame walk -------------------------------------------------- */

/* This binary loads its programs with both user frame walks compared
 * (daemon/capture/load.c's bench hook, here for a test): the one that
 * copies the stack a window at a time (bpf/compat.bpf.h gt_uframe_at) and
 * the one that reads each frame alone, as the kernel's walk does.  Every
 * walk counts in the stats, and so does every pair of keys that differ.
 * Only the walk's cost changes; every record stays what it is. */
uint32_t gt_bench_parts_off(void);
uint32_t gt_bench_parts_off(void)
{
	return GT_PARTS_UWALK_CHECK;
}

/* tests/workloads/uwalk_chains blocks at stacks made for the walk's every
 * path (deep real frames over many windows and pages, past the depth
 * limit; and hand-made chains: unaligned, astride two windows, astride a
 * page and a hole, going down, looping, ending unmapped or low): the block
 * walk must give the per-frame walk's key at each of its blocks, and the
 * deep stacks must come out whole (GT_STACK_DEPTH frames). */
static void test_uwalk_same_keys(void)
{
	struct gt_capture_stats st0, st1;
	struct recording r = {0};
	char path[PATH_MAX], out[256] = "";
	int go[2], so[2], status = -1, deepest = 0;
	long blocks = -1;
	uint64_t ips[GT_STACK_DEPTH];
	ssize_t got = 0, k;

	workload_path(path, sizeof(path), "uwalk_chains");
	GT_REQUIRE(access(path, X_OK) == 0, "workload %s missing (make tests)", path);
	GT_REQUIRE(pipe(go) == 0 && pipe(so) == 0, "pipe: %s", strerror(errno));
	pid_t p = fork();
	if (p == 0) {
		char c;

		dup2(so[1], 1);
		close(so[0]);
		close(go[1]);
		if (read(go[0], &c, 1) != 1) /* wait until traced */
			_exit(2);
		execl(path, "uwalk_chains", "30", (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	close(so[1]);
	GT_REQUIRE(p > 0, "fork: %s", strerror(errno));
	gt_capture_stats(cap, &st0);
	int rc = gt_capture_trace_tgid(cap, p, 0, 1);
	if (write(go[1], "g", 1) != 1 && !rc)
		rc = -EPIPE;
	close(go[1]);
	while (!rc && (k = read(so[0], out + got, sizeof(out) - 1 - got)) > 0) {
		got += k;
		gt_capture_poll(cap, 0, record_cb, &r);
	}
	out[got] = 0;
	close(so[0]);
	waitpid(p, &status, 0);
	if (!rc) {
		poll_for(&r, 50);
		rc = gt_capture_flush(cap, record_cb, &r);
	}
	gt_capture_stats(cap, &st1);
	gt_capture_trace_tgid(cap, p, 0, 0);
	for (size_t i = 0; i < r.n; i++) {
		const struct gt_kev_switch *w = &r.v[i].ev.sw;
		int n;

		if (w->hdr.type != GT_KEV_SWITCH || w->hdr.tgid != (uint32_t)p || w->prev_ustack < 0)
			continue;
		n = gt_capture_stack(cap, w->prev_ustack, ips, GT_STACK_DEPTH);
		deepest = n > deepest ? n : deepest;
	}
	free(r.v);
	if (strstr(out, "blocks "))
		blocks = atol(strstr(out, "blocks ") + 7);
	GT_REQUIRE(rc >= 0, "recording uwalk_chains: %s", strerror(-rc));
	GT_REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0 && blocks > 0,
		   "uwalk_chains failed (status %#x, output \"%s\")", status, out);
#if defined(__x86_64__)
	/* a key where the walk runs (x86-64's frame chains; elsewhere the
	 * walk is bpf_get_stackid's own, no key): at every block at least */
	GT_CHECK(st1.uwalk_checks - st0.uwalk_checks >= (uint64_t)blocks,
		 "%llu walks compared, %ld blocks",
		 (unsigned long long)(st1.uwalk_checks - st0.uwalk_checks), blocks);
#endif
	GT_CHECK(st1.uwalk_mismatches == st0.uwalk_mismatches,
		 "%llu of %llu walks gave another key a window at a time than a frame at a time",
		 (unsigned long long)(st1.uwalk_mismatches - st0.uwalk_mismatches),
		 (unsigned long long)(st1.uwalk_checks - st0.uwalk_checks));
	GT_CHECK(deepest == GT_STACK_DEPTH, "deepest user stack %d frames, expected %d",
		 deepest, GT_STACK_DEPTH);
}

/* A traced process's events and this process's executable mappings come
 * out in one time order: a perf record is never handed over ahead of
 * events stamped before it.  The only records older than one delivered
 * before them are events the merge counted itself (late beyond the lag,
 * on a loaded machine), which the same rule counts. */
static void test_mmaps_in_order(void)
{
	struct one_order o = { .self = (uint32_t)getpid() };
	struct gt_capture_stats st0, st1;
	uint64_t end = now_ns() + PATIENCE_MS * 1000000ull;
	int fd = open("/proc/self/exe", O_RDONLY);
	pid_t p = spawn_busy(NULL);

	GT_REQUIRE(fd >= 0 && p > 0, "open /proc/self/exe or fork: %s", strerror(errno));
	GT_REQUIRE(!gt_capture_mmap_unavailable(cap), "no perf records: %s",
		   gt_capture_mmap_unavailable(cap));
	GT_CHECK(gt_capture_trace_tgid(cap, p, 0, 1) == 0, "trace");
	gt_capture_on_mmap(cap, order_mmap_cb, &o);
	gt_capture_stats(cap, &st0);
	while ((o.mine < 200 || o.events < 1000) && now_ns() < end) {
		void *m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);

		if (m != MAP_FAILED)
			munmap(m, 4096);
		gt_capture_poll(cap, 1, order_event_cb, &o);
	}
	gt_capture_flush(cap, order_event_cb, &o);
	gt_capture_stats(cap, &st1);
	gt_capture_on_mmap(cap, NULL, NULL);
	gt_capture_trace_tgid(cap, p, 0, 0);
	reap(p);
	close(fd);
	GT_CHECK(o.mine >= 200 && o.events >= 1000, "%llu mappings, %llu events",
		 (unsigned long long)o.mine, (unsigned long long)o.events);
	GT_CHECK(o.inversions <= st1.out_of_order - st0.out_of_order,
		 "%llu delivered out of time order, %llu counted by the merge",
		 (unsigned long long)o.inversions,
		 (unsigned long long)(st1.out_of_order - st0.out_of_order));
}

int main(void)
{
	struct gt_capture_opts o = { .ring_bytes_per_cpu = 1 << 20 };
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (gt_test_skip_bpf()) {
		printf("skip test_capture: GOTRACED_SKIP_BPF=1\n");
		return 0;
	}
	rc = gt_capture_open(&cap, &o, cap_err, sizeof(cap_err));
	if (rc) {
		gt_test_report("capture_open", 0, cap_err);
		return gt_test_done();
	}
	gt_test_report("capture_open", 1, NULL);
	GT_RUN(test_family_order);
	GT_RUN(test_family_pingpong);
	GT_RUN(test_family_task_wakeups);
	GT_RUN(test_family_lifecycle);
	GT_RUN(test_family_stacks);
	GT_RUN(test_timer_wakeups);
	GT_RUN(test_family_untraced_and_drops);
	GT_RUN(test_cgroup);
	GT_RUN(test_filter_api);
	GT_RUN(test_drops);
	GT_RUN(test_stack_spill);
	GT_RUN(test_mmaps_in_order);
	GT_RUN(test_uwalk_same_keys);
	GT_RUN(test_attach_on_demand);
	GT_RUN(test_loaded_without);
	free(fam.r.v);
	gt_capture_close(cap);
	return gt_test_done();
}
