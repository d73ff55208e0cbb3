/* Stacks: kernel stack ids -> writer stack ids (cached), and the one-frame
 * identity stack naming each thread's goroutine. */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The cached value for a stack key in c (*isnew: not cached yet, the
 * caller fills it in), or NULL without memory for the table.  A value
 * given while a binary it needed was loading (pend: the names' clock
 * then) counts as not cached once the clock moved. */
static uint64_t *cached(struct gt_translator *t, struct gt_idmap *c, struct gt_idmap *pend,
			uint32_t tgid, int32_t u, int32_t k, uint64_t caller, int *isnew)
{
	const uint64_t key[3] = {(uint64_t)tgid << 32 | (uint32_t)u, (uint32_t)k, caller};
	uint64_t *v, *at;

	if (!c->kwords)
		gt_idmap_init(c, 3, sizeof(uint64_t));
	v = gt_idmap_insert(c, key, isnew);
	if (v && !*isnew && pend->count && (at = gt_idmap_find(pend, key)) &&
	    *at != t->stacks->clock(t->stacks->ctx))
		*isnew = 1; /* a load ended since: asked again */
	return v;
}

/* After the source gave the value of a key: remembered as pending (with
 * the names' clock) if it may change, forgotten as such if final. */
static void note_pending(struct gt_translator *t, struct gt_idmap *pend, uint32_t tgid, int32_t u,
			 int32_t k, uint64_t caller)
{
	const uint64_t key[3] = {(uint64_t)tgid << 32 | (uint32_t)u, (uint32_t)k, caller};
	uint64_t clock = t->stacks->pending && t->stacks->clock ? t->stacks->pending(t->stacks->ctx) : 0;
	uint64_t *at;
	int isnew;

	if (!clock) {
		if (pend->count)
			gt_idmap_remove(pend, key);
		return;
	}
	if (!pend->kwords)
		gt_idmap_init(pend, 3, sizeof(uint64_t));
	at = gt_idmap_insert(pend, key, &isnew);
	if (at) /* no memory: the value stays as given */
		*at = clock;
}

/* The synthetic frame naming how a wakeup arrived (gt_tr_irq_stack's
 * kinds, and [loopback] on top of a sender's own stack). */
static struct gt_frame how_frame(const char *kind)
{
	return (struct gt_frame){
		.pc = gt_tr_comm_pc(kind),
		.func = kind,
		.file = "[interrupt]",
		.line = 0,
	};
}

/* Frames of a user/kernel stack pair into t->frames, with the [loopback]
 * frame on top when kstack is GT_KSTACK_LOOPBACK (then no kernel stack). */
static int stack_frames(struct gt_translator *t, uint32_t tgid, int32_t ustack, int32_t kstack,
			uint64_t caller)
{
	int top = kstack == GT_KSTACK_LOOPBACK;
	int n = t->stacks->frames(t->stacks->ctx, tgid, ustack, top ? -1 : kstack, caller,
				  t->frames + top, GT_MAX_STACK_FRAMES - top);
	if (n > GT_MAX_STACK_FRAMES - top)
		n = GT_MAX_STACK_FRAMES - top;
	if (top) {
		t->frames[0] = how_frame("[loopback]");
		n = n > 0 ? n + 1 : 1;
	}
	return n;
}

uint64_t gt_tr_stack_caller(struct gt_translator *t, uint32_t tgid, int32_t ustack,
			    int32_t kstack, uint64_t caller)
{
	if (!t->stacks || !t->stacks->frames || (ustack < 0 && kstack < 0) || t->err)
		return 0;
	if (ustack < 0) {
		ustack = -1;
		caller = 0;
	}
	if (kstack < 0 && kstack != GT_KSTACK_LOOPBACK)
		kstack = -1;
	int isnew;
	uint64_t *s = cached(t, &t->stack_ids, &t->stack_pending, tgid, ustack, kstack, caller,
			     &isnew);
	if (!s)
		return 0; /* no cache memory: write the event without a stack */
	if (!isnew)
		return *s;
	int n = stack_frames(t, tgid, ustack, kstack, caller);
	uint64_t id = n > 0 ? gt_tr_late_stack(t, tgid, n) : 0;
	if (!id && n > 0)
		id = gt_tr_out_stack(t, t->frames, n);
	*s = id;
	note_pending(t, &t->stack_pending, tgid, ustack, kstack, caller);
	return id;
}

uint64_t gt_tr_stack(struct gt_translator *t, uint32_t tgid, int32_t ustack, int32_t kstack)
{
	return gt_tr_stack_caller(t, tgid, ustack, kstack, 0);
}

uint64_t gt_tr_caller(struct gt_translator *t, uint32_t tgid, int32_t ustack,
		      const struct gt_utop *top)
{
	if (!t->stacks || !t->stacks->ra_slot || ustack < 0 || t->err)
		return 0;
	int isnew;
	uint64_t *s = cached(t, &t->ra_slots, &t->ra_pending, tgid, ustack, -1, 0, &isnew);
	if (!s)
		return 0;
	if (isnew) {
		*s = (uint64_t)(int64_t)t->stacks->ra_slot(t->stacks->ctx, tgid, ustack);
		note_pending(t, &t->ra_pending, tgid, ustack, -1, 0);
	}
	return gt_utop_pick(top, (int)(int64_t)*s);
}

uint64_t gt_tr_thread_stack(struct gt_translator *t, const struct gt_thread *th, int32_t ustack,
			    int32_t kstack)
{
	uint64_t caller = ustack >= 0 && ustack == th->sys_ustack ? th->sys_caller : 0;
	return gt_tr_stack_caller(t, th->tgid, ustack, kstack, caller);
}

/* FNV-1a of the name: threads with the same name share the PC, so the
 * Goroutines page groups them; never 0 (the readers need a non-zero PC). */
uint64_t gt_tr_comm_pc(const char *comm)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; comm[i]; i++) {
		h ^= (unsigned char)comm[i];
		h *= 0x100000001b3ull;
	}
	return h ? h : 1;
}

/* The stack of a wakeup from interrupt context (GT_WAKEUP_* flags): one
 * synthetic frame naming the kind of interrupt (or [loopback]: the receive
 * of a loopback packet whose sender is not ours), written once per kind.
 * A stack, rather than a log event or a string, because both viewers show
 * it where the waker's stack would be (the arrow's origin, the unblock
 * event) and the scheduler-latency profile groups wakeups by it. */
uint64_t gt_tr_irq_stack(struct gt_translator *t, uint32_t wakeup_flags)
{
	static const char *const kinds[GT_IRQ_KINDS] = {
		"[timer interrupt]", "[hardirq]", "[softirq]", "[nmi]", "[loopback]",
	};
	int k = (wakeup_flags & GT_WAKEUP_NMI) ? 3 :
		(wakeup_flags & GT_WAKEUP_LOOPBACK) ? 4 :
		(wakeup_flags & GT_WAKEUP_SOFTIRQ) ? 2 :
		(wakeup_flags & GT_WAKEUP_TIMER) ? 0 : 1;
	if (!t->irq_stacks[k] && !t->err) {
		struct gt_frame f = how_frame(kinds[k]);

		t->irq_stacks[k] = gt_tr_out_stack(t, &f, 1);
	}
	return t->irq_stacks[k];
}

uint64_t gt_tr_loopback_stack(struct gt_translator *t, const struct gt_kev_wakeup *e)
{
	const struct gt_kev_wakeup_sender *s = (const void *)e;
	char name[GT_COMM_LEN + 48];
	int len;

	if (!(e->flags & GT_WAKEUP_SENDER) || !gt_tr_traced(t, s->sender_sessions)) {
		t->st.loopback_anon++;
		return gt_tr_irq_stack(t, e->flags);
	}
	len = (int)strnlen(s->sender_comm, GT_COMM_LEN);
	if (e->hdr.tid == e->hdr.tgid)
		snprintf(name, sizeof(name), "[loopback from %.*s %u]", len, s->sender_comm,
			 e->hdr.tgid);
	else
		snprintf(name, sizeof(name), "[loopback from %.*s %u/%u]", len, s->sender_comm,
			 e->hdr.tgid, e->hdr.tid);
	if (t->err)
		return 0;
	t->st.loopback_named++;
	struct gt_frame f = how_frame(name);
	return gt_tr_out_stack(t, &f, 1);
}

/* The id of a goroutine's identity stack, taken at its GoCreate; the
 * frame is given when the goroutine ends (gt_tr_identity_define), so the
 * name is the thread's last one (set after clone, changed by exec). */
uint64_t gt_tr_identity_reserve(struct gt_translator *t)
{
	uint64_t id = gt_tr_out_stack_reserve(t);
	if (!id && !t->err)
		t->err = -ENOMEM; /* the writer poisons itself on this */
	return id;
}

/* The stack to write with th's next stack-bearing event (a deschedule or
 * a syscall): stack itself, except once for a goroutine Go 1.22+ left
 * unnamed (see struct gt_thread): then a reserved id, defined with the
 * identity stack as stack + the identity frame at its root; with no
 * stack, the identity stack itself. */
uint64_t gt_tr_named_stack(struct gt_translator *t, struct gt_thread *th, uint64_t stack)
{
	if (!th->unnamed122 || !th->ident)
		return stack;
	th->unnamed122 = false;
	if (!stack)
		return th->ident;
	uint64_t id = gt_tr_out_stack_reserve(t);
	if (!id) {
		if (!t->err)
			t->err = -ENOMEM; /* the writer poisons itself on this */
		return stack;
	}
	th->root_id = id;
	th->root_base = stack;
	gt_tr_identity_now(t, th);
	return id;
}

/* Defines th's identity stack {pc = hash of its name, func = name, file
 * "[thread]", line = tid} once (and its rooted stack, if it took one);
 * later calls do nothing.  The name is its last comm, or its process's
 * title where processes share that comm (names.c). */
/* Gives th's identity stack (and its rooted one) the frame of its name now. */
static int identity_frames(struct gt_translator *t, struct gt_thread *th)
{
	char name[GT_TITLE_LEN + GT_COMM_LEN + 4];

	gt_tr_name(t, th, name, sizeof(name));
	struct gt_frame f = {
		.pc = gt_tr_comm_pc(name),
		.func = name,
		.file = "[thread]",
		.line = th->tid,
	};
	/* Go 1.22+'s reader keeps one frame per PC in a generation (the
	 * first), so threads of one name would all show the first's tid: in
	 * v2 the PC holds the tid in its low 22 bits (pid_max <= 2^22).  Go
	 * 1.23's Goroutines page groups by name, not PC. */
	if (t->v2 && th->tid)
		f.pc = (f.pc & ~(uint64_t)0x3fffff) | th->tid;
	int r = gt_tr_out_stack_define(t, th->ident, &f, 1);
	if (r >= 0 && th->root_id)
		r = gt_tr_out_stack_define_rooted(t, th->root_id, th->root_base, &f);
	return r;
}

void gt_tr_identity_define(struct gt_translator *t, struct gt_thread *th)
{
	if (!th->ident)
		return;
	int r = identity_frames(t, th);
	th->ident = 0;
	th->root_id = 0;
	if (r < 0 && !t->err)
		t->err = r;
}

/* With v2, a stack is used in the generation that writes it: the identity
 * is defined as soon as it is reserved, and again at each rename. */
void gt_tr_identity_now(struct gt_translator *t, struct gt_thread *th)
{
	if (!t->v2 || !th->ident)
		return;
	int r = identity_frames(t, th);
	if (r < 0 && !t->err)
		t->err = r;
}

void gt_tr_stack_free(struct gt_translator *t)
{
	gt_idmap_free(&t->stack_ids);
	gt_idmap_free(&t->ra_slots);
	gt_idmap_free(&t->stack_pending);
	gt_idmap_free(&t->ra_pending);
	gt_tr_late_free(t);
}
