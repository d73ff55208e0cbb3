/* A set of unique strings: one stable copy of each (module paths and
 * fallback names like "libc.so.6+0x1234"), freed all at once. */
#ifndef GT_SYM_INTERN_H
#define GT_SYM_INTERN_H

#include <stddef.h>

#include "table.h"

struct gt_intern {
	const char **slots; /* open addressing, power-of-two size */
	size_t nslots, n;
	struct gt_arena arena;
};

/* The stable copy of s[0..len), or NULL on allocation failure. */
const char *gt_intern(struct gt_intern *in, const char *s, size_t len);
void gt_intern_free(struct gt_intern *in);

#endif
