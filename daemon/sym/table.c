/* Sorted symbol tables with binary search, and the string arena. */
#include "table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_BLOCK (64 * 1024)

struct gt_arena_block {
	struct gt_arena_block *next;
	size_t used, cap;
	char data[];
};

const char *gt_arena_strndup(struct gt_arena *a, const char *s, size_t n)
{
	struct gt_arena_block *b = a->head;
	char *p;

	if (!b || b->cap - b->used < n + 1) {
		size_t cap = n + 1 > ARENA_BLOCK ? n + 1 : ARENA_BLOCK;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = a->head;
		b->used = 0;
		b->cap = cap;
		a->head = b;
	}
	p = b->data + b->used;
	memcpy(p, s, n);
	p[n] = '\0';
	b->used += n + 1;
	return p;
}

void gt_arena_free(struct gt_arena *a)
{
	while (a->head) {
		struct gt_arena_block *next = a->head->next;

		free(a->head);
		a->head = next;
	}
}

void gt_arena_move(struct gt_arena *to, struct gt_arena *from)
{
	struct gt_arena_block *tail = from->head;

	if (!tail)
		return;
	while (tail->next)
		tail = tail->next;
	tail->next = to->head;
	to->head = from->head;
	from->head = NULL;
}

int gt_symtab_add(struct gt_symtab *t, uint64_t addr, uint64_t size,
		  const char *name, size_t name_len, const char *mod)
{
	const char *copy;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct gt_symtab_entry *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	copy = gt_arena_strndup(&t->names, name, name_len);
	if (!copy)
		return -ENOMEM;
	t->v[t->n++] = (struct gt_symtab_entry){ addr, size, copy, mod };
	return 0;
}

static int by_addr(const void *a, const void *b)
{
	const struct gt_symtab_entry *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Among aliases prefer the sized one, then the shorter (public) name
	 * over internal aliases like __GI_x. */
	if ((x->size != 0) != (y->size != 0))
		return x->size ? -1 : 1;
	if (strlen(x->name) != strlen(y->name))
		return strlen(x->name) < strlen(y->name) ? -1 : 1;
	return strcmp(x->name, y->name);
}

void gt_symtab_finish(struct gt_symtab *t)
{
	size_t i, k = 0;

	if (!t->n)
		return;
	qsort(t->v, t->n, sizeof(*t->v), by_addr);
	for (i = 0; i < t->n; i++) {
		if (k && t->v[k - 1].addr == t->v[i].addr)
			continue; /* alias of the kept one */
		t->v[k++] = t->v[i];
	}
	t->n = k;
}

const struct gt_symtab_entry *gt_symtab_find(const struct gt_symtab *t,
					     uint64_t addr)
{
	size_t lo = 0, hi = t->n;
	const struct gt_symtab_entry *e;

	/* Last entry with e->addr <= addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	e = &t->v[lo - 1];
	if (e->size)
		return addr - e->addr < e->size ? e : NULL;
	/* Unsized: up to the next symbol, within max_gap. */
	if (lo < t->n && addr >= t->v[lo].addr)
		return NULL;
	if (t->max_gap && addr - e->addr >= t->max_gap)
		return NULL;
	return e;
}

void gt_symtab_free(struct gt_symtab *t)
{
	free(t->v);
	gt_arena_free(&t->names);
	memset(t, 0, sizeof(*t));
}
