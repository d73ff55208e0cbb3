/* --pod NAMESPACE/NAME through crictl (see pod_name.h). */
#include "pod_name.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CRICTL_OUT 4096 /* a few sandbox ids, or one "name uid" line */

/* Runs argv (crictl, from PATH) with stdout into out (NUL-terminated,
 * trailing newline kept); stderr is crictl's own.  0, or -errno: -ENOENT
 * if crictl is not installed, -EIO if it failed. */
static int run_capture(char *const argv[], char *out, size_t outlen)
{
	int fd[2], status, rc = 0;
	size_t n = 0;
	ssize_t r;
	pid_t pid;

	if (pipe2(fd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		close(fd[0]);
		close(fd[1]);
		return rc;
	}
	if (pid == 0) {
		dup2(fd[1], STDOUT_FILENO);
		execvp(argv[0], argv);
		_exit(errno == ENOENT ? 127 : 126);
	}
	close(fd[1]);
	while (n + 1 < outlen && (r = read(fd[0], out + n, outlen - 1 - n)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		n += (size_t)r;
	}
	out[n] = '\0';
	close(fd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return -ENOENT;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

/* crictl's --name is a regular expression: each sandbox it lists is asked
 * its exact name and UID, and only an exact name counts. */
int gt_pod_uid_by_name(const char *ns_name, char *uid, size_t uidlen, char *err, size_t errlen)
{
	char ns[256], ids[CRICTL_OUT], line[CRICTL_OUT], got_name[256], got_uid[64];
	const char *slash = strchr(ns_name, '/');
	char *save = NULL;
	int found = 0, rc;

	if (!slash || slash == ns_name || !slash[1] || strchr(slash + 1, '/') ||
	    (size_t)(slash - ns_name) >= sizeof(ns)) {
		snprintf(err, errlen, "'%s' is not NAMESPACE/NAME nor a pod UID", ns_name);
		return -EINVAL;
	}
	snprintf(ns, sizeof(ns), "%.*s", (int)(slash - ns_name), ns_name);
	char *list[] = {"crictl", "pods", "--namespace", ns, "--name", (char *)slash + 1, "-q", NULL};

	rc = run_capture(list, ids, sizeof(ids));
	if (rc == -ENOENT) {
		snprintf(err, errlen, "pod %s: crictl is not installed, and without it (or the API "
			 "server, which gotracectl does not ask) a pod's name does not give its UID: "
			 "pass --pod UID (the pod's metadata.uid: `kubectl get pod -n %s %s -o "
			 "jsonpath={.metadata.uid}`, or the downward API)", ns_name, ns, slash + 1);
		return rc;
	}
	if (rc) {
		snprintf(err, errlen, "pod %s: crictl pods --namespace %s --name %s failed%s",
			 ns_name, ns, slash + 1, rc == -EIO ? " (see its message above)" : "");
		return rc;
	}
	for (char *id = strtok_r(ids, " \t\n", &save); id; id = strtok_r(NULL, " \t\n", &save)) {
		char *inspect[] = {"crictl", "inspectp", "-o", "go-template", "--template",
				   "{{.status.metadata.name}} {{.status.metadata.uid}}", id, NULL};

		if (run_capture(inspect, line, sizeof(line)) ||
		    sscanf(line, "%255s %63s", got_name, got_uid) != 2 || strcmp(got_name, slash + 1))
			continue;
		if (found++ == 0 && strlen(got_uid) < uidlen)
			strcpy(uid, got_uid);
	}
	if (found == 1)
		return 0;
	if (found)
		snprintf(err, errlen, "pod %s: crictl lists %d sandboxes of that name (a pod being "
			 "replaced?): pass --pod UID", ns_name, found);
	else
		snprintf(err, errlen, "pod %s: crictl knows no such pod on this node", ns_name);
	return found ? -EEXIST : -ENOENT;
}
