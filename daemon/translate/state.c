/* Translator state: the thread table (tid -> live thread record), event
 * emission with the first-error latch, repair counters and P choice. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *const gt_repair_names[GT_REPAIR_COUNT] = {
#define GT_X_REPAIR_NAME(e, name) [GT_REPAIR_##e] = name,
	GT_REPAIR_LIST(GT_X_REPAIR_NAME)
#undef GT_X_REPAIR_NAME
};

struct gt_thread *gt_tr_lookup(struct gt_translator *t, uint32_t tid)
{
	struct gt_thread **v = gt_idmap_get(&t->threads, tid);

	return v ? *v : NULL;
}

/* Files th under its tid: 0, or -ENOMEM (latched in t->err). */
static int link_thread(struct gt_translator *t, struct gt_thread *th)
{
	int isnew;
	struct gt_thread **v = gt_idmap_put(&t->threads, th->tid, &isnew);

	if (!v) {
		if (!t->err)
			t->err = -ENOMEM;
		return -ENOMEM;
	}
	*v = th;
	return 0;
}

void gt_tr_set_comm(struct gt_translator *t, struct gt_thread *th, const char *comm)
{
	size_t len = strnlen(comm, GT_COMM_LEN - 1);
	memcpy(th->comm, comm, len);
	th->comm[len] = '\0';
	gt_tr_note_comm(t, th);
	gt_tr_identity_now(t, th);
}

/* th's goroutine id: its TID if no goroutine had it yet (see
 * GT_TR_REUSED_GOID); without memory for the bitmap, a fresh id. */
static uint64_t new_goid(struct gt_translator *t, uint32_t tid)
{
	size_t w = tid / 64;

	if (tid && w >= t->ntid_used) {
		size_t n = t->ntid_used ? t->ntid_used : 64;
		uint64_t *nv;

		while (n <= w)
			n *= 2;
		nv = realloc(t->tid_used, n * sizeof(*nv));
		if (!nv)
			return t->next_goid++;
		memset(nv + t->ntid_used, 0, (n - t->ntid_used) * sizeof(*nv));
		t->tid_used = nv;
		t->ntid_used = n;
	}
	if (!tid || (t->tid_used[w] >> (tid % 64)) & 1)
		return t->next_goid++;
	t->tid_used[w] |= 1ull << (tid % 64);
	return tid;
}

/* A record for a thread not in the table; no event is written here. */
struct gt_thread *gt_tr_add(struct gt_translator *t, uint32_t tid, uint32_t tgid,
			    const char *comm)
{
	struct gt_thread *th = calloc(1, sizeof(*th));
	if (!th) {
		if (!t->err)
			t->err = -ENOMEM;
		return NULL;
	}
	th->tid = tid;
	th->tgid = tgid;
	th->goid = new_goid(t, tid);
	th->born = t->now;
	th->state = GT_TH_RUNNABLE;
	th->cpu = -1;
	th->fresh = true;
	th->snap_sysnr = -1;
	gt_tr_set_comm(t, th, comm && comm[0] ? comm : GT_UNKNOWN_COMM);
	if (link_thread(t, th)) {
		free(th);
		return NULL;
	}
	t->st.threads++;
	return th;
}

/* Forgets th; a goroutine left without GoEnd (retired off CPU) gets its
 * identity frame now, as no later event can change its name. */
void gt_tr_remove(struct gt_translator *t, struct gt_thread *th)
{
	gt_tr_identity_define(t, th);
	gt_tr_alloc_drop(t, th);
	gt_idmap_del(&t->threads, th->tid);
	free(th);
}

void gt_tr_rekey(struct gt_translator *t, struct gt_thread *th, uint32_t tid)
{
	gt_idmap_del(&t->threads, th->tid);
	th->tid = tid;
	link_thread(t, th);
}

/* Writes one event at the current time.  After the first error nothing
 * more is written and the error is returned by the public call. */
void gt_tr_flush_syscall(struct gt_translator *t, int p)
{
	struct gt_cpu *c = &t->cpus[p];
	if (!c->sys_pending || t->err)
		return;
	c->sys_pending = false;
	int r = gt_tr_out_event(t, p, GT_EV_GO_SYSCALL, c->sys_ts, &c->sys_stack, 1);
	if (r < 0) {
		t->err = r;
		return;
	}
	t->st.events_out++;
	t->survivors++;
	c->last_type = GT_EV_GO_SYSCALL;
}

void gt_tr_emit(struct gt_translator *t, int p, int type, const uint64_t *args, int n)
{
	if (t->err)
		return;
	gt_tr_flush_syscall(t, p);
	if (t->err)
		return;
	int r = gt_tr_out_event(t, p, type, t->now, args, n);
	if (r < 0) {
		t->err = r;
		return;
	}
	t->st.events_out++;
	t->cpus[p].last_type = type;
	if (type != GT_EV_GO_SYSBLOCK && type != GT_EV_GOMAXPROCS &&
	    (type != GT_EV_GO_CREATE || t->snapshot_done))
		t->survivors++;
}

void gt_tr_repair(struct gt_translator *t, enum gt_repair_kind k)
{
	t->st.repair[k]++;
	t->st.repairs++;
}

bool gt_tr_traced(const struct gt_translator *t, uint32_t sessions)
{
	return t->mask ? (sessions & t->mask) != 0 : sessions != 0;
}

/* A P where G 0 may act (create or unblock): one running no G, preferring
 * hint; the virtual P ncpus when every CPU runs a traced thread. */
int gt_tr_g0_p(struct gt_translator *t, int hint)
{
	if (hint >= 0 && hint < t->ncpus && !t->cpus[hint].cur)
		return hint;
	for (int c = 0; c < t->ncpus; c++)
		if (!t->cpus[c].cur)
			return c;
	return t->ncpus;
}
