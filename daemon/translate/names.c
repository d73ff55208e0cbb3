/* Goroutine names: a thread's comm, or its process's title where threads
 * of different processes share that comm (every PostgreSQL backend is
 * "postgres", nginx's master and workers "nginx": the comm alone cannot
 * tell a checkpointer from a walwriter). */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct gt_comm_owner *find_owner(struct gt_comm_owner *v, size_t n, uint64_t hash)
{
	size_t i = (size_t)(hash ^ (hash >> 29)) & (n - 1);

	while (v[i].hash && v[i].hash != hash)
		i = (i + 1) & (n - 1);
	return &v[i];
}

/* Keeps the open-addressing table at most half full; -1 without memory. */
static int grow_owners(struct gt_translator *t)
{
	if (t->nowners && t->nowners_used * 2 < t->nowners)
		return 0;
	size_t n = t->nowners ? t->nowners * 2 : 64;
	struct gt_comm_owner *nv = calloc(n, sizeof(*nv));

	if (!nv)
		return -1;
	for (size_t i = 0; i < t->nowners; i++)
		if (t->owners[i].hash)
			*find_owner(nv, n, t->owners[i].hash) = t->owners[i];
	free(t->owners);
	t->owners = nv;
	t->nowners = n;
	return 0;
}

/* Records that th's process has th's comm.  Without memory the comm is
 * simply not known to be shared: names stay comms, nothing fails. */
void gt_tr_note_comm(struct gt_translator *t, const struct gt_thread *th)
{
	if (!t->titles || !th->comm[0] || !strcmp(th->comm, GT_UNKNOWN_COMM) ||
	    grow_owners(t) < 0)
		return;
	uint64_t h = gt_tr_comm_pc(th->comm);
	struct gt_comm_owner *o = find_owner(t->owners, t->nowners, h);

	if (!o->hash) {
		*o = (struct gt_comm_owner){h, th->tgid, false};
		t->nowners_used++;
	} else if (o->tgid != th->tgid) {
		o->shared = true;
	}
}

static bool comm_shared(const struct gt_translator *t, const char *comm)
{
	if (!t->nowners)
		return false;
	const struct gt_comm_owner *o =
		find_owner(t->owners, t->nowners, gt_tr_comm_pc(comm));
	return o->hash && o->shared;
}

/* th's goroutine name into out: its comm; where that comm is shared by
 * processes and the title source knows th's process, the title, with
 * " [comm]" where th's comm is not its process's. */
void gt_tr_name(struct gt_translator *t, const struct gt_thread *th, char *out, size_t len)
{
	const char *comm = th->comm[0] ? th->comm : GT_UNKNOWN_COMM;
	char title[GT_TITLE_LEN], pcomm[GT_COMM_LEN];

	snprintf(out, len, "%s", comm);
	if (!t->titles || !t->titles->title || !comm_shared(t, comm))
		return;
	memset(title, 0, sizeof(title));
	memset(pcomm, 0, sizeof(pcomm));
	if (t->titles->title(t->titles->ctx, th->tgid, title, pcomm) < 0 || !title[0])
		return;
	title[GT_TITLE_LEN - 1] = '\0';
	pcomm[GT_COMM_LEN - 1] = '\0';
	if (pcomm[0] && strcmp(pcomm, comm))
		snprintf(out, len, "%s [%s]", title, comm);
	else
		snprintf(out, len, "%s", title);
}

void gt_tr_names_free(struct gt_translator *t)
{
	free(t->owners);
	t->owners = NULL;
	t->nowners = t->nowners_used = 0;
}
