/* bench_reader FILE [RUNS]: times gt_check_file on FILE (best of RUNS,
 * default 10) and prints `bench_reader FILE: N events, T ms, M MB/s`. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "check/gt_check.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	struct gt_check_report rep;
	double best = 1e18;
	int runs = argc > 2 ? atoi(argv[2]) : 10, rc = 0;

	if (argc < 2 || runs < 1) {
		fprintf(stderr, "usage: bench_reader FILE [RUNS]\n");
		return 2;
	}
	for (int i = 0; i < runs; i++) {
		double t0 = now_ms(), t;

		rc = gt_check_file_run(argv[1], GT_CHECK_GO_TOOLS, &rep, NULL, NULL);
		t = now_ms() - t0;
		if (rc < 0) {
			fprintf(stderr, "bench_reader: %s\n", rep.error);
			return 1;
		}
		if (t < best)
			best = t;
	}
	printf("bench_reader %s: %s, %llu events, %.3f ms, %.1f MB/s\n", argv[1],
	       rc ? "invalid" : "valid", (unsigned long long)rep.events, best,
	       rep.bytes / 1e6 / (best / 1e3));
	return 0;
}
