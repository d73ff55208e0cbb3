/* How a flight recording's segments keep records small (docs/design.md,
 * "Flight recorder"): each record is XORed with the previous record of its
 * type in the same segment, and the result written as runs of zero bytes
 * and literal bytes.  Consecutive records of a type share most of their
 * bytes (tids, comms, masks, the high bytes of the time), so a 112-byte
 * switch record takes a few dozen.  The state starts over at each
 * segment: a segment decodes alone, so old ones can go. */
#include "flight_codec.h"

#include <string.h>

static size_t put_uvarint(unsigned char *out, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (unsigned char)v;
	return n;
}

static size_t get_uvarint(const unsigned char *in, size_t avail, uint64_t *v)
{
	uint64_t r = 0;

	for (size_t n = 0; n < avail && n < 10; n++) {
		r |= (uint64_t)(in[n] & 0x7f) << (7 * n);
		if (!(in[n] & 0x80)) {
			*v = r;
			return n + 1;
		}
	}
	return 0;
}

void gt_flight_codec_reset(struct gt_flight_codec *c)
{
	memset(c, 0, sizeof(*c));
}

static unsigned slot_of(const struct gt_kev_hdr *ev)
{
	uint16_t type;

	memcpy(&type, &ev->type, sizeof(type));
	return type < GT_KEV_TYPE_MAX ? type : 0;
}

#define LOW7 0x7f7f7f7f7f7f7f7full
/* the scans below take a word's first byte as its lowest */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "flight_codec.c: little-endian only");

/* The word of a ^ b at byte i (the records are not aligned). */
static inline uint64_t xor_word(const unsigned char *a, const unsigned char *b, size_t i)
{
	uint64_t u, v;

	memcpy(&u, a + i, 8);
	memcpy(&v, b + i, 8);
	return u ^ v;
}

/* The end of the run of zero bytes of (a ^ b)[i..len), a word at a time.
 * The XOR is taken where it is read, not stored first: reading back a
 * buffer just written at other offsets stalled every load. */
static size_t zeros_end(const unsigned char *a, const unsigned char *b, size_t i, size_t len)
{
	uint64_t w;

	for (; i + 8 <= len; i += 8)
		if ((w = xor_word(a, b, i)))
			return i + (size_t)(__builtin_ctzll(w) >> 3);
	while (i < len && a[i] == b[i])
		i++;
	return i;
}

/* The end of the literal run of (a ^ b)[i..len) (byte i not zero): the
 * first zero byte followed by another or by the end.  A word at a time:
 * its zero bytes' top bits, and of those the ones whose next byte is zero
 * too (within the word; the last byte is looked at again with the next). */
static size_t literal_end(const unsigned char *a, const unsigned char *b, size_t i, size_t len)
{
	uint64_t w, t;

	for (; i + 8 <= len; i += 7) {
		w = xor_word(a, b, i);
		t = ~(((w & LOW7) + LOW7) | w | LOW7);
		t &= t >> 8;
		if (t)
			return i + (size_t)(__builtin_ctzll(t) >> 3);
	}
	while (i < len && (a[i] != b[i] || (i + 1 < len && a[i + 1] != b[i + 1])))
		i++;
	return i;
}

/* The bytes it writes are those of the byte-at-a-time loop it replaced
 * (a flight recorder's steady cost: it runs on every record); only the
 * scans go a word at a time, and prev is cleared only past this record
 * up to the last one's length (beyond that it is zero already). */
size_t gt_flight_encode(struct gt_flight_codec *c, const struct gt_kev_hdr *ev, size_t len,
			unsigned char *out)
{
	unsigned slot = slot_of(ev);
	unsigned char *prev = c->prev[slot];
	const unsigned char *e = (const unsigned char *)ev;
	size_t n = 0, i = 0;

	n += put_uvarint(out + n, len);
	out[n++] = (unsigned char)slot;
	while (i < len) {
		/* a literal run ends at two zero bytes in a row (or the end) */
		size_t z = zeros_end(e, prev, i, len), lit = literal_end(e, prev, z, len);

		n += put_uvarint(out + n, z - i);
		n += put_uvarint(out + n, lit - z);
		for (size_t k = z; k < lit; k++)
			out[n++] = e[k] ^ prev[k];
		i = lit;
	}
	memcpy(prev, ev, len);
	if (c->len[slot] > len)
		memset(prev + len, 0, c->len[slot] - len);
	c->len[slot] = (uint16_t)len;
	return n;
}

size_t gt_flight_decode(struct gt_flight_codec *c, const unsigned char *in, size_t avail,
			unsigned char *out, size_t *len)
{
	uint64_t l, z, lit;
	size_t n, i = 0;
	unsigned slot;
	unsigned char *prev;

	n = get_uvarint(in, avail, &l);
	if (!n || l > GT_FLIGHT_REC_MAX || n >= avail)
		return 0;
	slot = in[n++];
	if (slot >= GT_KEV_TYPE_MAX)
		return 0;
	prev = c->prev[slot];
	while (i < l) {
		size_t k = get_uvarint(in + n, avail - n, &z);

		if (!k)
			return 0;
		n += k;
		k = get_uvarint(in + n, avail - n, &lit);
		if (!k || z > l - i || lit > l - i - z || lit > avail - n - k)
			return 0;
		n += k;
		memset(out + i, 0, z);
		memcpy(out + i + z, in + n, lit);
		n += lit;
		i += z + lit;
	}
	for (size_t k = 0; k < l; k++)
		out[k] ^= prev[k];
	memcpy(prev, out, l);
	memset(prev + l, 0, GT_FLIGHT_REC_MAX - l);
	*len = l;
	return n;
}
