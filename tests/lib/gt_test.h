/* A very small test harness for the C unit tests.
 *
 * Each test binary prints one line per test case, `ok NAME` or
 * `FAIL NAME: why`, and exits non-zero if any failed.  tests/run.sh counts
 * those lines across all binaries and scripts.
 *
 *   static void test_varint(void) { GT_CHECK(x == 1, "x is %d", x); }
 *   int main(void) { GT_RUN(test_varint); return gt_test_done(); }
 */
#ifndef GT_TEST_H
#define GT_TEST_H

#include <stdio.h>

extern int gt_test_failed_now; /* the running case has failed */
extern int gt_test_failures;   /* cases failed so far */
extern int gt_test_passes;

/* Records a failure of the running case (the case keeps going). */
#define GT_CHECK(cond, ...)                                                  \
	do {                                                                 \
		if (!(cond)) {                                               \
			gt_test_fail_at(__FILE__, __LINE__, #cond, __VA_ARGS__); \
		}                                                            \
	} while (0)

/* Fails and returns from the running case. */
#define GT_REQUIRE(cond, ...)                                                \
	do {                                                                 \
		if (!(cond)) {                                               \
			gt_test_fail_at(__FILE__, __LINE__, #cond, __VA_ARGS__); \
			return;                                              \
		}                                                            \
	} while (0)

#define GT_RUN(fn) gt_test_run(#fn, fn)

void gt_test_fail_at(const char *file, int line, const char *cond,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void gt_test_run(const char *name, void (*fn)(void));
/* Reports a case decided outside GT_RUN (e.g. a loop over files). */
void gt_test_report(const char *name, int passed, const char *why);
int gt_test_done(void);

/* 1 if the user asked to skip tests that need BPF (GOTRACED_SKIP_BPF=1). */
int gt_test_skip_bpf(void);

/* Runs `go tool trace -d` and the viewer pass on path (tests/lib/gocheck.sh).
 * Returns 0 if Go accepts the file; on failure copies Go's complaint into why. */
int gt_test_gocheck(const char *path, char *why, size_t whylen);

/* A byte sink (gt_v2enc_init's) that writes all of p to the file
 * descriptor *(int *)ctx: 0, or -errno (-EIO for a write of nothing). */
int gt_test_fd_write(void *ctx, const void *p, size_t n);

/* The build directory whose programs a test runs: $GT_BUILD, else the part
 * of argv0 before "/tests/" (build/san/tests/unit/test_x gives build/san),
 * else "build".  The result stays valid until exit. */
const char *gt_test_build_dir(const char *argv0);

#endif
