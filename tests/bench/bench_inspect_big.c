/* gotracectl inspect at any size: for each size (default 256 and 2048 MiB)
 * writes a trace (tests/lib/gt_bigtrace.c), runs `gotracectl inspect` on it
 * and prints the wall time, the rate and the peak RSS, the sizes side by
 * side: the peak must not grow with the file (target: a 2 GB trace in at
 * most 256 MiB).  Asserts nothing but that inspect calls each valid.  The
 * figure means something in the release build only: a sanitizer's
 * quarantine and shadow memory add to it.
 *
 *   bench_inspect_big [MIB[,MIB...] [GOTRACECTL]]  (default GOTRACECTL:
 *                                       ../gotracectl next to this binary)
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gt_bigtrace.h"

/* Writes and inspects one trace of mib MiB; 0 or 1 (failure said). */
static int one(const char *exe, uint64_t mib)
{
	char path[] = "/tmp/gt_bench_big.XXXXXX", out[8192];
	char *args[] = {(char *)exe, "inspect", path, NULL};
	long long events;
	long rss;
	double secs, cpu;
	struct stat st;
	int fd, status, rc;

	fd = mkstemp(path);
	if (fd < 0) {
		fprintf(stderr, "bench_inspect_big: mkstemp: %s\n", strerror(errno));
		return 1;
	}
	events = gt_bigtrace_write(fd, mib << 20);
	fstat(fd, &st);
	close(fd);
	if (events < 0) {
		fprintf(stderr, "bench_inspect_big: writing the trace: %s\n", strerror((int)-events));
		unlink(path);
		return 1;
	}
	rc = gt_run_measured(args, out, sizeof(out), &status, &rss, &secs, &cpu);
	unlink(path);
	if (rc < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench_inspect_big: %s inspect failed (%s):\n%s\n", exe,
			rc < 0 ? strerror(-rc) : "exit status", out);
		return 1;
	}
	printf("%5llu MiB:  %lld bytes, %lld events; inspect %.2f s CPU (%.2f s wall), "
	       "%.1f MB/s, %.1f M events/s of CPU; peak RSS %.1f MiB\n",
	       (unsigned long long)mib, (long long)st.st_size, events, cpu, secs,
	       (double)st.st_size / cpu / 1e6, (double)events / cpu / 1e6, (double)rss / 1024);
	return 0;
}

int main(int argc, char **argv)
{
	char sizes[256], self[4096], exe[4200], *tok, *save = NULL;
	int failed = 0;

	snprintf(sizes, sizeof(sizes), "%s", argc > 1 ? argv[1] : "256,2048");
	snprintf(self, sizeof(self), "%s", argv[0]);
	if (argc > 2)
		snprintf(exe, sizeof(exe), "%s", argv[2]);
	else
		snprintf(exe, sizeof(exe), "%s/../gotracectl", dirname(self));
	printf("inspect's peak RSS by trace size (target <= 256 MiB for 2 GB, flat):\n");
	for (tok = strtok_r(sizes, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		failed |= one(exe, strtoull(tok, NULL, 10));
	return failed;
}
