/* Fuzzes the line parsers of outside text: /proc/PID/maps and
 * /proc/kallsyms.  Input is split at newlines; every line is parsed and
 * what comes back must point inside the line.
 */
// fuzz-links: daemon/sym/maps.c daemon/sym/kallsyms.c daemon/sym/table.c daemon/sym/safe_open.c
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sym/kallsyms.h"
#include "sym/maps.h"

static void inside(const char *p, size_t n, const char *line, size_t len)
{
	if (n && (p < line || p + n > line + len))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		/* An exact heap copy so ASan catches any read past the line. */
		char *line = malloc(len ? len : 1);
		struct gt_map_line m;
		struct gt_kallsyms_line k;

		if (!line)
			return 0;
		memcpy(line, p, len);
		if (gt_map_line_parse(line, len, &m) == 0) {
			inside(m.path, m.path_len, line, len);
			if (m.end < m.start)
				abort();
		}
		if (gt_kallsyms_parse_line(line, len, &k) == 0) {
			inside(k.name, k.name_len, line, len);
			if (k.mod)
				inside(k.mod, k.mod_len, line, len);
		}
		free(line);
		p += len;
	}
	return 0;
}
