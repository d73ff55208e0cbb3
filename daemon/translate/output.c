/* The translator's output: one interface, two formats.  The state machine
 * writes Go 1.5-1.21 events (gt_events.h) and stack ids; with
 * gt_translator_opts.v2 they go to the v2 encoder through output_v2.c
 * (docs/format.md, "Recording v2"), else to the v1 writer as they are. */
#include "internal.h"

#include <errno.h>

int gt_tr_out_event(struct gt_translator *t, int p, int type, uint64_t ts, const uint64_t *args,
		    int n)
{
	if (t->v2)
		return gt_tr_v2_event(t->v2, p, type, ts, args, n);
	return gt_writer_event(t->w, p, type, ts, args, n);
}

uint64_t gt_tr_out_stack(struct gt_translator *t, const struct gt_frame *f, int n)
{
	return t->v2 ? gt_tr_v2_stack(t->v2, 0, f, n) : gt_writer_stack(t->w, f, n);
}

uint64_t gt_tr_out_stack_reserve(struct gt_translator *t)
{
	return t->v2 ? gt_tr_v2_stack(t->v2, 0, NULL, 0) : gt_writer_stack_reserve(t->w);
}

int gt_tr_out_stack_define(struct gt_translator *t, uint64_t id, const struct gt_frame *f, int n)
{
	if (t->v2)
		return gt_tr_v2_stack(t->v2, id, f, n) ? 0 : -ENOMEM;
	return gt_writer_stack_define(t->w, id, f, n);
}

int gt_tr_out_stack_define_rooted(struct gt_translator *t, uint64_t id, uint64_t base,
				  const struct gt_frame *root)
{
	if (t->v2)
		return gt_tr_v2_stack_rooted(t->v2, id, base, root);
	return gt_writer_stack_define_rooted(t->w, id, base, root);
}

int gt_tr_out_user_log(struct gt_translator *t, int p, const char *category, uint64_t stack,
		       const char *value)
{
	if (t->v2)
		return gt_tr_v2_user_log(t->v2, p, t->now, category, stack, value);
	return gt_writer_user_log(t->w, p, t->now, 0, gt_writer_string(t->w, category), stack,
				  value);
}
