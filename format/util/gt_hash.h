/* format/util/: the lowest layer of the project.  It owns the containers
 * every other part uses: one hash mixer (this file), one id map
 * (gt_idmap.h) and one string/blob interner (gt_strset.h).  It includes
 * the C library only: nothing of format/'s other folders, of daemon/, of
 * BPF or of Linux. */
#ifndef GT_UTIL_HASH_H
#define GT_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Half of murmur3's finalizer (one multiply: lookups of ids are the hot
 * path of the checker): spreads ids, addresses and pointers over the low
 * bits a power-of-two table uses. */
static inline uint64_t gt_hash_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

/* Hash of n bytes: four independent multiply lanes over 8-byte words so
 * the CPU overlaps them (a 12-frame stack is 384 bytes: the hot part of
 * interning stacks), mixed once at the end. */
static inline uint64_t gt_hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h[4] = {0x2545f4914f6cdd1dULL ^ n, 0x9e3779b97f4a7c15ULL,
			 0xbf58476d1ce4e5b9ULL, 0x94d049bb133111ebULL};
	uint64_t w;

	for (; n >= 32; n -= 32, s += 32)
		for (int k = 0; k < 4; k++) {
			memcpy(&w, s + 8 * k, 8);
			h[k] = (h[k] ^ w) * 0xff51afd7ed558ccdULL;
		}
	for (; n >= 8; n -= 8, s += 8) {
		memcpy(&w, s, 8);
		h[0] = (h[0] ^ w) * 0xc4ceb9fe1a85ec53ULL;
	}
	w = 0;
	memcpy(&w, s, n);
	h[0] = (h[0] ^ w) * 0xc4ceb9fe1a85ec53ULL;
	return gt_hash_mix(h[0] ^ (h[1] >> 17) ^ (h[1] << 47) ^ (h[2] >> 31) ^ (h[2] << 33) ^
			   (h[3] >> 43) ^ (h[3] << 21));
}

/* h extended by n bytes at p (order matters: a, b differs from b, a); the
 * way to hash a sequence of pieces, frames or fields.  p may be NULL when
 * n is 0. */
static inline uint64_t gt_hash_more(uint64_t h, const void *p, size_t n)
{
	return gt_hash_mix(h ^ (n ? gt_hash_bytes(p, n) : 0x9e3779b97f4a7c15ULL));
}

#endif
