/* A P's runs of records, read again one event at a time (see gt_pcursor.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gt_events.h"
#include "gt_pcursor.h"

int gt_psegs_add(struct gt_psegs *s, uint32_t *first, uint32_t *last, uint64_t off,
		 int64_t base_ts, int64_t base_seq)
{
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 64;
		struct gt_pseg *v;

		if (cap < s->cap || !(v = realloc(s->v, (size_t)cap * sizeof(*v))))
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n] = (struct gt_pseg){ off, base_ts, base_seq, UINT32_MAX };
	if (*last == UINT32_MAX)
		*first = s->n;
	else
		s->v[*last].next = s->n;
	*last = s->n++;
	return 0;
}

void gt_psegs_free(struct gt_psegs *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* Moves the cursor to run seg (UINT32_MAX: the P is done). */
static void enter(struct gt_pcursor *k, const struct gt_psegs *s, uint32_t seg)
{
	k->seg = seg;
	if (seg == UINT32_MAX)
		return;
	k->pos = s->v[seg].off;
	k->st.ts = s->v[seg].base_ts;
	k->st.seq = s->v[seg].base_seq;
}

void gt_pcursor_start(struct gt_pcursor *k, const struct gt_psegs *s, uint32_t first,
		      int64_t p, uint32_t src)
{
	memset(k, 0, sizeof(*k));
	k->src = src;
	k->st.p = p;
	enter(k, s, first);
}

/* Records that carry no event of the P: the dictionaries and the rest of
 * the footer. */
static int no_event(int type)
{
	return type == GT_EV_STRING || type == GT_EV_STACK || type == GT_EV_FREQUENCY ||
	       type == GT_EV_TIMER_GOROUTINE;
}

int gt_pcursor_fill(struct gt_pcursor *k, const struct gt_psegs *s, struct gt_reader *rd,
		    struct gt_raw_event *raw, gt_pcursor_sample_fn sample, void *arg)
{
	while (!k->has_head && k->seg != UINT32_MAX) {
		int rc;

		rd->pos = k->pos; /* one reader may serve every P */
		rc = gt_reader_next(rd, raw);
		if (rc < 0)
			return -EINVAL;
		if (rc == 0 || raw->type == GT_EV_BATCH) {
			/* this run of the P's records ends; on to its next one */
			enter(k, s, s->v[k->seg].next);
			continue;
		}
		k->nread += raw->end - k->pos;
		k->pos = raw->end;
		if (no_event(raw->type))
			continue;
		gt_parse_event(rd->version, &k->st, raw, &k->head);
		gt_parse_fix(&k->st, &k->head);
		k->head.src = k->src;
		if (raw->type != GT_EV_CPU_SAMPLE)
			k->has_head = 1;
		else if (sample && (rc = sample(arg, &k->head)))
			return rc;
	}
	return 0;
}
