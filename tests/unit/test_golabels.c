/* pprof labels of a Go goroutine (sym/golabels.c, engine/golabels.c): a
 * runtime.hmap of a map[string]string laid out in a file that stands for
 * the process's memory (pread at the address, as /proc/PID/mem), then the
 * engine's cache on this very process's memory. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "gt_test.h"
#include "engine/golabels.h"
#include "sym/loader.h"
#include "sym/golabels.h"

#define MAP     0x1000ull
#define BUCKETS 0x2000ull
#define OLD     0x4000ull
#define STRINGS 0x8000ull

static int mem_fd(void)
{
	char path[] = "/tmp/gt_golabels_XXXXXX";
	int fd = mkstemp(path);

	if (fd >= 0)
		unlink(path);
	return fd;
}

static void put(int fd, uint64_t at, const void *p, size_t n)
{
	GT_REQUIRE(pwrite(fd, p, n, (off_t)at) == (ssize_t)n, "pwrite");
}

static void put64(int fd, uint64_t at, uint64_t v)
{
	put(fd, at, &v, sizeof(v));
}

static uint64_t strings_at = STRINGS;

/* A Go string (pointer, length) at `at` whose bytes are s. */
static void put_string(int fd, uint64_t at, const char *s)
{
	put64(fd, at, strings_at);
	put64(fd, at + 8, strlen(s));
	put(fd, strings_at, s, strlen(s));
	strings_at += strlen(s) + 8;
}

static void put_entry(int fd, uint64_t bucket, int slot, uint8_t tophash, const char *k,
		      const char *v)
{
	put(fd, bucket + (uint64_t)slot, &tophash, 1);
	put_string(fd, bucket + 8 + 16 * (uint64_t)slot, k);
	put_string(fd, bucket + 136 + 16 * (uint64_t)slot, v);
}

static void put_hmap(int fd, uint64_t count, uint8_t b, uint32_t hash0, uint64_t buckets,
		     uint64_t old)
{
	put64(fd, MAP, count);
	put(fd, MAP + 9, &b, 1);
	put(fd, MAP + 12, &hash0, 4);
	put64(fd, MAP + 16, buckets);
	put64(fd, MAP + 24, old);
}

/* Two labels in one bucket, sorted by key; another map at that address
 * (a different seed or count) is not read as the first. */
static void test_one_bucket(void)
{
	int fd = mem_fd();
	char out[256];

	GT_REQUIRE(fd >= 0, "mkstemp");
	put_hmap(fd, 2, 0, 0xabcd, BUCKETS, 0);
	put_entry(fd, BUCKETS, 0, 9, "worker", "3");
	put_entry(fd, BUCKETS, 5, 200, "handler", "/api");
	put64(fd, BUCKETS + 264, 0);
	GT_CHECK(gt_golabels_read(fd, MAP, 0xabcd, 2, out, sizeof(out)) > 0 &&
		 !strcmp(out, "{handler=/api, worker=3}"), "got '%s'", out);
	GT_CHECK(gt_golabels_read(fd, MAP, 0xabce, 2, out, sizeof(out)) == -ESRCH, "seed");
	GT_CHECK(gt_golabels_read(fd, MAP, 0xabcd, 3, out, sizeof(out)) == -ESRCH, "count");
	GT_CHECK(gt_golabels_read(fd, 0x7fff0000ull, 0xabcd, 2, out, sizeof(out)) == -EIO,
		 "a read past the memory");
	/* cut to fit the caller's buffer, NUL-terminated */
	GT_CHECK(gt_golabels_read(fd, MAP, 0xabcd, 2, out, 10) == 9 && !strcmp(out, "{handler="),
		 "cut: '%s'", out);
	close(fd);
}

/* A map still growing: entries not moved yet are in the old buckets
 * (half as many), moved ones (tophash 2 to 4) only in the new; empty
 * slots (0, 1) are none.  Long and unprintable bytes are bounded. */
static void test_growing_and_bounded(void)
{
	int fd = mem_fd();
	char out[512], big[300];

	GT_REQUIRE(fd >= 0, "mkstemp");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	put_hmap(fd, 3, 1, 7, BUCKETS, OLD);
	put_entry(fd, BUCKETS, 0, 6, "a", "1");
	put_entry(fd, BUCKETS + 272, 2, 6, "b", "two\nlines");
	put_entry(fd, OLD, 0, 2, "a", "1"); /* evacuated: not twice */
	put_entry(fd, OLD, 1, 7, "c", big);
	put_entry(fd, OLD, 3, 1, "gone", "x");
	GT_CHECK(gt_golabels_read(fd, MAP, 7, 3, out, sizeof(out)) > 0, "read");
	GT_CHECK(!strncmp(out, "{a=1, b=two?lines, c=xxx", 24) && strstr(out, "xxx...}") &&
		 strlen(out) == strlen("{a=1, b=two?lines, c=...}") + GT_GOLABELS_STR_MAX,
		 "got '%s'", out);
	close(fd);
}

/* What its owner wrote decides nothing unbounded: a huge B, a count past
 * the bound, an overflow chain that loops. */
static void test_hostile(void)
{
	int fd = mem_fd();
	char out[256];

	GT_REQUIRE(fd >= 0, "mkstemp");
	put_hmap(fd, 1, 30, 1, BUCKETS, 0);
	GT_CHECK(gt_golabels_read(fd, MAP, 1, 1, out, sizeof(out)) == -E2BIG, "B 30");
	put_hmap(fd, 1000, 0, 1, BUCKETS, 0);
	GT_CHECK(gt_golabels_read(fd, MAP, 1, 1000, out, sizeof(out)) == -E2BIG, "count");
	put_hmap(fd, 1, 0, 1, BUCKETS, 0);
	put_entry(fd, BUCKETS, 0, 9, "k", "v");
	put64(fd, BUCKETS + 264, BUCKETS); /* its own overflow */
	GT_CHECK(gt_golabels_read(fd, MAP, 1, 1, out, sizeof(out)) == -E2BIG, "a loop");
	close(fd);
}

/* The source's answer for a map, once its read (on a loader thread) has
 * answered: asked again until then, as each log would. */
static int labels_answered(const struct gt_golabels_source *src, uint32_t tgid, uint64_t map,
			   uint32_t seed, char *out, size_t len)
{
	int r = -EAGAIN;

	for (int i = 0; i < 5000 && r == -EAGAIN; i++) {
		r = src->labels(src->ctx, tgid, map, seed, 1, out, len);
		if (r == -EAGAIN)
			usleep(1000);
	}
	return r;
}

/* The engine's source on this process's own memory, read on a loader
 * thread: the first ask posts the read and answers at once that it has
 * no text yet; once read, from the cache; a gone process or a bad
 * address gives nothing. */
static void test_source(void)
{
	static unsigned char mem[4096] __attribute__((aligned(16)));
	static const char k[] = "route", v[] = "/x";
	uint64_t base = (uint64_t)(uintptr_t)mem;
	struct gt_golabels gl = {0};
	const struct gt_golabels_source *src = gt_golabels_source(&gl);
	uint32_t seed = 42, self = (uint32_t)getpid();
	uint64_t w;
	char out[128];

	w = 1, memcpy(mem, &w, 8);
	memcpy(mem + 12, &seed, 4);
	w = base + 64, memcpy(mem + 16, &w, 8);
	mem[64] = 8;
	w = (uint64_t)(uintptr_t)k, memcpy(mem + 64 + 8, &w, 8);
	w = 5, memcpy(mem + 64 + 16, &w, 8);
	w = (uint64_t)(uintptr_t)v, memcpy(mem + 64 + 136, &w, 8);
	w = 2, memcpy(mem + 64 + 144, &w, 8);
	GT_CHECK(labels_answered(src, self, base, seed, out, sizeof(out)) > 0 &&
		 !strcmp(out, "{route=/x}"), "got '%s'", out);
	mem[64] = 0; /* changed under the cache: still the text read */
	GT_CHECK(src->labels(src->ctx, self, base, seed, 1, out, sizeof(out)) > 0 &&
		 gl.reads == 1, "read %llu times", (unsigned long long)gl.reads);
	gt_golabels_forget(&gl, self);
	GT_CHECK(labels_answered(src, self, base, seed, out, sizeof(out)) > 0 &&
		 !strcmp(out, "{}") && gl.reads == 2, "after forget: '%s'", out);
	GT_CHECK(labels_answered(src, self, 0x10, seed, out, sizeof(out)) < 0 &&
		 gl.pending == 0, "bad address");
	gt_golabels_free(&gl);
}

/* Maps that share a set live side by side: 32 maps asked in turn, three
 * rounds, are read once each and each answers (direct-mapped,
 * the 32 took 256 slots, and two in one, most runs, evicted each other
 * at every turn: their logs waited for a read again and again). */
static void test_many_maps(void)
{
	enum { N = 32 };
	static unsigned char mem[N][64] __attribute__((aligned(16)));
	struct gt_golabels gl = {0};
	const struct gt_golabels_source *src = gt_golabels_source(&gl);
	uint32_t self = (uint32_t)getpid();
	uint32_t seeds[N], x = 2463534242u; /* Go's seeds are random: xorshift's */
	uint64_t w = 1;
	char out[64];
	int ok = 0;

	for (uint32_t i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		seeds[i] = x;
		memcpy(mem[i], &w, 8);
		memcpy(mem[i] + 12, &seeds[i], 4);
	}
	for (int round = 0; round < 3; round++)
		for (uint32_t i = 0; i < N; i++)
			ok += labels_answered(src, self, (uint64_t)(uintptr_t)mem[i], seeds[i],
					      out, sizeof(out)) > 0 && !strcmp(out, "{}");
	GT_CHECK(ok == 3 * N && gl.reads == N, "%d of %d answered, %llu reads for %d maps", ok,
		 3 * N, (unsigned long long)gl.reads, N);
	gt_golabels_free(&gl);
}

/* The capture's side (gt_golabels_want, gt_golabels_poll): a new map is
 * waited for from its record's ts until it answers; the same map again
 * adds no read; a read that outlives GT_GOLABELS_HOLD_NS stops the wait
 * and its process is not waited for again until one of its reads
 * answers. */
static void test_hold(void)
{
	static unsigned char mem[64] __attribute__((aligned(16)));
	uint64_t base = (uint64_t)(uintptr_t)mem, w = 1, now;
	struct gt_golabels gl = {0};
	uint32_t seed = 7, self = (uint32_t)getpid();
	struct pollfd pfd = {.fd = gt_sym_calls_fd(), .events = POLLIN};
	int i;

	memcpy(mem, &w, 8);
	memcpy(mem + 12, &seed, 4); /* no buckets: "{}" once read */
	GT_REQUIRE(pfd.fd >= 0, "calls fd");
	gt_sym_calls_ack();
	GT_CHECK(gt_golabels_want(&gl, self, base, seed, 1, 1000) == 1, "a new map is waited for");
	/* the read's end wakes whoever polls the calls (gotraced's loop) */
	GT_CHECK(poll(&pfd, 1, 10000) == 1, "no wakeup at the read's end");
	GT_CHECK(gt_golabels_want(&gl, self, base, seed, 1, 2000) == 1 && gl.reads == 1,
		 "the same map: one read, %llu", (unsigned long long)gl.reads);
	for (i = 0; i < 5000 && gt_golabels_poll(&gl, gt_now_ns()) == 1000; i++)
		usleep(1000);
	GT_CHECK(gt_golabels_poll(&gl, gt_now_ns()) == UINT64_MAX && gl.pending == 0,
		 "answered: no hold");
	GT_CHECK(gt_golabels_want(&gl, self, base, seed, 1, 3000) == 0, "answered: no wait");
	/* past the deadline (as if the read never answered; it may have,
	 * then nothing is held either): no hold */
	GT_CHECK(gt_golabels_want(&gl, self, base + 16, seed, 1, 4000) == 1, "another map");
	now = gt_now_ns() + 2 * GT_GOLABELS_HOLD_NS;
	if (gl.pending)
		GT_CHECK(gt_golabels_poll(&gl, now) == UINT64_MAX, "past the deadline: no hold");
	gt_golabels_free(&gl);
}

int main(void)
{
	GT_RUN(test_one_bucket);
	GT_RUN(test_growing_and_bounded);
	GT_RUN(test_hostile);
	GT_RUN(test_source);
	GT_RUN(test_hold);
	GT_RUN(test_many_maps);
	return gt_test_done();
}
