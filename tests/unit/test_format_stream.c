/* The streaming checker (gt_check_run: two passes over the file, memory by
 * goroutines and Ps) against the in-memory one (gt_check_run_mem: every
 * event decoded first): the same verdict, message, offset, counts and
 * per-goroutine report, under every rule set, on every trace the tests
 * know (Go's testdata of 1.19, 1.21 and 1.23, the fuzzers' seeds) and on
 * damaged copies of them (truncated, bytes changed), which reach the
 * error paths of every phase. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check/gt_check.h"
#include "check/gt_check_internal.h"
#include "gt_test.h"

/* An FNV-1a digest of what the goroutine report said. */
static void digest(const struct gt_goroutine_stats *g, void *arg)
{
	uint64_t *h = arg;
	uint64_t v[6 + GT_BLK_COUNT] = {g->id, (uint64_t)g->tid, g->starts, g->running_ns,
					g->runnable_ns, g->unblocks_received};

	memcpy(v + 6, g->blocks, sizeof(g->blocks));
	for (size_t i = 0; i < sizeof(v); i++)
		*h = (*h ^ ((const uint8_t *)v)[i]) * 1099511628211ull;
	for (size_t i = 0; i < g->name_len; i++)
		*h = (*h ^ (uint8_t)g->name[i]) * 1099511628211ull;
	*h = (*h ^ (uint64_t)(g->ended * 8 + (int)g->end_state)) * 1099511628211ull;
}

static int compare(const char *what, const uint8_t *data, size_t len, char *why, size_t wl)
{
	static const unsigned flags[] = {0, GT_CHECK_GO_TOOLS, GT_CHECK_PARSER_ONLY};
	struct gt_check_report a, b;

	for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
		uint64_t ha = 14695981039346656037ull, hb = ha;
		/* the smallest re-sort window every other time: the ring wraps,
		 * and moved GoSysExits go to the in-memory check */
		int ra = gt_check_run_window(data, len, flags[f], 0, f == 1 ? 1 : 1u << 18, &a,
					     digest, &ha);
		int rb = gt_check_run_mem(data, len, flags[f], &b, digest, &hb);

		if (ra != rb || a.ok != b.ok || strcmp(a.error, b.error) ||
		    a.error_offset != b.error_offset || a.events != b.events ||
		    a.duration_ticks != b.duration_ticks || a.goroutines != b.goroutines ||
		    a.procs != b.procs || a.strings != b.strings || a.stacks != b.stacks ||
		    ha != hb || memcmp(a.count_by_type, b.count_by_type, sizeof(a.count_by_type))) {
			snprintf(why, wl,
				 "%s flags %u: streaming rc %d \"%s\" @%llu events %llu dur %llu gs %llu; in memory rc %d \"%s\" @%llu events %llu dur %llu gs %llu; report %s",
				 what, flags[f], ra, a.error, (unsigned long long)a.error_offset,
				 (unsigned long long)a.events, (unsigned long long)a.duration_ticks,
				 (unsigned long long)a.goroutines, rb, b.error,
				 (unsigned long long)b.error_offset, (unsigned long long)b.events,
				 (unsigned long long)b.duration_ticks, (unsigned long long)b.goroutines,
				 ha == hb ? "same" : "differs");
			return -1;
		}
	}
	return 0;
}

/* The file, then copies cut short and with bytes changed. */
static int compare_variants(const uint8_t *data, size_t len, char *why, size_t wl)
{
	uint8_t *copy = malloc(len + 1);
	char what[64];
	int rc = compare("as is", data, len, why, wl);

	if (!copy)
		return -1;
	for (int k = 1; !rc && k < 8; k++) {
		size_t cut = len * (size_t)k / 8;

		snprintf(what, sizeof(what), "cut to %zu bytes", cut);
		rc = compare(what, data, cut, why, wl);
	}
	for (int k = 0; !rc && k < 16 && len > 16; k++) {
		size_t at = 16 + (len - 16) * (size_t)k / 16;

		memcpy(copy, data, len);
		copy[at] ^= (uint8_t)(0x5a + k);
		snprintf(what, sizeof(what), "byte %zu changed", at);
		rc = compare(what, copy, len, why, wl);
	}
	free(copy);
	return rc;
}

static void check_file(const char *path, int *n)
{
	char why[2048], name[1200];
	struct stat st;
	void *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 16 ||
	    st.st_size > (64 << 20)) {
		close(fd);
		return;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return;
	(*n)++;
	snprintf(name, sizeof(name), "stream_same_verdict %s", path);
	why[0] = 0;
	gt_test_report(name, compare_variants(p, (size_t)st.st_size, why, sizeof(why)) == 0, why);
	munmap(p, (size_t)st.st_size);
}

/* Every regular file under dir (one level of subfolders). */
static void check_dir(const char *dir, int depth, int *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[1024];
	struct stat st;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode) && depth > 0)
			check_dir(path, depth - 1, n);
		else if (S_ISREG(st.st_mode))
			check_file(path, n);
	}
	closedir(d);
}

int main(void)
{
	static const char *const roots[] = {"/usr/lib/go-1.19", "/usr/lib/go-1.21",
					    "/usr/lib/go-1.23"};
	char dir[512];
	int n = 0;

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		snprintf(dir, sizeof(dir), "%s/src/internal/trace/testdata", roots[i]);
		check_dir(dir, 2, &n);
	}
	check_dir("tests/fuzz/seeds/report", 0, &n);
	gt_test_report("stream_traces_found", n >= 20, "fewer than 20 traces to compare");
	return gt_test_done();
}
