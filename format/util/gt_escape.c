/* Text of users and traced processes made safe for a terminal or a log
 * line: see gt_escape.h for what becomes what. */
#include "gt_escape.h"

#include <stdint.h>
#include <string.h>

/* Length of the well-formed UTF-8 character at s[0..n) (its code point in
 * *cp), or 0 if s[0] does not begin one (Unicode's table 3-7: no
 * overlong form, no surrogate, nothing past U+10FFFF). */
static size_t utf8_char(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned char c = s[0];
	size_t k;
	uint32_t v, min;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf)
		k = 2, v = c & 0x1f, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		k = 3, v = c & 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		k = 4, v = c & 0x07, min = 0x10000;
	else
		return 0;
	if (n < k)
		return 0;
	for (size_t i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return k;
}

/* A well-formed character a terminal acts on, or that reorders or
 * breaks the line around it. */
static int unicode_control(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 || cp == 0x061c ||
	       cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

/* The escape of the character (or the one bad byte) at s, into e (at
 * least 7 bytes): its length, 0 if the text is kept as it is.  *used:
 * the bytes of s it stands for. */
static size_t escape_one(const unsigned char *s, size_t n, char *e, size_t *used)
{
	static const char named[] = "abtnvfr"; /* \a = 7 .. \r = 13 */
	uint32_t cp;
	size_t k = utf8_char(s, n, &cp);

	*used = k ? k : 1;
	if (!k)
		return (size_t)snprintf(e, 7, "\\x%02x", s[0]);
	if (cp == '\\' || (cp >= 7 && cp <= 13) || cp == 0x1b) {
		e[0] = '\\';
		e[1] = cp == '\\' ? '\\' : cp == 0x1b ? 'e' : named[cp - 7];
		e[2] = 0;
		return 2;
	}
	if (cp < 0x20 || cp == 0x7f)
		return (size_t)snprintf(e, 7, "\\x%02x", (unsigned)cp);
	if (unicode_control(cp))
		return (size_t)snprintf(e, 7, "\\u%04x", (unsigned)cp);
	return 0;
}

size_t gt_escape(char *out, size_t len, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0, i = 0;

	while (i < n) {
		char e[8];
		size_t used, el = escape_one(p + i, n - i, e, &used);
		const char *src = el ? e : s + i;
		size_t sl = el ? el : used;

		if (o + sl + 1 > len)
			break;
		memcpy(out + o, src, sl);
		o += sl;
		i += used;
	}
	out[o] = 0;
	return o;
}

const char *gt_esc(char *out, size_t len, const char *s)
{
	gt_escape(out, len, s ? s : "", s ? strlen(s) : 0);
	return out;
}

int gt_escape_needed(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		char e[8];
		size_t used;

		if (escape_one(p + i, n - i, e, &used))
			return 1;
		i += used;
	}
	return 0;
}

void gt_escape_fput(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		char e[8];
		size_t used, el = escape_one(p + i, n - i, e, &used);

		fwrite(el ? e : s + i, 1, el ? el : used, f);
		i += used;
	}
}
