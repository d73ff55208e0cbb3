/* A container found through its conmon (see conmon.h). */
#include "conmon.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc_select.h"
#include "procfs.h"

#define MAX_IDS 8

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Copies src to dst if it fits (and is not empty when required). */
static int take(char *dst, size_t dstlen, const char *src)
{
	if (strlen(src) >= dstlen)
		return 0;
	strcpy(dst, src);
	return 1;
}

int gt_conmon_cmdline(const char *cmdline, size_t len, char *id, size_t idlen, char *name,
		      size_t namelen)
{
	const char *end = cmdline + len, *cid = NULL, *cname = "";

	if (!len || strcmp(base_name(cmdline), "conmon"))
		return 0;
	for (const char *a = cmdline + strlen(cmdline) + 1; a < end; a += strlen(a) + 1) {
		const char *next = a + strlen(a) + 1;

		if (!strcmp(a, "-e") || !strcmp(a, "--exec"))
			return 0; /* an exec session's monitor */
		if ((!strcmp(a, "-c") || !strcmp(a, "--cid")) && next < end)
			cid = next;
		else if (!strncmp(a, "--cid=", 6))
			cid = a + 6;
		else if ((!strcmp(a, "-n") || !strcmp(a, "--name")) && next < end)
			cname = next;
		else if (!strncmp(a, "--name=", 7))
			cname = a + 7;
	}
	return cid && *cid && take(id, idlen, cid) && take(name, namelen, cname);
}

static int is_hex(const char *s)
{
	return *s && strspn(s, "0123456789abcdef") == strlen(s);
}

struct conmon_match {
	char id[128];
	pid_t pid;
};

/* Does the conmon of pid monitor the container want names? */
static int matches(pid_t pid, const char *want, int want_hex, struct conmon_match *m)
{
	char path[64], cmdline[8192], name[256];
	int len;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	len = gt_proc_read_small(path, cmdline, sizeof(cmdline));
	if (len <= 0 ||
	    !gt_conmon_cmdline(cmdline, (size_t)len, m->id, sizeof(m->id), name, sizeof(name)))
		return 0;
	m->pid = pid;
	return !strcmp(name, want) || (want_hex && !strncmp(m->id, want, strlen(want)));
}

static void list_ids(const char *want, const struct conmon_match *m, int nm, int more,
		     char *err, size_t errlen)
{
	size_t off = (size_t)snprintf(err, errlen, "container '%s' is ambiguous, it matches:", want);

	for (int i = 0; i < nm && off < errlen; i++)
		off += (size_t)snprintf(err + off, errlen - off, " %s", m[i].id);
	if (more && off < errlen)
		snprintf(err + off, errlen - off, " ...");
}

int gt_conmon_find(const char *want, char *id, size_t idlen, pid_t *conmon, char *err,
		   size_t errlen)
{
	struct conmon_match m[MAX_IDS + 1];
	struct gt_proc_entry *list;
	int nlist, nm = 0, more = 0, rc, want_hex = is_hex(want);

	if (!*want) {
		snprintf(err, errlen, "empty container id or name");
		return -ENOENT;
	}
	rc = gt_proc_list(&list, &nlist);
	if (rc) {
		snprintf(err, errlen, "cannot list /proc: %s", strerror(-rc));
		return rc;
	}
	for (int i = 0; i < nlist; i++) {
		if (list[i].kthread || !matches(list[i].pid, want, want_hex, &m[nm]))
			continue;
		if (nm < MAX_IDS)
			nm++;
		else
			more = 1;
	}
	free(list);
	if (nm == 0) {
		snprintf(err, errlen, "no conmon monitors a container '%s'", want);
		return -ENOENT;
	}
	if (nm > 1 || more) {
		list_ids(want, m, nm, more, err, errlen);
		return -EEXIST;
	}
	if (!take(id, idlen, m[0].id)) {
		snprintf(err, errlen, "container id %s is too long", m[0].id);
		return -ENAMETOOLONG;
	}
	*conmon = m[0].pid;
	return 0;
}

int gt_conmon_children(pid_t conmon, pid_t *pids, int max, int *n, char *err, size_t errlen)
{
	struct gt_proc_entry *list;
	int nlist, rc;

	*n = 0;
	rc = gt_proc_list(&list, &nlist);
	if (rc) {
		snprintf(err, errlen, "cannot list /proc: %s", strerror(-rc));
		return rc;
	}
	for (int i = 0; i < nlist && *n < max; i++)
		if (list[i].ppid == conmon)
			pids[(*n)++] = list[i].pid;
	free(list);
	if (*n == 0) {
		snprintf(err, errlen, "the container's conmon (pid %d) has no process", (int)conmon);
		return -ESRCH;
	}
	return 0;
}
