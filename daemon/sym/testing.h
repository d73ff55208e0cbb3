/* What the symbolizer lets tests see of its state; no layer above uses it. */
#ifndef GT_SYM_TESTING_H
#define GT_SYM_TESTING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbolize.h"

/* Flags (gt_sym_info_flags) of the binary mapped at ip in pid, or -errno
 * (-ESRCH pid unknown, -ENOENT no mapping at ip). */
int gt_symbolizer_binary_info(struct gt_symbolizer *s, pid_t pid, uint64_t ip);

/* How many strings the symbolizer keeps (paths, names, fallbacks): 0 once
 * it holds no process; garbage lookups (-EFAULT) add none. */
size_t gt_symbolizer_names(const struct gt_symbolizer *s);

/* no_wait: lookups never wait for a binary's load (loader.h), they take
 * it only once it is done. */
void gt_symbolizer_no_wait(struct gt_symbolizer *s, int no_wait);

/* Waits up to max_ns until no load is queued or running; 1 if so. */
int gt_sym_loader_idle(uint64_t max_ns);

/* Loader threads alive now (loader.h): at most GT_SYM_LOADERS_IDLE once
 * idle, whatever the peak was. */
unsigned gt_sym_loader_threads(void);

/* Loads running and queued now (loader.h). */
void gt_sym_loads_now(unsigned *running, unsigned *queued);

/* Called on the loader thread before each load, with the mapped path:
 * a test blocks it there as a file system that never answers would. */
extern void (*gt_sym_load_hook)(const char *path);

#endif