/* gotracectl inspect at any size: writes a trace of MIB MiB (default 2048,
 * tests/lib/gt_bigtrace.c), runs `gotracectl inspect` on it and prints the
 * wall time, the rate and the peak RSS next to the target (a 2 GB trace in
 * at most 256 MiB).  Asserts nothing but that inspect calls it valid.
 *
 *   bench_inspect_big [MIB [GOTRACECTL]]  (default: ../gotracectl next to
 *                                          this binary's folder)
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

int main(int argc, char **argv)
{
	uint64_t mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 2048;
	char self[4096], exe[4200], path[] = "/tmp/gt_bench_big.XXXXXX", out[8192];
	char *args[] = {exe, "inspect", path, NULL};
	long long events;
	long rss;
	double secs, cpu;
	struct stat st;
	int fd, status, rc;

	snprintf(self, sizeof(self), "%s", argv[0]);
	if (argc > 2)
		snprintf(exe, sizeof(exe), "%s", argv[2]);
	else
		snprintf(exe, sizeof(exe), "%s/../gotracectl", dirname(self));
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
	printf("trace:       %lld bytes, %lld events (written by gt_writer)\n",
	       (long long)st.st_size, events);
	printf("inspect:     %.2f s CPU (%.2f s wall), %.1f MB/s, %.1f M events/s of CPU\n",
	       cpu, secs, (double)st.st_size / cpu / 1e6, (double)events / cpu / 1e6);
	printf("peak RSS:    %.1f MiB (target <= 256 MiB for 2 GB)\n", (double)rss / 1024);
	return 0;
}
