/* format/util/: one way to grow an array, for every part that keeps one
 * (analysis tables, the engine's stack stores). */
#ifndef GT_UTIL_GROW_H
#define GT_UTIL_GROW_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Makes the array at *(void **)pp hold at least `need` elements of `size`
 * bytes, doubling from 16; the new elements are zeroed.  0, or -ENOMEM
 * (the array as it was, also when the size would overflow). */
static inline int gt_grow(void *pp, size_t *cap, size_t need, size_t size)
{
	void **p = pp;
	size_t c = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need) {
		if (c > SIZE_MAX / 2)
			return -ENOMEM;
		c *= 2;
	}
	if (size && c > SIZE_MAX / size)
		return -ENOMEM;
	q = realloc(*p, c * size);
	if (!q)
		return -ENOMEM;
	memset((char *)q + *cap * size, 0, (c - *cap) * size);
	*p = q;
	*cap = c;
	return 0;
}

#endif
