/* What the capture lets tests see of its state; no layer above uses it. */
#ifndef GT_CAPTURE_TESTING_H
#define GT_CAPTURE_TESTING_H

#include <stddef.h>
#include <stdint.h>

#include "capture.h"

/* Whether the tracepoint programs are attached now. */
int gt_capture_attached(const struct gt_capture *c);

/* The session mask of a traced tgid: 0, or -ENOENT when not in the filter
 * (never added, removed, or gone: BPF drops a process from the filter at
 * the last switch-out of its last thread, so a reused pid is not traced). */
int gt_capture_tgid_sessions(struct gt_capture *c, uint32_t tgid, uint32_t *mask);

/* Pages of the merge queues resident now (mincore): what buffering events
 * cost in memory; 0 once the capture is detached and polled empty;
 * SIZE_MAX if mincore fails. */
size_t gt_capture_merge_resident(const struct gt_capture *c);

/* How many programs c loaded (in all its groups), their size after the
 * verifier (xlated bytes) in *xlated and the instructions it processed in
 * *verified (0 before Linux 5.16); -EEXIST if one was loaded twice. */
int gt_capture_loaded_progs(struct gt_capture *c, uint64_t *xlated, uint64_t *verified);

/* gt_capture_kernel_check() of the raw BTF file `path` instead of the
 * running kernel's. */
int gt_capture_kernel_check_file(const char *path, char *err, size_t errlen);

#endif
