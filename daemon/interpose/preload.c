/* build/libgotraced-heap.so: counts the live heap bytes of the process it
 * is preloaded into (LD_PRELOAD, set by `gotracectl record -- CMD` with
 * --heap interpose) into the shared record of heap_shm.h.
 *
 * Every malloc-family function is passed to the next definition in the
 * search order (glibc, or a jemalloc/tcmalloc the program links) and the
 * allocator's own usable size of each block is added or subtracted: no
 * header, no pointer of ours, so a block allocated before we started, or
 * by an allocator entry point we do not wrap (mallocx, tc_new), can never
 * crash a free; it only goes uncounted.  Counted bytes are usable bytes
 * (what Go's HeapAlloc counts too: object bytes rounded up by the
 * allocator), not the sizes asked for.
 *
 * Fast path: one thread-local pointer test and a relaxed load + store to
 * the thread's own slot.  Slow paths: a thread's first allocation (claims
 * a slot), thread exit (folds it into the process's base slot), fork (the
 * child gets its own accounting, starting from the parent's at the fork),
 * exec (the new image starts from zero; LD_PRELOAD stays in the
 * environment, so the new image is counted again).
 *
 * Allocation samples (--alloc-stacks N): a per-thread countdown; every
 * Nth allocation takes its stack with backtrace() (the unwinder needs no
 * frame pointers; warmed up at start so that its first-use dlopen does not
 * happen inside a malloc) and writes it to the record's ring.
 *
 * This file must not link the daemon's code: libc only. */
#include <dlfcn.h>
#include <execinfo.h>
#include <sched.h>
#include <time.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heap_shm.h"

#define EXPORT __attribute__((visibility("default")))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

struct real_fns {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*memalign)(size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	size_t (*usable)(void *);
};

static struct real_fns real;
static struct gt_heap_shm *shm;     /* NULL: not counting */
static struct gt_heap_slot *base;   /* this process's base slot */
static int32_t me;                  /* this process's pid */
static pthread_key_t exit_key;
static int64_t fork_live;           /* the parent's live bytes at fork */
static uint32_t sample_every;       /* 0 = no samples */

/* 0 = no slot yet; 1 = tslot is ours; 2 = count into the base slot
 * (no slot free, or the thread is exiting) */
static __thread struct gt_heap_slot *tslot __attribute__((tls_model("initial-exec")));
static __thread int tstate __attribute__((tls_model("initial-exec")));
static __thread int64_t tcountdown __attribute__((tls_model("initial-exec")));
static __thread int tsampling __attribute__((tls_model("initial-exec")));

/* ---- bootstrap: dlsym may allocate before the real functions are known */

static _Alignas(16) char boot[16384];
static size_t boot_used;
static int resolving;
/* malloc_is_ours: set while it calls the malloc everyone calls, and what
 * ours saw of that call */
static int probing, probe_hit;

static int in_boot(const void *p)
{
	return (const char *)p >= boot && (const char *)p < boot + sizeof(boot);
}

static void *boot_alloc(size_t n)
{
	size_t at = (boot_used + 15) & ~(size_t)15;

	if (n > sizeof(boot) - at)
		return NULL;
	boot_used = at + n;
	return boot + at; /* static storage: already zero */
}

static void resolve(void)
{
	resolving = 1;
	real.malloc = dlsym(RTLD_NEXT, "malloc");
	real.free = dlsym(RTLD_NEXT, "free");
	real.calloc = dlsym(RTLD_NEXT, "calloc");
	real.realloc = dlsym(RTLD_NEXT, "realloc");
	real.memalign = dlsym(RTLD_NEXT, "memalign");
	real.posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
	real.aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
	real.valloc = dlsym(RTLD_NEXT, "valloc");
	real.pvalloc = dlsym(RTLD_NEXT, "pvalloc");
	real.usable = dlsym(RTLD_NEXT, "malloc_usable_size");
	resolving = 0;
	if (!real.malloc || !real.free || !real.calloc || !real.realloc) {
		static const char msg[] = "libgotraced-heap: no malloc after this library: abort\n";

		if (write(2, msg, sizeof(msg) - 1) < 0)
			_exit(127);
		_exit(127);
	}
}

/* ---- slots -------------------------------------------------------------- */

static void publish_used(uint32_t n)
{
	uint32_t u = atomic_load_explicit(&shm->used, memory_order_relaxed);

	while (u < n && !atomic_compare_exchange_weak(&shm->used, &u, n))
		;
}

/* Takes slot s from owner `from` (0 or a dead process) for tgid/tid. */
static struct gt_heap_slot *take(struct gt_heap_slot *s, uint32_t i, int32_t from, int32_t tgid,
				 int32_t tid, int64_t live)
{
	if (!atomic_compare_exchange_strong(&s->tgid, &from, -1))
		return NULL;
	s->tid = tid;
	atomic_store_explicit(&s->live, live, memory_order_relaxed);
	publish_used(i + 1);
	atomic_store_explicit(&s->tgid, tgid, memory_order_release);
	return s;
}

static int dead(int32_t pid)
{
	return pid > 0 && kill(pid, 0) < 0 && errno == ESRCH;
}

/* A free slot, else one of a process that is gone; NULL if none. */
static struct gt_heap_slot *claim(int32_t tgid, int32_t tid, int64_t live)
{
	int saved = errno;
	struct gt_heap_slot *s = NULL;

	for (uint32_t i = 0; i < GT_HEAP_SHM_SLOTS && !s; i++)
		if (atomic_load_explicit(&shm->slot[i].tgid, memory_order_relaxed) == 0)
			s = take(&shm->slot[i], i, 0, tgid, tid, live);
	for (uint32_t i = 0; i < GT_HEAP_SHM_SLOTS && !s; i++) {
		int32_t t = atomic_load_explicit(&shm->slot[i].tgid, memory_order_relaxed);

		if (t != tgid && dead(t))
			s = take(&shm->slot[i], i, t, tgid, tid, live);
	}
	if (!s)
		atomic_fetch_add(&shm->full, 1);
	errno = saved;
	return s;
}

/* Slots left by an earlier image of this pid (before exec) or an earlier
 * process that had it: their memory is gone. */
static void release_stale(int32_t tgid)
{
	for (uint32_t i = 0; i < GT_HEAP_SHM_SLOTS; i++) {
		struct gt_heap_slot *s = &shm->slot[i];
		int32_t t = tgid;

		if (atomic_load_explicit(&s->tgid, memory_order_relaxed) != tgid ||
		    !atomic_compare_exchange_strong(&s->tgid, &t, -1))
			continue;
		atomic_store_explicit(&s->live, 0, memory_order_relaxed);
		atomic_store_explicit(&s->tgid, 0, memory_order_release);
	}
}

/* Thread exit: its bytes move to the base slot (memory it allocated may be
 * freed by another thread), its slot is free again. */
static void thread_exit(void *arg)
{
	struct gt_heap_slot *s = arg;

	tslot = NULL;
	tstate = 2;
	if (!s || !shm || !base)
		return;
	atomic_fetch_add(&base->live, atomic_exchange(&s->live, 0));
	atomic_store_explicit(&s->tgid, 0, memory_order_release);
}

/* ---- counting ------------------------------------------------------------ */

static void account_slow(int64_t d)
{
	if (!shm)
		return;
	if (tstate == 0) {
		tstate = 2; /* allocations made while claiming go to the base */
		tslot = claim(me, (int32_t)gettid(), 0);
		if (tslot) {
			pthread_setspecific(exit_key, tslot);
			tstate = 1;
			atomic_store_explicit(&tslot->live, d, memory_order_relaxed);
			return;
		}
	}
	if (base)
		atomic_fetch_add(&base->live, d);
}

static inline void account(int64_t d)
{
	struct gt_heap_slot *s = tslot;

	if (LIKELY(s)) {
		/* one writer per thread slot: no locked instruction */
		int64_t v = atomic_load_explicit(&s->live, memory_order_relaxed);

		atomic_store_explicit(&s->live, v + d, memory_order_relaxed);
		return;
	}
	account_slow(d);
}

static inline int64_t usable(void *p)
{
	return p && real.usable ? (int64_t)real.usable(p) : 0;
}

/* ---- allocation samples ------------------------------------------------- */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Frames of backtrace() that are ours: sample() and the malloc wrapper. */
#define OWN_FRAMES 2

__attribute__((noinline)) static void sample(void *p, size_t n)
{
	void *pcs[GT_HEAP_SAMPLE_PCS + OWN_FRAMES];
	struct gt_heap_sample *e;
	uint64_t i;
	int got;

	tcountdown = sample_every;
	if (tsampling || !shm)
		return; /* an allocation of the unwinder itself */
	tsampling = 1;
	got = backtrace(pcs, GT_HEAP_SAMPLE_PCS + OWN_FRAMES);
	i = atomic_fetch_add(&shm->head, 1);
	e = &gt_heap_shm_ring(shm)[i % GT_HEAP_RING];
	atomic_store_explicit(&e->seq, 2 * i + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	e->ts = mono_ns();
	e->tgid = me;
	e->tid = (int32_t)gettid();
	e->cpu = (uint32_t)sched_getcpu();
	e->size = n;
	e->addr = (uint64_t)(uintptr_t)p;
	e->npcs = got > OWN_FRAMES ? (uint32_t)(got - OWN_FRAMES) : 0;
	for (uint32_t k = 0; k < e->npcs; k++)
		e->pcs[k] = (uint64_t)(uintptr_t)pcs[k + OWN_FRAMES];
	atomic_store_explicit(&e->seq, 2 * i + 2, memory_order_release);
	tsampling = 0;
}

/* Counts an allocation of n bytes (asked) at p, and samples it. */
static inline __attribute__((always_inline)) void allocated(void *p, size_t n)
{
	account(usable(p));
	if (UNLIKELY(sample_every) && --tcountdown <= 0)
		sample(p, n);
}

/* ---- fork and startup ------------------------------------------------------ */

static void before_fork(void)
{
	int found;

	fork_live = shm ? gt_heap_shm_live(shm, me, &found) : 0;
}

/* The child has a copy of every block: it starts from the parent's count
 * (exact for a single-threaded parent; other threads of the parent may be
 * mid-update) in slots of its own. */
static void child_after_fork(void)
{
	tslot = NULL;
	tstate = 0;
	pthread_setspecific(exit_key, NULL);
	if (!shm)
		return;
	me = (int32_t)getpid();
	release_stale(me);
	base = claim(me, 0, fork_live);
}

/* The record named by GT_HEAP_SHM_ENV_FD, if it is one; else NULL. */
static struct gt_heap_shm *map_record(void)
{
	const char *env = getenv(GT_HEAP_SHM_ENV_FD);
	struct gt_heap_shm *h;
	struct stat st;
	char *end;
	long fd;

	if (!env || !*env)
		return NULL;
	fd = strtol(env, &end, 10);
	if (*end || fd < 0 || fd > 1 << 20 || fstat((int)fd, &st) < 0 ||
	    (size_t)st.st_size != GT_HEAP_SHM_BYTES)
		return NULL; /* closed, or some other file took its number */
	h = mmap(NULL, GT_HEAP_SHM_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	if (h == MAP_FAILED)
		return NULL;
	if (h->magic != GT_HEAP_SHM_MAGIC || h->version != GT_HEAP_SHM_VERSION ||
	    h->nslots != GT_HEAP_SHM_SLOTS) {
		munmap(h, GT_HEAP_SHM_BYTES);
		return NULL;
	}
	return h;
}

/* Whether the malloc everyone calls is ours: a program (or a library
 * preloaded before us) with its own malloc and free never calls ours.
 * Asked by calling it, not by where its address lies: a program that
 * takes malloc's address (python3, non-PIE) defines malloc's canonical
 * address as a PLT stub of its own, which dladdr names as the program,
 * though the stub jumps to ours. */
static int malloc_is_ours(void)
{
	void *(*m)(size_t) = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "malloc");
	void (*f)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "free");
	void *p;

	if (!m || !f)
		return 0;
	probe_hit = 0;
	probing = 1;
	p = m(1);
	probing = 0;
	f(p); /* the free that goes with that malloc, ours or theirs */
	return probe_hit;
}

__attribute__((constructor(101))) static void gt_heap_start(void)
{
	struct gt_heap_shm *h;

	if (!real.malloc)
		resolve();
	h = map_record();
	if (!h)
		return;
	if (!malloc_is_ours()) {
		atomic_fetch_add(&h->bypassed, 1);
		munmap(h, GT_HEAP_SHM_BYTES);
		return;
	}
	if (pthread_key_create(&exit_key, thread_exit) ||
	    pthread_atfork(before_fork, NULL, child_after_fork)) {
		munmap(h, GT_HEAP_SHM_BYTES);
		return;
	}
	if (h->sample_every) {
		void *warm[4];

		backtrace(warm, 4); /* loads the unwinder now, not inside a malloc */
		sample_every = h->sample_every;
	}
	shm = h;
	me = (int32_t)getpid();
	release_stale(me);
	base = claim(me, 0, 0);
}

/* ---- the malloc family ------------------------------------------------------ */

EXPORT void *malloc(size_t n)
{
	void *p;

	if (!real.malloc) {
		if (resolving)
			return boot_alloc(n);
		resolve();
	}
	if (__builtin_expect(probing, 0))
		probe_hit = 1;
	p = real.malloc(n);
	if (p)
		allocated(p, n);
	return p;
}

EXPORT void free(void *p)
{
	if (!p || in_boot(p))
		return;
	if (!real.free)
		resolve();
	account(-usable(p));
	real.free(p);
}

EXPORT void *calloc(size_t n, size_t m)
{
	void *p;

	if (!real.calloc) {
		if (resolving)
			return n && m > SIZE_MAX / n ? NULL : boot_alloc(n * m);
		resolve();
	}
	p = real.calloc(n, m);
	if (p)
		allocated(p, n * m);
	return p;
}

/* A block of the bootstrap area moves to the real heap. */
static void *from_boot(void *p, size_t n)
{
	size_t room = (size_t)(boot + sizeof(boot) - (char *)p);
	void *q = malloc(n);

	if (q)
		memcpy(q, p, n < room ? n : room);
	return q;
}

EXPORT void *realloc(void *p, size_t n)
{
	int64_t before;
	void *q;

	if (!p)
		return malloc(n);
	if (in_boot(p))
		return from_boot(p, n);
	if (!real.realloc)
		resolve();
	before = usable(p);
	q = real.realloc(p, n);
	if (q) {
		account(usable(q) - before);
		if (UNLIKELY(sample_every) && --tcountdown <= 0)
			sample(q, n);
	}
	else if (n == 0)
		account(-before); /* glibc: realloc(p, 0) freed p */
	return q;
}

EXPORT void *reallocarray(void *p, size_t n, size_t m)
{
	if (n && m > SIZE_MAX / n) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, n * m);
}

/* The aligned allocators: passed on (when the next allocator has them) and
 * counted like malloc. */
#define COUNTED(call, n)                     \
	do {                                 \
		void *p_;                    \
		if (!real.malloc)            \
			resolve();           \
		p_ = (call);                 \
		if (p_)                      \
			allocated(p_, n);    \
		return p_;                   \
	} while (0)

EXPORT void *memalign(size_t align, size_t n)
{
	COUNTED(real.memalign ? real.memalign(align, n) : NULL, n);
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
	COUNTED(real.aligned_alloc ? real.aligned_alloc(align, n)
		: real.memalign ? real.memalign(align, n) : NULL, n);
}

EXPORT void *valloc(size_t n)
{
	COUNTED(real.valloc ? real.valloc(n) : NULL, n);
}

EXPORT void *pvalloc(size_t n)
{
	COUNTED(real.pvalloc ? real.pvalloc(n) : NULL, n);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	int rc;

	if (!real.malloc)
		resolve();
	if (!real.posix_memalign)
		return ENOMEM;
	rc = real.posix_memalign(out, align, n);
	if (rc == 0)
		allocated(*out, n);
	return rc;
}

EXPORT size_t malloc_usable_size(void *p)
{
	if (!p)
		return 0;
	if (in_boot(p))
		return (size_t)(boot + sizeof(boot) - (char *)p);
	if (!real.malloc)
		resolve();
	return real.usable ? real.usable(p) : 0;
}
