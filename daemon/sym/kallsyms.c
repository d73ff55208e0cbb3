/* /proc/kallsyms: parse, keep the text symbols, sort. */
#include "kallsyms.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "safe_open.h"

/* Gaps after a symbol larger than this are not attributed to it: the
 * kernel has no sizes here, and a garbage address must stay unknown. */
#define KSYM_MAX_GAP (256 * 1024)

static const char *field_end(const char *p, const char *end)
{
	while (p < end && *p != ' ' && *p != '\t' && *p != '\n')
		p++;
	return p;
}

int gt_kallsyms_parse_line(const char *line, size_t len,
			   struct gt_kallsyms_line *out)
{
	const char *p = line, *end = line + len, *e;
	uint64_t v = 0;
	int digits = 0;

	memset(out, 0, sizeof(*out));
	for (; p < end && *p != ' '; p++, digits++) {
		int d = (*p >= '0' && *p <= '9') ? *p - '0' :
			(*p >= 'a' && *p <= 'f') ? *p - 'a' + 10 : -1;

		if (d < 0 || digits >= 16)
			return -EINVAL;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits || end - p < 4 || p[0] != ' ' || p[2] != ' ')
		return -EINVAL;
	out->addr = v;
	out->type = p[1];
	p += 3;
	e = field_end(p, end);
	if (e == p)
		return -EINVAL;
	out->name = p;
	out->name_len = (size_t)(e - p);
	p = e;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p < end && *p == '[') {
		const char *close = memchr(p, ']', (size_t)(end - p));

		if (!close)
			return -EINVAL;
		out->mod = p + 1;
		out->mod_len = (size_t)(close - p - 1);
	}
	return 0;
}

static int is_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

/* Module names repeat for thousands of symbols: keep one copy of each. */
static const char *module_name(struct gt_symtab *t, const char **last,
			       const char *mod, size_t len)
{
	if (*last && strlen(*last) == len && !memcmp(*last, mod, len))
		return *last;
	*last = gt_arena_strndup(&t->names, mod, len);
	return *last;
}

int gt_kallsyms_load(struct gt_symtab *t, const char *path)
{
	/* opened as a symbol file of a user's would be (safe_open.h) */
	int fd = gt_sym_open(AT_FDCWD, path, GT_SYM_OPEN_TRUSTED, NULL, GT_SYM_FILE_MAX);
	FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;
	char *line = NULL;
	size_t cap = 0, nonzero = 0;
	const char *last_mod = NULL;
	ssize_t n;
	int err = 0;

	if (!f) {
		int err = fd < 0 ? fd : -errno;

		if (fd >= 0)
			close(fd);
		return err;
	}
	t->max_gap = KSYM_MAX_GAP;
	while ((n = getline(&line, &cap, f)) > 0) {
		struct gt_kallsyms_line k;
		const char *mod = NULL;

		if (gt_kallsyms_parse_line(line, (size_t)n, &k) || !is_text(k.type))
			continue;
		nonzero += k.addr != 0;
		if (k.mod && !(mod = module_name(t, &last_mod, k.mod, k.mod_len))) {
			err = -ENOMEM;
			break;
		}
		err = gt_symtab_add(t, k.addr, 0, k.name, k.name_len, mod);
		if (err)
			break;
	}
	free(line);
	fclose(f);
	if (err)
		return err;
	if (t->n && !nonzero)
		return -EACCES;
	if (!t->n)
		return -ENOENT;
	gt_symtab_finish(t);
	return 0;
}
