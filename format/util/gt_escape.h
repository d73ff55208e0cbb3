/* The project's one escaper for text a user or a traced process wrote
 * (format/util/: C library only).  Paths, labels, trigger specs, comms,
 * command lines, symbol and file names reach a terminal or a log line
 * only through it, so no byte of theirs can move a cursor, retitle a
 * window, end a line or forge the next one (docs/security.md, "Text from
 * users").  JSON never uses it: JSON escapes exactly.
 *
 * What is shown as what (GNU `ls -b` style; every escape begins with a
 * backslash, so a backslash of the text is doubled and the result reads
 * back unambiguously):
 *   \\                      a backslash
 *   \a \b \t \n \v \f \r \e  BEL BS TAB LF VT FF CR ESC
 *   \xHH                    any other C0 byte, NUL, DEL, and each byte
 *                           that is not part of well-formed UTF-8
 *                           (a stray continuation, a lead without its
 *                           continuations, an overlong form, a
 *                           surrogate, beyond U+10FFFF: e.g. a lone
 *                           0x9b, the 8-bit CSI, is \x9b)
 *   \uHHHH                  a well-formed character that is a C1
 *                           control (U+0080..U+009F), a line or
 *                           paragraph separator (U+2028, U+2029) or a
 *                           bidirectional control (U+061C, U+200E,
 *                           U+200F, U+202A..U+202E, U+2066..U+2069)
 * Every other byte, printable ASCII and well-formed UTF-8, is kept. */
#ifndef GT_UTIL_ESCAPE_H
#define GT_UTIL_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* Room gt_escape needs for n bytes of text (the worst case, with the NUL). */
#define GT_ESCAPE_SIZE(n) (4 * (size_t)(n) + 1)

/* Writes s[0..n) escaped into out (len bytes with its NUL; len > 0): cut
 * at a whole escape or character when out is too small.  Returns the
 * length written.  A NUL in s[0..n) is text (\x00). */
size_t gt_escape(char *out, size_t len, const char *s, size_t n);

/* gt_escape of the string s; returns out (for a printf argument). */
const char *gt_esc(char *out, size_t len, const char *s);

/* 1 if gt_escape would change s[0..n). */
int gt_escape_needed(const char *s, size_t n);

/* Writes s[0..n) escaped to f. */
void gt_escape_fput(FILE *f, const char *s, size_t n);

#endif
