/* See loader.h. */
#include "loader.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "debug_file.h"
#include "elf_file.h"
#include "maps.h"
#include "perfmap.h"
#include "safe_open.h"
#include "testing.h"
#include "util/gt_escape.h"

struct gt_sym_job {
	struct gt_sym_job *next;  /* in the queue */
	pid_t pid;
	struct gt_map_line m;     /* m.path: ours, NUL-terminated */
	int root_fd;              /* the process's root, or AT_FDCWD */
	int mapped_fd;            /* O_PATH of its map_files link, or -1 */
	uint64_t posted_ns;
	int done;                 /* under pool.lock from here on */
	int dropped;              /* the symbolizer let it go */
	int late;                 /* a wait for it gave up */
	int started;              /* a thread runs it: cpu is that thread's clock */
	clockid_t cpu;
	pid_t tid;                /* that thread */
	int rc;
	struct gt_binary b;
	int is_perfmap;           /* a perf map's read, not a binary's load */
	uid_t owner;              /* perf map: its process's user */
	uid_t uid;                /* whose budget it runs on (see loader.h) */
	_Atomic int cancel;       /* dropped while running: stop at the next chunk */
	struct gt_perfmap_stamp stamp; /* perf map: as seen, then as read */
	struct gt_perfmap pm;
	int (*call)(void *arg);   /* a call's (gt_sym_call_post), or NULL */
	void *arg;
	void (*arg_free)(void *arg);
};

/* A user's jobs running now: at most per_uid_max loads and as many calls
 * (a call, short, does not wait behind a user's long loads). */
struct uid_busy {
	uid_t uid;
	unsigned n, calls;        /* both 0: a free slot */
};

/* The loader threads, process-wide. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t done;      /* some job finished */
	pthread_cond_t work;      /* a job was queued */
	struct gt_sym_job *head, **tail;
	unsigned threads, idle, late, busy;
	/* idle threads signalled for a job that have not woken yet: each is
	 * spoken for (a burst of jobs queued before the one idle thread woke
	 * made no thread, and a stuck first job held all the others) */
	unsigned woken;
	/* as many users as jobs can run at once */
	struct uid_busy users[GT_SYM_LOADERS_MAX];
} pool = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
	   NULL, &pool.head, 0, 0, 0, 0, 0, { { 0, 0, 0 } } };

/* Written at each call's end (gt_sym_calls_fd): -1 until asked for. */
static int calls_efd = -1;

/* Loads of one user that may run at once (gt_sym_loader_budget). */
static unsigned per_uid_max = GT_SYM_LOADERS_MAX;

static _Atomic uint64_t loads_ended;

/* The running job's cancel flag, on a loader thread (gt_sym_cancelled). */
static _Thread_local _Atomic int *running_cancel;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

/* Waits for pool.done are timed on CLOCK_MONOTONIC, gt_now_ns's clock. */
static void pool_init(void)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_destroy(&pool.done);
	pthread_cond_init(&pool.done, &a);
	pthread_condattr_destroy(&a);
}

void (*gt_sym_load_hook)(const char *path);

/* Opens the mapped file (safe_open.h: no link, no device, no FIFO, and
 * only if its device and inode are the mapping's): through the process's
 * root (containers), as the process sees the path; its map_files link
 * (exact even if replaced or deleted; needs privilege); then the plain
 * path.  The root and the link were taken when the job was posted, while
 * the process lived (taking them asks no file system anything). */
static int open_mapped(const struct gt_sym_job *j)
{
	const struct gt_map_line *m = &j->m;
	struct gt_sym_file_id id = { m->dev_major, m->dev_minor, m->inode };
	int fd;

	if (!m->deleted && j->root_fd != AT_FDCWD &&
	    (fd = gt_sym_open(j->root_fd, m->path, GT_SYM_OPEN_NO_LINKS, &id, GT_SYM_FILE_MAX)) >= 0)
		return fd;
	if (j->mapped_fd >= 0 &&
	    (fd = gt_sym_reopen(j->mapped_fd, m->path, &id, GT_SYM_FILE_MAX)) >= 0)
		return fd;
	return gt_sym_open(AT_FDCWD, m->path, GT_SYM_OPEN_NO_LINKS, &id, GT_SYM_FILE_MAX);
}

/* The perf map's stamp from fstat. */
static struct gt_perfmap_stamp stamp_of(const struct stat *st)
{
	return (struct gt_perfmap_stamp){ (uint64_t)st->st_dev, (uint64_t)st->st_ino,
		(uint64_t)st->st_size,
		(uint64_t)st->st_mtim.tv_sec * 1000000000ull + (uint64_t)st->st_mtim.tv_nsec, 0, 0 };
}

/* FNV-1a of the GT_PERFMAP_TAIL bytes before used (fewer at the start):
 * still the same after an append, not after a rewrite (a rewrite that
 * left them the same wrote the same lines before them, or nearly). */
static uint64_t tail_sum(int fd, uint64_t used)
{
	unsigned char buf[GT_PERFMAP_TAIL];
	uint64_t from = used > sizeof(buf) ? used - sizeof(buf) : 0, h = 0xcbf29ce484222325ull;
	ssize_t n = pread(fd, buf, (size_t)(used - from), (off_t)from);

	for (ssize_t i = 0; i < n; i++)
		h = (h ^ buf[i]) * 0x100000001b3ull;
	return n == (ssize_t)(used - from) ? h : ~h;
}

/* Bytes [from, to) of fd into j->pm. */
static int parse_from(struct gt_sym_job *j, int fd, uint64_t from, uint64_t to)
{
	size_t want = (size_t)(to - from), got = 0, used;
	char *buf = malloc(want ? want : 1);
	int err;

	if (!buf)
		return -ENOMEM;
	while (got < want) { /* nonblocking: a regular file's read still completes */
		ssize_t n = pread(fd, buf + got, want - got, (off_t)(from + got));

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	err = gt_perfmap_build(&j->pm, buf, got, &used);
	free(buf);
	j->stamp.used = from + used;
	j->stamp.lines = j->pm.lines;
	j->stamp.tail = tail_sum(fd, j->stamp.used);
	return err;
}

/* The perf map into j->pm: only what follows the bytes read before if
 * it is the same file, grown (rc 1), else whole (rc 0; its first
 * GT_PERFMAP_READ_MAX bytes), unless nothing changed. */
static int read_perfmap(struct gt_sym_job *j)
{
	struct gt_perfmap_stamp was = j->stamp, now;
	struct stat st;
	uint64_t from = 0, to;
	int fd, err;

	fd = gt_sym_open(j->root_fd, j->m.path, GT_SYM_OPEN_NO_LINKS, NULL, GT_SYM_FILE_MAX);
	if (fd < 0)
		return -ENOENT;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (st.st_uid != j->owner && st.st_uid != 0) {
		gt_sym_reject(GT_SYM_REJECT_NOT_OWNER, j->m.path);
		close(fd);
		return -ENOENT;
	}
	now = stamp_of(&st);
	if (now.dev == was.dev && now.ino == was.ino && now.size == was.size &&
	    now.mtime_ns == was.mtime_ns) {
		close(fd);
		return -EALREADY;
	}
	j->pm.lines = was.lines; /* later lines win (perfmap.h) */
	if (now.dev == was.dev && now.ino == was.ino && now.size >= was.used && was.used &&
	    tail_sum(fd, was.used) == was.tail)
		from = was.used; /* appended to */
	to = now.size < GT_PERFMAP_READ_MAX ? now.size : GT_PERFMAP_READ_MAX;
	if (to < from)
		to = from;
	j->stamp = now;
	err = parse_from(j, fd, from, to);
	close(fd);
	if (err)
		gt_perfmap_free(&j->pm);
	return err ? err : from != 0;
}

/* Tests only: GOTRACED_TEST_SLOW_LOADS_MS=N makes every load and call on a
 * loader thread first burn N ms of its thread's CPU, as a slow (emulated)
 * machine's parse does: a waiting caller sees progress and waits. */
static void slow_for_tests(void)
{
	static _Atomic long ms = -1;
	struct timespec t0, t;

	if (ms < 0) {
		const char *env = getenv("GOTRACED_TEST_SLOW_LOADS_MS");

		ms = env ? strtol(env, NULL, 10) : 0; /* racers store the same value */
	}
	if (ms <= 0 || clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0))
		return;
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

static void run(struct gt_sym_job *j)
{
	struct gt_sym_origin origin = { j->root_fd, j->m.path };
	int fd;

	slow_for_tests();
	if (j->is_perfmap) {
		j->rc = read_perfmap(j);
		return;
	}
	if (j->call) {
		if (gt_sym_load_hook)
			gt_sym_load_hook(j->m.path);
		j->rc = j->call(j->arg);
		return;
	}
	if (gt_sym_load_hook)
		gt_sym_load_hook(j->m.path);
	fd = open_mapped(j);
	j->rc = fd < 0 ? -ENOENT : gt_binary_load(&j->b, fd, &origin);
}

static void job_free(struct gt_sym_job *j)
{
	if (j->call) {
		if (j->arg_free)
			j->arg_free(j->arg);
	} else if (j->done && j->rc >= 0 && j->is_perfmap)
		gt_perfmap_free(&j->pm);
	else if (j->done && j->rc == 0)
		gt_binary_close(&j->b);
	if (j->root_fd != AT_FDCWD)
		close(j->root_fd);
	if (j->mapped_fd >= 0)
		close(j->mapped_fd);
	free((char *)j->m.path);
	free(j);
}

int gt_sym_cancelled(void)
{
	return running_cancel && atomic_load(running_cancel);
}

/* The slot counting uid's running jobs (pool.lock held); NULL when none
 * is free, which cannot be: at most GT_SYM_LOADERS_MAX jobs run. */
static struct uid_busy *uid_slot(uid_t uid)
{
	struct uid_busy *free_slot = NULL;

	for (unsigned i = 0; i < GT_SYM_LOADERS_MAX; i++) {
		int used = pool.users[i].n || pool.users[i].calls;

		if (used && pool.users[i].uid == uid)
			return &pool.users[i];
		if (!used && !free_slot)
			free_slot = &pool.users[i];
	}
	if (free_slot)
		free_slot->uid = uid;
	return free_slot;
}

/* Whether j's user may start one more job of j's kind now (pool.lock
 * held). */
static int uid_may_run(const struct gt_sym_job *j)
{
	for (unsigned i = 0; i < GT_SYM_LOADERS_MAX; i++) {
		const struct uid_busy *u = &pool.users[i];

		if ((u->n || u->calls) && u->uid == j->uid)
			return (j->call ? u->calls : u->n) < per_uid_max;
	}
	return 1;
}

/* Takes the first queued job whose user is within its budget out of the
 * queue (pool.lock held); NULL if none may run now. */
static struct gt_sym_job *take_runnable(void)
{
	struct gt_sym_job **pp = &pool.head, *j;

	while ((j = *pp) && !uid_may_run(j))
		pp = &j->next;
	if (!j)
		return NULL;
	*pp = j->next;
	if (pool.tail == &j->next)
		pool.tail = pp;
	j->next = NULL;
	return j;
}

/* Takes j out of the queue if it is still there (pool.lock held); 1 if so. */
static int unqueue(struct gt_sym_job *j)
{
	struct gt_sym_job **pp = &pool.head;

	while (*pp && *pp != j)
		pp = &(*pp)->next;
	if (!*pp)
		return 0;
	*pp = j->next;
	if (pool.tail == &j->next)
		pool.tail = pp;
	return 1;
}

static void *loader_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pool.lock);
	for (;;) {
		struct gt_sym_job *j = take_runnable();
		struct uid_busy *u;

		if (!j) {
			/* a burst's threads end with it: each holds its stack
			 * and its allocator's cache (ASan: about 1 MB) */
			if (pool.idle >= GT_SYM_LOADERS_IDLE)
				break;
			pool.idle++;
			pthread_cond_wait(&pool.work, &pool.lock);
			pool.idle--;
			if (pool.woken)
				pool.woken--;
			continue;
		}
		j->started = pthread_getcpuclockid(pthread_self(), &j->cpu) == 0;
		j->tid = gettid();
		pool.busy++;
		u = uid_slot(j->uid);
		if (u)
			++*(j->call ? &u->calls : &u->n);
		running_cancel = &j->cancel;
		pthread_mutex_unlock(&pool.lock);
		if (!atomic_load(&j->cancel))
			run(j); /* may never return: FUSE */
		else
			j->rc = -ECANCELED;
		pthread_mutex_lock(&pool.lock);
		running_cancel = NULL;
		j->done = 1;
		atomic_fetch_add(&loads_ended, 1);
		pool.busy--;
		if (u)
			--*(j->call ? &u->calls : &u->n);
		if (j->late)
			pool.late--;
		if (j->call && calls_efd >= 0) {
			uint64_t one = 1;

			if (write(calls_efd, &one, sizeof(one)) < 0) {
				/* only on overflow: the caller is behind anyway */
			}
		}
		if (j->dropped)
			job_free(j);
		pthread_cond_broadcast(&pool.done);
	}
	pool.threads--;
	pthread_mutex_unlock(&pool.lock);
	return NULL;
}

/* One more thread when no idle one is left unclaimed: a stuck one holds
 * only itself. */
static void add_thread(void)
{
	pthread_attr_t a;
	pthread_t t;

	if (pool.idle > pool.woken || pool.threads >= GT_SYM_LOADERS_MAX ||
	    pthread_attr_init(&a))
		return;
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &a, loader_main, NULL) == 0)
		pool.threads++;
	pthread_attr_destroy(&a);
}

/* Queues j for a loader thread. */
static void enqueue(struct gt_sym_job *j)
{
	j->posted_ns = gt_now_ns();
	pthread_once(&pool_once, pool_init);
	pthread_mutex_lock(&pool.lock);
	*pool.tail = j;
	pool.tail = &j->next;
	/* a job over its user's budget waits for one of that user's to end:
	 * the thread that ran it takes the next */
	if (uid_may_run(j)) {
		add_thread();
		if (pool.idle > pool.woken) {
			pool.woken++;
			pthread_cond_signal(&pool.work);
		}
	}
	pthread_mutex_unlock(&pool.lock);
}

struct gt_sym_job *gt_sym_perfmap_post(int root_fd, const char *path, uid_t owner,
				       const struct gt_perfmap_stamp *seen)
{
	struct gt_sym_job *j = calloc(1, sizeof(*j));
	char *copy = j ? strdup(path) : NULL;

	if (!copy) {
		free(j);
		return NULL;
	}
	j->is_perfmap = 1;
	j->m.path = copy;
	j->m.path_len = strlen(copy);
	j->owner = owner;
	j->uid = owner;
	j->stamp = *seen;
	j->mapped_fd = -1;
	j->root_fd = root_fd == AT_FDCWD ? AT_FDCWD : fcntl(root_fd, F_DUPFD_CLOEXEC, 0);
	if (j->root_fd < 0 && j->root_fd != AT_FDCWD) {
		free(copy);
		free(j);
		return NULL;
	}
	enqueue(j);
	return j;
}

int gt_sym_perfmap_take(struct gt_sym_job *j, struct gt_perfmap *pm,
			struct gt_perfmap_stamp *seen)
{
	int rc = j->rc;

	if (rc >= 0) {
		*pm = j->pm;
		*seen = j->stamp;
		memset(&j->pm, 0, sizeof(j->pm));
	}
	j->rc = -ECANCELED; /* moved out */
	return rc;
}

static uid_t process_uid(pid_t pid);

struct gt_sym_job *gt_sym_call_post(pid_t pid, const char *what, int (*call)(void *arg),
				    void *arg, void (*arg_free)(void *arg))
{
	struct gt_sym_job *j = calloc(1, sizeof(*j));
	char *copy = j ? strdup(what) : NULL;

	if (!copy) {
		free(j);
		return NULL;
	}
	j->pid = pid;
	j->m.path = copy;
	j->m.path_len = strlen(copy);
	j->root_fd = AT_FDCWD;
	j->mapped_fd = -1;
	j->call = call;
	j->arg = arg;
	j->arg_free = arg_free;
	j->uid = process_uid(pid);
	enqueue(j);
	return j;
}

void *gt_sym_call_result(struct gt_sym_job *j, int *rc)
{
	*rc = j->rc;
	return j->arg;
}

/* The user whose budget pid's loads run on: the owner of /proc/PID (its
 * effective uid; root's for a process that is not dumpable), root's if
 * it is gone. */
static uid_t process_uid(pid_t pid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return stat(path, &st) ? 0 : st.st_uid;
}

struct gt_sym_job *gt_sym_job_post(pid_t pid, const struct gt_map_line *m)
{
	char link[96];
	struct gt_sym_job *j = calloc(1, sizeof(*j));
	char *path = j ? strndup(m->path, m->path_len) : NULL;

	if (!path) {
		free(j);
		return NULL;
	}
	j->pid = pid;
	j->m = *m;
	j->m.path = path;
	/* O_PATH of magic links: no file system is asked anything */
	snprintf(link, sizeof(link), "/proc/%d/root", (int)pid);
	j->root_fd = open(link, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (j->root_fd < 0)
		j->root_fd = AT_FDCWD;
	snprintf(link, sizeof(link), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid,
		 m->start, m->end);
	j->mapped_fd = open(link, O_PATH | O_CLOEXEC);
	j->uid = process_uid(pid);
	enqueue(j);
	return j;
}

/* CPU time the job's thread has used, or 0 before it starts. */
static uint64_t job_cpu_ns(const struct gt_sym_job *j)
{
	struct timespec ts;

	if (!j->started || clock_gettime(j->cpu, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Whether the job's thread is working: runnable, or waiting for a disk
 * ('D'); a thread asleep ('S': a FUSE request, a FIFO) is not. */
static int job_busy(const struct gt_sym_job *j)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)j->tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'R' || p[2] == 'D');
}

/* Waits (pool.lock held) until the job is done, or has made no progress
 * for GT_SYM_LOAD_STALL_NS (its thread used no CPU and was neither
 * runnable nor in a disk wait: asleep in an open() or a read that does not
 * come back), or GT_SYM_LOAD_WAIT_MAX_NS passed since its post: parsing
 * a large binary with its debug file takes tens of milliseconds of CPU
 * (libc's: 60-90 ms), a file system that does not answer takes none.
 * Then the job is late. */
static void wait_progress(struct gt_sym_job *j)
{
	uint64_t cpu = job_cpu_ns(j), seen = gt_now_ns(), now;
	uint64_t cap = j->posted_ns + GT_SYM_LOAD_WAIT_MAX_NS;

	while (!j->done) {
		struct timespec ts;
		uint64_t c, until;

		now = gt_now_ns();
		if (now >= cap || now - seen >= GT_SYM_LOAD_STALL_NS) {
			char shown[GT_ESCAPE_SIZE(300)];

			j->late = 1;
			pool.late++;
			gt_escape(shown, sizeof(shown), j->m.path, strnlen(j->m.path, 300));
			fprintf(stderr, "symbols: loading %s is %s: its frames are unnamed "
				"until it ends\n", shown,
				now >= cap ? "taking long" : "not making progress (a file system that does not answer?)");
			return;
		}
		until = now + GT_SYM_LOAD_STALL_NS / 4;
		ts.tv_sec = (time_t)(until / 1000000000ull);
		ts.tv_nsec = (long)(until % 1000000000ull);
		pthread_cond_timedwait(&pool.done, &pool.lock, &ts);
		c = job_cpu_ns(j);
		/* queued (no thread free yet: only the cap applies), running */
		if (!j->started || c > cpu || job_busy(j)) {
			cpu = c;
			seen = gt_now_ns();
		}
	}
}

int gt_sym_job_wait(struct gt_sym_job *j, int wait)
{
	int done;

	pthread_mutex_lock(&pool.lock);
	/* a late job is not waited for again; while any is, nobody waits
	 * (something is stuck: one stall, not one per binary) */
	if (wait && !j->done && !j->late && !pool.late)
		wait_progress(j);
	done = j->done;
	pthread_mutex_unlock(&pool.lock);
	return done;
}

int gt_sym_job_take(struct gt_sym_job *j, struct gt_binary *b)
{
	int rc = j->rc;

	if (rc == 0)
		*b = j->b;
	j->rc = -ECANCELED; /* moved out */
	return rc;
}

void gt_sym_job_drop(struct gt_sym_job *j)
{
	int done;

	if (!j)
		return;
	pthread_mutex_lock(&pool.lock);
	/* nobody wants it any more: not started, it never will be; running,
	 * it stops at its next chunk (a CRC's) */
	done = j->done || unqueue(j);
	j->dropped = 1;
	atomic_store(&j->cancel, 1);
	if (j->late && done && !j->done)
		pool.late--;
	pthread_mutex_unlock(&pool.lock);
	if (done)
		job_free(j);
}

/* A counter of the pool, read under its lock. */
static unsigned pool_count(const unsigned *counter)
{
	unsigned n;

	pthread_mutex_lock(&pool.lock);
	n = *counter;
	pthread_mutex_unlock(&pool.lock);
	return n;
}

unsigned gt_sym_loader_threads(void)
{
	return pool_count(&pool.threads);
}

uint64_t gt_sym_loads_ended(void)
{
	return atomic_load(&loads_ended);
}

void gt_sym_loader_budget(unsigned per_uid)
{
	pthread_mutex_lock(&pool.lock);
	per_uid_max = per_uid ? per_uid : GT_SYM_LOADERS_MAX;
	pthread_mutex_unlock(&pool.lock);
	/* a larger budget lets queued loads start: threads look again */
	pthread_once(&pool_once, pool_init);
	pthread_mutex_lock(&pool.lock);
	for (const struct gt_sym_job *j = pool.head; j; j = j->next)
		if (uid_may_run(j)) {
			add_thread();
			pool.woken = pool.idle;
			pthread_cond_broadcast(&pool.work);
			break;
		}
	pthread_mutex_unlock(&pool.lock);
}

void gt_sym_loads_now(unsigned *running, unsigned *queued)
{
	unsigned n = 0;

	pthread_mutex_lock(&pool.lock);
	for (const struct gt_sym_job *j = pool.head; j; j = j->next)
		n++;
	*running = pool.busy;
	*queued = n;
	pthread_mutex_unlock(&pool.lock);
}

unsigned gt_sym_loads_late(void)
{
	return pool_count(&pool.late);
}

int gt_sym_loader_idle(uint64_t max_ns)
{
	uint64_t until = gt_now_ns() + max_ns;
	struct timespec ts = { (time_t)(until / 1000000000ull), (long)(until % 1000000000ull) };
	int idle;

	pthread_once(&pool_once, pool_init);
	pthread_mutex_lock(&pool.lock);
	while ((pool.head || pool.busy) && gt_now_ns() < until)
		pthread_cond_timedwait(&pool.done, &pool.lock, &ts);
	idle = !pool.head && !pool.busy;
	pthread_mutex_unlock(&pool.lock);
	return idle;
}

int gt_sym_calls_fd(void)
{
	pthread_mutex_lock(&pool.lock);
	if (calls_efd < 0)
		calls_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pthread_mutex_unlock(&pool.lock);
	return calls_efd < 0 ? -errno : calls_efd;
}

void gt_sym_calls_ack(void)
{
	uint64_t n;

	if (calls_efd >= 0 && read(calls_efd, &n, sizeof(n)) < 0) {
		/* EAGAIN: no call ended since */
	}
}
