/* String interning: FNV-1a hash, linear probing, grows at 50% load. */
#include "intern.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

static int grow(struct gt_intern *in)
{
	size_t n = in->nslots ? in->nslots * 2 : 256;
	const char **slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -1;
	for (size_t i = 0; i < in->nslots; i++) {
		const char *s = in->slots[i];
		size_t j;

		if (!s)
			continue;
		j = hash(s, strlen(s)) & (n - 1);
		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = s;
	}
	free(in->slots);
	in->slots = slots;
	in->nslots = n;
	return 0;
}

const char *gt_intern(struct gt_intern *in, const char *s, size_t len)
{
	size_t j;

	if ((in->n + 1) * 2 > in->nslots && grow(in))
		return NULL;
	j = hash(s, len) & (in->nslots - 1);
	for (; in->slots[j]; j = (j + 1) & (in->nslots - 1)) {
		const char *c = in->slots[j];

		if (!strncmp(c, s, len) && c[len] == '\0')
			return c;
	}
	in->slots[j] = gt_arena_strndup(&in->arena, s, len);
	if (in->slots[j])
		in->n++;
	return in->slots[j];
}

void gt_intern_free(struct gt_intern *in)
{
	free(in->slots);
	gt_arena_free(&in->arena);
	memset(in, 0, sizeof(*in));
}
