/* Kernel symbols from /proc/kallsyms (text symbols only). */
#ifndef GT_SYM_KALLSYMS_H
#define GT_SYM_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "table.h"

struct gt_kallsyms_line {
	uint64_t addr;
	char type;
	const char *name; /* into the line, name_len bytes */
	size_t name_len;
	const char *mod;  /* module name without brackets, or NULL */
	size_t mod_len;
};

/* Parses "ffffffff81000000 T name [module]".  0 or -EINVAL. */
int gt_kallsyms_parse_line(const char *line, size_t len,
			   struct gt_kallsyms_line *out);

/* Loads the text symbols of path (normally /proc/kallsyms) into t.
 * Returns 0, -EACCES if every address reads as zero (not privileged),
 * or -errno. */
int gt_kallsyms_load(struct gt_symtab *t, const char *path);

#endif
