#include "child_launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child_env.h"
#include "interpose/heap_shm.h"

static void child_main(char **argv, char **envp, int go_rd, int err_wr)
{
	char byte;
	int e;

	/* Default signal handling for CMD, whatever the recorder set up. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	if (read(go_rd, &byte, 1) != 1)
		_exit(127); /* the recorder gave up before releasing us */
	close(go_rd);
	/* Only now: until its exec the child is a gotracectl too, and a
	 * SIGUSR1 sent to them all (a flight dump's) must not end it. */
	signal(SIGUSR1, SIG_DFL);
	if (envp)
		execvpe(argv[0], argv, envp);
	else
		execvp(argv[0], argv);
	e = errno;
	if (write(err_wr, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

/* --heap interpose: the heap record (the child inherits it) and the
 * environment naming it. */
static int prepare_heap(struct gt_child *c, struct gt_child_env *ce, int *shm_fd,
			char *why, size_t whylen)
{
	int rc;

	*shm_fd = -1;
	if (!c->heap_interpose)
		return 0;
	*shm_fd = gt_heap_shm_create(c->alloc_every);
	if (*shm_fd < 0) {
		rc = *shm_fd;
		snprintf(why, whylen, "--heap interpose: creating the heap record (memfd): %s",
			 strerror(-rc));
		return rc;
	}
	rc = gt_child_env_build(ce, *shm_fd, why, whylen);
	if (rc) {
		close(*shm_fd);
		*shm_fd = -1;
	}
	return rc;
}

static int fork_held(struct gt_child *c, char **argv, char **envp, char *why, size_t whylen);

int gt_child_prepare(struct gt_child *c, char **argv, char *why, size_t whylen)
{
	struct gt_child_env ce = { 0 };
	int shm_fd, rc;

	c->pid = -1;
	c->go_fd = c->err_fd = -1;
	if (!argv || !argv[0]) {
		snprintf(why, whylen, "no command given after --");
		return -EINVAL;
	}
	rc = prepare_heap(c, &ce, &shm_fd, why, whylen);
	if (rc)
		return rc;
	rc = fork_held(c, argv, ce.envp, why, whylen);
	/* the child holds the record now; the recorder finds it there */
	if (shm_fd >= 0)
		close(shm_fd);
	gt_child_env_free(&ce);
	return rc;
}

static int fork_held(struct gt_child *c, char **argv, char **envp, char *why, size_t whylen)
{
	int go[2], errp[2];

	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		int err = errno;
		snprintf(why, whylen, "cannot start %s: pipe: %s", argv[0], strerror(err));
		return -err;
	}
	c->pid = fork();
	if (c->pid < 0) {
		int err = errno;
		snprintf(why, whylen, "cannot start %s: fork: %s", argv[0], strerror(err));
		close(go[0]); close(go[1]); close(errp[0]); close(errp[1]);
		return -err;
	}
	if (c->pid == 0) {
		close(go[1]);
		close(errp[0]);
		child_main(argv, envp, go[0], errp[1]);
	}
	close(go[0]);
	close(errp[1]);
	c->go_fd = go[1];
	c->err_fd = errp[0];
	return 0;
}

int gt_child_release(struct gt_child *c, const char *cmd, char *why, size_t whylen)
{
	char go = 'g';
	int e = 0;
	ssize_t n;

	if (write(c->go_fd, &go, 1) != 1) {
		int err = errno;
		snprintf(why, whylen, "cannot start %s: %s", cmd, strerror(err));
		gt_child_abort(c);
		return -err;
	}
	close(c->go_fd);
	c->go_fd = -1;
	do
		n = read(c->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(c->err_fd);
	c->err_fd = -1;
	if (n == (ssize_t)sizeof(e)) {
		snprintf(why, whylen, "cannot run %s: %s", cmd, strerror(e));
		waitpid(c->pid, NULL, 0);
		c->pid = -1;
		return -e;
	}
	return 0;
}

void gt_child_abort(struct gt_child *c)
{
	if (c->go_fd >= 0)
		close(c->go_fd); /* the child's read sees EOF and exits */
	if (c->err_fd >= 0)
		close(c->err_fd);
	c->go_fd = c->err_fd = -1;
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
	}
	c->pid = -1;
}
