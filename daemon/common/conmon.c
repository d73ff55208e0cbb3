/* A container's processes found through its conmon (see conmon.h). */
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

int gt_conmon_cmdline_id(const char *cmdline, size_t len, char *id, size_t idlen)
{
	const char *end = cmdline + len, *found = NULL;

	if (!len || strcmp(base_name(cmdline), "conmon"))
		return 0;
	for (const char *a = cmdline + strlen(cmdline) + 1; a < end; a += strlen(a) + 1) {
		const char *next = a + strlen(a) + 1;

		if (!strcmp(a, "-e") || !strcmp(a, "--exec"))
			return 0; /* an exec session's monitor */
		if ((!strcmp(a, "-c") || !strcmp(a, "--cid")) && next < end)
			found = next;
		else if (!strncmp(a, "--cid=", 6))
			found = a + 6;
	}
	if (!found || !*found || strlen(found) >= idlen)
		return 0;
	strcpy(id, found);
	return 1;
}

struct conmon_match {
	char id[128];
	pid_t pid;
};

/* The conmons of containers whose id starts with want: how many (at most
 * MAX_IDS kept; *more set if there were others). */
static int find_conmons(const struct gt_proc_entry *list, int n, const char *want,
			struct conmon_match *m, int *more)
{
	char path[64], cmdline[8192], id[128];
	int nm = 0, len;

	for (int i = 0; i < n; i++) {
		if (list[i].kthread)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)list[i].pid);
		len = gt_proc_read_small(path, cmdline, sizeof(cmdline));
		if (len <= 0 || !gt_conmon_cmdline_id(cmdline, (size_t)len, id, sizeof(id)) ||
		    strncmp(id, want, strlen(want)))
			continue;
		if (nm == MAX_IDS) {
			*more = 1;
			continue;
		}
		snprintf(m[nm].id, sizeof(m[nm].id), "%s", id);
		m[nm++].pid = list[i].pid;
	}
	return nm;
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

int gt_conmon_container_pids(const char *id, pid_t *pids, int max, int *n, char *full,
			     size_t fulllen, char *err, size_t errlen)
{
	struct conmon_match m[MAX_IDS];
	struct gt_proc_entry *list;
	int nlist, nm, more = 0, rc;

	*n = 0;
	if (!*id || strspn(id, "0123456789abcdef") != strlen(id)) {
		snprintf(err, errlen, "'%s' is not a container id", id);
		return -ENOENT; /* a unit name: nothing for conmon to know */
	}
	rc = gt_proc_list(&list, &nlist);
	if (rc) {
		snprintf(err, errlen, "cannot list /proc: %s", strerror(-rc));
		return rc;
	}
	nm = find_conmons(list, nlist, id, m, &more);
	if (nm == 0)
		rc = -ENOENT;
	else if (nm > 1 || more)
		rc = -EEXIST;
	for (int i = 0; !rc && i < nlist && *n < max; i++)
		if (list[i].ppid == m[0].pid)
			pids[(*n)++] = list[i].pid;
	free(list);
	if (rc == -ENOENT)
		snprintf(err, errlen, "no conmon monitors a container '%s'", id);
	else if (rc == -EEXIST)
		list_ids(id, m, nm, more, err, errlen);
	else if (*n == 0)
		snprintf(err, errlen, "container %s (conmon pid %d) has no process", m[0].id,
			 (int)m[0].pid);
	if (rc || *n == 0)
		return rc ? rc : -ESRCH;
	snprintf(full, fulllen, "%s", m[0].id);
	return 0;
}
