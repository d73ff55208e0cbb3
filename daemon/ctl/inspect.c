/* gotracectl inspect FILE: summary and validity check of any Go trace file
 * (ours or the Go runtime's).  Exit 0 valid, 1 invalid or unreadable,
 * 2 usage error.  A Go 1.22+ file goes to inspect_v2.c (summary, verdict by
 * the v2 decoder's rules; --strict changes nothing there).
 *
 *   --goroutines  one line per goroutine (name, thread id, starts, waits
 *                 by report's reasons, running and runnable time, end
 *                 state); --json keeps the events' own reasons ("blocks":
 *                 what Go's -d counts, by event type)
 *   --json        the summary and the goroutines as one JSON object
 *   --strict      judge by the producer contract of docs/format.md (what gotraced
 *                 promises of its own files: every P stopped at the end,
 *                 non-zero creation PCs, dictionaries after the first
 *                 batch, ...), not only by what Go's parser and viewer
 *                 demand.  Go runtimes' own traces break some of those
 *                 rules and still open, so the default is Go's rules. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/gt_analyze.h"
#include "commands.h"
#include "check/gt_check.h"
#include "util/gt_escape.h"

struct ginfo {
	struct gt_goroutine_stats st;
	char *name;
};

struct glist {
	struct ginfo *v;
	size_t n, cap;
	int oom;
};

static void collect(const struct gt_goroutine_stats *g, void *arg)
{
	struct glist *l = arg;
	struct ginfo *gi;

	if (l->oom)
		return;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct ginfo *v = realloc(l->v, cap * sizeof(*v));

		if (!v) {
			l->oom = 1;
			return;
		}
		l->v = v;
		l->cap = cap;
	}
	gi = &l->v[l->n];
	gi->st = *g;
	gi->name = strndup(g->name, g->name_len);
	if (!gi->name) {
		l->oom = 1;
		return;
	}
	gi->st.name = gi->name;
	l->n++;
}

static void glist_free(struct glist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
}

static uint64_t ticks_to_ns(uint64_t ticks, uint64_t freq)
{
	return freq ? (uint64_t)((double)ticks * 1e9 / (double)freq) : 0;
}

static void print_text_summary(const char *path, const struct gt_check_report *r,
			       const struct gt_check_report *go)
{
	uint64_t ns = ticks_to_ns(r->duration_ticks, r->freq);
	static char shown[GT_ESCAPE_SIZE(4096)];

	printf("file:       %s\n", gt_esc(shown, sizeof(shown), path));
	if (r->version)
		printf("version:    go %d.%d trace\n", r->version / 1000, r->version % 1000);
	printf("size:       %llu bytes\n", (unsigned long long)r->bytes);
	printf("duration:   %.3f ms (%llu ticks at %llu Hz)\n", ns / 1e6,
	       (unsigned long long)r->duration_ticks, (unsigned long long)r->freq);
	printf("events:     %llu (as go tool trace counts them)\n", (unsigned long long)r->events);
	printf("goroutines: %llu\n", (unsigned long long)r->goroutines);
	printf("procs:      %llu\n", (unsigned long long)r->procs);
	printf("strings:    %llu\n", (unsigned long long)r->strings);
	printf("stacks:     %llu\n", (unsigned long long)r->stacks);
	printf("records by type:\n");
	for (int t = 0; t < GT_EV_COUNT; t++)
		if (r->count_by_type[t])
			printf("  %-18s %llu\n", gt_event_descs[t].name,
			       (unsigned long long)r->count_by_type[t]);
	if (r->ok)
		printf("verdict:    valid\n");
	else
		printf("verdict:    invalid: %s\n", gt_esc(shown, sizeof(shown), r->error));
	if (go && go->ok != r->ok)
		printf("go tools:   %s%s\n", go->ok ? "valid (Go 1.19 opens it; only gotraced's producer contract, docs/format.md, is broken)"
						 : "invalid: ",
		       go->ok ? "" : gt_esc(shown, sizeof(shown), go->error));
}

/* The waits of each goroutine by report's reasons (the same waits under
 * the same names: a generic syscall of gotraced's that blocks, GoSysCall
 * then GoBlockCond/Recv/Send, is "syscall", not "sync"), from the analysis
 * behind report; a: NULL if it could not run (the events' own reasons
 * are shown then, and said). */
static int analyze_file(const char *path, struct gt_analysis *a, void **map, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	*map = NULL;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !st.st_size) {
		close(fd);
		return -EINVAL;
	}
	*len = (size_t)st.st_size;
	*map = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (*map == MAP_FAILED) {
		*map = NULL;
		return -ENOMEM;
	}
	memset(a, 0, sizeof(*a));
	rc = gt_analyze(a, *map, *len, &(struct gt_analyze_opts){ 0, -1, NULL, 0 });
	if (rc) {
		gt_analysis_free(a);
		munmap(*map, *len);
		*map = NULL;
	}
	return rc;
}

static void print_text_goroutines(const struct glist *l, const struct gt_analysis *a)
{
	if (!a)
		printf("(blocks by their events' own reasons: the file could not be analyzed as "
		       "report does)\n");
	printf("%-8s %-24s %-8s %7s", "id", "name", "tid", "starts");
	for (int b = 0; b < GT_BLK_COUNT; b++)
		printf(" %7s", gt_block_reason_names[b]);
	printf(" %14s %14s %8s %s\n", "running_ns", "runnable_ns", "unblocks", "end");
	for (size_t i = 0; i < l->n; i++) {
		const struct gt_goroutine_stats *g = &l->v[i].st;
		char tid[24] = "-", name[GT_ESCAPE_SIZE(256)];

		if (g->tid >= 0)
			snprintf(tid, sizeof(tid), "%lld", (long long)g->tid);
		/* the name is the traced process's text */
		printf("%-8llu %-24s %-8s %7llu", (unsigned long long)g->id,
		       g->name[0] ? gt_esc(name, sizeof(name), g->name) : "-", tid,
		       (unsigned long long)g->starts);
		const struct gt_an_thread *t = a ? gt_an_thread_of(a, g->id) : NULL;

		for (int b = 0; b < GT_BLK_COUNT; b++)
			printf(" %7llu", (unsigned long long)(t ? t->offcpu_n[b] : a ? 0 : g->blocks[b]));
		printf(" %14llu %14llu %8llu %s%s\n", (unsigned long long)g->running_ns,
		       (unsigned long long)g->runnable_ns, (unsigned long long)g->unblocks_received,
		       gt_gstate_names[g->end_state], g->ended ? " (ended)" : "");
	}
}

/* 1 if s[0..n) is well-formed UTF-8. */
static int utf8_ok(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t k = s[i] < 0x80 ? 0 : (s[i] & 0xe0) == 0xc0 ? 1 : (s[i] & 0xf0) == 0xe0 ? 2
			 : (s[i] & 0xf8) == 0xf0 ? 3 : 9;

		if (k == 9 || i + k >= n)
			return 0;
		for (size_t j = 1; j <= k; j++)
			if ((s[i + j] & 0xc0) != 0x80)
				return 0;
		i += k + 1;
	}
	return 1;
}

/* A JSON string; bytes that are not UTF-8 come out as \u00XX. */
static void json_str(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int raw = utf8_ok(p, strlen(s));

	putchar('"');
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20 || (*p >= 0x80 && !raw) || *p == 0x7f)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	putchar('"');
}

static void print_json(const char *path, const struct gt_check_report *r,
		       const struct gt_check_report *go, const struct glist *l)
{
	printf("{\"file\":");
	json_str(path);
	printf(",\"version\":\"%d.%d\",\"version_code\":%d,\"valid\":%s,\"error\":",
	       r->version / 1000, r->version % 1000, r->version, r->ok ? "true" : "false");
	if (r->ok)
		printf("null");
	else
		json_str(r->error);
	printf(",\"error_offset\":%llu,\"go_tools_valid\":%s,\"bytes\":%llu,\"events\":%llu,"
	       "\"duration_ticks\":%llu,\"duration_ns\":%llu,\"freq\":%llu,\"goroutine_count\":%llu,"
	       "\"procs\":%llu,\"strings\":%llu,\"stacks\":%llu,\"counts\":{",
	       (unsigned long long)r->error_offset, go->ok ? "true" : "false",
	       (unsigned long long)r->bytes, (unsigned long long)r->events,
	       (unsigned long long)r->duration_ticks,
	       (unsigned long long)ticks_to_ns(r->duration_ticks, r->freq),
	       (unsigned long long)r->freq, (unsigned long long)r->goroutines,
	       (unsigned long long)r->procs, (unsigned long long)r->strings,
	       (unsigned long long)r->stacks);
	for (int t = 0, first = 1; t < GT_EV_COUNT; t++) {
		if (!r->count_by_type[t])
			continue;
		printf("%s\"%s\":%llu", first ? "" : ",", gt_event_descs[t].name,
		       (unsigned long long)r->count_by_type[t]);
		first = 0;
	}
	printf("},\"goroutines\":[");
	for (size_t i = 0; i < l->n; i++) {
		const struct gt_goroutine_stats *g = &l->v[i].st;

		printf("%s{\"id\":%llu,\"name\":", i ? "," : "", (unsigned long long)g->id);
		json_str(g->name);
		if (g->tid >= 0)
			printf(",\"tid\":%lld", (long long)g->tid);
		else
			printf(",\"tid\":null");
		printf(",\"starts\":%llu,\"blocks\":{", (unsigned long long)g->starts);
		for (int b = 0; b < GT_BLK_COUNT; b++)
			printf("%s\"%s\":%llu", b ? "," : "", gt_block_reason_names[b],
			       (unsigned long long)g->blocks[b]);
		printf("},\"running_ns\":%llu,\"runnable_ns\":%llu,\"unblocks_received\":%llu,"
		       "\"end_state\":\"%s\",\"ended\":%s}",
		       (unsigned long long)g->running_ns, (unsigned long long)g->runnable_ns,
		       (unsigned long long)g->unblocks_received, gt_gstate_names[g->end_state],
		       g->ended ? "true" : "false");
	}
	printf("]}\n");
}

static void usage(FILE *f)
{
	fprintf(f, "usage: gotracectl inspect [--goroutines] [--json] [--strict] FILE (options\n"
		   "  before or after FILE)\n"
		   "  summary and validity check of a Go execution trace (1.5 to 1.21,\n"
		   "  and Go 1.22+: the decoder's length, type, generation and status rules)\n"
		   "  valid = Go's parser and viewer accept it; --strict adds the rules\n"
		   "  gotraced holds its own files to\n"
		   "  exit 0 valid, 1 invalid, 2 usage error\n");
}

int cmd_inspect(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "goroutines", no_argument, NULL, 'g' },
		{ "json", no_argument, NULL, 'j' },
		{ "strict", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int want_g = 0, json = 0, go_rules = 1, nfiles = 0, c, rc;
	struct gt_check_report rep, go;
	struct glist l = {0};
	const char *path = NULL;

	optind = 1;
	/* "-": FILE is taken where it stands, options before or after it
	 * (`inspect FILE --goroutines` as gotracectl(1) writes it) */
	while ((c = getopt_long(argc, argv, "-gjsh", opts, NULL)) != -1) {
		switch (c) {
		case 1:
			if (nfiles++ == 0)
				path = optarg;
			break;
		case 'g': want_g = 1; break;
		case 'j': json = 1; break;
		case 's': go_rules = 0; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	for (; optind < argc; optind++) /* after "--" */
		if (nfiles++ == 0)
			path = argv[optind];
	if (nfiles != 1) {
		fprintf(stderr, "gotracectl inspect: %s\n", nfiles ? "one FILE only" : "missing FILE");
		usage(stderr);
		return 2;
	}
	if (inspect_is_v2(path))
		return inspect_v2(path, json, want_g);
	rc = gt_check_file_run(path, go_rules ? GT_CHECK_GO_TOOLS : 0, &rep,
			       (want_g || json) ? collect : NULL, &l);
	if (rc < 0) {
		static char shown[GT_ESCAPE_SIZE(sizeof(rep.error))];

		fprintf(stderr, "gotracectl: %s\n", gt_esc(shown, sizeof(shown), rep.error));
		glist_free(&l);
		return 1;
	}
	if (l.oom) {
		fprintf(stderr, "gotracectl: inspect: out of memory listing goroutines\n");
		glist_free(&l);
		return 1;
	}
	go = rep;
	if (!go_rules && !rep.ok && gt_check_file_run(path, GT_CHECK_GO_TOOLS, &go, NULL, NULL) < 0)
		go = rep;
	if (json) {
		print_json(path, &rep, &go, &l);
	} else {
		print_text_summary(path, &rep, &go);
		if (want_g) {
			struct gt_analysis a;
			void *map;
			size_t len = 0;
			int ok = rep.ok && !analyze_file(path, &a, &map, &len);

			print_text_goroutines(&l, ok ? &a : NULL);
			if (ok) {
				gt_analysis_free(&a);
				munmap(map, len);
			}
		}
	}
	glist_free(&l);
	fflush(stdout);
	return rep.ok ? 0 : 1;
}
