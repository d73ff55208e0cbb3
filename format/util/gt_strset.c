/* See gt_strset.h. */
#include "gt_strset.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gt_hash.h"

#define MIN_SLOTS 256
#define CHUNK (64 * 1024)

struct gt_strset_chunk {
	struct gt_strset_chunk *next;
	size_t size, used;
	_Alignas(8) unsigned char data[];
};

/* A stable copy of p[0..len) followed by a NUL, 8-byte aligned. */
static void *copy_of(struct gt_strset *s, const void *p, size_t len)
{
	size_t need = (len + 1 + 7) & ~(size_t)7;
	struct gt_strset_chunk *c = s->chunks;
	unsigned char *d;

	if (!c || c->size - c->used < need) {
		size_t size = need > CHUNK / 4 ? need : CHUNK;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		c->used = 0;
		/* a big string gets its own chunk behind the current one */
		if (size == need && s->chunks) {
			c->next = s->chunks->next;
			s->chunks->next = c;
		} else {
			c->next = s->chunks;
			s->chunks = c;
		}
	}
	d = c->data + c->used;
	c->used += need;
	memcpy(d, p, len);
	d[len] = 0;
	return d;
}

static int grow_slots(struct gt_strset *s)
{
	size_t nslots = s->slots ? (s->mask + 1) * 2 : MIN_SLOTS;
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++) {
		size_t j = s->ents[i].hash & (nslots - 1);

		if (s->ents[i].flags & GT_STRSET_RESERVED)
			continue; /* never found by contents */
		while (slots[j])
			j = (j + 1) & (nslots - 1);
		slots[j] = (uint32_t)(i + 1);
	}
	free(s->slots);
	s->slots = slots;
	s->mask = nslots - 1;
	return 0;
}

/* Room for one more entry. */
static int reserve_entry(struct gt_strset *s)
{
	if (s->n >= UINT32_MAX - 1)
		return -EINVAL;
	if ((!s->slots || (s->n + 1) * 4 > (s->mask + 1) * 3) && grow_slots(s))
		return -ENOMEM;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		void *p = realloc(s->ents, cap * sizeof(*s->ents));

		if (!p)
			return -ENOMEM;
		s->ents = p;
		s->cap = cap;
	}
	return 0;
}

/* The slot of an equal entry, or the empty slot where it goes. */
static size_t find(const struct gt_strset *s, uint64_t h, const void *p, size_t len)
{
	size_t j = h & s->mask;

	for (; s->slots[j]; j = (j + 1) & s->mask) {
		const struct gt_strset_ent *e = &s->ents[s->slots[j] - 1];

		if (e->hash == h && e->len == len && !memcmp(e->data, p, len))
			break;
	}
	return j;
}

int gt_strset_add(struct gt_strset *s, const void *p, size_t len, uint64_t *id,
		  const void **copy)
{
	uint64_t h = gt_hash_bytes(p, len);
	struct gt_strset_ent *e;
	size_t j;
	int err;

	if (len == 0 || len > UINT32_MAX)
		return -EINVAL;
	if (s->slots && s->slots[j = find(s, h, p, len)])
		goto found;
	err = reserve_entry(s);
	if (err)
		return err;
	j = find(s, h, p, len);
	e = &s->ents[s->n];
	e->data = copy_of(s, p, len);
	if (!e->data)
		return -ENOMEM;
	e->hash = h;
	e->len = (uint32_t)len;
	e->flags = 0;
	s->slots[j] = (uint32_t)++s->n;
found:
	if (id)
		*id = s->slots[j];
	if (copy)
		*copy = s->ents[s->slots[j] - 1].data;
	return 0;
}

uint64_t gt_strset_find(const struct gt_strset *s, const void *p, size_t len)
{
	if (!s->slots || len == 0)
		return 0;
	return s->slots[find(s, gt_hash_bytes(p, len), p, len)];
}

const void *gt_strset_get(const struct gt_strset *s, uint64_t id, size_t *len)
{
	const struct gt_strset_ent *e;

	if (id == 0 || id > s->n || !s->ents[id - 1].len)
		return NULL;
	e = &s->ents[id - 1];
	*len = e->len;
	return e->data;
}

int gt_strset_reserve(struct gt_strset *s, uint64_t *id)
{
	int err = reserve_entry(s);

	if (err)
		return err;
	s->ents[s->n] = (struct gt_strset_ent){.flags = GT_STRSET_RESERVED};
	*id = ++s->n;
	return 0;
}

int gt_strset_define(struct gt_strset *s, uint64_t id, const void *p, size_t len)
{
	struct gt_strset_ent *e;

	if (id == 0 || id > s->n || len == 0 || len > UINT32_MAX ||
	    !(s->ents[id - 1].flags & GT_STRSET_RESERVED))
		return -EINVAL;
	e = &s->ents[id - 1];
	if (e->len)
		return -EALREADY;
	/* the entry stays out of the slots */
	e->data = copy_of(s, p, len);
	if (!e->data)
		return -ENOMEM;
	e->len = (uint32_t)len;
	e->hash = gt_hash_bytes(p, len);
	return 0;
}

void gt_strset_free(struct gt_strset *s)
{
	while (s->chunks) {
		struct gt_strset_chunk *c = s->chunks;

		s->chunks = c->next;
		free(c);
	}
	free(s->slots);
	free(s->ents);
	memset(s, 0, sizeof(*s));
}
