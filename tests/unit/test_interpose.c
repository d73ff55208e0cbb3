// tier: system (BPF, root or real programs: not in make check-unit)
/* --heap interpose without BPF: the heap record's layout and sums
 * (interpose/heap_shm.h), the recorder's reader (memtrack/interpose.c),
 * and build/libgotraced-heap.so inside real programs (workloads/heap_mix):
 * exact usable bytes across threads, fork and exec, and beside jemalloc
 * and tcmalloc (LD_PRELOAD order). */
#include <errno.h>
#include <inttypes.h>

#include "heap_shm_util.h"
#include "memtrack/interpose.h"

#define JEMALLOC "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
#define TCMALLOC "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"

/* ---- the record ---- */

static void test_shm_create(void)
{
	int fd = gt_heap_shm_create(0);
	struct gt_heap_shm *h;
	struct stat st;

	GT_REQUIRE(fd >= 0, "gt_heap_shm_create: %s", strerror(-fd));
	GT_CHECK(fstat(fd, &st) == 0 && (size_t)st.st_size == GT_HEAP_SHM_BYTES,
		 "size %lld, want %zu", (long long)st.st_size, (size_t)GT_HEAP_SHM_BYTES);
	GT_CHECK(!(fcntl(fd, F_GETFD) & FD_CLOEXEC), "the record must survive exec");
	h = mmap(NULL, GT_HEAP_SHM_BYTES, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	GT_REQUIRE(h != MAP_FAILED, "mmap: %s", strerror(errno));
	GT_CHECK(h->magic == GT_HEAP_SHM_MAGIC && h->version == GT_HEAP_SHM_VERSION &&
		 h->nslots == GT_HEAP_SHM_SLOTS, "header %" PRIx64 " v%u %u slots", h->magic,
		 h->version, h->nslots);
	GT_CHECK(atomic_load(&h->used) == 0, "a fresh record has %u used slots",
		 atomic_load(&h->used));
	munmap(h, GT_HEAP_SHM_BYTES);
}

static void set_slot(struct gt_heap_shm *h, int i, int32_t tgid, int64_t live)
{
	atomic_store(&h->slot[i].tgid, tgid);
	atomic_store(&h->slot[i].live, live);
}

static void test_shm_sums(void)
{
	struct gt_heap_shm *h = calloc(1, GT_HEAP_SHM_BYTES);
	int found;
	int64_t v;

	GT_REQUIRE(h, "out of memory");
	gt_heap_shm_init(h, 0);
	set_slot(h, 0, 100, 10);   /* base slot of 100 */
	set_slot(h, 1, 100, -3);   /* a thread that freed more than it allocated */
	set_slot(h, 2, 200, 7);
	set_slot(h, 3, -1, 1000);  /* being claimed: not anyone's yet */
	set_slot(h, 5, 100, 50);   /* past `used`: not read */
	atomic_store(&h->used, 4);
	v = gt_heap_shm_live(h, 100, &found);
	GT_CHECK(found && v == 7, "pid 100: %" PRId64 " (found %d), want 7", v, found);
	v = gt_heap_shm_live(h, 200, &found);
	GT_CHECK(found && v == 7, "pid 200: %" PRId64 ", want 7", v);
	v = gt_heap_shm_live(h, 300, &found);
	GT_CHECK(!found && v == 0, "pid 300 has no slot: %" PRId64 " found %d", v, found);
	/* a record a program scribbled on: never read past the slots */
	atomic_store(&h->used, 0xffffffffu);
	v = gt_heap_shm_live(h, 100, &found);
	GT_CHECK(v == 57, "corrupt used: %" PRId64 ", want 57 (all slots, no more)", v);
	free(h);
}

/* ---- the reader on real programs ---- */

struct seen {
	int32_t tgid[16];
	int64_t live[16];
	int n, events, bad;
};

static int collect(void *ctx, const struct gt_kev_hdr *ev, size_t len)
{
	struct seen *s = ctx;
	const struct gt_kev_heap *h = (const void *)ev;
	int i;

	s->events++;
	if (ev->type != GT_KEV_HEAP || len != sizeof(*h) || ev->sessions != 1u << 3 ||
	    ev->tid != ev->tgid) {
		s->bad++;
		return 0;
	}
	for (i = 0; i < s->n && s->tgid[i] != (int32_t)ev->tgid; i++)
		;
	if (i == s->n && s->n < 16)
		s->tgid[s->n++] = (int32_t)ev->tgid;
	if (i < 16)
		s->live[i] = (int64_t)h->live_bytes;
	return 0;
}

/* tgid's live bytes as the reader last delivered them (-1: never). */
static int64_t value_of(struct gt_mt_interpose *ip, struct seen *s, pid_t tgid)
{
	gt_mt_interpose_poll(ip, NULL, 3, 1, collect, s);
	for (int i = 0; i < s->n; i++)
		if (s->tgid[i] == (int32_t)tgid)
			return s->live[i];
	return -1;
}

/* Spawns heap_mix MODE with the interposer and opens its record. */
static int start_mix_every(struct mt_child *c, const char *mode, const char *before,
			   const char *after, unsigned every, struct gt_mt_interpose **ip,
			   char *why, size_t whylen)
{
	static char path[600];
	char *argv[] = { path, "--wait", (char *)mode, NULL };
	char line[256];
	int shm, rc;

	snprintf(path, sizeof(path), "%s/workloads/heap_mix", mt_build);
	rc = mt_spawn_interposed(c, argv, before, after, every, &shm);
	if (shm >= 0)
		close(shm);
	if (rc || mt_expect(c, "pid", line, sizeof(line), 10000) ||
	    mt_expect(c, "ready", line, sizeof(line), 10000)) {
		snprintf(why, whylen, "heap_mix %s did not start", mode);
		return -1;
	}
	rc = gt_mt_interpose_open(c->target, ip, why, whylen);
	return rc;
}

static int start_mix(struct mt_child *c, const char *mode, const char *before,
		     const char *after, struct gt_mt_interpose **ip, char *why, size_t whylen)
{
	return start_mix_every(c, mode, before, after, 0, ip, why, whylen);
}

/* Reads lines until one starts with prefix; its `delta=` into *delta and
 * its first number (a pid) into *pid if asked. */
static int wait_delta(struct mt_child *c, const char *prefix, long *delta, int *pid)
{
	char line[256], fmt[64];

	if (mt_expect(c, prefix, line, sizeof(line), 10000))
		return -1;
	if (pid) {
		snprintf(fmt, sizeof(fmt), "%s %%d delta=%%ld", prefix);
		return sscanf(line, fmt, pid, delta) == 2 ? 0 : -1;
	}
	snprintf(fmt, sizeof(fmt), "%s delta=%%ld", prefix);
	return sscanf(line, fmt, delta) == 1 ? 0 : -1;
}

/* heap_mix threads under the given preload order: the record moves by
 * exactly the workload's usable bytes (want_counted), or the interposer
 * stood aside (another allocator's malloc came first: bypassed). */
static void threads_under(const char *before, const char *after, int want_counted)
{
	struct gt_mt_interpose *ip = NULL;
	struct gt_mt_interpose_stats st;
	struct seen s = { .n = 0 };
	struct mt_child c;
	char why[600];
	int64_t v0, v1;
	long delta = -1;

	GT_REQUIRE(start_mix(&c, "threads", before, after, &ip, why, sizeof(why)) == 0, "%s", why);
	GT_CHECK(mt_expect(&c, "mark before", why, sizeof(why), 10000) == 0, "no mark before");
	v0 = value_of(ip, &s, c.target);
	GT_CHECK(write(c.in, "g", 1) == 1, "cannot start the workload");
	GT_CHECK(wait_delta(&c, "mark after", &delta, NULL) == 0, "no mark after");
	GT_CHECK(mt_expect(&c, "done", why, sizeof(why), 10000) == 0, "no done");
	v1 = value_of(ip, &s, c.target);
	gt_mt_interpose_stats(ip, &st);
	if (want_counted) {
		GT_CHECK(v0 >= 0 && v1 - v0 == delta, "live %" PRId64 " -> %" PRId64
			 ": moved %" PRId64 ", the workload left %ld bytes", v0, v1, v1 - v0, delta);
		/* 4 workers + main + base; an exited thread's slot is free again */
		GT_CHECK(st.slots_used >= 3 && st.full == 0 && st.bypassed == 0,
			 "%u slots used, %u full, %u bypassed", st.slots_used, st.full, st.bypassed);
	} else {
		GT_CHECK(v0 < 0 && v1 < 0 && st.bypassed == 1, "counted (%" PRId64 ", %" PRId64
			 ") though %s came first; bypassed %u", v0, v1, before, st.bypassed);
	}
	GT_CHECK(s.bad == 0, "%d malformed events", s.bad);
	mt_reap(&c);
	gt_mt_interpose_close(ip);
}

static void test_threads_exact(void)
{
	threads_under(NULL, NULL, 1);
}

static void test_jemalloc_after(void)
{
	if (access(JEMALLOC, R_OK)) {
		GT_CHECK(0, "no %s (make deps installs libjemalloc2)", JEMALLOC);
		return;
	}
	threads_under(NULL, JEMALLOC, 1); /* ours passes on to jemalloc */
}

static void test_jemalloc_first(void)
{
	if (access(JEMALLOC, R_OK)) {
		GT_CHECK(0, "no %s (make deps installs libjemalloc2)", JEMALLOC);
		return;
	}
	threads_under(JEMALLOC, NULL, 0); /* jemalloc's malloc wins: we stand aside */
}

static void test_tcmalloc_after(void)
{
	if (access(TCMALLOC, R_OK)) {
		GT_CHECK(0, "no %s (make deps installs libtcmalloc-minimal4)", TCMALLOC);
		return;
	}
	threads_under(NULL, TCMALLOC, 1);
}

/* A forked child counts on its own from the parent's count at the fork. */
static void test_fork_own_accounting(void)
{
	struct gt_mt_interpose *ip = NULL;
	struct seen s = { .n = 0 };
	struct mt_child c;
	char why[600];
	long pdelta = -1, cdelta = -1;
	int child = 0;
	int64_t v0, vp, vc;

	GT_REQUIRE(start_mix(&c, "fork", NULL, NULL, &ip, why, sizeof(why)) == 0, "%s", why);
	GT_CHECK(mt_expect(&c, "mark before", why, sizeof(why), 10000) == 0, "no mark before");
	v0 = value_of(ip, &s, c.target);
	GT_CHECK(write(c.in, "g", 1) == 1, "cannot start the workload");
	/* child and parent lines come in either order */
	for (int got = 0; got < 3 && mt_line(&c, why, sizeof(why), 10000) == 1;) {
		got += sscanf(why, "child %d delta=%ld", &child, &cdelta) == 2;
		got += sscanf(why, "mark after delta=%ld", &pdelta) == 1;
		got += !strcmp(why, "done");
	}
	GT_CHECK(child > 0 && cdelta > 0 && pdelta > 0, "lines: child %d delta %ld, parent %ld",
		 child, cdelta, pdelta);
	vp = value_of(ip, &s, c.target);
	vc = value_of(ip, &s, child);
	GT_CHECK(vp - v0 == pdelta, "parent moved %" PRId64 ", want %ld", vp - v0, pdelta);
	GT_CHECK(vc == v0 + cdelta, "child %d: %" PRId64 ", want %" PRId64 " (the parent's %"
		 PRId64 " at the mark + %ld)", child, vc, v0 + cdelta, v0, cdelta);
	mt_reap(&c);
	gt_mt_interpose_close(ip);
}

/* An exec'd image starts from zero in the same record (LD_PRELOAD and the
 * descriptor survive exec). */
static void test_exec_starts_fresh(void)
{
	struct gt_mt_interpose *ip = NULL;
	struct seen s = { .n = 0 };
	struct mt_child c;
	char why[600];
	long delta = -1;
	int child = 0;
	int64_t v;

	GT_REQUIRE(start_mix(&c, "exec", NULL, NULL, &ip, why, sizeof(why)) == 0, "%s", why);
	GT_CHECK(write(c.in, "g", 1) == 1, "cannot start the workload");
	GT_CHECK(wait_delta(&c, "execd", &delta, &child) == 0, "the exec'd child said nothing");
	v = value_of(ip, &s, child);
	/* its own block, plus whatever libc's start-up keeps: never the 1 MiB
	 * its pre-exec image (the forked parent's copy) held */
	GT_CHECK(v >= delta && v < delta + 64 * 1024, "exec'd child %d: %" PRId64
		 " bytes, want %ld (+ start-up, < 64 KiB)", child, v, delta);
	GT_CHECK(value_of(ip, &s, c.target) >= 1024 * 1024, "the parent lost its 1 MiB");
	mt_reap(&c);
	gt_mt_interpose_close(ip);
}

/* ---- allocation samples ---- */

struct samples {
	struct gt_mt_pcs *pcs;
	pid_t tgid;
	int n, heap, stackless, foreign, sizes[64];
};

static int collect_samples(void *ctx, const struct gt_kev_hdr *ev, size_t len)
{
	struct samples *s = ctx;
	const struct gt_kev_alloc_sample *a = (const void *)ev;
	uint64_t ips[GT_STACK_DEPTH];

	if (ev->type == GT_KEV_HEAP) {
		s->heap++;
		return 0;
	}
	if (ev->type != GT_KEV_ALLOC_SAMPLE || len != sizeof(*a) || ev->tgid != (uint32_t)s->tgid) {
		s->foreign++;
		return 0;
	}
	s->n++;
	if (gt_mt_pcs_get(s->pcs, a->ustack, ips, GT_STACK_DEPTH) <= 0)
		s->stackless++;
	/* heap_mix threads: block j of a thread is 1000 + 16 j bytes */
	if (a->size >= 1000 && a->size < 1000 + 16 * 64 && (a->size - 1000) % 16 == 0)
		s->sizes[(a->size - 1000) / 16]++;
	return 0;
}

/* Every allocation sampled (N = 1): each of the 4 x 64 blocks with a
 * stack, none lost, the same stack interned once. */
static void test_samples(void)
{
	struct gt_mt_interpose *ip = NULL;
	struct gt_mt_interpose_stats st;
	struct samples s = { .n = 0 };
	struct mt_child c;
	char why[600];
	int missing = 0;

	s.pcs = gt_mt_pcs_new();
	GT_REQUIRE(s.pcs, "out of memory");
	GT_REQUIRE(start_mix_every(&c, "threads", NULL, NULL, 1, &ip, why, sizeof(why)) == 0, "%s",
		   why);
	s.tgid = c.target;
	GT_CHECK(mt_expect(&c, "mark before", why, sizeof(why), 10000) == 0, "no mark before");
	GT_CHECK(write(c.in, "g", 1) == 1, "cannot start the workload");
	GT_CHECK(mt_expect(&c, "done", why, sizeof(why), 10000) == 0, "no done");
	gt_mt_interpose_poll(ip, s.pcs, 3, 1, collect_samples, &s);
	gt_mt_interpose_stats(ip, &st);
	for (int j = 0; j < 64; j++)
		missing += s.sizes[j] != 4;
	GT_CHECK(missing == 0, "%d block sizes not sampled exactly 4 times (size 1000: %d)",
		 missing, s.sizes[0]);
	GT_CHECK(s.n >= 256 && (uint64_t)s.n == st.samples && st.samples_lost == 0,
		 "%d samples (stats %" PRIu64 ", lost %" PRIu64 ")", s.n, st.samples,
		 st.samples_lost);
	GT_CHECK(s.stackless == 0 && s.foreign == 0 && s.heap > 0,
		 "%d without a stack, %d foreign events, %d heap events", s.stackless, s.foreign,
		 s.heap);
	mt_reap(&c);
	gt_mt_interpose_close(ip);
	gt_mt_pcs_free(s.pcs);
}

static void test_pcs_intern(void)
{
	struct gt_mt_pcs *t = gt_mt_pcs_new();
	uint64_t a[3] = { 0x1000, 0x2000, 0x3000 }, out[8];
	int32_t x, y, z;

	GT_REQUIRE(t, "out of memory");
	x = gt_mt_pcs_intern(t, 7, a, 3);
	y = gt_mt_pcs_intern(t, 7, a, 3);
	z = gt_mt_pcs_intern(t, 8, a, 3);
	GT_CHECK(x >= 0 && (x & GT_STACK_INTERPOSED) && x == y, "ids %d %d", x, y);
	GT_CHECK(z >= 0 && z != x, "another process shares the id: %d", z);
	GT_CHECK(gt_mt_pcs_get(t, x, out, 8) == 3 && out[2] == 0x3000, "read back");
	GT_CHECK(gt_mt_pcs_get(t, 5, out, 8) == -ENOENT, "a BPF id is not ours");
	GT_CHECK(gt_mt_pcs_intern(t, 7, a, 0) == -1, "an empty stack has no id");
	gt_mt_pcs_free(t);
}

static void test_no_record(void)
{
	struct gt_mt_interpose *ip = (void *)1;
	char why[600] = "";
	int rc = gt_mt_interpose_open(getpid(), &ip, why, sizeof(why));

	GT_CHECK(rc == -ENOENT && !ip, "a process without a record: rc %d", rc);
	GT_CHECK(strstr(why, "no heap record"), "message: %s", why);
}

int main(int argc, char **argv)
{
	mt_find_build(argc, argv);
	GT_RUN(test_shm_create);
	GT_RUN(test_shm_sums);
	GT_RUN(test_no_record);
	GT_RUN(test_threads_exact);
	GT_RUN(test_fork_own_accounting);
	GT_RUN(test_exec_starts_fresh);
	GT_RUN(test_jemalloc_after);
	GT_RUN(test_jemalloc_first);
	GT_RUN(test_tcmalloc_after);
	GT_RUN(test_pcs_intern);
	GT_RUN(test_samples);
	return gt_test_done();
}
