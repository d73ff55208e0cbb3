/* gotracectl inspect on a Go 1.22+ (v2) trace: the summary and the verdict
 * of the v2 decoder and translation run strictly (format/v2/gt_v2.h: its
 * length, type and batch rules; format/analyze/gt_analyze_v2.c: generations
 * in order, one frequency, tables without duplicates, a goroutine's status
 * stated before its events use it).  A failure names its rule. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "analyze/gt_analyze.h"
#include "util/gt_escape.h"
#include "trace_map.h"
#include "v2/gt_v2.h"

int inspect_is_v2(const char *path)
{
	uint8_t head[GT_V2_HEADER_LEN];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, head, sizeof(head));

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)sizeof(head) && gt_v2_is(head, sizeof(head));
}

static void jstr(const char *s)
{
	putchar('"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	putchar('"');
}

static void goroutines_text(const struct gt_analysis *a)
{
	printf("%-8s %-24s %7s", "id", "name", "starts");
	for (int b = 0; b < GT_BLK_COUNT; b++)
		printf(" %7s", gt_block_reason_names[b]);
	printf(" %14s %14s\n", "running_ns", "runnable_ns");
	for (size_t i = 0; i < a->nthreads; i++) {
		const struct gt_an_thread *t = &a->threads[i];
		size_t len;
		int64_t tid;
		const char *name = gt_an_thread_name(a, t, &len, &tid);
		char shown[GT_ESCAPE_SIZE(256)];

		/* the name is the traced process's text */
		if (len)
			gt_escape(shown, sizeof(shown), name, len);
		printf("%-8llu %-24s %7llu", (unsigned long long)t->id, len ? shown : "-",
		       (unsigned long long)t->starts);
		for (int b = 0; b < GT_BLK_COUNT; b++)
			printf(" %7llu", (unsigned long long)t->offcpu_n[b]);
		printf(" %14llu %14llu\n", (unsigned long long)t->oncpu_ns,
		       (unsigned long long)t->delay.sum);
	}
}

/* The goroutines as v1's inspect --json lists them (the fields
 * tests/integration/truth.py reads; blocks by their event's own reason, as
 * v1's; unblocks_received counts the wakeups that ended a wait; ended: its
 * GoDestroy was read; no end_state).  docs/format.md "inspect --json". */
static void goroutines_json(const struct gt_analysis *a)
{
	printf(",\"goroutines\":[");
	for (size_t i = 0; i < a->nthreads; i++) {
		const struct gt_an_thread *t = &a->threads[i];
		uint64_t woken = 0;
		size_t len;
		int64_t tid = -1;
		const char *name = gt_an_thread_name(a, t, &len, &tid);
		char buf[512];

		snprintf(buf, sizeof(buf), "%.*s", len ? (int)len : 0, len ? name : "");
		printf("%s{\"id\":%llu,\"name\":", i ? "," : "", (unsigned long long)t->id);
		jstr(buf);
		if (tid >= 0) /* none for one without a [thread] name */
			printf(",\"tid\":%lld", (long long)tid);
		printf(",\"starts\":%llu,\"blocks\":{", (unsigned long long)t->starts);
		for (int b = 0; b < GT_BLK_COUNT; b++)
			printf("%s\"%s\":%llu", b ? "," : "", gt_block_reason_names[b],
			       (unsigned long long)t->stops_n[b]);
		for (size_t w = 0; w < t->nwak; w++)
			woken += t->wak[w].count;
		printf("},\"running_ns\":%llu,\"runnable_ns\":%llu,\"unblocks_received\":%llu,"
		       "\"ended\":%s}",
		       (unsigned long long)t->oncpu_ns, (unsigned long long)t->delay.sum,
		       (unsigned long long)woken, t->ended ? "true" : "false");
	}
	printf("]");
}

static void summary_json(const char *path, const struct gt_analysis *a, int ok, size_t len,
			 int want_g)
{
	printf("{\"file\":");
	jstr(path);
	printf(",\"version\":\"%d.%d\",\"version_code\":%d,\"valid\":%s,\"error\":",
	       a->version / 1000, a->version % 1000, a->version, ok ? "true" : "false");
	if (ok)
		printf("null");
	else
		jstr(a->error);
	printf(",\"bytes\":%zu,\"events\":%llu,\"duration_ns\":%lld,\"freq\":%llu,"
	       "\"goroutine_count\":%zu,\"generations\":%llu,\"strings\":%llu,\"stacks\":%llu",
	       len, (unsigned long long)a->events, (long long)a->end_ns,
	       (unsigned long long)a->freq, a->nthreads, (unsigned long long)a->generations,
	       (unsigned long long)a->strings, (unsigned long long)a->stacks);
	/* v1's event names, for the transitions of the v2 events read (a
	 * GoBlock "sleep" is a GoSleep, a GoSyscallBegin a GoSysCall: the
	 * same meaning, so the same key); not the v2 records themselves */
	printf(",\"counts\":{");
	for (int t = 0, first = 1; t < GT_EV_COUNT; t++) {
		if (!a->v1_counts[t])
			continue;
		printf("%s\"%s\":%llu", first ? "" : ",", gt_event_descs[t].name,
		       (unsigned long long)a->v1_counts[t]);
		first = 0;
	}
	printf("}");
	if (ok && want_g)
		goroutines_json(a);
	printf("}\n");
}

static void summary_text(const char *path, const struct gt_analysis *a, int ok, size_t len)
{
	static char shown[GT_ESCAPE_SIZE(4096)];

	printf("file:        %s\n", gt_esc(shown, sizeof(shown), path));
	if (a->version)
		printf("version:     go %d.%d trace (Go 1.22+ format)\n", a->version / 1000,
		       a->version % 1000);
	printf("size:        %zu bytes\n", len);
	printf("duration:    %.3f ms (frequency %llu Hz)\n", (double)a->end_ns / 1e6,
	       (unsigned long long)a->freq);
	printf("events:      %llu\n", (unsigned long long)a->events);
	printf("goroutines:  %zu\n", a->nthreads);
	printf("generations: %llu\n", (unsigned long long)a->generations);
	printf("strings:     %llu\n", (unsigned long long)a->strings);
	printf("stacks:      %llu\n", (unsigned long long)a->stacks);
	if (ok)
		printf("verdict:     valid\n");
	else
		printf("verdict:     invalid: %s\n", gt_esc(shown, sizeof(shown), a->error));
}

int inspect_v2(const char *path, int json, int want_g)
{
	struct gt_analyze_opts o = { .since_ns = 0, .until_ns = -1, .strict = 1 };
	struct gt_analysis a;
	struct trace_map m;
	struct stat st;
	void *data = NULL;
	size_t len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ok;
	static char shown[GT_ESCAPE_SIZE(4096)];

	gt_esc(shown, sizeof(shown), path);
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "gotracectl: %s: %s\n", shown, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	len = (size_t)st.st_size;
	data = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
	close(fd);
	if (data == MAP_FAILED) {
		fprintf(stderr, "gotracectl: %s: mmap: %s\n", shown, strerror(errno));
		return 1;
	}
	m = (struct trace_map){ data, len, 0 };
	if (len) {
		o.release = trace_map_release;
		o.release_arg = &m;
	}
	ok = gt_analyze(&a, data, len, &o) == 0;
	if (json)
		summary_json(path, &a, ok, len, 1); /* as v1: --json lists them */
	else
		summary_text(path, &a, ok, len);
	if (ok && want_g && !json)
		goroutines_text(&a);
	gt_analysis_free(&a);
	if (len)
		munmap(data, len);
	fflush(stdout);
	return ok ? 0 : 1;
}
