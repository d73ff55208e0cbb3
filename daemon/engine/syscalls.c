/* The syscall names of this architecture, for the layers above the
 * translator (record --trigger syscall:NAME). */
#include "session.h"

#include <string.h>

#include "translate/syscall_class.h"

#define MAX_SYSNR 4096

const char *gt_engine_syscall_name(int64_t nr)
{
	return gt_syscall_name(nr);
}

int64_t gt_engine_syscall_nr(const char *name)
{
	for (int64_t nr = 0; nr < MAX_SYSNR; nr++) {
		const char *n = gt_syscall_name(nr);
		if (n && !strcmp(n, name))
			return nr;
	}
	return -1;
}
