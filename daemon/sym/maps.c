/* /proc/PID/maps line parser: strict, bounded, no allocation. */
#include "maps.h"

#include <errno.h>
#include <string.h>

struct cursor {
	const char *p, *end;
};

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Reads 1..16 hex digits (base 16) or 1..20 decimal digits (base 10). */
static int read_num(struct cursor *c, unsigned base, uint64_t *out)
{
	uint64_t v = 0;
	int n = 0, d;

	while (c->p < c->end && (d = hexval(*c->p)) >= 0 && (unsigned)d < base) {
		if (v > (UINT64_MAX - (unsigned)d) / base)
			return -EINVAL; /* overflow */
		v = v * base + (unsigned)d;
		c->p++;
		n++;
	}
	if (!n)
		return -EINVAL;
	*out = v;
	return 0;
}

static int expect(struct cursor *c, char ch)
{
	if (c->p >= c->end || *c->p != ch)
		return -EINVAL;
	c->p++;
	return 0;
}

static int skip_spaces(struct cursor *c)
{
	const char *start = c->p;

	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
		c->p++;
	return c->p > start ? 0 : -EINVAL;
}

static int read_perms(struct cursor *c, struct gt_map_line *m)
{
	static const char want[4][2] = { { 'r', '-' }, { 'w', '-' },
					 { 'x', '-' }, { 'p', 's' } };
	int bits[4];

	if (c->end - c->p < 4)
		return -EINVAL;
	for (int i = 0; i < 4; i++) {
		if (c->p[i] == want[i][0])
			bits[i] = i < 3;
		else if (c->p[i] == want[i][1])
			bits[i] = i == 3;
		else
			return -EINVAL;
	}
	m->readable = bits[0];
	m->writable = bits[1];
	m->executable = bits[2];
	m->shared = bits[3];
	c->p += 4;
	return 0;
}

static void read_path(struct cursor *c, struct gt_map_line *m)
{
	static const char deleted[] = " (deleted)";
	const size_t dlen = sizeof(deleted) - 1;
	const char *end = c->end;

	while (c->p < end && (*c->p == ' ' || *c->p == '\t'))
		c->p++;
	if (end > c->p && end[-1] == '\n')
		end--;
	m->path = c->p;
	m->path_len = (size_t)(end - c->p);
	m->deleted = 0;
	if (m->path_len > dlen && !memcmp(end - dlen, deleted, dlen)) {
		m->path_len -= dlen;
		m->deleted = 1;
	}
}

int gt_map_line_parse(const char *line, size_t len, struct gt_map_line *m)
{
	struct cursor c = { line, line + len };
	uint64_t major, minor;

	memset(m, 0, sizeof(*m));
	m->path = "";
	if (read_num(&c, 16, &m->start) || expect(&c, '-') ||
	    read_num(&c, 16, &m->end) || skip_spaces(&c) ||
	    read_perms(&c, m) || skip_spaces(&c) ||
	    read_num(&c, 16, &m->offset) || skip_spaces(&c) ||
	    read_num(&c, 16, &major) || expect(&c, ':') ||
	    read_num(&c, 16, &minor) || skip_spaces(&c) ||
	    read_num(&c, 10, &m->inode))
		return -EINVAL;
	if (m->end < m->start || major > 0xfffff || minor > 0xfffff)
		return -EINVAL;
	m->dev_major = (unsigned)major;
	m->dev_minor = (unsigned)minor;
	if (c.p < c.end && *c.p != ' ' && *c.p != '\t' && *c.p != '\n')
		return -EINVAL;
	read_path(&c, m);
	return 0;
}
