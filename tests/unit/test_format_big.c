/* The checker's memory does not grow with the file.  Writes a ~4 MiB and a
 * ~48 MiB trace (tests/lib/gt_bigtrace.c), checks each in this process with
 * the rules `inspect --strict` applies, and counts the heap the checker
 * holds at its peak: the link wraps malloc, calloc, realloc and free
 * (-Wl,--wrap, see the Makefile) and adds up malloc_usable_size of what is
 * live.  A figure of our own code, deterministic under any allocator and
 * any sanitizer, unlike the process's peak RSS (a sanitizer's quarantine,
 * page-cache pages of the mapped file): that one, for 256 MiB and 2 GB
 * side by side, is `make bench` (tests/bench/bench_inspect_big.c). */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check/gt_check.h"
#include "gt_bigtrace.h"
#include "gt_test.h"

/* The 12x larger file may hold a little more (one record per batch), far
 * from what one byte per event would add (~10 MiB). */
#define HEAP_BOUND (32u << 20)
#define HEAP_GROWTH (1u << 20)

/* ---- the wrapped allocator: live and peak heap bytes ---- */
void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);

static size_t live, peak;

static void *counted(void *p)
{
	if (p && (live += malloc_usable_size(p)) > peak)
		peak = live;
	return p;
}

void *__wrap_malloc(size_t n) { return counted(__real_malloc(n)); }
void *__wrap_calloc(size_t k, size_t n) { return counted(__real_calloc(k, n)); }

void *__wrap_realloc(void *p, size_t n)
{
	size_t old = p ? malloc_usable_size(p) : 0;
	void *q = __real_realloc(p, n);

	if (q || n == 0)
		live -= old;
	return q ? counted(q) : q;
}

void __wrap_free(void *p)
{
	if (p)
		live -= malloc_usable_size(p);
	__real_free(p);
}

/* Writes a trace of about mib MiB, checks it; *heap the checker's peak. */
static int one(uint64_t mib, long long *written, struct gt_check_report *rep, size_t *heap,
	       char *why, size_t wl)
{
	char path[] = "/tmp/gt_big_trace.XXXXXX";
	int fd = mkstemp(path), rc;
	size_t base;

	if (fd < 0) {
		snprintf(why, wl, "mkstemp: %s", strerror(errno));
		return -1;
	}
	*written = gt_bigtrace_write(fd, mib << 20);
	close(fd);
	if (*written < 0) {
		unlink(path);
		snprintf(why, wl, "writing %llu MiB: %s", (unsigned long long)mib,
			 strerror((int)-*written));
		return -1;
	}
	peak = base = live;
	rc = gt_check_file_run(path, 0, rep, NULL, NULL);
	*heap = peak - base;
	unlink(path);
	printf("# %llu MiB, %lld events: check %s, peak heap %zu bytes\n",
	       (unsigned long long)mib, *written, rc ? rep->error : "valid", *heap);
	if (rc < 0)
		snprintf(why, wl, "%llu MiB trace: %s", (unsigned long long)mib, rep->error);
	return rc < 0 ? -1 : 0;
}

static void test_check_heap_flat(void)
{
	struct gt_check_report small, big;
	long long ws, wb;
	size_t hs, hb;
	char why[600] = "";

	GT_REQUIRE(one(4, &ws, &small, &hs, why, sizeof(why)) == 0, "%s", why);
	GT_REQUIRE(one(48, &wb, &big, &hb, why, sizeof(why)) == 0, "%s", why);
	GT_CHECK(small.ok && big.ok, "the checker did not call both traces valid: %s / %s",
		 small.error, big.error);
	GT_CHECK(small.events == (uint64_t)ws && big.events == (uint64_t)wb,
		 "the checker counted %llu and %llu events, %lld and %lld were written",
		 (unsigned long long)small.events, (unsigned long long)big.events, ws, wb);
	GT_CHECK(hs > 0, "no allocation counted: the link does not wrap malloc");
	GT_CHECK(hb < HEAP_BOUND, "peak heap %zu bytes for 48 MiB: bound %u", hb, HEAP_BOUND);
	GT_CHECK(hb < hs + HEAP_GROWTH,
		 "the checker's heap grows with the file: %zu bytes for 4 MiB, %zu for 48 MiB",
		 hs, hb);
}

int main(void)
{
	GT_RUN(test_check_heap_flat);
	return gt_test_done();
}
