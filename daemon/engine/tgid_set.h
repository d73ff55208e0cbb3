/* A small open-addressing set of process ids. */
#ifndef GT_TGID_SET_H
#define GT_TGID_SET_H

#include <stdint.h>

struct gt_tgid_set {
	uint32_t *slots;  /* 0 = empty, UINT32_MAX = deleted */
	uint32_t cap;     /* power of two */
	uint32_t count;
	uint32_t used;    /* count + deleted */
};

int gt_tgid_set_add(struct gt_tgid_set *s, uint32_t tgid);   /* 1 added, 0 present, -ENOMEM */
int gt_tgid_set_del(struct gt_tgid_set *s, uint32_t tgid);   /* 1 removed, 0 absent */
int gt_tgid_set_has(const struct gt_tgid_set *s, uint32_t tgid);
void gt_tgid_set_free(struct gt_tgid_set *s);

/* Iteration: for (i = 0; i < s->cap; i++) if (gt_tgid_set_slot(s, i)) ... */
static inline uint32_t gt_tgid_set_slot(const struct gt_tgid_set *s, uint32_t i)
{
	uint32_t v = s->slots[i];
	return v == UINT32_MAX ? 0 : v;
}

#endif
