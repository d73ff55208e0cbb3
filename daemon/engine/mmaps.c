/* The kernel's records of executable mappings (capture's perf records)
 * into the symbolizer: a process that lives a few milliseconds is gone
 * before its /proc/PID/maps can be read, but not before its mappings were
 * recorded.  Records of followed processes (e->symbolized) are applied at
 * once; those of others wait in the backlog until the process becomes
 * followed (gt_engine_followed_new) or is pushed out.  They come in the
 * capture's one time order with the events, each the capture's own held
 * copy: applied and freed, or kept as it is. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym/maps.h"
#include "sym/python.h"
#include "sym/symbolize.h"

static void apply(void *ctx, const struct gt_mmap_rec *r)
{
	static const char deleted[] = " (deleted)";
	const size_t dlen = sizeof(deleted) - 1;
	struct gt_engine *e = ctx;
	struct gt_map_line m = {
		.start = r->start, .end = r->end, .offset = r->pgoff, .inode = r->inode,
		.dev_major = r->dev_major, .dev_minor = r->dev_minor,
		.readable = 1, .executable = 1, .path = r->path, .path_len = r->path_len,
	};

	/* as /proc/PID/maps shows them: an anonymous mapping has no path
	 * (perf says "//anon"), an unlinked file is marked */
	if (!r->inode && r->path_len && r->path[0] == '/') {
		m.path = "";
		m.path_len = 0;
	} else if (m.path_len > dlen && !memcmp(m.path + m.path_len - dlen, deleted, dlen)) {
		m.path_len -= dlen;
		m.deleted = 1;
	}
	gt_symbolizer_add_mapping(e->sym, (pid_t)r->pid, &m);
	e->mmaps_applied++;
	/* a libpython loads after exec: the process is CPython from now
	 * (these records are executable mappings only; asked once an image) */
	if (gt_python_binary_name(m.path, m.path_len))
		gt_py_stacks_check(e->py, r->pid, 1);
}

/* A `record -- CMD` command that execs now: its trace begins with the
 * new image, so the recorder's own mappings go (window.c). */
static int launched(struct gt_engine *e, uint32_t pid)
{
	for (int i = 0; i < GT_MAX_SESSIONS; i++)
		if (e->active[i] && gt_idmap_has(&e->active[i]->awaiting_exec, pid))
			return 1;
	return 0;
}

static void on_mmap(void *ctx, struct gt_mmap_held *h)
{
	struct gt_engine *e = ctx;
	const struct gt_mmap_rec *r = &h->r;
	int followed;

	if (!e->nactive || r->kind == GT_MMAP_LOST) {
		free(h); /* counted by the capture */
		return;
	}
	followed = gt_idmap_has(&e->symbolized, r->pid);
	if (r->kind == GT_MMAP_EXEC) {
		/* a followed process keeps its old mappings for the stacks
		 * taken before the exec, still in the rings (symbolize.h) */
		if (!followed)
			gt_mmap_backlog_exec(&e->mmap_backlog, r->pid);
		else if (launched(e, r->pid))
			gt_symbolizer_forget_process(e->sym, (pid_t)r->pid);
		free(h);
	} else if (followed) {
		apply(e, r);
		free(h);
	} else {
		gt_mmap_backlog_push(&e->mmap_backlog, h); /* owns h now */
	}
}

void gt_engine_mmaps_start(struct gt_engine *e)
{
	const char *why = gt_capture_mmap_unavailable(e->capture);

	if (why)
		fprintf(stderr, "gotraced: %s; a process that exits within ~50 ms of its start "
			"may show addresses instead of function names\n", why);
	else
		gt_capture_on_mmap(e->capture, on_mmap, e);
}

void gt_engine_followed_new(struct gt_engine *e, uint32_t tgid)
{
	if (e->mmap_backlog.count)
		gt_mmap_backlog_take(&e->mmap_backlog, tgid, apply, e);
}
