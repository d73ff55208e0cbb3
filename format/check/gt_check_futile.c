/* Phase 3, as Go 1.19's removeFutile: a goroutine woken, then marked
 * FutileWakeup, that blocks again is dropped from the stream whole (the
 * unblock, its starts and preemptions, the marker and the new block), as
 * `go tool trace` never shows them. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "gt_check_internal.h"

/* removeFutile: a wakeup followed by FutileWakeup and a new block is
 * dropped whole (unblock, starts, preemptions, the marker, the block). */
struct fut {
	int futile;
	uint32_t head, tail; /* wakeup list through wnext */
};

/* Per event of c->ev: the next of the same wakeup list, and the verdict. */
struct marks {
	uint32_t *wnext;
	uint8_t *futile;
};

static void fut_append(struct marks *k, struct fut *g, uint32_t ev)
{
	k->wnext[ev] = UINT32_MAX;
	if (g->head == UINT32_MAX)
		g->head = ev;
	else
		k->wnext[g->tail] = ev;
	g->tail = ev;
}

static struct fut *fut_of(struct gt_idmap *m, uint64_t g)
{
	int isnew;
	struct fut *f = gt_idmap_put(m, g, &isnew);

	if (f && isnew)
		f->head = f->tail = UINT32_MAX;
	return f;
}

static int mark_futile(struct gt_ctx *c, struct gt_idmap *gs, struct marks *k)
{
	for (uint32_t i = 0; i < c->norder; i++) {
		uint32_t idx = c->order[i];
		struct gt_pev *e = &c->ev[idx];
		struct fut *g;

		switch (e->type) {
		case GT_EV_GO_UNBLOCK:
			if (!(g = fut_of(gs, e->args[0])))
				return -ENOMEM;
			g->head = UINT32_MAX;
			fut_append(k, g, idx);
			break;
		case GT_EV_GO_START: case GT_EV_GO_PREEMPT: case GT_EV_FUTILE_WAKEUP:
			if (!(g = fut_of(gs, e->g)))
				return -ENOMEM;
			fut_append(k, g, idx);
			if (e->type == GT_EV_FUTILE_WAKEUP)
				g->futile = 1;
			break;
		case GT_EV_GO_BLOCK: case GT_EV_GO_BLOCK_SEND: case GT_EV_GO_BLOCK_RECV:
		case GT_EV_GO_BLOCK_SELECT: case GT_EV_GO_BLOCK_SYNC: case GT_EV_GO_BLOCK_COND:
			g = gt_idmap_get(gs, e->g);
			if (g && g->futile) {
				k->futile[idx] = 1;
				for (uint32_t w = g->head; w != UINT32_MAX; w = k->wnext[w])
					k->futile[w] = 1;
			}
			if (g) { /* delete(gs, ev.G) */
				g->futile = 0;
				g->head = g->tail = UINT32_MAX;
			}
			break;
		}
	}
	return 0;
}

int gt_check_futile(struct gt_ctx *c)
{
	struct marks k = { calloc((size_t)c->nev + 1, sizeof(*k.wnext)),
			   calloc((size_t)c->nev + 1, 1) };
	struct gt_idmap gs;
	uint32_t n = 0;
	int rc = -ENOMEM;

	if (k.wnext && k.futile && gt_idmap_init(&gs, 1, sizeof(struct fut)) == 0) {
		rc = mark_futile(c, &gs, &k);
		gt_idmap_free(&gs);
	}
	for (uint32_t i = 0; !rc && i < c->norder; i++)
		if (!k.futile[c->order[i]])
			c->order[n++] = c->order[i];
	free(k.wnext);
	free(k.futile);
	if (rc)
		return rc;
	c->norder = n;
	c->rep->events = n;
	return 0;
}
