/* The perf record parser (capture/mmap_record.c) and the engine's backlog
 * of records of processes not followed yet (engine/mmap_backlog.c). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/mmap_record.h"
#include "engine/mmap_backlog.h"
#include "gt_test.h"

/* A record as the kernel writes it: header, body, sample_id {pid, tid,
 * time}, the size rounded to 8 like the kernel's. */
struct rec {
	uint8_t b[512];
	size_t n;
};

static void put(struct rec *r, const void *p, size_t n)
{
	memcpy(r->b + r->n, p, n);
	r->n += n;
}

static void put32(struct rec *r, uint32_t v) { put(r, &v, 4); }
static void put64(struct rec *r, uint64_t v) { put(r, &v, 8); }

static void begin(struct rec *r, uint32_t type, uint16_t misc)
{
	memset(r, 0, sizeof(*r));
	put32(r, type);
	put(r, &misc, 2);
	r->n += 2; /* size, set by finish */
}

static void put_string(struct rec *r, const char *s)
{
	size_t n = strlen(s) + 1;

	put(r, s, n);
	r->n = (r->n + 7) & ~(size_t)7;
}

static void finish(struct rec *r, uint32_t pid, uint64_t ts)
{
	uint16_t size;

	put32(r, pid);
	put32(r, pid + 1);
	put64(r, ts);
	size = (uint16_t)r->n;
	memcpy(r->b + 6, &size, 2);
}

static void mmap2(struct rec *r, uint16_t misc, const char *path)
{
	begin(r, 10, misc);
	put32(r, 42);          /* pid */
	put32(r, 43);          /* tid */
	put64(r, 0x7f0000001000);
	put64(r, 0x3000);      /* len */
	put64(r, 0x2000);      /* pgoff */
	put32(r, 254);         /* maj */
	put32(r, 1);           /* min */
	put64(r, 332835);      /* ino */
	put64(r, 7);           /* ino_generation */
	put32(r, 5);           /* prot: r-x */
	put32(r, 2);           /* flags: MAP_PRIVATE */
	put_string(r, path);
	finish(r, 42, 123456789);
}

static void test_mmap2(void)
{
	struct gt_mmap_rec m;
	struct rec r;
	int rc;

	mmap2(&r, 2, "/usr/lib/libc.so.6");
	rc = gt_mmap_record_parse(r.b, r.n, &m);
	GT_REQUIRE(rc == 0, "rc %d", rc);
	GT_CHECK(m.kind == GT_MMAP_MAP && m.pid == 42 && m.tid == 43 && m.ts == 123456789,
		 "kind %d pid %u tid %u ts %llu", m.kind, m.pid, m.tid, (unsigned long long)m.ts);
	GT_CHECK(m.start == 0x7f0000001000 && m.end == 0x7f0000004000 && m.pgoff == 0x2000,
		 "range %llx-%llx off %llx", (unsigned long long)m.start,
		 (unsigned long long)m.end, (unsigned long long)m.pgoff);
	GT_CHECK(m.dev_major == 254 && m.dev_minor == 1 && m.inode == 332835, "dev/ino");
	GT_CHECK(m.path_len == strlen("/usr/lib/libc.so.6") &&
		 !memcmp(m.path, "/usr/lib/libc.so.6", m.path_len), "path %.*s",
		 (int)m.path_len, m.path);
	/* with a build id instead of device and inode: no file identity */
	mmap2(&r, 2 | (1u << 14), "/x");
	GT_CHECK(gt_mmap_record_parse(r.b, r.n, &m) == 0 && m.inode == 0 && m.dev_major == 0,
		 "build-id record: inode %llu", (unsigned long long)m.inode);
}

static void test_comm_lost(void)
{
	struct gt_mmap_rec m;
	struct rec r;

	begin(&r, 3, 1u << 13); /* COMM, exec */
	put32(&r, 77);
	put32(&r, 77);
	put_string(&r, "shortlived");
	finish(&r, 77, 5);
	GT_CHECK(gt_mmap_record_parse(r.b, r.n, &m) == 0 && m.kind == GT_MMAP_EXEC &&
		 m.pid == 77 && m.ts == 5, "comm exec: kind %d pid %u", m.kind, m.pid);
	r.b[5] = 0; /* a rename, not an exec */
	GT_CHECK(gt_mmap_record_parse(r.b, r.n, &m) == -ENOENT, "rename not skipped");
	begin(&r, 2, 0); /* LOST */
	put64(&r, 1);
	put64(&r, 99);
	finish(&r, 0, 6);
	GT_CHECK(gt_mmap_record_parse(r.b, r.n, &m) == 0 && m.kind == GT_MMAP_LOST &&
		 m.lost == 99, "lost: kind %d lost %llu", m.kind, (unsigned long long)m.lost);
	begin(&r, 9, 0); /* SAMPLE-like type we do not read */
	put64(&r, 0);
	finish(&r, 1, 1);
	GT_CHECK(gt_mmap_record_parse(r.b, r.n, &m) == -ENOENT, "other type not skipped");
}

static void test_malformed(void)
{
	struct gt_mmap_rec m;
	struct rec r;

	mmap2(&r, 2, "/usr/lib/libc.so.6");
	GT_CHECK(gt_mmap_record_parse(r.b, r.n - 8, &m) == -EINVAL, "size mismatch taken");
	GT_CHECK(gt_mmap_record_parse(r.b, 4, &m) == -EINVAL, "short header taken");
	/* the fixed part cut: header says 40 bytes */
	r.b[6] = 40;
	r.b[7] = 0;
	GT_CHECK(gt_mmap_record_parse(r.b, 40, &m) == -EINVAL, "cut MMAP2 taken");
	/* an empty range, a range that wraps */
	mmap2(&r, 2, "/a");
	memset(r.b + 8 + 16, 0, 8);
	GT_CHECK(gt_mmap_record_parse(r.b, r.n, &m) == -EINVAL, "empty range taken");
	mmap2(&r, 2, "/a");
	memset(r.b + 8 + 8, 0xff, 8);
	GT_CHECK(gt_mmap_record_parse(r.b, r.n, &m) == -EINVAL, "wrapping range taken");
	/* a path with no NUL ends at the trailer */
	mmap2(&r, 2, "/abcdefg");
	memset(r.b + 72, 'x', 16);
	GT_CHECK(gt_mmap_record_parse(r.b, r.n, &m) == 0 && m.path_len == 16,
		 "unterminated path: %zu bytes", m.path_len);
}

static struct gt_mmap_rec map_rec(uint32_t pid, uint64_t start, const char *path)
{
	return (struct gt_mmap_rec){.kind = GT_MMAP_MAP, .pid = pid, .start = start,
				    .end = start + 4096, .path = path, .path_len = strlen(path)};
}

struct seen {
	int n;
	uint64_t starts[8];
};

static void collect(void *ctx, const struct gt_mmap_rec *r)
{
	struct seen *s = ctx;

	if (s->n < 8)
		s->starts[s->n] = r->start;
	s->n++;
}

static void test_backlog(void)
{
	struct gt_mmap_backlog b = {0};
	struct seen s = {0};
	struct gt_mmap_rec r;

	r = map_rec(10, 0x1000, "/bin/a");
	GT_REQUIRE(gt_mmap_backlog_push(&b, gt_mmap_record_hold(&r)) == 0, "push");
	r = map_rec(11, 0x2000, "/bin/b");
	gt_mmap_backlog_push(&b, gt_mmap_record_hold(&r));
	r = map_rec(10, 0x3000, "/lib/c");
	gt_mmap_backlog_push(&b, gt_mmap_record_hold(&r));
	GT_CHECK(gt_mmap_backlog_take(&b, 10, collect, &s) == 2 && s.n == 2 &&
		 s.starts[0] == 0x1000 && s.starts[1] == 0x3000, "take 10: %d records", s.n);
	s.n = 0;
	GT_CHECK(gt_mmap_backlog_take(&b, 10, collect, &s) == 0, "taken twice");
	/* an exec forgets what came before it */
	gt_mmap_backlog_exec(&b, 11);
	r = map_rec(11, 0x5000, "/bin/d");
	gt_mmap_backlog_push(&b, gt_mmap_record_hold(&r));
	s.n = 0;
	GT_CHECK(gt_mmap_backlog_take(&b, 11, collect, &s) == 1 && s.starts[0] == 0x5000,
		 "after exec: %d records", s.n);
	gt_mmap_backlog_free(&b);
}

/* Whole-machine traffic: the count and the bytes stay bounded, the
 * newest records kept. */
static void test_backlog_bounds(void)
{
	static char longpath[4001];
	struct gt_mmap_backlog b = {0};
	struct seen s = {0};
	struct gt_mmap_rec r;

	for (uint32_t i = 0; i < 3 * GT_MMAP_BACKLOG_RECORDS; i++) {
		r = map_rec(1000 + i, 0x1000, "/usr/lib/x86_64-linux-gnu/libc.so.6");
		GT_REQUIRE(gt_mmap_backlog_push(&b, gt_mmap_record_hold(&r)) == 0, "push %u", i);
	}
	GT_CHECK(b.count <= GT_MMAP_BACKLOG_RECORDS && b.bytes <= GT_MMAP_BACKLOG_BYTES,
		 "%u records, %zu bytes", b.count, b.bytes);
	GT_CHECK(gt_mmap_backlog_take(&b, 1000, collect, &s) == 0, "oldest kept");
	GT_CHECK(gt_mmap_backlog_take(&b, 1000 + 3 * GT_MMAP_BACKLOG_RECORDS - 1, collect, &s) == 1,
		 "newest dropped");
	/* the index of pids with records (exec and take ask it first)
	 * forgets the pids pushed out, and finds one that comes back */
	GT_CHECK(b.pids.count <= b.count, "%zu pids indexed for %u records", b.pids.count, b.count);
	r = map_rec(1000, 0x9000, "/bin/again");
	gt_mmap_backlog_push(&b, gt_mmap_record_hold(&r));
	s.n = 0;
	GT_CHECK(gt_mmap_backlog_take(&b, 1000, collect, &s) == 1 && s.starts[0] == 0x9000,
		 "a pid pushed out and back: %d records", s.n);
	memset(longpath, 'p', sizeof(longpath) - 1);
	for (uint32_t i = 0; i < 1000; i++) {
		r = map_rec(50000 + i, 0x1000, longpath);
		gt_mmap_backlog_push(&b, gt_mmap_record_hold(&r));
	}
	GT_CHECK(b.bytes <= GT_MMAP_BACKLOG_BYTES && b.dropped > 0, "%zu bytes, %llu dropped",
		 b.bytes, (unsigned long long)b.dropped);
	gt_mmap_backlog_free(&b);
	GT_CHECK(b.count == 0 && b.bytes == 0 && !b.ring && !b.pids.count, "not freed");
}

int main(void)
{
	GT_RUN(test_mmap2);
	GT_RUN(test_comm_lost);
	GT_RUN(test_malformed);
	GT_RUN(test_backlog);
	GT_RUN(test_backlog_bounds);
	return gt_test_done();
}
