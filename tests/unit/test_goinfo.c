// tier: system (builds Go programs with every installed Go: not in make check-unit)
/* daemon/sym/goinfo.c: the Go version, g's TLS slot and g.goid's offset
 * of Go binaries built by each installed toolchain (1.19, 1.21, 1.22,
 * 1.23), with and without symbols and DWARF: the table by version equals
 * what the binary's own DWARF says, a stripped binary gets the table's,
 * and a program that is not Go gets nothing. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gt_test.h"
#include "sym/goinfo.h"

static const char *build_dir = "build";

static int read_info(const char *path, struct gt_goinfo *gi)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -errno;
	rc = gt_goinfo_read(fd, gi);
	close(fd);
	return rc;
}

static int dwarf_member(const char *path, const char *type, const char *member, uint32_t *off)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -errno;
	rc = gt_goinfo_dwarf_member(fd, type, member, off);
	close(fd);
	return rc;
}

static int dwarf_off(const char *path, uint32_t *off)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -errno;
	rc = gt_goinfo_dwarf_goid(fd, off);
	close(fd);
	return rc;
}

/* Builds symgo with go (Go 1.minor), full and stripped, and checks both. */
static void check_toolchain(const char *go, int minor)
{
	char dir[512], cmd[4096], full[600], stripped[600];
	struct gt_goinfo gi;
	uint32_t off = 0;
	int rc;

	if (access(go, X_OK)) {
		gt_test_report("goinfo toolchain", 0, go);
		return;
	}
	snprintf(dir, sizeof(dir), "%s/go-goids", build_dir); /* record_goids's cache too */
	snprintf(full, sizeof(full), "%s/symgo-1.%d", dir, minor);
	snprintf(stripped, sizeof(stripped), "%s/symgo-1.%d-stripped", dir, minor);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %1$s && export GOTOOLCHAIN=local GOCACHE=$PWD/%1$s/cache"
		 " GOPATH=$PWD/%1$s/gopath GO111MODULE=off GOFLAGS= CGO_ENABLED=0 && "
		 "%2$s build -o %3$s tests/workloads/go/symgo.go && "
		 "%2$s build -ldflags='-s -w' -o %4$s tests/workloads/go/symgo.go",
		 dir, go, full, stripped);
	GT_REQUIRE(system(cmd) == 0, "go build failed: %s", cmd);

	rc = read_info(full, &gi);
	GT_REQUIRE(rc == 0, "%s: %s", full, strerror(-rc));
	GT_CHECK(gi.minor == minor, "%s: Go 1.%d, want 1.%d", full, gi.minor, minor);
	GT_CHECK(gi.tls_off == -8, "%s: tls_off %lld, want -8", full, (long long)gi.tls_off);
	GT_REQUIRE(dwarf_off(full, &off) == 0, "%s: no runtime.g.goid in its DWARF", full);
	GT_CHECK(gi.goid_off == off && gt_goinfo_goid_table(minor) == off,
		 "Go 1.%d: goid at %u by the table, %u by DWARF", minor, gi.goid_off, off);
	GT_REQUIRE(dwarf_member(full, "runtime.g", "labels", &off) == 0, "%s: no g.labels", full);
	GT_CHECK(gi.labels_off == off && gt_goinfo_labels_table(minor) == off,
		 "Go 1.%d: labels at %u by the table, %u by DWARF", minor, gi.labels_off, off);
	GT_REQUIRE(dwarf_member(full, "runtime.g", "m", &off) == 0, "%s: no g.m", full);
	GT_CHECK(gi.m_off == off, "Go 1.%d: g.m at %u by the table, %u by DWARF", minor, gi.m_off,
		 off);
	GT_REQUIRE(dwarf_member(full, "runtime.g", "atomicstatus", &off) == 0, "%s: no status", full);
	GT_CHECK(off + 8 == gi.goid_off, "Go 1.%d: g.atomicstatus at %u, not 8 before goid %u",
		 minor, off, gi.goid_off);
	GT_REQUIRE(dwarf_member(full, "runtime.m", "curg", &off) == 0, "%s: no m.curg", full);
	GT_CHECK(gi.curg_off == off, "Go 1.%d: m.curg at %u by the table, %u by DWARF", minor,
		 gi.curg_off, off);
	GT_REQUIRE(dwarf_off(full, &off) == 0, "%s: no runtime.g.goid in its DWARF", full);

	rc = read_info(stripped, &gi);
	GT_REQUIRE(rc == 0, "%s: %s", stripped, strerror(-rc));
	GT_CHECK(gi.minor == minor && gi.goid_off == off && gi.tls_off == -8 && !gi.goid_from_dwarf,
		 "%s: Go 1.%d goid %u tls %lld", stripped, gi.minor, gi.goid_off, (long long)gi.tls_off);
	GT_CHECK(dwarf_off(stripped, &off) == -ENOENT, "%s: DWARF after -s -w?", stripped);
}

static void test_go119(void) { check_toolchain("/usr/bin/go", 19); }
static void test_go121(void) { check_toolchain("/usr/lib/go-1.21/bin/go", 21); }
static void test_go122(void) { check_toolchain("/usr/lib/go-1.22/bin/go", 22); }
static void test_go123(void) { check_toolchain("/usr/lib/go-1.23/bin/go", 23); }

/* A C program, and a Go version the table does not know, get nothing. */
static void test_not_go(void)
{
	struct gt_goinfo gi;

	GT_CHECK(read_info("/bin/true", &gi) == -ENOENT, "/bin/true read as Go 1.%d", gi.minor);
	GT_CHECK(gt_goinfo_goid_table(18) == 0 && gt_goinfo_goid_table(24) == 0,
		 "the table claims versions never measured");
	/* labels: 1.20 not measured, 1.24's maps are swiss tables */
	GT_CHECK(gt_goinfo_labels_table(20) == 0 && gt_goinfo_labels_table(24) == 0,
		 "the labels table claims versions never measured or maps it cannot read");
}

int main(int argc, char **argv)
{
	build_dir = gt_test_build_dir(argc > 0 ? argv[0] : NULL);
	GT_RUN(test_go119);
	GT_RUN(test_go121);
	GT_RUN(test_go122);
	GT_RUN(test_go123);
	GT_RUN(test_not_go);
	return gt_test_done();
}
