/* Unsigned LEB128 varints, the only integer encoding of the Go trace format.
 *
 * gt_uvarint_put is inline so the writer's hot path pays no call; the
 * decoder is shared by the reader and the tests.
 */
#ifndef GT_VARINT_H
#define GT_VARINT_H

#include <stddef.h>
#include <stdint.h>

/* A 64-bit value needs at most 10 bytes. */
#define GT_UVARINT_MAX 10

/* Writes v at dst (room for GT_UVARINT_MAX bytes); returns bytes written. */
static inline size_t gt_uvarint_put(uint8_t *dst, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		dst[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	dst[n++] = (uint8_t)v;
	return n;
}

/* Bytes gt_uvarint_put would write for v. */
static inline size_t gt_uvarint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Reads one varint from p[0..len); returns bytes consumed, or -1 if the
 * input ends inside the varint or it overflows 64 bits (more than 10 bytes,
 * or a 10th byte above 1). */
int gt_uvarint_get(const uint8_t *p, size_t len, uint64_t *v);

#endif
