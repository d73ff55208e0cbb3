/* The environment of a command launched with --heap interpose: the heap
 * interposer first in LD_PRELOAD, and the heap record's descriptor. */
#include "child_env.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interpose/heap_shm.h"

extern char **environ;

/* Where the interposer is: $GOTRACED_HEAP_LIB, next to this program (the
 * build folder), or ../lib/gotraced/ from it (make install). */
static int find_lib(char *path, size_t len)
{
	const char *env = getenv("GOTRACED_HEAP_LIB");
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env) {
		snprintf(path, len, "%s", env);
		return access(path, R_OK) ? -errno : 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -errno;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = 0;
	if ((size_t)snprintf(path, len, "%.3000s/%s", exe, GT_HEAP_LIB_NAME) < len &&
	    !access(path, R_OK))
		return 0;
	if ((size_t)snprintf(path, len, "%.3000s/../lib/gotraced/%s", exe, GT_HEAP_LIB_NAME) >= len)
		return -ENAMETOOLONG;
	return access(path, R_OK) ? -ENOENT : 0;
}

static int count_env(void)
{
	int n = 0;

	while (environ && environ[n])
		n++;
	return n;
}

/* Copies environ without LD_PRELOAD and GOTRACED_HEAP_FD; returns the old
 * LD_PRELOAD value (or NULL). */
static const char *copy_env(char **env, int *n)
{
	const char *old = NULL;

	*n = 0;
	for (int i = 0; environ && environ[i]; i++) {
		if (!strncmp(environ[i], "LD_PRELOAD=", 11)) {
			old = environ[i] + 11;
			continue;
		}
		if (!strncmp(environ[i], GT_HEAP_SHM_ENV_FD "=", sizeof(GT_HEAP_SHM_ENV_FD)))
			continue;
		env[(*n)++] = environ[i];
	}
	return old;
}

int gt_child_env_build(struct gt_child_env *ce, int shm_fd, char *why, size_t whylen)
{
	char lib[PATH_MAX];
	const char *old;
	size_t len;
	int n, rc;

	memset(ce, 0, sizeof(*ce));
	rc = find_lib(lib, sizeof(lib));
	if (rc) {
		snprintf(why, whylen, "--heap interpose: cannot find %s next to gotracectl, in "
			 "../lib/gotraced/ or at $GOTRACED_HEAP_LIB: %s", GT_HEAP_LIB_NAME,
			 strerror(-rc));
		return rc;
	}
	ce->envp = calloc((size_t)count_env() + 3, sizeof(char *));
	if (!ce->envp)
		goto nomem;
	old = copy_env(ce->envp, &n);
	len = strlen(lib) + (old ? strlen(old) : 0) + 16;
	ce->preload = malloc(len);
	if (!ce->preload)
		goto nomem;
	/* first: the program's own preloads (another allocator) come after us,
	 * so ours passes every call on to theirs and counts it */
	snprintf(ce->preload, len, "LD_PRELOAD=%s%s%s", lib, old && *old ? ":" : "",
		 old ? old : "");
	snprintf(ce->fd_var, sizeof(ce->fd_var), "%s=%d", GT_HEAP_SHM_ENV_FD, shm_fd);
	ce->envp[n++] = ce->preload;
	ce->envp[n++] = ce->fd_var;
	ce->envp[n] = NULL;
	return 0;
nomem:
	gt_child_env_free(ce);
	snprintf(why, whylen, "--heap interpose: out of memory");
	return -ENOMEM;
}

void gt_child_env_free(struct gt_child_env *ce)
{
	free(ce->envp);
	free(ce->preload);
	memset(ce, 0, sizeof(*ce));
}
