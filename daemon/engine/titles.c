/* Process titles, read from /proc for the translator's goroutine names.
 * Read when first asked (a goroutine's name is defined at its end, when
 * the program has long set its title), kept so that threads of a process
 * that has since gone are still named, forgotten at exec. */
#include "titles.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/procfs.h"

void gt_title_from_cmdline(const char *buf, size_t n, char *out, size_t outlen)
{
	size_t len = 0;

	if (!outlen)
		return;
	while (n && (buf[n - 1] == '\0' || buf[n - 1] == ' '))
		n--;
	for (size_t i = 0; i < n && len + 1 < outlen; i++)
		out[len++] = buf[i] ? buf[i] : ' ';
	out[len] = '\0';
}

/* Reads tgid's cmdline into buf and its comm into *st, both of one
 * program: an exec between the two reads paired the old program's
 * cmdline with the new one's comm (seen under load), so the comm is read
 * on both sides of the cmdline and the pair is kept only if it did not
 * change.  Returns the cmdline's length, or -1. */
static int read_pair(uint32_t tgid, char *buf, size_t len, struct gt_proc_stat *st)
{
	char path[64];
	struct gt_proc_stat after;

	snprintf(path, sizeof(path), "/proc/%u/cmdline", tgid);
	for (int tries = 0; tries < 3; tries++) {
		int n;

		if (gt_proc_stat((pid_t)tgid, 0, st) < 0)
			return -1;
		n = gt_proc_read_small(path, buf, len);
		if (n <= 0 || gt_proc_stat((pid_t)tgid, 0, &after) < 0)
			return -1;
		if (!strncmp(st->comm, after.comm, sizeof(after.comm)))
			return n;
	}
	return -1; /* exec after exec: asked again later */
}

/* Reads tgid's title and comm into *out; 0, or -1 (out untouched) when
 * /proc has neither (gone, or a kernel thread: empty cmdline). */
static int read_title(uint32_t tgid, struct gt_title_entry *out)
{
	char buf[4096];
	struct gt_title_entry got = {0}, *e = &got;
	struct gt_proc_stat st;
	int n = read_pair(tgid, buf, sizeof(buf), &st);

	if (n <= 0)
		return -1;
	gt_title_from_cmdline(buf, (size_t)n, e->title, sizeof(e->title));
	if (!e->title[0])
		return -1;
	memcpy(e->comm, st.comm, sizeof(e->comm));
	e->comm[GT_COMM_LEN - 1] = '\0';
	e->tgid = tgid;
	*out = got;
	return 0;
}

static int title_of(void *ctx, uint32_t tgid, char title[GT_TITLE_LEN], char comm[GT_COMM_LEN])
{
	struct gt_titles *ts = ctx;
	struct gt_title_entry fresh = {0}, *e = &fresh;

	if (!ts->cache)
		ts->cache = calloc(GT_TITLE_CACHE, sizeof(*ts->cache));
	if (ts->cache) /* without memory: read every time */
		e = &ts->cache[tgid % GT_TITLE_CACHE];
	if (e->tgid != tgid && read_title(tgid, e) < 0)
		return -1;
	memcpy(title, e->title, GT_TITLE_LEN);
	memcpy(comm, e->comm, GT_COMM_LEN);
	return 0;
}

void gt_titles_note(struct gt_titles *ts, uint32_t tgid)
{
	char title[GT_TITLE_LEN], comm[GT_COMM_LEN];

	title_of(ts, tgid, title, comm);
}

const struct gt_title_source *gt_titles_source(struct gt_titles *ts)
{
	ts->src.title = title_of;
	ts->src.ctx = ts;
	return &ts->src;
}

void gt_titles_forget(struct gt_titles *ts, uint32_t tgid)
{
	if (ts->cache && ts->cache[tgid % GT_TITLE_CACHE].tgid == tgid)
		ts->cache[tgid % GT_TITLE_CACHE].tgid = 0;
}

void gt_titles_free(struct gt_titles *ts)
{
	free(ts->cache);
	ts->cache = NULL;
}

int gt_titles_copy(struct gt_titles *dst, const struct gt_titles *src)
{
	dst->cache = NULL;
	if (src->cache) {
		dst->cache = malloc(GT_TITLE_CACHE * sizeof(*dst->cache));
		if (!dst->cache)
			return -1; /* read every title from /proc then */
		memcpy(dst->cache, src->cache, GT_TITLE_CACHE * sizeof(*dst->cache));
	}
	return 0;
}
