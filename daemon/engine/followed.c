/* Processes whose maps the engine holds (e->symbolized), and forgetting
 * them: every process whose events reached a session is snapshotted so
 * its stacks resolve (wakers and neighbours included), and a long-lived
 * daemon must not keep them, nor their binaries' files, forever.
 *
 * A process that has died is forgotten at the second liveness check that
 * finds it dead (so events still in the rings resolve first); everything
 * is forgotten when the last session has finished its file, and again at
 * every check while no session records, should anything have been
 * followed since: live processes are never pruned, and would keep their
 * binaries' files open until some later session ends (events of ended
 * sessions, still in the rings after the last one detached, did that
 * before on_event ignored them).  A live process's title is read at the
 * first check that finds it alive.  A check that cannot tell (see
 * gt_proc_alive) changes nothing. */
#include "internal.h"

#include <malloc.h>

#include "common/procfs.h"
#include "sym/symbolize.h"

/* A process's life in the engine has this one owner: first sight, exec
 * and death are told to every per-process holder from here (the
 * symbolizer's maps, the mmap backlog, Go's goroutine offsets in BPF,
 * CPython's stacks, titles), so a new holder is added in one place. */
void gt_engine_process_seen(struct gt_engine *e, uint32_t tgid)
{
	if (gt_idmap_add(&e->symbolized, tgid) != 1)
		return; /* known already (or no memory to know it) */
	gt_symbolizer_add_process(e->sym, (pid_t)tgid);
	gt_engine_followed_new(e, tgid);
	gt_engine_go_proc(e, tgid);
	gt_py_stacks_check(e->py, tgid, 0);
}

void gt_engine_process_exec(struct gt_engine *e, uint32_t tgid)
{
	gt_titles_forget(&e->titles, tgid);
	gt_golabels_forget(&e->golabels, tgid);
	gt_py_stacks_forget(e->py, tgid);
	gt_symbolizer_add_process(e->sym, (pid_t)tgid); /* its new maps */
	if (gt_idmap_add(&e->symbolized, tgid) == 1)
		gt_engine_followed_new(e, tgid);
	gt_engine_go_proc(e, tgid);
	gt_py_stacks_check(e->py, tgid, 0);
}

/* A child first seen at its fork: its parent's maps first, so a child
 * gone before its own are read keeps them (an empty read keeps ours). */
void gt_engine_process_forked(struct gt_engine *e, uint32_t parent, uint32_t child)
{
	if (child == parent || gt_idmap_add(&e->symbolized, child) != 1)
		return;
	gt_symbolizer_clone_process(e->sym, (pid_t)parent, (pid_t)child);
	gt_symbolizer_add_process(e->sym, (pid_t)child);
	gt_engine_followed_new(e, child);
}

static void forget(struct gt_engine *e, uint32_t pid)
{
	gt_symbolizer_forget_process(e->sym, (pid_t)pid);
	gt_py_stacks_forget(e->py, pid);
	gt_engine_go_procs_forget(e, &pid);
	gt_golabels_forget(&e->golabels, pid);
	gt_idmap_del(&e->symbolized, pid);
	gt_idmap_del(&e->dying, pid);
}

void gt_engine_prune_followed(struct gt_engine *e)
{
	/* a closing session may still read a heap record handed over after
	 * its stop (session_memtrack.c): its last finish forgets them all */
	if (e->nactive == 0 && e->nclosing == 0) {
		if (e->symbolized.count)
			gt_engine_forget_followed(e);
		else
			gt_py_stacks_reset(e->py); /* each process pruned dead before */
		return;
	}
	for (size_t i = 0; i < e->symbolized.cap; i++) {
		uint32_t pid = (uint32_t)gt_idmap_slot(&e->symbolized, i);

		if (!pid)
			continue;
		enum gt_proc_life life = gt_proc_alive((pid_t)pid);

		if (life == GT_PROC_ALIVE) {
			gt_idmap_del(&e->dying, pid); /* a reused pid lives again */
			gt_titles_note(&e->titles, pid);
		}
		else if (life == GT_PROC_DEAD && gt_idmap_add(&e->dying, pid) == 0)
			forget(e, pid); /* dead at the last check too */
		/* unknown (EMFILE, ...): the last check's verdict stands */
	}
}

void gt_engine_forget_followed(struct gt_engine *e)
{
	for (size_t i = 0; i < e->symbolized.cap; i++) {
		uint32_t pid = (uint32_t)gt_idmap_slot(&e->symbolized, i);

		if (pid) {
			gt_symbolizer_forget_process(e->sym, (pid_t)pid);
			gt_py_stacks_forget(e->py, pid);
		}
	}
	gt_py_stacks_reset(e->py); /* its names and stacks with them */
	gt_engine_go_procs_forget(e, NULL);
	gt_symbolizer_close_parked(e->sym); /* no session left to map them */
	gt_titles_free(&e->titles);
	gt_golabels_free(&e->golabels);
	gt_idmap_free(&e->symbolized);
	gt_idmap_free(&e->dying);
	gt_mmap_backlog_free(&e->mmap_backlog);
#ifdef __GLIBC__
	/* No session is left: what they freed goes back to the system.  glibc
	 * keeps it otherwise, spread between live blocks it cannot return
	 * (20-30 MB after a few hundred sessions of 100 ms, for 1 MB in use). */
	malloc_trim(0);
#endif
}
