// tier: system (BPF, root or real programs: not in make check-unit)
/* --cgroup / --container resolution and authorization, against the real
 * cgroup v2 tree of this machine: the test creates directories under the
 * mount (as runtimes would), resolves them, and removes them. Needs root. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "server/authz.h"
#include "common/cgroup_resolve.h"
#include "gt_test.h"

/* Test paths are short; the warning assumes PATH_MAX-long prefixes. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

static char mnt[PATH_MAX], base[PATH_MAX], err[1024], out[PATH_MAX];
static char id1[65], id2[65], id3[65];
static char made[256][PATH_MAX];
static int nmade;

static void random_hex(char *dst, unsigned seed)
{
	srand(seed);
	for (int i = 0; i < 64; i++)
		dst[i] = "0123456789abcdef"[rand() % 16];
	dst[64] = '\0';
}

/* Makes base/rel (a cgroup) and remembers it for cleanup. */
static int make(const char *rel)
{
	char *p = made[nmade++];

	snprintf(p, PATH_MAX, "%s/%s", base, rel);
	if (mkdir(p, 0755) && errno != EEXIST) {
		printf("FAIL setup: mkdir %s: %s\n", p, strerror(errno));
		return -1;
	}
	return 0;
}

static int setup_layouts(unsigned seed);
static int setup_pods(unsigned seed);

static int setup(void)
{
	char a[128], b[128], c[128], d[128];
	unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid() << 8;

	if (gt_cgroup_mount(mnt, sizeof(mnt), err, sizeof(err))) {
		printf("FAIL setup: %s\n", err);
		return -1;
	}
	/* two ids sharing a 6-char prefix (ambiguous), one distinct */
	random_hex(id1, seed);
	random_hex(id2, seed + 1);
	memcpy(id2, id1, 6);
	if (id2[6] == id1[6])
		id2[6] = id1[6] == 'a' ? 'b' : 'a';
	random_hex(id3, seed + 2);
	id3[0] = id1[0] == 'f' ? 'e' : 'f';
	snprintf(base, sizeof(base), "%s/gt_test_cg_%d", mnt, (int)getpid());
	if (mkdir(base, 0755)) {
		printf("FAIL setup: mkdir %s: %s\n", base, strerror(errno));
		return -1;
	}
	snprintf(a, sizeof(a), "docker-%s.scope", id1);
	snprintf(b, sizeof(b), "libpod-%s.scope", id2);
	snprintf(c, sizeof(c), "docker");
	snprintf(d, sizeof(d), "docker/%s", id3);
	return make(a) || make(b) || make("gt-test-unit-x.service") || make(c) || make(d) ||
	       make("plain") || make("gt-test-unit-y.scope") || setup_layouts(seed) ||
	       setup_pods(seed);
}

/* The runtimes' layouts (docs/design.md "Containers"), each with its own
 * id: DIR is where the container's processes are, made with its parents;
 * EXTRA a sibling or child the runtime makes too. %s is the id. */
static const struct layout {
	const char *what, *dir, *extra;
} layouts[] = {
	{"podman cgroupfs (runc)", "libpod_parent/libpod-%s", "libpod_parent/conmon"},
	{"podman cgroupfs, nested", "libpod_parent/libpod-%s", "libpod_parent/libpod-%s/container"},
	{"podman systemd", "machine.slice/libpod-%s.scope", "machine.slice/libpod-conmon-%s.scope"},
	{"podman rootless", "user.slice/user-1000.slice/user@1000.service/user.slice/libpod-%s.scope",
	 "user.slice/user-1000.slice/user@1000.service/user.slice/libpod-conmon-%s.scope"},
	{"docker systemd", "system.slice/docker-%s.scope", NULL},
	{"docker cgroupfs", "docker/%s", NULL},
	{"containerd cgroupfs", "kubepods/burstable/pod0c5f5a0e-2b4c-4d7e-9f3a-1b2c3d4e5f60/%s",
	 "kubepods/burstable/pod0c5f5a0e-2b4c-4d7e-9f3a-1b2c3d4e5f60/pause"},
	{"containerd systemd", "kubepods.slice/kubepods-burstable.slice/"
	 "kubepods-burstable-pod0c5f5a0e_2b4c_4d7e_9f3a_1b2c3d4e5f60.slice/cri-containerd-%s.scope",
	 NULL},
	{"CRI-O systemd", "kubepods.slice/kubepods-besteffort.slice/"
	 "kubepods-besteffort-pod9d8e7f60_1a2b_4c3d_8e9f_a0b1c2d3e4f5.slice/crio-%s.scope",
	 "kubepods.slice/kubepods-besteffort.slice/"
	 "kubepods-besteffort-pod9d8e7f60_1a2b_4c3d_8e9f_a0b1c2d3e4f5.slice/crio-conmon-%s.scope"},
	{"CRI-O cgroupfs", "kubepods/besteffort/pod9d8e7f60-1a2b-4c3d-8e9f-a0b1c2d3e4f5/crio-%s",
	 NULL},
};
#define NLAYOUTS (sizeof(layouts) / sizeof(layouts[0]))
static char layout_id[NLAYOUTS][65];

/* Makes every directory of base/rel (mkdir -p), each remembered. */
static int make_p(const char *rel)
{
	char part[PATH_MAX];

	for (const char *slash = strchr(rel, '/'); slash; slash = strchr(slash + 1, '/')) {
		snprintf(part, sizeof(part), "%.*s", (int)(slash - rel), rel);
		if (make(part))
			return -1;
	}
	return make(rel);
}

static int setup_layouts(unsigned seed)
{
	char rel[PATH_MAX];

	for (size_t i = 0; i < NLAYOUTS; i++) {
		random_hex(layout_id[i], seed + 10 + (unsigned)i);
		snprintf(rel, sizeof(rel), layouts[i].dir, layout_id[i]);
		if (make_p(rel))
			return -1;
		if (!layouts[i].extra)
			continue;
		snprintf(rel, sizeof(rel), layouts[i].extra, layout_id[i]);
		if (make_p(rel))
			return -1;
	}
	return 0;
}

/* kubelet's pod cgroups, each with a random UID: %1$s the dashed UID,
 * %2$s the underscored one (systemd slices). Two containers and the
 * sandbox (pause) below each. */
static const struct pod_layout {
	const char *what, *dir;
} pod_layouts[] = {
	{"cgroupfs guaranteed", "kubepods/pod%1$s"},
	{"cgroupfs burstable", "kubepods/burstable/pod%1$s"},
	{"cgroupfs besteffort", "kubepods/besteffort/pod%1$s"},
	{"systemd guaranteed", "kubepods.slice/kubepods-pod%2$s.slice"},
	{"systemd burstable", "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%2$s.slice"},
	{"systemd besteffort",
	 "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod%2$s.slice"},
};
#define NPODS (sizeof(pod_layouts) / sizeof(pod_layouts[0]))
static char pod_uid[NPODS][37];

static void random_uid(char *dst, unsigned seed)
{
	char hex[65];

	random_hex(hex, seed);
	snprintf(dst, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16, hex + 20);
}

static void pod_rel(size_t i, char *rel, size_t len)
{
	char under[37];

	snprintf(under, sizeof(under), "%s", pod_uid[i]);
	for (char *c = under; *c; c++)
		if (*c == '-')
			*c = '_';
	snprintf(rel, len, pod_layouts[i].dir, pod_uid[i], under);
}

static int setup_pods(unsigned seed)
{
	static const char *const inside[] = {"/pause", "/cri-containerd-%s.scope", "/crio-%s"};
	char rel[PATH_MAX], sub[PATH_MAX], id[65];

	for (size_t i = 0; i < NPODS; i++) {
		random_uid(pod_uid[i], seed + 40 + (unsigned)i);
		pod_rel(i, rel, sizeof(rel));
		if (make_p(rel))
			return -1;
		for (size_t k = 0; k < sizeof(inside) / sizeof(inside[0]); k++) {
			random_hex(id, seed + 60 + (unsigned)(i * 4 + k));
			snprintf(sub, sizeof(sub), "%s", rel);
			snprintf(sub + strlen(sub), sizeof(sub) - strlen(sub), inside[k], id);
			if (make(sub))
				return -1;
		}
	}
	return 0;
}

static void cleanup(void)
{
	while (nmade > 0)
		rmdir(made[--nmade]);
	rmdir(base);
}

static void test_mount_found(void)
{
	GT_CHECK(!strcmp(mnt, "/sys/fs/cgroup/unified") || !strcmp(mnt, "/sys/fs/cgroup"),
		 "cgroup2 mount at '%s'", mnt);
	GT_CHECK(gt_cgroup_check_dir(mnt, err, sizeof(err)) == 0, "%s", err);
}

static void test_full_id(void)
{
	char want[PATH_MAX];

	snprintf(want, sizeof(want), "%s/docker-%s.scope", base, id1);
	GT_REQUIRE(gt_cgroup_resolve_container(id1, out, sizeof(out), err, sizeof(err)) == 0,
		   "%s", err);
	GT_CHECK(!strcmp(out, want), "got %s want %s", out, want);
}

static void test_unique_prefix(void)
{
	char want[PATH_MAX], prefix[13];

	snprintf(prefix, sizeof(prefix), "%.12s", id3);
	snprintf(want, sizeof(want), "%s/docker/%s", base, id3);
	GT_REQUIRE(gt_cgroup_resolve_container(prefix, out, sizeof(out), err, sizeof(err)) == 0,
		   "%s", err);
	GT_CHECK(!strcmp(out, want), "got %s want %s", out, want);
	snprintf(prefix, sizeof(prefix), "%.12s", id2);
	snprintf(want, sizeof(want), "%s/libpod-%s.scope", base, id2);
	GT_REQUIRE(gt_cgroup_resolve_container(prefix, out, sizeof(out), err, sizeof(err)) == 0,
		   "%s", err);
	GT_CHECK(!strcmp(out, want), "got %s want %s", out, want);
}

static void test_ambiguous_prefix(void)
{
	char prefix[7];

	snprintf(prefix, sizeof(prefix), "%.6s", id1);
	GT_CHECK(gt_cgroup_resolve_container(prefix, out, sizeof(out), err, sizeof(err)) == -EEXIST,
		 "ambiguous prefix resolved to %s", out);
	GT_CHECK(strstr(err, "ambiguous") && strstr(err, id1) && strstr(err, id2),
		 "message does not list both: %s", err);
}

static void test_no_match(void)
{
	GT_CHECK(gt_cgroup_resolve_container("0123456789abcdef0123x", out, sizeof(out), err,
					     sizeof(err)) == -ENOENT, "resolved to %s", out);
	GT_CHECK(strstr(err, "no container"), "message: %s", err);
	GT_CHECK(gt_cgroup_resolve_container("", out, sizeof(out), err, sizeof(err)) == -EINVAL,
		 "empty id accepted");
	GT_CHECK(gt_cgroup_resolve_container("../etc", out, sizeof(out), err, sizeof(err)) == -EINVAL,
		 "a path accepted as id");
}

static void test_unit_name(void)
{
	char want[PATH_MAX];

	snprintf(want, sizeof(want), "%s/gt-test-unit-x.service", base);
	GT_REQUIRE(gt_cgroup_resolve_container("gt-test-unit-x.service", out, sizeof(out), err,
					       sizeof(err)) == 0, "%s", err);
	GT_CHECK(!strcmp(out, want), "got %s", out);
	GT_REQUIRE(gt_cgroup_resolve_container("gt-test-unit-x", out, sizeof(out), err,
					       sizeof(err)) == 0, "%s", err);
	GT_CHECK(!strcmp(out, want), "got %s", out);
}

/* Each runtime's directory is found by the full id and by a 12-digit
 * prefix (what `podman ps` and `docker ps` print); a conmon or pause
 * sibling and a nested child are no second match. */
static void test_layouts(void)
{
	char want[PATH_MAX], rel[PATH_MAX], prefix[13];

	for (size_t i = 0; i < NLAYOUTS; i++) {
		snprintf(rel, sizeof(rel), layouts[i].dir, layout_id[i]);
		snprintf(want, sizeof(want), "%s/%s", base, rel);
		snprintf(prefix, sizeof(prefix), "%.12s", layout_id[i]);
		GT_CHECK(gt_cgroup_resolve_container(layout_id[i], out, sizeof(out), err,
						     sizeof(err)) == 0 && !strcmp(out, want),
			 "%s by full id: %s / got %s want %s", layouts[i].what, err, out, want);
		GT_CHECK(gt_cgroup_resolve_container(prefix, out, sizeof(out), err, sizeof(err)) == 0 &&
			 !strcmp(out, want),
			 "%s by %s: %s / got %s want %s", layouts[i].what, prefix, err, out, want);
	}
}

/* A unit named with its suffix is looked for as itself, and a miss says so
 * (not "nginx.service.service"). */
static void test_unit_suffixes(void)
{
	char want[PATH_MAX];

	snprintf(want, sizeof(want), "%s/gt-test-unit-y.scope", base);
	GT_CHECK(gt_cgroup_resolve_container("gt-test-unit-y.scope", out, sizeof(out), err,
					     sizeof(err)) == 0 && !strcmp(out, want),
		 "unit with .scope: %s / %s", err, out);
	GT_CHECK(gt_cgroup_resolve_container("gt-test-no-such.service", out, sizeof(out), err,
					     sizeof(err)) == -ENOENT, "resolved to %s", out);
	GT_CHECK(strstr(err, "unit gt-test-no-such.service") && !strstr(err, ".service.service"),
		 "message: %s", err);
	GT_CHECK(gt_cgroup_resolve_container("gt-test-no-such", out, sizeof(out), err,
					     sizeof(err)) == -ENOENT &&
		 strstr(err, "unit gt-test-no-such.service"), "bare name: %s", err);
}

static void test_paths(void)
{
	char rel[PATH_MAX], want[PATH_MAX];

	snprintf(want, sizeof(want), "%s/plain", base);
	GT_CHECK(gt_cgroup_resolve_path(want, out, sizeof(out), err, sizeof(err)) == 0 &&
		 !strcmp(out, want), "absolute: %s / %s", err, out);
	snprintf(rel, sizeof(rel), "%s/plain", base + strlen(mnt) + 1);
	GT_CHECK(gt_cgroup_resolve_path(rel, out, sizeof(out), err, sizeof(err)) == 0 &&
		 !strcmp(out, want), "relative %s: %s / %s", rel, err, out);
	snprintf(rel, sizeof(rel), "%s/plain/../plain/", base);
	GT_CHECK(gt_cgroup_resolve_path(rel, out, sizeof(out), err, sizeof(err)) == 0 &&
		 !strcmp(out, want), "not canonicalized: %s", out);
	/* as /proc/PID/cgroup prints it: "/x/plain", or its whole line "0::/x/plain" */
	snprintf(rel, sizeof(rel), "%s/plain", base + strlen(mnt));
	GT_CHECK(gt_cgroup_resolve_path(rel, out, sizeof(out), err, sizeof(err)) == 0 &&
		 !strcmp(out, want), "/proc/PID/cgroup's form %s: %s / %s", rel, err, out);
	snprintf(rel, sizeof(rel), "0::%s/plain", base + strlen(mnt));
	GT_CHECK(gt_cgroup_resolve_path(rel, out, sizeof(out), err, sizeof(err)) == 0 &&
		 !strcmp(out, want), "/proc/PID/cgroup's line %s: %s / %s", rel, err, out);
	snprintf(rel, sizeof(rel), "%s/nope", base + strlen(mnt));
	GT_CHECK(gt_cgroup_resolve_path(rel, out, sizeof(out), err, sizeof(err)) == -ENOENT &&
		 strstr(err, "/proc/PID/cgroup"), "missing, said: %s", err);
}

static void test_bad_paths(void)
{
	char p[PATH_MAX];

	GT_CHECK(gt_cgroup_resolve_path("/tmp", out, sizeof(out), err, sizeof(err)) == -EINVAL,
		 "/tmp accepted as a cgroup");
	GT_CHECK(strstr(err, "not a cgroup v2"), "message: %s", err);
	snprintf(p, sizeof(p), "%s/cgroup.procs", base);
	GT_CHECK(gt_cgroup_resolve_path(p, out, sizeof(out), err, sizeof(err)) == -ENOTDIR,
		 "a file accepted: %s", err);
	snprintf(p, sizeof(p), "%s/nope", base);
	GT_CHECK(gt_cgroup_resolve_path(p, out, sizeof(out), err, sizeof(err)) == -ENOENT,
		 "missing accepted: %s", err);
	GT_CHECK(gt_cgroup_resolve_path("", out, sizeof(out), err, sizeof(err)) == -EINVAL,
		 "empty accepted");
	/* a cgroup v1 hierarchy is not v2 */
	GT_CHECK(gt_cgroup_resolve_path("/sys/fs/cgroup/pids", out, sizeof(out), err,
					sizeof(err)) < 0 || access("/sys/fs/cgroup/pids", F_OK),
		 "v1 hierarchy accepted");
}

static void test_authz(void)
{
	struct gt_tracer root = {.uid = 0}, nobody = {.uid = 65534, .gid = 65534};
	struct gt_tracer me = gt_tracer_of(getuid(), getgid(), getpid());
	char p[PATH_MAX];

	GT_CHECK(gt_authz_pid(&root, 1, err, sizeof(err)) == 0, "root refused pid 1: %s", err);
	GT_CHECK(gt_authz_pid(&root, getpid(), err, sizeof(err)) == 0, "root refused itself");
	GT_CHECK(gt_authz_pid(&nobody, 1, err, sizeof(err)) == -EPERM && strstr(err, "uid 65534"),
		 "nobody may trace pid 1: %s", err);
	GT_CHECK(gt_authz_pid(&me, getpid(), err, sizeof(err)) == 0, "own pid: %s", err);
	GT_CHECK(gt_authz_pid(&root, 0x3fffffff, err, sizeof(err)) == -ESRCH, "missing pid: %s", err);
	snprintf(p, sizeof(p), "%s/plain", base);
	GT_CHECK(gt_authz_cgroup(0, p, err, sizeof(err)) == 0, "root refused cgroup: %s", err);
	GT_CHECK(gt_authz_cgroup(65534, p, err, sizeof(err)) == -EPERM, "nobody got root's cgroup");
	GT_REQUIRE(chown(p, 65534, 65534) == 0, "chown: %s", strerror(errno));
	GT_CHECK(gt_authz_cgroup(65534, p, err, sizeof(err)) == 0, "owner refused: %s", err);
}

/* --pod UID: each kubelet layout's pod directory, by the dashed UID, the
 * underscored one and in capitals; malformed UIDs and unknown pods are
 * refused with a message naming what was looked for. */
static void test_pods(void)
{
	char want[PATH_MAX], rel[PATH_MAX], alt[37], miss[37];

	for (size_t i = 0; i < NPODS; i++) {
		pod_rel(i, rel, sizeof(rel));
		snprintf(want, sizeof(want), "%s/%s", base, rel);
		GT_CHECK(gt_cgroup_resolve_pod(pod_uid[i], out, sizeof(out), err, sizeof(err)) == 0 &&
			 !strcmp(out, want), "pod %s: %s / got %s want %s", pod_layouts[i].what, err,
			 out, want);
		for (int k = 0; k < 36; k++)
			alt[k] = pod_uid[i][k] == '-' ? '_' : (char)toupper((unsigned char)pod_uid[i][k]);
		alt[36] = '\0';
		GT_CHECK(gt_cgroup_resolve_pod(alt, out, sizeof(out), err, sizeof(err)) == 0 &&
			 !strcmp(out, want), "pod %s as %s: %s", pod_layouts[i].what, alt, err);
	}
	random_uid(miss, 7);
	miss[0] = miss[0] == '0' ? '1' : '0'; /* none of the made ones */
	GT_CHECK(gt_cgroup_resolve_pod(miss, out, sizeof(out), err, sizeof(err)) == -ENOENT &&
		 strstr(err, "no pod") && strstr(err, "kubepods"), "unknown pod: %s", err);
	GT_CHECK(gt_cgroup_resolve_pod("default/web", out, sizeof(out), err, sizeof(err)) == -EINVAL &&
		 strstr(err, "metadata.uid"), "a name is no UID: %s", err);
	GT_CHECK(gt_cgroup_resolve_pod("0c5f5a0e2b4c4d7e9f3a1b2c3d4e5f60", out, sizeof(out), err,
				       sizeof(err)) == -EINVAL, "UID without dashes accepted");
	GT_CHECK(gt_cgroup_resolve_pod("", out, sizeof(out), err, sizeof(err)) == -EINVAL,
		 "empty UID accepted");
}

int main(void)
{
	if (geteuid() != 0) {
		printf("FAIL cgroup_resolve: needs root (creates cgroups under the cgroup v2 mount)\n");
		return 1;
	}
	if (setup()) {
		cleanup();
		return 1;
	}
	GT_RUN(test_mount_found);
	GT_RUN(test_full_id);
	GT_RUN(test_unique_prefix);
	GT_RUN(test_ambiguous_prefix);
	GT_RUN(test_no_match);
	GT_RUN(test_unit_name);
	GT_RUN(test_layouts);
	GT_RUN(test_pods);
	GT_RUN(test_unit_suffixes);
	GT_RUN(test_paths);
	GT_RUN(test_bad_paths);
	GT_RUN(test_authz);
	cleanup();
	GT_RUN(test_mount_found); /* cleanup left the tree usable */
	return gt_test_done();
}
