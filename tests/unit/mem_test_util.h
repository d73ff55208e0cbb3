/* Helpers of test_memtrack.c and test_cpu_sample.c (header-only; each test
 * is one .c file): run a workload under the wl_common.h protocol, record it
 * through the engine API (daemon/engine/session.h) and scan the resulting Go trace
 * for HeapAlloc values, CPU samples and allocation logs with their stacks. */
#ifndef MEM_TEST_UTIL_H
#define MEM_TEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check/gt_check.h"
#include "wire/gt_events.h"
#include "wire/gt_reader.h"
#include "gt_test.h"
#include "engine/session.h"

static const char *mt_build = "build";

static inline void mt_find_build(int argc, char **argv)
{
	static char dir[512];
	const char *env = getenv("GT_BUILD");

	if (env && *env) {
		mt_build = env;
	} else if (argc > 0 && (strstr(argv[0], "/tests/") || strstr(argv[0], "/bench/"))) {
		const char *cut = strstr(argv[0], "/tests/") ? strstr(argv[0], "/tests/")
							    : strstr(argv[0], "/bench/");

		snprintf(dir, sizeof(dir), "%.*s", (int)(cut - argv[0]), argv[0]);
		mt_build = dir;
	}
}

/* ---- a workload child with pipes on stdin/stdout ---- */
struct mt_child {
	pid_t pid;       /* the spawned process */
	pid_t target;    /* the pid it announced (`pid N`) */
	int in, out;
	char buf[8192];
	size_t len;
};

static inline int mt_spawn(struct mt_child *c, char *const argv[])
{
	int in[2], out[2];

	memset(c, 0, sizeof(*c));
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		return -errno;
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (c->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in = in[1];
	c->out = out[0];
	return 0;
}

/* Next line from the child within timeout_ms: 1, 0 on timeout, -1 on EOF. */
static inline int mt_line(struct mt_child *c, char *line, size_t cap, int timeout_ms)
{
	for (;;) {
		char *nl = memchr(c->buf, '\n', c->len);
		struct pollfd p = { .fd = c->out, .events = POLLIN };
		ssize_t n;

		if (nl) {
			size_t l = (size_t)(nl - c->buf);

			snprintf(line, cap, "%.*s", (int)l, c->buf);
			memmove(c->buf, nl + 1, c->len - l - 1);
			c->len -= l + 1;
			return 1;
		}
		if (poll(&p, 1, timeout_ms) <= 0)
			return 0;
		n = read(c->out, c->buf + c->len, sizeof(c->buf) - c->len - 1);
		if (n <= 0)
			return -1;
		c->len += (size_t)n;
	}
}

/* Waits for a line starting with prefix (copied to line). */
static inline int mt_expect(struct mt_child *c, const char *prefix, char *line, size_t cap,
		     int timeout_ms)
{
	while (mt_line(c, line, cap, timeout_ms) == 1) {
		if (sscanf(line, "pid %d", &c->target) == 1 && !strcmp(prefix, "pid"))
			return 0;
		if (!strncmp(line, prefix, strlen(prefix)))
			return 0;
	}
	return -1;
}

static inline void mt_reap(struct mt_child *c)
{
	int st;

	if (c->pid <= 0)
		return;
	if (c->in >= 0)
		close(c->in);
	c->in = -1;
	for (int i = 0; i < 100 && waitpid(c->pid, &st, WNOHANG) == 0; i++)
		usleep(20000);
	if (waitpid(c->pid, &st, WNOHANG) == 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, &st, 0);
	}
	close(c->out);
	c->pid = 0;
}

/* ---- recording through the engine ---- */

/* Lines the workload printed while recorded (before `done`). */
struct mt_lines {
	char l[16][256];
	int n;
};

/* Starts the workload (already `ready`) and records it with opts until it
 * prints `done`; then stops the session.  Returns 0 or -errno with why. */
typedef void (*mt_during_fn)(struct gt_engine *e, struct mt_child *c, void *arg);

/* Optional: called with each line the workload prints while recorded,
 * before the session stops (a test's look at the engine mid-recording). */
static void (*mt_on_line)(struct gt_engine *e, struct mt_child *c, const char *line);

static inline int mt_record(struct gt_engine *e, struct gt_session_opts *o, struct mt_child *c,
		     struct mt_lines *lines, mt_during_fn during, void *arg,
		     char *why, size_t whylen)
{
	struct gt_session *s;
	char line[256];
	int rc, done = 0;

	o->pids = &c->target;
	o->npids = 1;
	rc = gt_session_start(e, o, &s);
	if (rc) {
		snprintf(why, whylen, "gt_session_start: %s: %s", strerror(-rc), gt_engine_error(e));
		return rc;
	}
	if (during)
		during(e, c, arg);
	if (write(c->in, "g", 1) != 1) {
		snprintf(why, whylen, "cannot start the workload");
		gt_session_free(s);
		return -EIO;
	}
	for (time_t end = time(NULL) + 60; !done && time(NULL) < end;) {
		gt_engine_poll(e, 10);
		while (!done && mt_line(c, line, sizeof(line), 0) == 1) {
			if (mt_on_line)
				mt_on_line(e, c, line);
			if (strcmp(line, "done") && lines && lines->n < 16)
				snprintf(lines->l[lines->n++], sizeof(lines->l[0]), "%s", line);
			done = !strcmp(line, "done");
		}
	}
	for (int i = 0; i < 10; i++)
		gt_engine_poll(e, 10); /* what the rings still hold */
	rc = gt_session_stop(s, "test done");
	gt_session_free(s);
	if (!done) {
		snprintf(why, whylen, "the workload never printed done");
		return -ETIMEDOUT;
	}
	if (rc)
		snprintf(why, whylen, "gt_session_stop: %s", strerror(-rc));
	return rc;
}

/* Starts build/workloads/NAME --wait ARG (ARG may be NULL) and waits for
 * its `pid` and `ready`: 0 or -1. */
static inline int mt_start_workload(struct mt_child *c, const char *name, char *arg)
{
	static char path[600];
	char *argv[] = { path, "--wait", arg, NULL };
	char line[256];

	snprintf(path, sizeof(path), "%s/workloads/%s", mt_build, name);
	if (mt_spawn(c, argv) || mt_expect(c, "pid", line, sizeof(line), 10000) ||
	    mt_expect(c, "ready", line, sizeof(line), 10000))
		return -1;
	return 0;
}

/* mt_record into the file path (created or emptied), then the workload
 * reaped: 0, or not 0 with why. */
static inline int mt_record_file(struct gt_engine *e, struct gt_session_opts *o,
				 struct mt_child *c, const char *path, struct mt_lines *lines,
				 mt_during_fn during, void *arg, char *why, size_t whylen)
{
	int rc;

	o->out_fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (o->out_fd < 0) {
		snprintf(why, whylen, "cannot create %.400s: %s", path, strerror(errno));
		mt_reap(c);
		return -1;
	}
	rc = mt_record(e, o, c, lines, during, arg, why, whylen);
	close(o->out_fd);
	mt_reap(c);
	return rc;
}

/* Opens the engine or explains why not (BPF is required). */
static inline struct gt_engine *mt_engine(void)
{
	struct gt_engine *e = NULL;
	char why[512];
	int rc = gt_engine_open(&e, NULL, why, sizeof(why));

	if (rc) {
		gt_test_report("engine_open", 0, why);
		return NULL;
	}
	return e;
}

/* ---- reading a trace back ---- */
struct mt_frame_names {
	uint64_t id;
	char funcs[512];     /* function names of the stack, ';'-separated */
};

struct mt_heap_ev {
	uint64_t ts, value;
};

struct mt_trace {
	uint64_t heap[200000];   /* HeapAlloc values, in time order */
	struct mt_heap_ev hev[200000];
	size_t nheap;
	uint64_t heap_goal;      /* last HeapGoal */
	uint64_t samples;        /* CPUSample events */
	uint64_t sample_stacks[20000];
	size_t nsample_stacks;
	uint64_t logs;           /* UserLog events with key "alloc" */
	uint64_t log_stacks[2000];
	char log_values[2000][32];
	size_t nlogs;
	struct { uint64_t id; char s[128]; } *strings;
	size_t nstrings;
	struct mt_frame_names *stacks;
	size_t nstacks;
	uint64_t alloc_key;      /* string id of "alloc" */
};

static inline const char *mt_string(const struct mt_trace *t, uint64_t id)
{
	for (size_t i = 0; i < t->nstrings; i++)
		if (t->strings[i].id == id)
			return t->strings[i].s;
	return "";
}

static inline const char *mt_stack(const struct mt_trace *t, uint64_t id)
{
	for (size_t i = 0; i < t->nstacks; i++)
		if (t->stacks[i].id == id)
			return t->stacks[i].funcs;
	return "";
}

/* Stacks come after all strings? No: strings and stacks are interleaved in
 * the footer, so stacks keep string ids and are named after the pass. */
struct mt_raw_stack {
	uint64_t id, n, fn[64];
};

static inline int mt_heap_cmp(const void *a, const void *b)
{
	const struct mt_heap_ev *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static inline int mt_scan(const char *path, struct mt_trace *t)
{
	struct gt_raw_event *ev = malloc(sizeof(*ev));
	struct mt_raw_stack *raw = calloc(20000, sizeof(*raw));
	struct gt_reader r;
	struct stat st;
	uint8_t *data;
	size_t nraw = 0;
	uint64_t now = 0;
	int fd = open(path, O_RDONLY), rc;

	memset(t, 0, sizeof(*t));
	t->strings = calloc(50000, sizeof(*t->strings));
	if (fd < 0 || fstat(fd, &st) || !ev || !raw || !t->strings)
		return -1;
	data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (data == MAP_FAILED || gt_reader_open(&r, data, (size_t)st.st_size) < 0)
		return -1;
	while ((rc = gt_reader_next(&r, ev)) == 1) {
		/* times: a batch's absolute start, then deltas (not for
		 * Stack/String/Frequency, which carry none) */
		if (ev->type == GT_EV_BATCH && ev->nargs >= 2)
			now = ev->args[1];
		else if (ev->type != GT_EV_STACK && ev->type != GT_EV_STRING &&
			 ev->type != GT_EV_FREQUENCY && ev->nargs >= 1)
			now += ev->args[0];
		if (ev->type == GT_EV_HEAP_ALLOC && ev->nargs >= 2 && t->nheap < 200000) {
			t->hev[t->nheap].ts = now;
			t->hev[t->nheap++].value = ev->args[1];
		}
		else if (ev->type == GT_EV_HEAP_GOAL && ev->nargs >= 2)
			t->heap_goal = ev->args[1];
		else if (ev->type == GT_EV_CPU_SAMPLE && ev->nargs >= 5) {
			t->samples++;
			if (t->nsample_stacks < 20000)
				t->sample_stacks[t->nsample_stacks++] = ev->args[4];
		} else if (ev->type == GT_EV_USER_LOG && ev->nargs >= 4) {
			if (t->nlogs < 2000) {
				t->log_stacks[t->nlogs] = ev->args[3];
				snprintf(t->log_values[t->nlogs], 32, "%.*s", (int)ev->str_len,
					 (const char *)ev->str);
				t->nlogs++;
			}
			t->alloc_key = t->alloc_key ? t->alloc_key : ev->args[2];
		} else if (ev->type == GT_EV_STRING && t->nstrings < 50000) {
			t->strings[t->nstrings].id = ev->args[0];
			snprintf(t->strings[t->nstrings].s, 128, "%.*s", (int)ev->str_len,
				 (const char *)ev->str);
			t->nstrings++;
		} else if (ev->type == GT_EV_STACK && ev->nargs >= 2 && nraw < 20000) {
			struct mt_raw_stack *s = &raw[nraw++];

			s->id = ev->args[0];
			for (uint64_t i = 0; i < ev->args[1] && s->n < 64 && 2 + 4 * i + 1 < ev->nargs; i++)
				s->fn[s->n++] = ev->args[2 + 4 * i + 1];
		}
	}
	munmap(data, (size_t)st.st_size);
	free(ev);
	/* per-P batches: put the heap values back in time order (stable) */
	qsort(t->hev, t->nheap, sizeof(t->hev[0]), mt_heap_cmp);
	for (size_t i = 0; i < t->nheap; i++)
		t->heap[i] = t->hev[i].value;
	t->stacks = calloc(nraw ? nraw : 1, sizeof(*t->stacks));
	for (size_t i = 0; t->stacks && i < nraw; i++) {
		size_t len = 0;

		t->stacks[i].id = raw[i].id;
		for (uint64_t f = 0; f < raw[i].n && len < sizeof(t->stacks[i].funcs) - 1; f++)
			len += (size_t)snprintf(t->stacks[i].funcs + len,
						sizeof(t->stacks[i].funcs) - len, "%s;",
						mt_string(t, raw[i].fn[f]));
	}
	t->nstacks = t->stacks ? nraw : 0;
	free(raw);
	return rc < 0 ? -1 : 0;
}

static inline void mt_free(struct mt_trace *t)
{
	free(t->strings);
	free(t->stacks);
}

/* Our checker and Go's tools both accept the file. */
static inline void mt_check_valid(const char *path)
{
	struct gt_check_report rep;
	char why[1024];
	int rc = gt_check_file(path, &rep);

	GT_CHECK(rc == 0, "gt_check rejects %s: %s", path, rep.error);
	rc = gt_test_gocheck(path, why, sizeof(why));
	GT_CHECK(rc == 0, "go tool trace rejects %s: %s", path, why);
}

/* The BPF part of a test's main: skipped when GOTRACED_SKIP_BPF=1 says so
 * (a `skip TEST` line), else cases() runs with an engine in *e and a trace
 * buffer in *t, closed and freed after. */
static inline void mt_run_bpf(const char *test, struct gt_engine **e, struct mt_trace **t,
			      void (*cases)(void))
{
	if (gt_test_skip_bpf()) {
		printf("skip %s: BPF cases skipped (GOTRACED_SKIP_BPF=1)\n", test);
		return;
	}
	*t = malloc(sizeof(**t));
	*e = mt_engine();
	if (*e && *t) {
		cases();
		gt_engine_close(*e);
	}
	free(*t);
}

#endif
