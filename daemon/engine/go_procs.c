/* Go processes: on first sight of a process and at each exec, whether its
 * program is Go 1.19+ and where its goroutine ids are (sym/goinfo.h), for
 * BPF (capture's go_procs map): a thread's switch-out then carries the
 * goroutine it ran (docs/mapping.md, "Goroutines of Go programs"). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "internal.h"
#include "sym/goinfo.h"
#include "sym/safe_open.h"

void gt_engine_go_proc(struct gt_engine *e, uint32_t tgid)
{
	struct gt_goinfo gi;
	struct gt_go_proc gp = {0};
	char path[64];
	int pfd, fd = -1, err = -ENOENT;

	/* the kernel's link, then the checks of every user file: a regular
	 * file of at most 4 GiB, reopened non-blocking (docs/security.md) */
	snprintf(path, sizeof(path), "/proc/%u/exe", tgid);
	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd >= 0) {
		fd = gt_sym_reopen(pfd, path, NULL, GT_SYM_FILE_MAX);
		close(pfd);
	}
	if (fd >= 0) {
		err = gt_goinfo_read(fd, &gi);
		close(fd);
	}
	if (err) {
		gt_capture_go_proc(e->capture, tgid, NULL); /* an exec into another program */
		return;
	}
	gp.tls_off = gi.tls_off;
	gp.goid_off = gi.goid_off;
	gp.labels_off = gi.labels_off;
	gp.m_off = gi.m_off;
	gp.curg_off = gi.curg_off;
	gt_capture_go_proc(e->capture, tgid, &gp);
}
