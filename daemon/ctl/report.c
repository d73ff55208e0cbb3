/* gotracectl report FILE: the latency questions a terminal answers faster
 * than the viewer (perf sched latency, perf trace -s, runqlat, offcputime),
 * for any Go trace file.  The analysis (format/analyze/gt_analyze.h) streams the
 * events; this file reads the options, maps the file (and lets a Go 1.22+
 * file's pages go once their generation is read) and picks a printer.
 * Exit 0, 1 unreadable trace or a selection that matches nothing (a
 * --thread no thread has, a window past the trace's end, --folded=cpu
 * without samples: said, never an empty report), 2 usage error. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "report.h"
#include "util/gt_escape.h"
#include "trace_map.h"
#include "v2/gt_v2.h"

/* The syscalls of the architecture we are built for (generated from the
 * kernel's <asm/unistd.h>): a GoSysCall stack's top frame names a syscall
 * only if it is one of these. */
static const char *const sysnames[] = {
#define GT_SYSCALL(name) #name,
#include "syscall_names.h"
#undef GT_SYSCALL
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gotracectl report [OPTIONS] FILE (options before or after FILE)\n"
		"  a flight dump's trigger first (what, which thread, when), then per\n"
		"  thread (goroutine) and per thread name, worst first: wakeup delay\n"
		"  (perf sched timehist's sch delay) and preemption delay, their sum\n"
		"  (runqlat's run-queue latency, with its histogram; count, avg, p50,\n"
		"  p90, p99, max, when the worst ended), the longest single waits with\n"
		"  their stacks, off-CPU time by reason with its top stacks,\n"
		"  on-CPU time and CPU (P) migrations, syscalls (calls or blocks, total,\n"
		"  min, avg, max) and wakers (who woke it, and the delay until it ran).\n"
		"  Percentiles come from a log-linear histogram per thread (64 buckets\n"
		"  per power of two, HDR-like): within 1%% of the exact value.\n"
		"options:\n"
		"  --top N            rows per table (default 10; 0: all), and stacks\n"
		"                     per off-CPU reason (default 3)\n"
		"  --since DUR        window start, from the trace's first event (1.5s,\n"
		"  --until DUR        200ms, 40us, 100ns; a bare number is seconds); a\n"
		"                     figure counts when the event ending it is inside\n"
		"  --thread NAME|ID   only threads of this name, goroutine id or tid\n"
		"  --json             everything as one JSON object (times in ns)\n"
		"  --folded=cpu       folded stacks of CPU samples (count = samples)\n"
		"  --folded=offcpu[:REASON]  folded off-CPU stacks (count = microseconds);\n"
		"                     REASON: sync sleep select net syscall block preempt sched\n"
		"  folded lines (`thread;root;...;leaf COUNT`) feed flamegraph.pl, inferno\n"
		"  or speedscope.  See gotracectl(1) for how to read each table.\n");
}

/* "1.5s", "200ms", "40us", "100ns", "2m", "1h", "3" (seconds) -> ns; -1 if bad. */
static int64_t parse_dur(const char *s)
{
	static const struct { const char *u; double mul; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "m", 60e9 }, { "h", 3600e9 }, { "", 1e9 },
	};
	char *end;
	double v = strtod(s, &end);

	if (end == s || v < 0 || v > 9e9)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(*units); i++)
		if (!strcmp(end, units[i].u))
			return (int64_t)(v * units[i].mul);
	return -1;
}

static int parse_folded(const char *s, struct report_opts *o)
{
	o->folded = 1;
	if (!strcmp(s, "cpu")) {
		o->fold_kind = GT_AN_KIND_CPU;
		return 0;
	}
	if (!strcmp(s, "offcpu")) {
		o->fold_kind = -1;
		return 0;
	}
	if (strncmp(s, "offcpu:", 7))
		return -1;
	for (int r = 0; r < GT_BLK_COUNT; r++)
		if (!strcmp(s + 7, gt_block_reason_names[r])) {
			o->fold_kind = GT_AN_KIND_OFFCPU + r;
			return 0;
		}
	return -1;
}

static int bad(const char *what, const char *arg)
{
	fprintf(stderr, "gotracectl report: bad %s '%s'\n", what, arg);
	usage(stderr);
	return 2;
}

/* Parses argv into o; 0, or the exit status to return (2 usage, -1 help). */
static int parse_opts(int argc, char **argv, struct report_opts *o)
{
	static const struct option opts[] = {
		{ "top", required_argument, NULL, 't' },
		{ "since", required_argument, NULL, 's' },
		{ "until", required_argument, NULL, 'u' },
		{ "thread", required_argument, NULL, 'T' },
		{ "json", no_argument, NULL, 'j' },
		{ "folded", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c, nfiles = 0;

	*o = (struct report_opts){ .top = 10,
				   .win = { 0, -1, sysnames, sizeof(sysnames) / sizeof(*sysnames) } };
	o->win.mark_key = GT_REPORT_TRIGGER_KEY;
	optind = 1;
	/* "-": FILE is taken where it stands, options before or after it */
	while ((c = getopt_long(argc, argv, "-h", opts, NULL)) != -1) {
		switch (c) {
		case 1:
			if (nfiles++ == 0)
				o->path = optarg;
			break;
		case 't':
			o->top = (int)strtol(optarg, &end, 10);
			if (*end || end == optarg || o->top < 0)
				return bad("--top", optarg);
			o->top_given = 1;
			break;
		case 's':
			if ((o->win.since_ns = parse_dur(optarg)) < 0)
				return bad("--since duration", optarg);
			break;
		case 'u':
			if ((o->win.until_ns = parse_dur(optarg)) < 0)
				return bad("--until duration", optarg);
			break;
		case 'T': o->thread = optarg; break;
		case 'j': o->json = 1; break;
		case 'f':
			if (parse_folded(optarg, o))
				return bad("--folded (cpu, offcpu or offcpu:REASON)", optarg);
			break;
		case 'h': usage(stdout); return -1;
		default: usage(stderr); return 2;
		}
	}
	if (o->win.until_ns >= 0 && o->win.until_ns < o->win.since_ns) {
		fprintf(stderr, "gotracectl report: --until is before --since\n");
		return 2;
	}
	for (; optind < argc; optind++) /* after "--" */
		if (nfiles++ == 0)
			o->path = argv[optind];
	if (nfiles != 1) {
		fprintf(stderr, "gotracectl report: %s\n", nfiles ? "one FILE only" : "missing FILE");
		usage(stderr);
		return 2;
	}
	return 0;
}

/* The file's name as messages show it (escaped: it may be anyone's). */
static char shown_path[GT_ESCAPE_SIZE(4096)];

/* Maps path read-only; 0 or -errno with the reason printed. */
static int map_file(const char *path, const uint8_t **data, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	void *p;

	if (fd < 0 || fstat(fd, &st) < 0)
		err = errno;
	else /* mmap of a directory says "No such device": name what it is */
		err = S_ISDIR(st.st_mode) ? EISDIR : S_ISREG(st.st_mode) ? 0 : EINVAL;
	if (err) {
		fprintf(stderr, "gotracectl report: cannot open %s: %s\n", shown_path,
			err == EINVAL ? "not a regular file" : strerror(err));
		if (fd >= 0)
			close(fd);
		return -err;
	}
	*len = (size_t)st.st_size;
	p = *len ? mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0) : (void *)"";
	err = errno;
	close(fd);
	if (p == MAP_FAILED) {
		fprintf(stderr, "gotracectl report: cannot map %s: %s\n", shown_path, strerror(err));
		return -err;
	}
	*data = p;
	return 0;
}

/* --folded keeps the threads --thread names. */
static int keep_thread(const struct gt_analysis *a, uint64_t g, void *arg)
{
	const struct report_opts *o = arg;
	const struct gt_an_thread *t = gt_an_thread_of(a, g);

	if (!o->thread)
		return 1;
	return t && report_named(a, t, o->thread);
}

/* --thread: the longest single waits are of its threads, not the
 * longest of all filtered afterwards (a thread whose waits are shorter
 * than 64 of the others' would show none). */
static int keep_waits_of(const struct gt_analysis *a, const struct gt_an_thread *t, void *arg)
{
	const struct report_opts *o = arg;

	return report_named(a, t, o->thread);
}

/* Lists up to 8 of the trace's thread names after "its threads: ". */
static void list_threads(const struct gt_analysis *a)
{
	char name[160];
	int64_t tid;
	size_t shown = 0, n = 0;

	for (size_t i = 0; i < a->nthreads; i++)
		n += a->threads[i].id != 0;
	fprintf(stderr, "; its %zu thread%s:", n, n == 1 ? "" : "s");
	for (size_t i = 0; i < a->nthreads && shown < 8; i++) {
		if (!a->threads[i].id)
			continue;
		report_shown(a, &a->threads[i], name, sizeof(name), &tid);
		if (tid >= 0)
			fprintf(stderr, " %s (tid %lld)", name, (long long)tid);
		else
			fprintf(stderr, " %s (G%llu)", name, (unsigned long long)a->threads[i].id);
		shown++;
	}
	fprintf(stderr, "%s\n", shown < n ? " ..." : "");
}

/* A selection that matches nothing is said, not printed as empty tables:
 * 0, or 1 with the reason on stderr. */
static int check_selection(const struct gt_analysis *a, const struct report_opts *o)
{
	int found = 0;

	if (o->win.since_ns > a->end_ns) {
		fprintf(stderr, "gotracectl report: the window starts at %.6fs, after the end of %s: "
			"it spans 0s to %.6fs from its first event\n",
			o->win.since_ns / 1e9, shown_path, a->end_ns / 1e9);
		return 1;
	}
	for (size_t i = 0; o->thread && i < a->nthreads && !found; i++)
		found = a->threads[i].id && report_named(a, &a->threads[i], o->thread);
	if (o->thread && !found) {
		fprintf(stderr, "gotracectl report: no thread in %s is named '%s' or has that tid or "
			"goroutine id", shown_path, o->thread);
		list_threads(a);
		return 1;
	}
	if (o->folded && o->fold_kind == GT_AN_KIND_CPU && !a->samples) {
		fprintf(stderr, "gotracectl report: %s has no CPU samples (record with --cpu-profile)\n",
			shown_path);
		return 1;
	}
	return 0;
}

static int print(const struct gt_analysis *a, const struct report_opts *o)
{
	if (o->folded)
		return gt_an_fold(a, o->fold_kind, keep_thread, (void *)o, stdout);
	return o->json ? report_json(a, o, stdout) : report_text(a, o, stdout);
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o;
	struct gt_analysis a;
	const uint8_t *data = NULL;
	size_t len = 0;
	struct trace_map m;
	int rc = parse_opts(argc, argv, &o);

	if (rc)
		return rc < 0 ? 0 : rc;
	gt_esc(shown_path, sizeof(shown_path), o.path);
	if (map_file(o.path, &data, &len))
		return 1;
	m = (struct trace_map){ data, len, 0 };
	if (len) {
		o.win.release = trace_map_release;
		o.win.release_arg = &m;
	}
	if (o.thread) {
		o.win.keep_waits_of = keep_waits_of;
		o.win.keep_arg = &o;
	}
	if (gt_v2_is(data, len))
		o.merged = &m;
	rc = gt_analyze(&a, data, len, &o.win);
	if (rc) {
		fprintf(stderr, "gotracectl report: %s: %s\n", shown_path, a.error);
	} else if (check_selection(&a, &o)) {
		rc = -ENOENT;
	} else {
		rc = print(&a, &o);
		if (!rc && !o.json && !o.folded && gt_v2_is(data, len))
			rc = report_kernel(&m, &o, stdout);
		if (rc && rc != -EINVAL)
			fprintf(stderr, "gotracectl report: writing the report: %s\n", strerror(-rc));
	}
	gt_analysis_free(&a);
	if (len)
		munmap((void *)data, len);
	if (fflush(stdout) && !rc) {
		fprintf(stderr, "gotracectl report: writing the report: %s\n", strerror(errno));
		rc = -EIO;
	}
	return rc ? 1 : 0;
}
