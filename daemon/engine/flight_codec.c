/* How a flight recording's segments keep records small (docs/design.md,
 * "Flight recorder"): each record is XORed with the previous record of its
 * type in the same segment, and the result written as runs of zero bytes
 * and literal bytes.  Consecutive records of a type share most of their
 * bytes (tids, comms, masks, the high bytes of the time), so a 104-byte
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

size_t gt_flight_encode(struct gt_flight_codec *c, const struct gt_kev_hdr *ev, size_t len,
			unsigned char *out)
{
	unsigned slot = slot_of(ev);
	unsigned char *prev = c->prev[slot], x[GT_FLIGHT_REC_MAX];
	size_t n = 0, i = 0;

	memcpy(x, ev, len);
	for (size_t k = 0; k < len; k++)
		x[k] ^= prev[k];
	memcpy(prev, ev, len);
	memset(prev + len, 0, GT_FLIGHT_REC_MAX - len);
	n += put_uvarint(out + n, len);
	out[n++] = (unsigned char)slot;
	while (i < len) {
		size_t z = i, lit;

		while (z < len && !x[z])
			z++;
		lit = z;
		/* a literal run ends at two zero bytes in a row (or the end) */
		while (lit < len && (x[lit] || (lit + 1 < len && x[lit + 1])))
			lit++;
		n += put_uvarint(out + n, z - i);
		n += put_uvarint(out + n, lit - z);
		memcpy(out + n, x + z, lit - z);
		n += lit - z;
		i = lit;
	}
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
