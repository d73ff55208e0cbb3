/* Phase 3, as Go 1.19's removeFutile: a goroutine woken, then marked
 * FutileWakeup, that blocks again is dropped from the stream whole (the
 * unblock, its starts and preemptions, the marker and the new block), as
 * `go tool trace` never shows them. */
#include <errno.h>
#include <stdint.h>

#include "gt_check_internal.h"

/* removeFutile: a wakeup followed by FutileWakeup and a new block is
 * dropped whole (unblock, starts, preemptions, the marker, the block). */
struct fut {
	int futile;
	uint32_t head, tail; /* wakeup list through gt_cev.wnext */
};

static void fut_append(struct gt_ctx *c, struct fut *g, uint32_t ev)
{
	c->ev[ev].wnext = UINT32_MAX;
	if (g->head == UINT32_MAX)
		g->head = ev;
	else
		c->ev[g->tail].wnext = ev;
	g->tail = ev;
}

static struct fut *fut_of(struct gt_map *m, uint64_t g)
{
	int isnew;
	struct fut *f = gt_map_put(m, g, &isnew);

	if (f && isnew)
		f->head = f->tail = UINT32_MAX;
	return f;
}

static int mark_futile(struct gt_ctx *c, struct gt_map *gs)
{
	for (uint32_t i = 0; i < c->norder; i++) {
		uint32_t idx = c->order[i];
		struct gt_cev *e = &c->ev[idx];
		struct fut *g;

		switch (e->type) {
		case GT_EV_GO_UNBLOCK:
			if (!(g = fut_of(gs, e->args[0])))
				return -ENOMEM;
			g->head = UINT32_MAX;
			fut_append(c, g, idx);
			break;
		case GT_EV_GO_START: case GT_EV_GO_PREEMPT: case GT_EV_FUTILE_WAKEUP:
			if (!(g = fut_of(gs, e->g)))
				return -ENOMEM;
			fut_append(c, g, idx);
			if (e->type == GT_EV_FUTILE_WAKEUP)
				g->futile = 1;
			break;
		case GT_EV_GO_BLOCK: case GT_EV_GO_BLOCK_SEND: case GT_EV_GO_BLOCK_RECV:
		case GT_EV_GO_BLOCK_SELECT: case GT_EV_GO_BLOCK_SYNC: case GT_EV_GO_BLOCK_COND:
			g = gt_map_get(gs, e->g);
			if (g && g->futile) {
				e->futile = 1;
				for (uint32_t w = g->head; w != UINT32_MAX; w = c->ev[w].wnext)
					c->ev[w].futile = 1;
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
	struct gt_map gs;
	uint32_t n = 0;
	int rc;

	if (gt_map_init(&gs, sizeof(struct fut)) < 0)
		return -ENOMEM;
	rc = mark_futile(c, &gs);
	gt_map_free(&gs);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < c->norder; i++)
		if (!c->ev[c->order[i]].futile)
			c->order[n++] = c->order[i];
	c->norder = n;
	c->rep->events = n;
	return 0;
}
