/* The environment of a command launched with --heap interpose (see
 * child_launch.h), built before the fork (the child only execs). */
#ifndef GT_CTL_CHILD_ENV_H
#define GT_CTL_CHILD_ENV_H

#include <stddef.h>

struct gt_child_env {
	char **envp;      /* environ + LD_PRELOAD + GOTRACED_HEAP_FD */
	char *preload;
	char fd_var[48];
};

/* 0, or -errno with why (the interposer not found, no memory). */
int gt_child_env_build(struct gt_child_env *ce, int shm_fd, char *why, size_t whylen);
void gt_child_env_free(struct gt_child_env *ce);

#endif
