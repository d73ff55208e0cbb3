/* Stacks named late.  A frame in JIT code is named from its process's perf
 * map, which a JIT may write after the code ran (a JVM's
 * -XX:+DumpPerfMapAtExit) or rewrite whole while it runs (jcmd PID
 * Compiler.perfmap): a stack resolved before that would keep the raw
 * address, and the translator's cache (stack.c) would give that stack to
 * every later event with the same stack id.  Such a stack gets a reserved
 * id instead; its frames are kept and named again when its process exits
 * (its map written at exit is there then) or when the trace ends, and only
 * then defined.  A v2 trace defines it at once too: each generation takes
 * the frames known at its end (one written before the names came keeps
 * the raw addresses: its stack table is out already). */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

struct gt_tr_late {
	uint64_t id;
	uint32_t tgid;
	int n;
	struct gt_frame *f; /* func and file copied */
};

static void free_late(struct gt_tr_late *l)
{
	for (int i = 0; i < l->n; i++) {
		free((char *)l->f[i].func);
		free((char *)l->f[i].file);
	}
	free(l->f);
	l->f = NULL;
	l->n = 0;
}

/* t->frames[0..n) copied into l; 0, or -1 without memory. */
static int copy_frames(struct gt_tr_late *l, const struct gt_frame *f, int n)
{
	l->f = calloc((size_t)n, sizeof(*l->f));
	if (!l->f)
		return -1;
	for (int i = 0; i < n; i++) {
		l->f[i] = f[i];
		l->f[i].func = strdup(f[i].func ? f[i].func : "");
		l->f[i].file = strdup(f[i].file ? f[i].file : "");
		l->n = i + 1;
		if (!l->f[i].func || !l->f[i].file) {
			free_late(l);
			return -1;
		}
	}
	return 0;
}

uint64_t gt_tr_late_stack(struct gt_translator *t, uint32_t tgid, int n)
{
	const struct gt_stack_source *src = t->stacks;
	struct gt_tr_late l = { 0, tgid, 0, NULL };

	if (!src->unnamed || !src->rename || !src->unnamed(src->ctx) || t->nlate >= GT_TR_LATE_MAX)
		return 0;
	if (t->nlate == t->caplate) {
		size_t cap = t->caplate ? t->caplate * 2 : 64;
		struct gt_tr_late *v = realloc(t->late, cap * sizeof(*v));

		if (!v)
			return 0;
		t->late = v;
		t->caplate = cap;
	}
	if (copy_frames(&l, t->frames, n))
		return 0;
	l.id = gt_tr_out_stack_reserve(t);
	if (!l.id || (t->v2 && gt_tr_out_stack_define(t, l.id, t->frames, n))) {
		free_late(&l);
		return 0; /* then written as it is */
	}
	t->late[t->nlate++] = l;
	return l.id;
}

void gt_tr_late_settle(struct gt_translator *t, uint32_t tgid, bool all)
{
	const struct gt_stack_source *src = t->stacks;
	struct gt_idmap checked = { 0 };
	size_t k = 0;

	gt_idmap_init(&checked, 1, 0);
	for (size_t i = 0; i < t->nlate; i++) {
		struct gt_tr_late *l = &t->late[i];
		int rc;

		if (!all && l->tgid != tgid) {
			t->late[k++] = *l;
			continue;
		}
		/* once a process (without memory for the set: again) */
		if (src->recheck && gt_idmap_add(&checked, l->tgid))
			src->recheck(src->ctx, l->tgid);
		src->rename(src->ctx, l->tgid, l->f, t->frames, l->n);
		rc = gt_tr_out_stack_define(t, l->id, t->frames, l->n);
		if (rc && !t->err)
			t->err = rc;
		free_late(l);
	}
	t->nlate = k;
	gt_idmap_free(&checked);
}

void gt_tr_late_free(struct gt_translator *t)
{
	for (size_t i = 0; i < t->nlate; i++)
		free_late(&t->late[i]);
	free(t->late);
	t->late = NULL;
	t->nlate = t->caplate = 0;
}
