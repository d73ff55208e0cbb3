/* Go processes: on first sight of a process and at each exec, whether its
 * program is Go 1.19+ and where its goroutine ids are (sym/goinfo.h), for
 * BPF (capture's go_procs map): a thread's switch-out then carries the
 * goroutine it ran (docs/mapping.md, "Goroutines of Go programs").
 *
 * The program is its owner's file: it may sit on a file system that never
 * answers, and its DWARF may take tenths of a second to read.  It is read
 * on a loader thread (sym/loader.h: on its user's budget; a stuck read
 * holds one thread), and the answer applied at a later drain of the rings
 * (docs/security.md). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/procfs.h"
#include "internal.h"
#include "sym/goinfo.h"
#include "sym/loader.h"
#include "sym/safe_open.h"
#include "util/gt_grow.h"

struct gt_go_read {
	uint32_t tgid;
	struct gt_sym_job *job;
};

/* A read's own state (the job's arg): the process, and the answer the
 * loader thread writes. */
struct go_arg {
	uint32_t tgid;
	struct gt_goinfo gi;
};

static int read_go(void *p)
{
	struct go_arg *a = p;
	char path[64];
	int pfd, fd = -1, err = -ENOENT;

	/* the kernel's link, then the checks of every user file: a regular
	 * file of at most 4 GiB, reopened non-blocking (docs/security.md) */
	snprintf(path, sizeof(path), "/proc/%u/exe", a->tgid);
	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd >= 0) {
		fd = gt_sym_reopen(pfd, path, NULL, GT_SYM_FILE_MAX);
		close(pfd);
	}
	if (fd >= 0) {
		err = gt_goinfo_read(fd, &a->gi);
		close(fd);
	}
	return err;
}

static void drop_at(struct gt_engine *e, size_t i)
{
	gt_sym_job_drop(e->go_reads[i]->job);
	free(e->go_reads[i]);
	e->go_reads[i] = e->go_reads[--e->ngo_reads];
}

/* Lets the reads of tgid (NULL: every one) go. */
static void drop_reads(struct gt_engine *e, const uint32_t *tgid)
{
	for (size_t i = e->ngo_reads; i-- > 0;)
		if (!tgid || e->go_reads[i]->tgid == *tgid)
			drop_at(e, i);
}

void gt_engine_go_procs_forget(struct gt_engine *e, const uint32_t *tgid)
{
	/* BPF deletes a process's entry at its last switch-out, but a read
	 * that ended after that put it back (gt_engine_go_procs_poll): a dead
	 * process's entry would stay, and a reused pid would get its offsets */
	if (tgid && e->capture)
		gt_capture_go_proc(e->capture, *tgid, NULL);
	drop_reads(e, tgid);
	if (!tgid) {
		free(e->go_reads);
		e->go_reads = NULL;
		e->capgo_reads = 0;
	}
}

void gt_engine_go_proc(struct gt_engine *e, uint32_t tgid)
{
	struct gt_go_read *r;
	struct go_arg *a;
	char what[64];

	/* The entry stays until this read answers (set, or deleted if the
	 * image is not Go): the exec may have been read from the ring seconds
	 * after it ran (a loaded or emulated machine), when an earlier read
	 * had already found the new image, and deleting it now left a Go
	 * program's switches without ids for as long as this read took. */
	drop_reads(e, &tgid); /* an earlier image's read */
	if (gt_grow(&e->go_reads, &e->capgo_reads, e->ngo_reads + 1, sizeof(*e->go_reads)))
		return;
	r = calloc(1, sizeof(*r));
	a = calloc(1, sizeof(*a));
	if (!r || !a) {
		free(r);
		free(a);
		return;
	}
	a->tgid = tgid;
	snprintf(what, sizeof(what), "/proc/%u/exe (Go build info)", tgid);
	r->tgid = tgid;
	r->job = gt_sym_call_post((pid_t)tgid, what, read_go, a, free);
	if (!r->job) {
		free(r);
		free(a);
		return;
	}
	e->go_reads[e->ngo_reads++] = r;
}

void gt_engine_go_procs_poll(struct gt_engine *e)
{
	for (size_t i = e->ngo_reads; i-- > 0;) {
		struct gt_go_read *r = e->go_reads[i];
		const struct go_arg *a;
		int err;

		if (!gt_sym_job_wait(r->job, 0))
			continue;
		a = gt_sym_call_result(r->job, &err);
		/* a process gone while its read ran gets no entry (forget() may
		 * have come already) */
		if (err)
			gt_capture_go_proc(e->capture, r->tgid, NULL); /* not Go */
		else if (gt_proc_alive((pid_t)r->tgid) != GT_PROC_DEAD) {
			struct gt_go_proc gp = {0};

			gp.tls_off = a->gi.tls_off;
			gp.goid_off = a->gi.goid_off;
			gp.labels_off = a->gi.labels_off;
			gp.m_off = a->gi.m_off;
			gp.curg_off = a->gi.curg_off;
			gt_capture_go_proc(e->capture, r->tgid, &gp);
		}
		drop_at(e, i);
	}
}
