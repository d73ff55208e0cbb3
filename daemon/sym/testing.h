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

#endif