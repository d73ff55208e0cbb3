#include "gt_varint.h"

int gt_uvarint_get(const uint8_t *p, size_t len, uint64_t *v)
{
	uint64_t x = 0;
	unsigned shift = 0;
	size_t i;

	for (i = 0; i < len && i < GT_UVARINT_MAX; i++) {
		uint8_t b = p[i];

		/* The 10th byte holds bit 63 only. */
		if (i == GT_UVARINT_MAX - 1 && b > 1)
			return -1;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return (int)i + 1;
		}
		shift += 7;
	}
	return -1;
}
