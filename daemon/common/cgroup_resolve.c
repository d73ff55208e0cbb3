/* --cgroup / --container resolution against the live cgroup v2 tree. */
#include "cgroup_resolve.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define MAX_DEPTH 16      /* deeper than any runtime nests its scopes */
#define MAX_MATCHES 8

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '7' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

int gt_cgroup_mount(char *out, size_t outlen, char *err, size_t errlen)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], mnt[PATH_MAX], fstype[64];
	int found = 0;

	if (!f) {
		int rc = -errno;

		snprintf(err, errlen, "cannot read /proc/self/mountinfo: %s", strerror(-rc));
		return rc;
	}
	while (!found && fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - ");

		/* fields: id parent maj:min root MOUNTPOINT opts ... - FSTYPE src opts */
		if (!sep || sscanf(sep, " - %63s", fstype) != 1 || strcmp(fstype, "cgroup2"))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		unescape_octal(mnt);
		found = 1;
	}
	fclose(f);
	if (!found) {
		snprintf(err, errlen, "no cgroup v2 filesystem is mounted (see /proc/self/mountinfo)");
		return -ENOENT;
	}
	if (strlen(mnt) >= outlen) {
		snprintf(err, errlen, "cgroup v2 mount path is too long");
		return -ENAMETOOLONG;
	}
	strcpy(out, mnt);
	return 0;
}

int gt_cgroup_check_dir(const char *path, char *err, size_t errlen)
{
	struct statfs sfs;
	struct stat st;

	if (stat(path, &st)) {
		int rc = -errno;

		snprintf(err, errlen, "cgroup %s: %s", path, strerror(-rc));
		return rc;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "cgroup %s: not a directory", path);
		return -ENOTDIR;
	}
	if (statfs(path, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		snprintf(err, errlen, "%s is not a cgroup v2 directory", path);
		return -EINVAL;
	}
	return 0;
}

/* An absolute arg taken as it is: a path on the cgroup v2 mount, or any
 * existing directory that is not one under the mount (the check that follows
 * says it is no cgroup).  mnt gets the mount when there is one. */
static int under_mount(const char *arg, char *mnt, size_t mntlen)
{
	char joined[PATH_MAX * 2], err[256];
	size_t n;
	struct stat st;

	if (gt_cgroup_mount(mnt, mntlen, err, sizeof(err)))
		return 1; /* no cgroup2 mount: the check says so */
	n = strlen(mnt);
	if (!strncmp(arg, mnt, n) && (arg[n] == '/' || !arg[n]))
		return 1;
	snprintf(joined, sizeof(joined), "%s%s", mnt, arg);
	return !(stat(joined, &st) == 0 && S_ISDIR(st.st_mode)) &&
	       stat(arg, &st) == 0;
}

int gt_cgroup_resolve_path(const char *arg, char *out, size_t outlen, char *err, size_t errlen)
{
	char joined[PATH_MAX * 2], real[PATH_MAX], mnt[PATH_MAX];
	int rc;

	if (!arg || !*arg) {
		snprintf(err, errlen, "empty cgroup path");
		return -EINVAL;
	}
	if (!strncmp(arg, "0::/", 4)) /* a line of /proc/PID/cgroup, pasted */
		arg += 3;
	if (arg[0] == '/' && under_mount(arg, mnt, sizeof(mnt))) {
		snprintf(joined, sizeof(joined), "%s", arg);
	} else {
		/* relative, or as /proc/PID/cgroup prints it: "/user.slice/x"
		 * is under the cgroup2 mount */
		rc = gt_cgroup_mount(mnt, sizeof(mnt), err, errlen);
		if (rc)
			return rc;
		snprintf(joined, sizeof(joined), "%s/%s", mnt, arg + (arg[0] == '/'));
	}
	if (!realpath(joined, real)) {
		rc = -errno;
		if (arg[0] == '/' && strcmp(joined, arg))
			snprintf(err, errlen, "cgroup %s: %s (an absolute PATH names a directory "
				 "of the cgroup v2 mount %s, or a cgroup as /proc/PID/cgroup "
				 "prints it, under that mount: neither exists)", arg,
				 strerror(-rc), mnt);
		else
			snprintf(err, errlen, "cgroup %s: %s", joined, strerror(-rc));
		return rc;
	}
	rc = gt_cgroup_check_dir(real, err, errlen);
	if (rc)
		return rc;
	if (strlen(real) >= outlen) {
		snprintf(err, errlen, "cgroup path %s is too long", real);
		return -ENAMETOOLONG;
	}
	strcpy(out, real);
	return 0;
}

/* ---- --container ---------------------------------------------------------- */

struct match {
	char path[PATH_MAX];
	char key[PATH_MAX];  /* container id, or the path itself for units */
};

struct search {
	const char *want;
	int want_is_hex;
	struct match m[MAX_MATCHES];
	int n;
	int overflow;
};

static int is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return 0;
	return n > 0;
}

#define FULL_ID 64 /* every runtime here names a container by 64 hex digits */

/* name is PREFIX<hex>[SUFFIX]: copies the hex part to id. */
static int id_after(const char *name, const char *prefix, const char *suffix, char *id,
		    size_t idlen)
{
	size_t n = strlen(name), p = strlen(prefix), x = strlen(suffix);

	if (n <= p + x || strncmp(name, prefix, p) || strcmp(name + n - x, suffix))
		return 0;
	n -= p + x;
	if (!is_hex(name + p, n) || n >= idlen)
		return 0;
	memcpy(id, name + p, n);
	id[n] = '\0';
	return 1;
}

/* The container id a runtime encoded in a directory name, or 0:
 *   systemd driver  docker-, cri-containerd-, crio-, libpod-<id>.scope
 *                   (docker, kubelet's containerd and CRI-O, podman; also
 *                   rootless podman under user@UID.service)
 *   cgroupfs        libpod-<id> (podman: libpod_parent/libpod-<id>),
 *                   crio-<id> (kubepods/QOS/podUID/crio-<id>), and a bare
 *                   <id> (docker/<id>, kubepods/QOS/podUID/<id>)
 * Without ".scope" the id must be whole: a short hex name is not a
 * runtime's. conmon's libpod-conmon-<id>.scope is no match (not hex). */
static int id_of(const char *name, char *id, size_t idlen)
{
	static const char *const prefixes[] = {"docker-", "cri-containerd-", "crio-", "libpod-"};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		if (id_after(name, prefixes[i], ".scope", id, idlen))
			return 1;
		if (id_after(name, prefixes[i], "", id, idlen) && strlen(id) == FULL_ID)
			return 1;
	}
	return strlen(name) == FULL_ID && id_after(name, "", "", id, idlen);
}

/* A systemd unit name: "nginx.service", "x.scope", "y.slice". */
static int has_unit_suffix(const char *name)
{
	static const char *const suffixes[] = {".service", ".scope", ".slice"};
	size_t n = strlen(name);

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t x = strlen(suffixes[i]);

		if (n > x && !strcmp(name + n - x, suffixes[i]))
			return 1;
	}
	return 0;
}

/* "nginx.service" names itself; a bare "nginx" means nginx.service. */
static int unit_matches(const char *name, const char *want)
{
	size_t w = strlen(want);

	if (has_unit_suffix(want))
		return !strcmp(name, want);
	return !strncmp(name, want, w) && !strcmp(name + w, ".service");
}

static void add_match(struct search *s, const char *path, const char *key)
{
	for (int i = 0; i < s->n; i++) {
		if (!strcmp(s->m[i].key, key)) {
			/* same container seen twice: keep the shallowest directory */
			if (strlen(path) < strlen(s->m[i].path))
				snprintf(s->m[i].path, sizeof(s->m[i].path), "%s", path);
			return;
		}
	}
	if (s->n == MAX_MATCHES) {
		s->overflow = 1;
		return;
	}
	snprintf(s->m[s->n].path, sizeof(s->m[s->n].path), "%s", path);
	snprintf(s->m[s->n].key, sizeof(s->m[s->n].key), "%s", key);
	s->n++;
}

static void visit(struct search *s, const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[PATH_MAX], id[128];

	if (!d)
		return; /* vanished or unreadable: not ours to report */
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= sizeof(path))
			continue;
		if (s->want_is_hex && id_of(de->d_name, id, sizeof(id)) &&
		    !strncmp(id, s->want, strlen(s->want)))
			add_match(s, path, id);
		else if (unit_matches(de->d_name, s->want))
			add_match(s, path, path);
		if (depth < MAX_DEPTH)
			visit(s, path, depth + 1);
	}
	closedir(d);
}

static void list_matches(const struct search *s, const char *what, char *err, size_t errlen)
{
	size_t off = (size_t)snprintf(err, errlen, "%s '%s' is ambiguous, it matches:", what,
				      s->want);

	for (int i = 0; i < s->n && off < errlen; i++)
		off += (size_t)snprintf(err + off, errlen - off, " %s", s->m[i].path);
	if (s->overflow && off < errlen)
		snprintf(err + off, errlen - off, " ...");
}

static int pick(const struct search *s, const char *mnt, char *out, size_t outlen,
		char *err, size_t errlen)
{
	if (s->n == 0) {
		const char *svc = has_unit_suffix(s->want) ? "" : ".service";

		snprintf(err, errlen, "no container or unit '%s' under %s (looked for a container id "
			 "or prefix in docker-, cri-containerd-, crio-, libpod-<id>.scope, libpod-<id>, "
			 "crio-<id>, <id> (docker/, kubepods/.../pod<uid>/), and for unit %s%s)",
			 s->want, mnt, s->want, svc);
		return -ENOENT;
	}
	if (s->n > 1 || s->overflow) {
		list_matches(s, "container", err, errlen);
		return -EEXIST;
	}
	if (strlen(s->m[0].path) >= outlen) {
		snprintf(err, errlen, "cgroup path %s is too long", s->m[0].path);
		return -ENAMETOOLONG;
	}
	strcpy(out, s->m[0].path);
	return 0;
}

int gt_cgroup_resolve_container(const char *id, char *out, size_t outlen, char *err, size_t errlen)
{
	struct search *s;
	char mnt[PATH_MAX];
	int rc;

	if (!id || !*id || strchr(id, '/')) {
		snprintf(err, errlen, "'%s' is not a container id or unit name", id ? id : "");
		return -EINVAL;
	}
	rc = gt_cgroup_mount(mnt, sizeof(mnt), err, errlen);
	if (rc)
		return rc;
	s = calloc(1, sizeof(*s)); /* 64 KiB of paths: not on the stack */
	if (!s) {
		snprintf(err, errlen, "out of memory resolving container '%s'", id);
		return -ENOMEM;
	}
	s->want = id;
	s->want_is_hex = is_hex(id, strlen(id));
	visit(s, mnt, 0);
	rc = pick(s, mnt, out, outlen, err, errlen);
	free(s);
	return rc;
}

/* ---- --pod ------------------------------------------------------------------ */

#define POD_UID_LEN 36 /* 8-4-4-4-12 */

/* uid in its two spellings: dashed (cgroupfs) and underscored (systemd
 * slice names, where '-' separates the hierarchy). 0 if malformed. */
static int pod_uid_forms(const char *uid, char dashed[POD_UID_LEN + 1],
			 char under[POD_UID_LEN + 1])
{
	if (strlen(uid) != POD_UID_LEN)
		return 0;
	for (int i = 0; i < POD_UID_LEN; i++) {
		int sep = i == 8 || i == 13 || i == 18 || i == 23;
		char c = (char)tolower((unsigned char)uid[i]);

		if (sep ? c != '-' && c != '_' : !isxdigit((unsigned char)c))
			return 0;
		dashed[i] = sep ? '-' : c;
		under[i] = sep ? '_' : c;
	}
	dashed[POD_UID_LEN] = under[POD_UID_LEN] = '\0';
	return 1;
}

/* kubelet's name for the pod's directory: "pod<dashed>" (cgroupfs), or
 * "kubepods[-QOS]-pod<under>.slice" (systemd). */
static int pod_dir_matches(const char *name, const char *dashed, const char *under)
{
	static const char *const slices[] = {"kubepods-pod", "kubepods-burstable-pod",
					     "kubepods-besteffort-pod"};
	char want[128];

	if (!strncmp(name, "pod", 3) && !strcmp(name + 3, dashed))
		return 1;
	for (size_t i = 0; i < sizeof(slices) / sizeof(slices[0]); i++) {
		snprintf(want, sizeof(want), "%s%s.slice", slices[i], under);
		if (!strcmp(name, want))
			return 1;
	}
	return 0;
}

static void visit_pods(struct search *s, const char *dashed, const char *under, const char *dir,
		       int depth)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[PATH_MAX];

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= sizeof(path))
			continue;
		if (pod_dir_matches(de->d_name, dashed, under))
			add_match(s, path, path); /* its containers are below: no need to go on */
		else if (depth < MAX_DEPTH)
			visit_pods(s, dashed, under, path, depth + 1);
	}
	closedir(d);
}

int gt_cgroup_resolve_pod(const char *uid, char *out, size_t outlen, char *err, size_t errlen)
{
	char dashed[POD_UID_LEN + 1], under[POD_UID_LEN + 1], mnt[PATH_MAX];
	struct search *s;
	int rc;

	if (!uid || !pod_uid_forms(uid, dashed, under)) {
		snprintf(err, errlen, "'%s' is not a pod UID (8-4-4-4-12 hex digits, as the pod's "
			 "metadata.uid)", uid ? uid : "");
		return -EINVAL;
	}
	rc = gt_cgroup_mount(mnt, sizeof(mnt), err, errlen);
	if (rc)
		return rc;
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory resolving pod %s", dashed);
		return -ENOMEM;
	}
	s->want = dashed;
	visit_pods(s, dashed, under, mnt, 0);
	if (s->n == 0) {
		snprintf(err, errlen, "no pod %s on this node: no kubepods/[QOS/]pod%s nor "
			 "kubepods[-QOS]-pod%s.slice under %s", dashed, dashed, under, mnt);
		rc = -ENOENT;
	} else if (s->n > 1 || s->overflow) {
		list_matches(s, "pod", err, errlen);
		rc = -EEXIST;
	} else if (strlen(s->m[0].path) >= outlen) {
		snprintf(err, errlen, "cgroup path %s is too long", s->m[0].path);
		rc = -ENAMETOOLONG;
	} else {
		strcpy(out, s->m[0].path);
	}
	free(s);
	return rc;
}
