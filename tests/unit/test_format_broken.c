/* Deliberately broken traces, hand-built: our checker must reject each
 * with a message naming the rule.  Each file also goes to Go 1.19: our
 * parser-only verdict must equal `go tool trace -d`'s, our Go-tools
 * verdict must equal Go's parser+viewer verdict (tests/lib/gocheck.sh),
 * and where Go accepts what docs/format.md forbids the test says why.
 * It also drives `gotracectl inspect` (daemon/ctl/inspect.c, which needs
 * nothing but the format library) for its exit codes and its JSON. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check/gt_check.h"
#include "wire/gt_events.h"
#include "gt_test.h"

#include "ctl/commands.h"

struct buf {
	uint8_t p[65536];
	size_t n;
};

static void put(struct buf *b, const void *d, size_t n)
{
	if (b->n + n <= sizeof(b->p)) {
		memcpy(b->p + b->n, d, n);
		b->n += n;
	}
}

static void uv(struct buf *b, uint64_t v)
{
	uint8_t t[10];
	size_t n = 0;

	while (v >= 0x80) {
		t[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	t[n++] = (uint8_t)v;
	put(b, t, n);
}

/* One record: short form for 1 to 3 values, else the byte-length form. */
static void ev_arr(struct buf *b, int type, const uint64_t *a, size_t n)
{
	struct buf body = {.n = 0};
	uint8_t h;

	if (n >= 1 && n <= 3) {
		h = (uint8_t)(type | (int)(n - 1) << 6);
		put(b, &h, 1);
		for (size_t i = 0; i < n; i++)
			uv(b, a[i]);
		return;
	}
	for (size_t i = 0; i < n; i++)
		uv(&body, a[i]);
	h = (uint8_t)(type | 3 << 6);
	put(b, &h, 1);
	uv(b, body.n);
	put(b, body.p, body.n);
}

#define EV(b, type, ...)                                                        \
	ev_arr(b, type, (const uint64_t[]){__VA_ARGS__},                           \
	       sizeof((const uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t))

static void str(struct buf *b, uint64_t id, const char *s)
{
	uint8_t h = GT_EV_STRING;

	put(b, &h, 1);
	uv(b, id);
	uv(b, strlen(s));
	put(b, s, strlen(s));
}

static void stack(struct buf *b, uint64_t id, uint64_t nframes, uint64_t pc, uint64_t line)
{
	static uint64_t a[2 + 4 * 1001];
	size_t n = 0;

	a[n++] = id;
	a[n++] = nframes;
	for (uint64_t i = 0; i < nframes; i++) {
		a[n++] = pc + i;
		a[n++] = 1;
		a[n++] = 2;
		a[n++] = line;
	}
	ev_arr(b, GT_EV_STACK, a, n);
}

static void header(struct buf *b, const char *ver)
{
	char h[16] = {0};

	snprintf(h, sizeof(h), "go %s trace", ver);
	put(b, h, 16);
}

/* The valid base: a thread g1 (identity stack: comm "worker", tid 42)
 * created by g 0, started on p 0, preempted, p stopped; then the footer.
 * The flags break one thing each, in the head or the tail. */
enum {
	NO_DESCHEDULE = 1, NO_PROC_STOP = 2, NO_FREQUENCY = 4, NO_STACK = 8, PC_ZERO = 16,
	STRINGS_FIRST = 32, /* the strings right after the header, not in the footer */
	NO_GOMAXPROCS = 64,
};

/* The base's head in a file of version ver, g1 started with sequence
 * number seq (1 is right). */
static void head_at(struct buf *b, const char *ver, uint64_t seq, int flags)
{
	header(b, ver);
	if (flags & STRINGS_FIRST) {
		str(b, 1, "worker");
		str(b, 2, "[thread]");
	}
	EV(b, GT_EV_BATCH, 0, 1000);
	EV(b, GT_EV_GO_CREATE, 1, 1, 1, 0);    /* dt, g, new stack, stack */
	if (!(flags & NO_GOMAXPROCS))
		EV(b, GT_EV_GOMAXPROCS, 1, 2, 0);
	EV(b, GT_EV_PROC_START, 1, 100);
	EV(b, GT_EV_GO_START, 1, 1, seq);      /* dt, g, seq */
}

static void base_head(struct buf *b) { head_at(b, "1.19", 1, 0); }

static void base_tail(struct buf *b, int flags)
{
	if (!(flags & NO_DESCHEDULE))
		EV(b, GT_EV_GO_PREEMPT, 1, 0);
	if (!(flags & NO_PROC_STOP))
		EV(b, GT_EV_PROC_STOP, 1);
	EV(b, GT_EV_BATCH, 0, 5000);
	if (!(flags & NO_FREQUENCY))
		EV(b, GT_EV_FREQUENCY, 1000000000);
	if (!(flags & STRINGS_FIRST)) {
		str(b, 1, "worker");
		str(b, 2, "[thread]");
	}
	if (!(flags & NO_STACK))
		stack(b, 1, 1, (flags & PC_ZERO) ? 0 : 0x401000, 42);
}

static void mk_valid(struct buf *b) { base_head(b); base_tail(b, 0); }
static void mk_truncated(struct buf *b) { mk_valid(b); b->n -= 3; }
static void mk_bad_varint(struct buf *b)
{
	static const uint8_t bad[] = { GT_EV_HEAP_ALLOC | 1 << 6, 1, 0x80, 0x80, 0x80, 0x80,
				       0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 };

	base_head(b);
	put(b, bad, sizeof(bad));
	base_tail(b, 0);
}
static void mk_unknown_type(struct buf *b)
{
	uint8_t t = 50;

	base_head(b);
	put(b, &t, 1);
	uv(b, 1);
	base_tail(b, 0);
}
static void mk_wrong_seq(struct buf *b)
{
	head_at(b, "1.19", 5, 0);             /* seq 5, the goroutine is at 1 */
	base_tail(b, 0);
}
static void mk_start_running(struct buf *b)
{
	base_head(b);
	EV(b, GT_EV_GO_START, 1, 1, 2);       /* g1 again, while it runs */
	base_tail(b, 0);
}
static void mk_start_busy_p(struct buf *b)
{
	base_head(b);
	EV(b, GT_EV_GO_CREATE, 1, 2, 1, 0);
	EV(b, GT_EV_GO_START, 1, 2, 1);       /* p 0 still runs g1 */
	base_tail(b, 0);
}
static void mk_unblock_not_waiting(struct buf *b)
{
	base_head(b);
	EV(b, GT_EV_GO_CREATE, 1, 2, 1, 0);
	EV(b, GT_EV_GO_UNBLOCK, 1, 2, 1, 0);  /* g2 is runnable, not waiting */
	base_tail(b, 0);
}
/* g2 started on two other Ps (GoStartLocal: any sequence number), both
 * waiting for g2 to exist: its GoCreate makes both ready at once, and the
 * later start finds g2 running already: Go 1.19 panics ("event sequences
 * are broken") where it merges them. */
static void mk_start_on_two_ps(struct buf *b)
{
	base_head(b);
	EV(b, GT_EV_GO_CREATE, 1, 2, 1, 0);   /* 1005 */
	EV(b, GT_EV_BATCH, 1, 1010);
	EV(b, GT_EV_GO_START_LOCAL, 1, 2);    /* 1011 */
	EV(b, GT_EV_BATCH, 2, 1012);
	EV(b, GT_EV_GO_START_LOCAL, 1, 2);    /* 1013 */
	EV(b, GT_EV_BATCH, 0, 1006);
	base_tail(b, 0);
}
static void mk_sysexit_after_block(struct buf *b)
{
	base_head(b);
	EV(b, GT_EV_GO_BLOCK, 1, 0);          /* a plain block, not a syscall */
	EV(b, GT_EV_GO_SYSEXIT, 1, 1, 2, 0);  /* dt, g, seq, real ts */
	EV(b, GT_EV_GO_START, 1, 1, 3);
	base_tail(b, 0);
}
static void mk_proc_stop_running(struct buf *b)
{
	base_head(b);
	EV(b, GT_EV_PROC_STOP, 1);
	base_tail(b, NO_PROC_STOP);
}
static void mk_no_frequency(struct buf *b) { base_head(b); base_tail(b, NO_FREQUENCY); }
static void mk_zero_frequency(struct buf *b)
{
	base_head(b);
	base_tail(b, NO_FREQUENCY);
	EV(b, GT_EV_FREQUENCY, 0);
}
static void mk_no_gomaxprocs(struct buf *b)
{
	head_at(b, "1.19", 1, NO_GOMAXPROCS);
	base_tail(b, 0);
}
static void mk_empty(struct buf *b)
{
	header(b, "1.19");
	EV(b, GT_EV_FREQUENCY, 1000000000);
}
static void mk_string_first(struct buf *b)
{
	head_at(b, "1.19", 1, STRINGS_FIRST);
	base_tail(b, STRINGS_FIRST);
}
static void mk_still_running(struct buf *b)
{
	base_head(b);
	base_tail(b, NO_DESCHEDULE | NO_PROC_STOP);
}
static void mk_p_not_stopped(struct buf *b) { base_head(b); base_tail(b, NO_PROC_STOP); }
static void mk_missing_stack(struct buf *b) { base_head(b); base_tail(b, NO_STACK); }
static void mk_pc_zero(struct buf *b) { base_head(b); base_tail(b, PC_ZERO); }
static void mk_version_120(struct buf *b)
{
	mk_valid(b);
	memcpy(b->p, "go 1.20 trace\0\0\0", 16);
}
static void mk_not_trace(struct buf *b) { put(b, "hello, world, this is text\n", 27); }
static void mk_time_backwards(struct buf *b)
{
	base_head(b);
	EV(b, GT_EV_BATCH, 0, 500);           /* p 0 again, earlier than before */
	EV(b, GT_EV_HEAP_ALLOC, 1, 4096);
	base_tail(b, 0);
}
static void mk_stack_129(struct buf *b)
{
	base_head(b);
	base_tail(b, 0);
	stack(b, 2, 129, 0x401000, 42);
}
static void mk_stack_1001(struct buf *b)
{
	base_head(b);
	base_tail(b, 0);
	stack(b, 2, 1001, 0x401000, 42);
}
static void mk_stack_bytes(struct buf *b)
{
	base_head(b);
	base_tail(b, 0);
	/* 125 frames of 17 bytes: under 128 frames, over 2048 bytes. */
	stack(b, 2, 125, 1ULL << 63, 1ULL << 34);
}
static void mk_dup_string(struct buf *b)
{
	mk_valid(b);
	str(b, 1, "again");
}
/* ---- Shapes that Go 1.22+ converts and Go 1.23's viewer cannot show:
 * every parser accepts them; the 1.23 viewer panics or refuses. */

/* The start of the go123 cases: g1 created at the first timestamp (1000)
 * on p 0. */
static void go123_head(struct buf *b)
{
	header(b, "1.19");
	EV(b, GT_EV_BATCH, 0, 1000);
	EV(b, GT_EV_GO_CREATE, 0, 1, 1, 0);
}

/* The footer of the go123 cases: g's identity stack 1 ("worker"). */
static void go123_tail(struct buf *b)
{
	base_tail(b, NO_DESCHEDULE | NO_PROC_STOP);
}

/* Their end: the running goroutine preempted dt later, its P stopped,
 * the footer. */
static void go123_end(struct buf *b, uint64_t dt)
{
	EV(b, GT_EV_GO_PREEMPT, dt, 0);
	EV(b, GT_EV_PROC_STOP, 1);
	go123_tail(b);
}

/* A goroutine running from the start, its GoStart at the trace's first
 * timestamp: the viewer reads its start as 0 = unset and panics when it
 * stops (what `record -p` of a busy process wrote). */
static void mk_go123_start_at_first_ts(struct buf *b)
{
	go123_head(b);
	EV(b, GT_EV_PROC_START, 0, 100);
	EV(b, GT_EV_GO_START, 0, 1, 1);
	EV(b, GT_EV_GOMAXPROCS, 0, 1, 0);
	go123_end(b, 10);
}

/* In a syscall from the start on P 0 (procgen: inSyscall[0]); it returns,
 * runs and stops, then P 0 stops and stops it again (`record -- CMD`). */
static void mk_go123_insyscall_p_stops(struct buf *b)
{
	go123_head(b);
	EV(b, GT_EV_PROC_START, 1, 100);
	EV(b, GT_EV_GO_IN_SYSCALL, 0, 1);       /* g1 c=1 */
	EV(b, GT_EV_GOMAXPROCS, 0, 1, 0);
	EV(b, GT_EV_GO_SYSEXIT, 5, 1, 2, 0);    /* g1 c=2, by G 0 */
	EV(b, GT_EV_GO_START, 1, 1, 3);
	go123_end(b, 5);
}

/* In a syscall from the start on a P never started: no M, so the thread
 * view has it executing nowhere and panics when the syscall returns. */
static void mk_go123_insyscall_no_thread(struct buf *b)
{
	go123_head(b);
	EV(b, GT_EV_BATCH, 1, 1001);
	EV(b, GT_EV_GO_IN_SYSCALL, 0, 1);       /* g1 c=1, on p 1 */
	EV(b, GT_EV_BATCH, 0, 1002);
	EV(b, GT_EV_GOMAXPROCS, 0, 1, 0);
	EV(b, GT_EV_PROC_START, 4, 100);
	EV(b, GT_EV_GO_SYSEXIT, 1, 1, 2, 0);
	EV(b, GT_EV_GO_START, 1, 1, 3);
	go123_end(b, 1);
}

/* A CPUSample with a time delta, then the start of a goroutine woken on
 * another P: Go 1.19 counts the delta (start at 1102, after the unblock
 * at 1050), Go 1.22+ does not (1002): "time stamps out of order". */
static void mk_go123_cpu_sample_delta(struct buf *b)
{
	go123_head(b);
	EV(b, GT_EV_GO_CREATE, 0, 2, 1, 0);
	EV(b, GT_EV_GO_WAITING, 1, 2);          /* g2 c=1 */
	EV(b, GT_EV_GOMAXPROCS, 0, 2, 0);
	EV(b, GT_EV_BATCH, 1, 1002);
	EV(b, GT_EV_PROC_START, 0, 101);
	EV(b, GT_EV_GO_START, 0, 1, 1);
	EV(b, GT_EV_GO_UNBLOCK, 48, 2, 2, 0);   /* 1050, g2 c=2 */
	EV(b, GT_EV_GO_PREEMPT, 1, 0);
	EV(b, GT_EV_PROC_STOP, 1);
	EV(b, GT_EV_BATCH, 0, 1001);
	EV(b, GT_EV_PROC_START, 0, 100);
	EV(b, GT_EV_CPU_SAMPLE, 100, 1005, 0, 0, 0);
	EV(b, GT_EV_GO_START, 1, 2, 3);
	go123_end(b, 1);
}

/* Only what the conversion drops (the first Gomaxprocs): the 1.23
 * viewer finds nothing to show and exits. */
static void mk_go123_nothing_left(struct buf *b)
{
	header(b, "1.19");
	EV(b, GT_EV_BATCH, 0, 1000);
	EV(b, GT_EV_GOMAXPROCS, 1, 1, 0);
	go123_tail(b);
}

/* A GC with an STW of kind 5: Go 1.21 names many STW reasons, 1.19 two. */
static void mk_stw_kind5(struct buf *b, const char *ver)
{
	head_at(b, ver, 1, 0);
	EV(b, GT_EV_GC_STW_START, 1, 5);
	EV(b, GT_EV_GC_STW_DONE, 1);
	base_tail(b, 0);
}
static void mk_stw_kind5_119(struct buf *b) { mk_stw_kind5(b, "1.19"); }

static void mk_wrong_nargs(struct buf *b)
{
	base_head(b);
	EV(b, GT_EV_HEAP_ALLOC, 1, 4096, 7);  /* HeapAlloc takes [dt, mem] */
	base_tail(b, 0);
}

struct broken {
	const char *name;
	void (*make)(struct buf *b);
	const char *rule;   /* our error must contain this */
	int go_d_rejects;   /* `go tool trace -d` rejects it */
	int viewer_rejects; /* Go's parser or viewer rejects it */
	const char *why_go_accepts; /* when Go accepts what we reject */
};

static const struct broken cases[] = {
	{ "truncated", mk_truncated, "truncated", 1, 1, NULL },
	{ "bad_varint", mk_bad_varint, "bad varint", 1, 1, NULL },
	{ "unknown_event_type", mk_unknown_type, "unknown event type 50", 1, 1, NULL },
	{ "wrong_sequence_number", mk_wrong_seq, "no consistent ordering", 1, 1, NULL },
	{ "gostart_of_running_g", mk_start_running, "no consistent ordering", 1, 1, NULL },
	{ "gostart_on_busy_p", mk_start_busy_p, "is already running g 1 while start g 2", 1, 1, NULL },
	{ "unblock_not_waiting", mk_unblock_not_waiting, "no consistent ordering", 1, 1, NULL },
	{ "gostart_on_two_ps", mk_start_on_two_ps, "event sequences are broken for g 2", 1, 1, NULL },
	{ "sysexit_after_plain_block", mk_sysexit_after_block, "not GoSysBlock or GoInSyscall", 0, 1,
	  "go tool trace -d accepts it; the viewer's in-syscall count goes negative" },
	{ "procstop_with_running_g", mk_proc_stop_running, "is running a goroutine 1 during stop", 1, 1, NULL },
	{ "missing_footer_frequency", mk_no_frequency, "no Frequency event", 1, 1, NULL },
	{ "zero_frequency", mk_zero_frequency, "not positive", 1, 1, NULL },
	{ "zero_events", mk_empty, "trace is empty", 1, 1, NULL },
	{ "string_before_first_batch", mk_string_first, "before the first batch", 0, 0,
	  "Go 1.19 reads strings anywhere; Go 1.23+ rejects strings before the first batch" },
	{ "goroutine_running_at_end", mk_still_running, "still running at the end", 0, 1,
	  "go tool trace -d accepts it; the viewer crashes (GoStart without an end)" },
	{ "p_not_stopped_at_end", mk_p_not_stopped, "not stopped at the end", 0, 0,
	  "Go 1.19 accepts a running P at the end; docs/format.md asks every P stopped" },
	{ "gocreate_missing_stack", mk_missing_stack, "missing or empty", 0, 1,
	  "go tool trace -d accepts it; the viewer refuses the GoCreate" },
	{ "zero_pc_top_frame", mk_pc_zero, "PC 0 in its top frame", 0, 0,
	  "Go 1.19 accepts it (its own 1.9 traces do it); docs/format.md forbids it" },
	{ "unsupported_version", mk_version_120, "unsupported trace file version 1.20", 1, 1, NULL },
	{ "not_a_trace", mk_not_trace, "not a trace file", 1, 1, NULL },
	{ "time_backwards_in_p", mk_time_backwards, "time goes backwards on p 0", 1, 1, NULL },
	{ "stack_129_frames", mk_stack_129, "129 frames (limit 128)", 0, 0,
	  "Go 1.19 reads up to 1000 frames; docs/format.md limits stacks to 128" },
	{ "stack_1001_frames", mk_stack_1001, "bad number of frames", 1, 1, NULL },
	{ "stack_over_2048_bytes", mk_stack_bytes, "limit: under 2048", 0, 1,
	  "Go 1.19 has no byte limit on a stack record; Go 1.22+ refuses records over 2048 bytes" },
	{ "duplicate_string_id", mk_dup_string, "duplicate string id 1", 1, 1, NULL },
	{ "wrong_argument_count", mk_wrong_nargs, "wrong number of arguments", 1, 1, NULL },
	{ "no_gomaxprocs", mk_no_gomaxprocs, "no Gomaxprocs event", 0, 0,
	  "Go 1.19 does without; Go 1.23+ needs it to end the initial snapshot" },
	{ "stw_kind_5_in_1_19", mk_stw_kind5_119, "unknown STW kind 5", 1, 1, NULL },
	{ "go123_start_at_first_ts", mk_go123_start_at_first_ts,
	  "proc view while its start time reads as unset", 0, 1,
	  "only Go 1.23's viewer reads a start at the first timestamp as unset" },
	{ "go123_insyscall_p_stops", mk_go123_insyscall_p_stops,
	  "proc view while its start time reads as unset", 0, 1,
	  "only Go 1.23's viewer stops a syscall from the start when its P stops" },
	{ "go123_insyscall_no_thread", mk_go123_insyscall_no_thread,
	  "thread view while executing nowhere", 0, 1,
	  "only Go 1.23's thread view needs the M of a syscall from the start" },
	{ "go123_cpu_sample_delta", mk_go123_cpu_sample_delta,
	  "Go 1.22+ skips a sample's delta", 0, 1,
	  "Go 1.19 counts a CPUSample's time delta, Go 1.22+ does not" },
	{ "go123_nothing_left", mk_go123_nothing_left, "no event left", 0, 1,
	  "Go 1.19 shows an empty trace, Go 1.23's viewer refuses it" },
};

/* Go 1.21 traces: same layout, any STW kind.  Debian's Go 1.19 cannot
 * read them, so only our verdict is checked. */
static void test_v121_accepted(void)
{
	struct gt_check_report rep;
	struct buf *b = calloc(1, sizeof(*b));
	int rc;

	GT_REQUIRE(b, "out of memory");
	mk_stw_kind5(b, "1.21");
	rc = gt_check_buffer(b->p, b->n, &rep);
	free(b);
	GT_CHECK(rc == 0, "1.21 trace rejected: %s", rep.error);
	GT_CHECK(rep.version == 1021, "version %d", rep.version);
	GT_CHECK(rep.count_by_type[GT_EV_GC_STW_START] == 1, "STW start not counted");
}

static int write_file(const char *path, const struct buf *b)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return -errno;
	ok = fwrite(b->p, 1, b->n, f) == b->n;
	return fclose(f) == 0 && ok ? 0 : -EIO;
}

/* `go tool trace -d` alone: 1 if it rejects the file. */
static int go_d_rejects(const char *path)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "go tool trace -d '%s' >/dev/null 2>&1", path);
	return system(cmd) != 0;
}

static char dir[] = "/tmp/gt_broken_XXXXXX";

static void test_valid_base(void)
{
	struct gt_check_report rep;
	char path[256], why[2048];
	struct buf *b = calloc(1, sizeof(*b));

	GT_REQUIRE(b, "out of memory");
	mk_valid(b);
	snprintf(path, sizeof(path), "%s/valid.trace", dir);
	GT_REQUIRE(write_file(path, b) == 0, "cannot write %s", path);
	free(b);
	GT_CHECK(gt_check_file(path, &rep) == 0, "base trace rejected: %s", rep.error);
	GT_CHECK(rep.events == 6, "events %llu, want 6", (unsigned long long)rep.events);
	GT_CHECK(rep.goroutines == 1 && rep.procs == 1 && rep.strings == 2 && rep.stacks == 1,
		 "counts g %llu p %llu strings %llu stacks %llu",
		 (unsigned long long)rep.goroutines, (unsigned long long)rep.procs,
		 (unsigned long long)rep.strings, (unsigned long long)rep.stacks);
	GT_CHECK(gt_test_gocheck(path, why, sizeof(why)) == 0, "Go rejects the base: %s", why);
}

static void run_case(const struct broken *c)
{
	struct gt_check_report full, parser, tools;
	char path[256], name[128], why[2048], msg[3072];
	struct buf *b = calloc(1, sizeof(*b));
	int go_d, go_all;

	snprintf(name, sizeof(name), "broken_%s", c->name);
	if (!b) {
		gt_test_report(name, 0, "out of memory");
		return;
	}
	c->make(b);
	snprintf(path, sizeof(path), "%s/%s.trace", dir, c->name);
	if (write_file(path, b) < 0) {
		free(b);
		gt_test_report(name, 0, "cannot write the trace file");
		return;
	}
	free(b);
	gt_check_file_run(path, 0, &full, NULL, NULL);
	gt_check_file_run(path, GT_CHECK_PARSER_ONLY, &parser, NULL, NULL);
	gt_check_file_run(path, GT_CHECK_GO_TOOLS, &tools, NULL, NULL);
	go_d = go_d_rejects(path);
	go_all = go_d || gt_test_gocheck(path, why, sizeof(why)) != 0;
	if (full.ok || !strstr(full.error, c->rule))
		snprintf(msg, sizeof(msg), "want an error naming \"%s\", got %s", c->rule,
			 full.ok ? "valid" : full.error);
	else if (go_d != c->go_d_rejects || go_all != c->viewer_rejects)
		snprintf(msg, sizeof(msg), "Go's verdict changed: -d %s, viewer %s",
			 go_d ? "rejects" : "accepts", go_all ? "rejects" : "accepts");
	else if (parser.ok == go_d)
		snprintf(msg, sizeof(msg), "parser-only verdict %s differs from go tool trace -d (%s)",
			 parser.ok ? "valid" : parser.error, go_d ? "rejects" : "accepts");
	else if (tools.ok == go_all)
		snprintf(msg, sizeof(msg), "Go-tools verdict %s differs from Go's parser+viewer (%s)",
			 tools.ok ? "valid" : tools.error, go_all ? "rejects" : "accepts");
	else
		msg[0] = 0;
	if (!msg[0] && c->why_go_accepts)
		printf("# %s: we reject (%s); %s\n", c->name, full.error, c->why_go_accepts);
	gt_test_report(name, msg[0] == 0, msg);
}

/* Two threads on one CPU, every duration known (1 tick = 1 ns):
 * g1 waits 13, runs 5, blocks on a futex, is woken by g2 at 1022, waits 8,
 * runs 5, sleeps; g2 waits 18, runs 4 into a blocking syscall, exits it
 * at 1031, waits 9, runs 10 and ends. */
static void mk_stats(struct buf *b)
{
	header(b, "1.19");
	EV(b, GT_EV_BATCH, 0, 1000);
	EV(b, GT_EV_GO_CREATE, 1, 1, 1, 0);   /* 1001 */
	EV(b, GT_EV_GO_CREATE, 1, 2, 2, 0);   /* 1002 */
	EV(b, GT_EV_GOMAXPROCS, 1, 1, 0);
	EV(b, GT_EV_PROC_START, 1, 100);
	EV(b, GT_EV_GO_START, 10, 1, 1);      /* 1014 */
	EV(b, GT_EV_GO_BLOCK_SYNC, 5, 0);     /* 1019 */
	EV(b, GT_EV_GO_START, 1, 2, 1);       /* 1020 */
	EV(b, GT_EV_GO_UNBLOCK, 2, 1, 2, 0);  /* 1022 */
	EV(b, GT_EV_GO_SYSCALL, 1, 0);
	EV(b, GT_EV_GO_SYSBLOCK, 1);          /* 1024 */
	EV(b, GT_EV_PROC_STOP, 0);            /* the syscall releases the P */
	EV(b, GT_EV_PROC_START, 0, 100);
	EV(b, GT_EV_GO_START, 6, 1, 3);       /* 1030 */
	EV(b, GT_EV_GO_SYSEXIT, 1, 2, 2, 0);  /* 1031 */
	EV(b, GT_EV_GO_SLEEP, 4, 0);          /* 1035 */
	EV(b, GT_EV_GO_START, 5, 2, 3);       /* 1040 */
	EV(b, GT_EV_GO_END, 10);              /* 1050 */
	EV(b, GT_EV_PROC_STOP, 1);
	EV(b, GT_EV_BATCH, 0, 5000);
	EV(b, GT_EV_FREQUENCY, 1000000000);
	str(b, 1, "worker");
	str(b, 2, "[thread]");
	str(b, 3, "other");
	str(b, 4, "other.c");
	stack(b, 1, 1, 0x401000, 42);
	EV(b, GT_EV_STACK, 2, 1, 0x402000, 3, 4, 7);
}

struct seen {
	struct gt_goroutine_stats g[4];
	char names[4][32];
	int n;
};

static void remember(const struct gt_goroutine_stats *g, void *arg)
{
	struct seen *s = arg;

	if (s->n < 4) {
		s->g[s->n] = *g;
		snprintf(s->names[s->n], sizeof(s->names[0]), "%.*s", (int)g->name_len, g->name);
		s->n++;
	}
}

static void test_goroutine_stats(void)
{
	struct gt_check_report rep;
	struct seen s = {.n = 0};
	char path[256], why[2048];
	struct buf *b = calloc(1, sizeof(*b));
	const struct gt_goroutine_stats *g1 = &s.g[0], *g2 = &s.g[1];

	GT_REQUIRE(b, "out of memory");
	mk_stats(b);
	snprintf(path, sizeof(path), "%s/stats.trace", dir);
	GT_REQUIRE(write_file(path, b) == 0, "cannot write %s", path);
	free(b);
	GT_REQUIRE(gt_check_file_run(path, 0, &rep, remember, &s) == 0, "rejected: %s", rep.error);
	GT_CHECK(gt_test_gocheck(path, why, sizeof(why)) == 0, "Go rejects it: %s", why);
	GT_REQUIRE(s.n == 2, "%d goroutines reported, want 2", s.n);
	GT_CHECK(g1->id == 1 && strcmp(s.names[0], "worker") == 0 && g1->tid == 42,
		 "g1: id %llu name %s tid %lld", (unsigned long long)g1->id, s.names[0],
		 (long long)g1->tid);
	GT_CHECK(g1->starts == 2 && g1->blocks[GT_BLK_SYNC] == 1 && g1->blocks[GT_BLK_SLEEP] == 1,
		 "g1: starts %llu sync %llu sleep %llu", (unsigned long long)g1->starts,
		 (unsigned long long)g1->blocks[GT_BLK_SYNC], (unsigned long long)g1->blocks[GT_BLK_SLEEP]);
	GT_CHECK(g1->running_ns == 10 && g1->runnable_ns == 21 && g1->unblocks_received == 1,
		 "g1: running %llu runnable %llu unblocks %llu", (unsigned long long)g1->running_ns,
		 (unsigned long long)g1->runnable_ns, (unsigned long long)g1->unblocks_received);
	GT_CHECK(g1->end_state == GT_G_WAITING && !g1->ended, "g1 ends %s", gt_gstate_names[g1->end_state]);
	GT_CHECK(g2->id == 2 && strcmp(s.names[1], "other") == 0 && g2->tid == -1,
		 "g2: id %llu name %s tid %lld", (unsigned long long)g2->id, s.names[1],
		 (long long)g2->tid);
	GT_CHECK(g2->starts == 2 && g2->blocks[GT_BLK_SYSCALL] == 1 && g2->running_ns == 14 &&
		 g2->runnable_ns == 27 && g2->unblocks_received == 0,
		 "g2: starts %llu syscall %llu running %llu runnable %llu", (unsigned long long)g2->starts,
		 (unsigned long long)g2->blocks[GT_BLK_SYSCALL], (unsigned long long)g2->running_ns,
		 (unsigned long long)g2->runnable_ns);
	GT_CHECK(g2->end_state == GT_G_DEAD && g2->ended, "g2 ends %s", gt_gstate_names[g2->end_state]);
	GT_CHECK(rep.events == 18, "events %llu, want 18", (unsigned long long)rep.events);
}

/* Runs cmd_inspect with stdout sent to out; returns its exit status. */
static int inspect(const char *out, int argc, char **argv)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (!freopen(out, "w", stdout))
			_exit(99);
		if (!freopen("/dev/null", "w", stderr))
			_exit(99);
		_exit(cmd_inspect(argc, argv));
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_inspect(void)
{
	char valid[256], broken[256], out[256], cmd[1024], missing[256];
	char *a_valid[] = { "inspect", valid, NULL };
	char *a_json[] = { "inspect", "--json", valid, NULL };
	char *a_goroutines[] = { "inspect", "--goroutines", valid, NULL };
	char *a_broken[] = { "inspect", broken, NULL };
	char *a_missing[] = { "inspect", missing, NULL };
	char *a_none[] = { "inspect", NULL };
	char *a_badopt[] = { "inspect", "--nope", valid, NULL };

	snprintf(valid, sizeof(valid), "%s/valid.trace", dir);
	snprintf(broken, sizeof(broken), "%s/goroutine_running_at_end.trace", dir);
	snprintf(missing, sizeof(missing), "%s/no-such-file", dir);
	snprintf(out, sizeof(out), "%s/inspect.out", dir);
	GT_CHECK(inspect(out, 2, a_valid) == 0, "valid file: exit is not 0");
	GT_CHECK(inspect(out, 2, a_broken) == 1, "invalid file: exit is not 1");
	GT_CHECK(inspect(out, 2, a_missing) == 1, "missing file: exit is not 1");
	GT_CHECK(inspect(out, 1, a_none) == 2, "no FILE: exit is not 2");
	GT_CHECK(inspect(out, 3, a_badopt) == 2, "unknown option: exit is not 2");
	GT_CHECK(inspect(out, 3, a_goroutines) == 0, "--goroutines: exit is not 0");
	snprintf(cmd, sizeof(cmd), "grep -Eq '^1 +worker +42 +1 ' %s", out);
	GT_CHECK(system(cmd) == 0, "--goroutines has no line `1 worker 42 1 ...`");
	GT_CHECK(inspect(out, 3, a_json) == 0, "--json: exit is not 0");
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
		 "g=d[\"goroutines\"][0]; "
		 "assert d[\"valid\"] is True and d[\"version\"]==\"1.19\" and d[\"events\"]==6, d; "
		 "assert d[\"counts\"][\"GoStart\"]==1 and d[\"counts\"][\"GoPreempt\"]==1, d; "
		 "assert g[\"id\"]==1 and g[\"name\"]==\"worker\" and g[\"tid\"]==42, g; "
		 "assert g[\"starts\"]==1 and g[\"blocks\"][\"preempt\"]==1 and g[\"running_ns\"]==1, g; "
		 "assert g[\"runnable_ns\"]==4 and g[\"unblocks_received\"]==0, g' %s", out);
	GT_CHECK(system(cmd) == 0, "--json output does not hold the expected values");
}

static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		gt_test_report("broken_setup", 0, "cannot create a temporary directory");
		return gt_test_done();
	}
	GT_RUN(test_valid_base);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
	GT_RUN(test_v121_accepted);
	GT_RUN(test_goroutine_stats);
	GT_RUN(test_inspect);
	cleanup();
	return gt_test_done();
}
