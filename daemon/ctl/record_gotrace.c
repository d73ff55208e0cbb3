/* record --go-trace (record_gotrace.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "record_gotrace.h"

int gt_gotrace_init(struct gt_gotrace *g, const char *url, uint64_t duration_ns)
{
	int n;

	memset(g, 0, sizeof(*g));
	n = snprintf(g->url, sizeof(g->url), "%s%cseconds=%.3f", url, strchr(url, '?') ? '&' : '?',
		     duration_ns / 1e9);
	/* the trace's own seconds, then a minute for a slow server to send it */
	g->timeout_ms = (int)(duration_ns / 1000000) + 60000;
	return n < 0 || (size_t)n >= sizeof(g->url) ? -EINVAL : 0;
}

static void *fetch(void *arg)
{
	struct gt_gotrace *g = arg;

	struct timespec margin = { 0, (long)GT_GOTRACE_MARGIN_NS };

	g->rc = gt_http_get(g->url, g->timeout_ms, &g->body, g->why, sizeof(g->why));
	/* the runtime's last events were written as it sent them */
	while (nanosleep(&margin, &margin) && errno == EINTR)
		;
	atomic_store(&g->over, 1);
	return NULL;
}

int gt_gotrace_over(struct gt_gotrace *g)
{
	return g && atomic_load(&g->over);
}

int gt_gotrace_start(struct gt_gotrace *g)
{
	int rc = pthread_create(&g->thread, NULL, fetch, g);

	if (rc) {
		snprintf(g->why, sizeof(g->why), "cannot start the fetch: %s", strerror(rc));
		atomic_store(&g->over, 1);
		return -rc;
	}
	g->running = 1;
	return 0;
}

int gt_gotrace_finish(struct gt_gotrace *g, const char *k_path, const char *out)
{
	int rc;

	if (!g->running) {
		fprintf(stderr, "gotracectl: --go-trace: the runtime's trace was never asked for%s%s\n",
			g->why[0] ? ": " : "", g->why);
		return 1;
	}
	pthread_join(g->thread, NULL);
	g->running = 0;
	if (g->rc) {
		fprintf(stderr, "gotracectl: --go-trace %s: %s\n", g->url, g->why);
		return 1;
	}
	rc = gomerge_data(g->body.data, g->body.len, k_path, out);
	free(g->body.data);
	g->body.data = NULL;
	return rc;
}
