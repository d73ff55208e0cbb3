/* --heap interpose for workloads a test or bench spawns itself (what
 * gotracectl does for -- CMD): a fresh heap record and the environment
 * that preloads build/libgotraced-heap.so and names the record. */
#ifndef GT_TEST_HEAP_SHM_UTIL_H
#define GT_TEST_HEAP_SHM_UTIL_H

#include <limits.h>

#include "mem_test_util.h"
#include "interpose/heap_shm.h"

/* Spawns argv with the interposer preloaded (after the preload list
 * `before`, if not NULL; then `after`) and a record; the record's
 * descriptor is returned in *shm; every sample_every-th allocation of a
 * thread is sampled (0: none) (the caller closes it) or -1. */
static inline int mt_spawn_interposed(struct mt_child *c, char *const argv[], const char *before,
				      const char *after, unsigned sample_every, int *shm)
{
	char lib[PATH_MAX + 64], dir[PATH_MAX], list[3 * PATH_MAX], fdv[32];
	int rc;

	*shm = gt_heap_shm_create(sample_every);
	if (*shm < 0)
		return *shm;
	/* absolute: the workload may change directory */
	snprintf(lib, sizeof(lib), "%s/%s", realpath(mt_build, dir) ? dir : mt_build,
		 GT_HEAP_LIB_NAME);
	snprintf(list, sizeof(list), "%s%s%s%s%s", before ? before : "", before ? ":" : "", lib,
		 after ? ":" : "", after ? after : "");
	snprintf(fdv, sizeof(fdv), "%d", *shm);
	setenv("LD_PRELOAD", list, 1);
	setenv(GT_HEAP_SHM_ENV_FD, fdv, 1);
	rc = mt_spawn(c, argv);
	unsetenv("LD_PRELOAD");
	unsetenv(GT_HEAP_SHM_ENV_FD);
	return rc;
}

#endif
