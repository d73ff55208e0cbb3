/* gt_symbolizer_add_mapping: mappings given one by one (from the kernel's
 * perf records) name the frames of a process whose maps were never read. */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gt_test.h"
#include "sym/maps.h"
#include "sym/symbolize.h"
#include "sym/testing.h"

/* No process has this id (above the kernel's PID_MAX_LIMIT): its
 * /proc/PID/root and map_files fail, as a gone process's do. */
#define GONE_PID 9999999

__attribute__((noinline)) int mapping_probe_fn(int x)
{
	return x * 3 + 1;
}

/* Our own executable mapping that holds ip, parsed into m (its path in
 * line, which the caller frees). */
static int own_mapping(uint64_t ip, struct gt_map_line *m, char **line)
{
	FILE *f = fopen("/proc/self/maps", "re");
	size_t cap = 0;
	ssize_t n;

	*line = NULL;
	if (!f)
		return -errno;
	while ((n = getline(line, &cap, f)) > 0)
		if (!gt_map_line_parse(*line, (size_t)n, m) && m->executable && m->start <= ip &&
		    ip < m->end) {
			fclose(f);
			return 0;
		}
	fclose(f);
	return -ENOENT;
}

static void test_gone_process(void)
{
	uint64_t ip = (uint64_t)(uintptr_t)&mapping_probe_fn;
	struct gt_symbolizer *s = gt_symbolizer_new();
	struct gt_map_line m;
	struct gt_sym out;
	char *line;
	int rc;

	GT_REQUIRE(s && own_mapping(ip, &m, &line) == 0, "our own text mapping not found");
	rc = gt_symbolize_user(s, GONE_PID, ip, &out);
	GT_CHECK(rc == -ESRCH, "unknown pid: rc %d", rc);
	rc = gt_symbolizer_add_mapping(s, GONE_PID, &m);
	GT_CHECK(rc == 0, "add_mapping: %s", strerror(-rc));
	rc = gt_symbolize_user(s, GONE_PID, ip, &out);
	GT_CHECK(rc == 0 && !strcmp(out.func, "mapping_probe_fn"), "rc %d func %s", rc, out.func);
	GT_CHECK(strstr(out.module, "test_sym_mapping") != NULL, "module %s", out.module);
	/* outside every mapping given: garbage, as with a maps read */
	rc = gt_symbolize_user(s, GONE_PID, 0x10000, &out);
	GT_CHECK(rc == -EFAULT, "unmapped address: rc %d %s", rc, out.func);
	free(line);
	gt_symbolizer_free(s);
}

/* A file with another inode (replaced since it was mapped) is not used. */
static void test_replaced_file(void)
{
	uint64_t ip = (uint64_t)(uintptr_t)&mapping_probe_fn;
	struct gt_symbolizer *s = gt_symbolizer_new();
	struct gt_map_line m;
	struct gt_sym out;
	char *line;
	int rc;

	GT_REQUIRE(s && own_mapping(ip, &m, &line) == 0, "our own text mapping not found");
	m.inode++;
	GT_REQUIRE(gt_symbolizer_add_mapping(s, GONE_PID, &m) == 0, "add_mapping");
	rc = gt_symbolize_user(s, GONE_PID, ip, &out);
	GT_CHECK(rc == -ENOENT && strstr(out.func, "test_sym_mapping+0x"),
		 "other inode: rc %d func %s", rc, out.func);
	m.inode--;
	m.dev_minor++;
	GT_REQUIRE(gt_symbolizer_add_mapping(s, GONE_PID + 1, &m) == 0, "add_mapping");
	rc = gt_symbolize_user(s, GONE_PID + 1, ip, &out);
	GT_CHECK(rc == -ENOENT, "other device: rc %d func %s", rc, out.func);
	free(line);
	gt_symbolizer_free(s);
}

/* A mapping replaces those it overlaps; a maps read replaces it where
 * they overlap. */
static void test_overlaps(void)
{
	uint64_t ip = (uint64_t)(uintptr_t)&mapping_probe_fn;
	struct gt_symbolizer *s = gt_symbolizer_new();
	struct gt_map_line m, anon;
	struct gt_sym out;
	char *line;
	int rc;

	GT_REQUIRE(s && own_mapping(ip, &m, &line) == 0, "our own text mapping not found");
	anon = m;
	anon.path = "";
	anon.path_len = 0;
	anon.inode = 0;
	anon.dev_major = anon.dev_minor = 0;
	anon.start = m.start + 4096 <= ip ? m.start + 4096 : m.start; /* overlaps partly */
	anon.end = m.end + 4096;
	GT_REQUIRE(gt_symbolizer_add_mapping(s, getpid(), &m) == 0, "add_mapping");
	GT_REQUIRE(gt_symbolizer_add_mapping(s, getpid(), &anon) == 0, "add anonymous");
	rc = gt_symbolize_user(s, getpid(), ip, &out);
	GT_CHECK(rc == -ENOENT && !strcmp(out.module, "[anon]") && !strncmp(out.func, "0x", 2),
		 "anonymous over the text: rc %d %s in %s", rc, out.func, out.module);
	rc = gt_symbolizer_add_process(s, getpid());
	GT_CHECK(rc == 0, "add_process: %s", strerror(-rc));
	rc = gt_symbolize_user(s, getpid(), ip, &out);
	GT_CHECK(rc == 0 && !strcmp(out.func, "mapping_probe_fn"),
		 "after a maps read: rc %d func %s", rc, out.func);
	anon.end = anon.start;
	GT_CHECK(gt_symbolizer_add_mapping(s, getpid(), &anon) == -EINVAL, "empty range taken");
	free(line);
	gt_symbolizer_free(s);
}

static atomic_uint own_loads;

static void count_own_loads(const char *path)
{
	if (strstr(path, "test_sym_mapping"))
		atomic_fetch_add(&own_loads, 1);
}

/* A mapping announced again (the kernel's record of one the maps read
 * already holds, as at every recording's start) keeps its binary: the
 * file is parsed once, not once per announcement. */
static void test_same_mapping_again(void)
{
	uint64_t ip = (uint64_t)(uintptr_t)&mapping_probe_fn;
	struct gt_symbolizer *s = gt_symbolizer_new();
	struct gt_map_line m;
	struct gt_sym out;
	char *line;
	int rc;

	GT_REQUIRE(s && own_mapping(ip, &m, &line) == 0, "our own text mapping not found");
	atomic_store(&own_loads, 0);
	gt_sym_load_hook = count_own_loads;
	GT_REQUIRE(gt_symbolizer_add_process(s, getpid()) == 0, "add_process");
	GT_REQUIRE(gt_symbolizer_add_mapping(s, getpid(), &m) == 0, "add_mapping under way");
	GT_REQUIRE(gt_sym_loader_idle(10000000000ull), "loads never finished");
	GT_REQUIRE(gt_symbolizer_add_mapping(s, getpid(), &m) == 0, "add_mapping once loaded");
	rc = gt_symbolize_user(s, getpid(), ip, &out);
	GT_CHECK(rc == 0 && !strcmp(out.func, "mapping_probe_fn"), "rc %d func %s", rc, out.func);
	GT_REQUIRE(gt_sym_loader_idle(10000000000ull), "loads never finished");
	GT_CHECK(atomic_load(&own_loads) == 1, "our binary loaded %u times, not once",
		 atomic_load(&own_loads));
	gt_sym_load_hook = NULL;
	free(line);
	gt_symbolizer_free(s);
}

static atomic_uint libc_loads;

static void count_libc_loads(const char *path)
{
	const char *base = strrchr(path, '/');

	if (base && !strncmp(base + 1, "libc.so.", 8))
		atomic_fetch_add(&libc_loads, 1);
}

/* The libc loaded ahead (gotracectl record, before the BPF load) is the
 * one a process mapping the same file uses: not loaded a second time. */
static void test_prefetch_libc(void)
{
	uint64_t ip = (uint64_t)(uintptr_t)&getppid;
	struct gt_symbolizer *s = gt_symbolizer_new();
	struct gt_sym out;
	int rc;

	GT_REQUIRE(s, "out of memory");
	atomic_store(&libc_loads, 0);
	gt_sym_load_hook = count_libc_loads;
	rc = gt_symbolizer_prefetch_libc(s);
	GT_REQUIRE(rc == 0, "prefetch: %s", strerror(-rc));
	GT_REQUIRE(gt_sym_loader_idle(10000000000ull), "loads never finished");
	GT_CHECK(atomic_load(&libc_loads) == 1, "libc loaded %u times ahead", atomic_load(&libc_loads));
	GT_REQUIRE(gt_symbolizer_add_process(s, getpid()) == 0, "add_process");
	rc = gt_symbolize_user(s, getpid(), ip, &out);
	GT_CHECK(rc == 0 && strstr(out.module, "libc.so."), "getppid: rc %d %s in %s", rc, out.func,
		 out.module);
	GT_REQUIRE(gt_sym_loader_idle(10000000000ull), "loads never finished");
	GT_CHECK(atomic_load(&libc_loads) == 1, "libc loaded %u times, not once",
		 atomic_load(&libc_loads));
	gt_sym_load_hook = NULL;
	gt_symbolizer_free(s);
}

int main(void)
{
	GT_RUN(test_gone_process);
	GT_RUN(test_replaced_file);
	GT_RUN(test_overlaps);
	GT_RUN(test_same_mapping_again);
	GT_RUN(test_prefetch_libc);
	return gt_test_done();
}
