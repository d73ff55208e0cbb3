#include "gt_writer_intern.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define GT_INTERN_MIN_SLOTS 1024

/* 64-bit mix (the splitmix64 finalizer): cheap and good enough to spread
 * PCs and string words over a power-of-two table. */
static inline uint64_t gt_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static uint64_t gt_hash_bytes(const char *s, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ len;
	uint64_t w;

	while (len >= 8) {
		memcpy(&w, s, 8);
		h = gt_mix(h ^ w);
		s += 8;
		len -= 8;
	}
	w = 0;
	memcpy(&w, s, len);
	return gt_mix(h ^ w);
}

/* Four independent multiply lanes so the CPU overlaps them; mixed once at
 * the end.  A stack of 12 frames is 48 words: this is the hot part of
 * interning. */
static uint64_t gt_hash_words(const uint64_t *w, size_t n)
{
	uint64_t h[4] = {0x2545f4914f6cdd1dULL ^ n, 0x9e3779b97f4a7c15ULL,
			 0xbf58476d1ce4e5b9ULL, 0x94d049bb133111ebULL};
	size_t i = 0;

	for (; i + 4 <= n; i += 4)
		for (int k = 0; k < 4; k++)
			h[k] = (h[k] ^ w[i + k]) * 0xff51afd7ed558ccdULL;
	for (; i < n; i++)
		h[0] = (h[0] ^ w[i]) * 0xc4ceb9fe1a85ec53ULL;
	return gt_mix(h[0] ^ (h[1] >> 17) ^ (h[1] << 47) ^ (h[2] >> 31) ^ (h[2] << 33) ^
		      (h[3] >> 43) ^ (h[3] << 21));
}

/* Doubles the slot array (or creates it) and re-inserts every entry. */
static int gt_intern_grow_slots(struct gt_intern_tab *t)
{
	size_t nslots = t->slots ? (t->mask + 1) * 2 : GT_INTERN_MIN_SLOTS;
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		size_t s = t->ents[i].hash & (nslots - 1);

		if (t->ents[i].flags & GT_INTERN_RESERVED)
			continue; /* never found by contents */

		while (slots[s])
			s = (s + 1) & (nslots - 1);
		slots[s] = (uint32_t)(i + 1);
	}
	free(t->slots);
	t->slots = slots;
	t->mask = nslots - 1;
	return 0;
}

/* Makes room for `units` more arena units of size `unit`. */
static int gt_arena_reserve(struct gt_intern_tab *t, size_t units, size_t unit)
{
	if (t->used + units > t->size) {
		size_t size = t->size ? t->size * 2 : 4096;
		void *p;

		while (size < t->used + units)
			size *= 2;
		p = realloc(t->arena, size * unit);
		if (!p)
			return -ENOMEM;
		t->arena = p;
		t->size = size;
	}
	return 0;
}

/* Makes room for one more entry and `units` more arena units of size `unit`. */
static int gt_intern_reserve(struct gt_intern_tab *t, size_t units, size_t unit)
{
	if (!t->slots || (t->n + 1) * 4 > (t->mask + 1) * 3) {
		int err = gt_intern_grow_slots(t);

		if (err)
			return err;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		void *p = realloc(t->ents, cap * sizeof(*t->ents));

		if (!p)
			return -ENOMEM;
		t->ents = p;
		t->cap = cap;
	}
	return gt_arena_reserve(t, units, unit);
}

/* Finds the slot holding an equal entry (same length, same first `bytes`
 * bytes), or the empty slot where it goes. */
static size_t gt_intern_find(const struct gt_intern_tab *t, uint64_t h, const void *key,
			     uint32_t len, size_t bytes, size_t unit)
{
	size_t s = h & t->mask;

	while (t->slots[s]) {
		const struct gt_intern_ent *e = &t->ents[t->slots[s] - 1];

		if (e->hash == h && e->len == len &&
		    memcmp((const char *)t->arena + e->off * unit, key, bytes) == 0)
			return s;
		s = (s + 1) & t->mask;
	}
	return s;
}

/* Interns key[0..bytes) as an entry of `units` arena units (the units past
 * the key are zeroed: a string's terminating NUL). */
static int gt_intern(struct gt_intern_tab *t, const void *key, uint32_t len, size_t bytes,
		     size_t units, size_t unit, uint64_t h, uint64_t *id)
{
	size_t s;
	int err;

	if (t->slots) {
		s = gt_intern_find(t, h, key, len, bytes, unit);
		if (t->slots[s]) {
			*id = t->slots[s];
			return 0;
		}
	}
	err = gt_intern_reserve(t, units, unit);
	if (err)
		return err;
	s = gt_intern_find(t, h, key, len, bytes, unit);
	memcpy((char *)t->arena + t->used * unit, key, bytes);
	memset((char *)t->arena + t->used * unit + bytes, 0, units * unit - bytes);
	t->ents[t->n] = (struct gt_intern_ent){.hash = h, .off = t->used, .len = len, .flags = 0};
	t->used += units;
	t->n++;
	t->slots[s] = (uint32_t)t->n;
	*id = t->n;
	return 0;
}

int gt_strtab_intern(struct gt_intern_tab *t, const char *s, size_t len, uint64_t *id)
{
	if (len == 0 || len > UINT32_MAX || t->n >= UINT32_MAX - 1)
		return -EINVAL;
	return gt_intern(t, s, (uint32_t)len, len, len + 1, 1, gt_hash_bytes(s, len), id);
}

const char *gt_strtab_get(const struct gt_intern_tab *t, uint64_t id, size_t *len)
{
	const struct gt_intern_ent *e;

	if (id == 0 || id > t->n)
		return NULL;
	e = &t->ents[id - 1];
	*len = e->len;
	return (const char *)t->arena + e->off;
}

int gt_stacktab_intern(struct gt_intern_tab *t, const uint64_t *words, uint32_t nframes,
		       uint64_t *id)
{
	if (nframes == 0 || t->n >= UINT32_MAX - 1)
		return -EINVAL;
	return gt_intern(t, words, nframes, (size_t)nframes * 4 * sizeof(uint64_t),
			 (size_t)nframes * 4, sizeof(uint64_t),
			 gt_hash_words(words, (size_t)nframes * 4), id);
}

const uint64_t *gt_stacktab_get(const struct gt_intern_tab *t, uint64_t id, uint32_t *nframes)
{
	const struct gt_intern_ent *e;

	if (id == 0 || id > t->n)
		return NULL;
	e = &t->ents[id - 1];
	*nframes = e->len;
	return (const uint64_t *)t->arena + e->off;
}

int gt_stacktab_reserve(struct gt_intern_tab *t, uint64_t *id)
{
	int err;

	if (t->n >= UINT32_MAX - 1)
		return -EINVAL;
	err = gt_intern_reserve(t, 0, sizeof(uint64_t));
	if (err)
		return err;
	t->ents[t->n] = (struct gt_intern_ent){.off = t->used, .flags = GT_INTERN_RESERVED};
	t->n++;
	*id = t->n;
	return 0;
}

int gt_stacktab_define(struct gt_intern_tab *t, uint64_t id, const uint64_t *words,
		       uint32_t nframes)
{
	size_t units = (size_t)nframes * 4;
	struct gt_intern_ent *e;
	int err;

	if (id == 0 || id > t->n || nframes == 0 || !(t->ents[id - 1].flags & GT_INTERN_RESERVED))
		return -EINVAL;
	if (t->ents[id - 1].len)
		return -EALREADY;
	/* Room in the arena only: the entry exists and stays out of the slots. */
	err = gt_arena_reserve(t, units, sizeof(uint64_t));
	if (err)
		return err;
	e = &t->ents[id - 1];
	memcpy((uint64_t *)t->arena + t->used, words, units * sizeof(uint64_t));
	e->off = t->used;
	e->len = nframes;
	e->hash = gt_hash_words(words, units);
	t->used += units;
	return 0;
}

void gt_intern_tab_free(struct gt_intern_tab *t)
{
	free(t->slots);
	free(t->ents);
	free(t->arena);
	memset(t, 0, sizeof(*t));
}
