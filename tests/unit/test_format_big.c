/* gotracectl inspect on large traces: its peak RSS must not grow with the
 * file.  Writes a ~24 MB and a ~320 MB trace (tests/lib/gt_bigtrace.c),
 * runs `gotracectl inspect --strict` on each as a child and reads its
 * ru_maxrss: both valid, every event counted, both under a fixed bound,
 * and the 13x larger file within a few MiB of the small one.  (The 2 GB
 * figure is `make bench`: tests/bench/bench_inspect_big.sh.) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gt_bigtrace.h"
#include "gt_test.h"

#define RSS_BOUND_KIB (96 * 1024)   /* far under the 256 MiB asked of 2 GB */
#define RSS_GROWTH_KIB (16 * 1024)

struct run {
	long long events; /* as inspect counts them */
	long maxrss_kib;
	int status;
};

/* Runs `gotracectl inspect --strict path`. */
static int inspect(const char *path, struct run *r)
{
	const char *build = getenv("GT_BUILD") ? getenv("GT_BUILD") : "build";
	char exe[512], buf[8192];
	char *argv[] = {exe, "inspect", "--strict", (char *)path, NULL};
	double secs, cpu;
	int rc;

	snprintf(exe, sizeof(exe), "%s/gotracectl", build);
	rc = gt_run_measured(argv, buf, sizeof(buf), &r->status, &r->maxrss_kib, &secs, &cpu);
	if (rc < 0)
		return rc;
	r->events = strstr(buf, "events:") ? atoll(strstr(buf, "events:") + 7) : -1;
	if (!strstr(buf, "verdict:    valid"))
		fprintf(stderr, "inspect %s said:\n%s\n", path, buf);
	return 0;
}

/* Writes a trace of about mib MiB, inspects it. */
static int one(uint64_t mib, struct run *r, long long *written, char *why, size_t wl)
{
	char path[] = "/tmp/gt_big_trace.XXXXXX";
	int fd = mkstemp(path), rc;

	if (fd < 0) {
		snprintf(why, wl, "mkstemp: %s", strerror(errno));
		return -1;
	}
	*written = gt_bigtrace_write(fd, mib << 20);
	close(fd);
	rc = *written < 0 ? (int)*written : inspect(path, r);
	unlink(path);
	if (rc < 0) {
		snprintf(why, wl, "%llu MiB trace: %s", (unsigned long long)mib, strerror(-rc));
		return -1;
	}
	printf("# %llu MiB, %lld events: inspect exit %d, peak RSS %ld KiB\n",
	       (unsigned long long)mib, *written,
	       WIFEXITED(r->status) ? WEXITSTATUS(r->status) : -1, r->maxrss_kib);
	return 0;
}

static void test_inspect_rss_flat(void)
{
	struct run small, big;
	long long ws, wb;
	char why[256] = "";

	GT_REQUIRE(one(24, &small, &ws, why, sizeof(why)) == 0, "%s", why);
	GT_REQUIRE(one(320, &big, &wb, why, sizeof(why)) == 0, "%s", why);
	GT_CHECK(WIFEXITED(small.status) && WEXITSTATUS(small.status) == 0 &&
		 WIFEXITED(big.status) && WEXITSTATUS(big.status) == 0,
		 "inspect --strict did not call both traces valid");
	GT_CHECK(small.events == ws && big.events == wb,
		 "inspect counted %lld and %lld events, %lld and %lld were written",
		 small.events, big.events, ws, wb);
	GT_CHECK(big.maxrss_kib < RSS_BOUND_KIB && small.maxrss_kib < RSS_BOUND_KIB,
		 "peak RSS %ld KiB (24 MiB file), %ld KiB (320 MiB file): bound %d KiB",
		 small.maxrss_kib, big.maxrss_kib, RSS_BOUND_KIB);
	GT_CHECK(big.maxrss_kib < small.maxrss_kib + RSS_GROWTH_KIB,
		 "peak RSS grows with the file: %ld KiB for 24 MiB, %ld KiB for 320 MiB",
		 small.maxrss_kib, big.maxrss_kib);
}

int main(void)
{
	GT_RUN(test_inspect_rss_flat);
	return gt_test_done();
}
