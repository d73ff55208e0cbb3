/* Process titles for goroutine names (engine/titles.c): cmdline bytes as
 * the program set them, and the source the translator asks, on this very
 * process and on a child that sets its own title and exits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gt_test.h"
#include "engine/titles.h"

static void test_cmdline_joined(void)
{
	static const char args[] = "/usr/sbin/nginx\0-c\0/etc/x.conf\0";
	static const char padded[] = "postgres: checkpointer \0\0\0\0";
	char out[GT_TITLE_LEN];

	gt_title_from_cmdline(args, sizeof(args) - 1, out, sizeof(out));
	GT_CHECK(!strcmp(out, "/usr/sbin/nginx -c /etc/x.conf"), "args joined: '%s'", out);
	/* PostgreSQL pads its title with NULs, and a space before them */
	gt_title_from_cmdline(padded, sizeof(padded) - 1, out, sizeof(out));
	GT_CHECK(!strcmp(out, "postgres: checkpointer"), "padding kept: '%s'", out);
	gt_title_from_cmdline(args, sizeof(args) - 1, out, 8);
	GT_CHECK(!strcmp(out, "/usr/sb"), "not cut to fit: '%s'", out);
	gt_title_from_cmdline("\0\0", 2, out, sizeof(out));
	GT_CHECK(out[0] == 0, "empty cmdline gave '%s'", out);
}

/* A process is named by its argv as it set it (bash's exec -a); once known, its title outlives it; exec forgets it. */
static void test_source_reads_and_keeps(void)
{
	struct gt_titles ts = {0};
	const struct gt_title_source *src = gt_titles_source(&ts);
	char title[GT_TITLE_LEN], comm[GT_COMM_LEN];
	pid_t child = fork();
	GT_REQUIRE(child >= 0, "fork");
	if (child == 0) {
		/* argv[0] as a server sets its title */
		execl("/bin/bash", "bash", "-c", "exec -a 'srv: worker process' sleep 30",
		      (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 500; i++) { /* until the exec is done */
		if (src->title(src->ctx, (uint32_t)child, title, comm) == 0 &&
		    !strcmp(comm, "sleep"))
			break;
		gt_titles_forget(&ts, (uint32_t)child);
		usleep(10000);
	}
	GT_CHECK(src->title(src->ctx, (uint32_t)child, title, comm) == 0, "no title");
	GT_CHECK(!strcmp(title, "srv: worker process 30"), "title '%s'", title);
	GT_CHECK(!strcmp(comm, "sleep"), "comm '%s'", comm);
	kill(child, 9);
	waitpid(child, NULL, 0);
	GT_CHECK(src->title(src->ctx, (uint32_t)child, title, comm) == 0 &&
		 !strcmp(title, "srv: worker process 30"), "gone: title lost");
	gt_titles_forget(&ts, (uint32_t)child);
	GT_CHECK(src->title(src->ctx, (uint32_t)child, title, comm) < 0,
		 "gone and forgotten, yet named '%s'", title);
	gt_titles_free(&ts);
}

int main(void)
{
	GT_RUN(test_cmdline_joined);
	GT_RUN(test_source_reads_and_keeps);
	return gt_test_done();
}
