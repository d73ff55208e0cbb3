#include "tgid_set.h"

#include <errno.h>
#include <stdlib.h>

#define DELETED UINT32_MAX

static uint32_t slot_of(uint32_t tgid, uint32_t cap)
{
	return (tgid * 2654435761u) & (cap - 1);
}

static int grow(struct gt_tgid_set *s)
{
	/* Mostly tombstones: rehash at the same size, which drops them. */
	uint32_t cap = !s->cap ? 16 : s->count * 4 < s->cap ? s->cap : s->cap * 2;
	uint32_t *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->cap; i++) {
		uint32_t v = gt_tgid_set_slot(s, i), j;
		if (!v)
			continue;
		for (j = slot_of(v, cap); slots[j]; j = (j + 1) & (cap - 1))
			;
		slots[j] = v;
	}
	free(s->slots);
	s->slots = slots;
	s->cap = cap;
	s->used = s->count;
	return 0;
}

int gt_tgid_set_has(const struct gt_tgid_set *s, uint32_t tgid)
{
	if (!s->cap || tgid == 0 || tgid == DELETED)
		return 0;
	for (uint32_t j = slot_of(tgid, s->cap);; j = (j + 1) & (s->cap - 1)) {
		if (s->slots[j] == tgid)
			return 1;
		if (s->slots[j] == 0)
			return 0;
	}
}

int gt_tgid_set_add(struct gt_tgid_set *s, uint32_t tgid)
{
	uint32_t j;

	if (tgid == 0 || tgid == DELETED)
		return -EINVAL;
	if (gt_tgid_set_has(s, tgid))
		return 0;
	if ((s->used + 1) * 2 > s->cap) {
		int err = grow(s);
		if (err)
			return err;
	}
	for (j = slot_of(tgid, s->cap); s->slots[j] && s->slots[j] != DELETED;
	     j = (j + 1) & (s->cap - 1))
		;
	if (s->slots[j] == 0)
		s->used++;
	s->slots[j] = tgid;
	s->count++;
	return 1;
}

int gt_tgid_set_del(struct gt_tgid_set *s, uint32_t tgid)
{
	if (!gt_tgid_set_has(s, tgid))
		return 0;
	for (uint32_t j = slot_of(tgid, s->cap);; j = (j + 1) & (s->cap - 1)) {
		if (s->slots[j] == tgid) {
			s->slots[j] = DELETED;
			s->count--;
			return 1;
		}
	}
}

void gt_tgid_set_free(struct gt_tgid_set *s)
{
	free(s->slots);
	s->slots = NULL;
	s->cap = s->count = s->used = 0;
}
