/* The flight recorder's core (engine/flight*.c, docs/design.md "Flight
 * recorder") on synthetic kernel records, no BPF: the triggers measure
 * what they say; the window is kept and no more; the size cap wins and
 * whole old segments go; a dump is a valid trace on its own (our checker
 * and Go's readers), starting from the snapshot of the oldest segment kept,
 * carrying the trigger's UserLog and the stacks resolved while recording. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/gt_analyze.h"
#include "check/gt_check.h"
#include "common/session_opts.h"
#include "engine/flight.h"
#include "engine/flight_codec.h"
#include "gt_test.h"

#define TGID 100
#define NCPU 2
#define MS 1000000ull
#define SEC 1000000000ull
#define T0 (5 * SEC)

/* ---- synthetic records ---- */

static struct gt_kev_switch sw(uint64_t ts, int cpu, uint32_t prev, int64_t state, int32_t sysnr,
			       uint32_t next)
{
	struct gt_kev_switch e = {0};

	e.hdr.ts = ts;
	e.hdr.type = GT_KEV_SWITCH;
	e.hdr.cpu = (uint16_t)cpu;
	e.hdr.tid = prev;
	e.hdr.tgid = prev ? TGID : 0;
	e.hdr.sessions = 1;
	e.prev_sessions = prev ? 1 : 0;
	e.next_sessions = next ? 1 : 0;
	e.next_tid = next;
	e.next_tgid = next ? TGID : 0;
	e.prev_state = state;
	e.prev_sysnr = sysnr;
	e.prev_ustack = prev ? 7 : -1; /* a stack the fake source knows */
	e.prev_kstack = -1;
	snprintf(e.prev_comm, sizeof(e.prev_comm), "%s", prev ? "worker" : "swapper");
	snprintf(e.next_comm, sizeof(e.next_comm), "%s", next ? "worker" : "swapper");
	return e;
}

static struct gt_kev_wakeup wake(uint64_t ts, int cpu, uint32_t target)
{
	struct gt_kev_wakeup e = {0};

	e.hdr.ts = ts;
	e.hdr.type = GT_KEV_WAKEUP;
	e.hdr.cpu = (uint16_t)cpu;
	e.hdr.sessions = 1;
	e.target_tid = target;
	e.target_tgid = TGID;
	e.target_cpu = (uint32_t)cpu;
	e.flags = GT_WAKEUP_HARDIRQ | GT_WAKEUP_TIMER;
	e.waker_ustack = -1;
	return e;
}

/* ---- triggers ---- */

static struct gt_flight_opts trig_opts(enum gt_flight_kind k, int64_t sysnr, uint64_t thr)
{
	struct gt_flight_opts o = {0};

	o.ntriggers = 1;
	o.triggers[0].kind = k;
	o.triggers[0].sysnr = sysnr;
	o.triggers[0].threshold_ns = thr;
	snprintf(o.triggers[0].spec, sizeof(o.triggers[0].spec), "test");
	return o;
}

/* Thread 101 sleeps (in syscall sysnr) from 1 ms to wake_at, is woken
 * then, and runs at run_at: does the trigger fire, and with what span? */
static int fires(const struct gt_flight_opts *o, int32_t sysnr, uint64_t wake_at, uint64_t run_at,
		 struct gt_flight_fired *out)
{
	struct gt_flight_trig tr;
	struct gt_kev_switch a = sw(1 * MS, 0, 101, 1, sysnr, 0), b = sw(run_at, 0, 0, 0, -1, 101);
	struct gt_kev_wakeup w = wake(wake_at, 0, 101);
	int n = 0;

	gt_flight_trig_init(&tr);
	n += gt_flight_trig_event(&tr, o, 1, &a.hdr, out);
	n += gt_flight_trig_event(&tr, o, 1, &w.hdr, out);
	n += gt_flight_trig_event(&tr, o, 1, &b.hdr, out);
	gt_flight_trig_free(&tr);
	return n;
}

static void test_trigger_offcpu(void)
{
	struct gt_flight_opts o = trig_opts(GT_FLIGHT_OFFCPU, -1, 50 * MS);
	struct gt_flight_fired f;

	GT_CHECK(fires(&o, -1, 40 * MS, 41 * MS, &f) == 0, "40 ms asleep fired offcpu>50ms");
	GT_CHECK(fires(&o, -1, 60 * MS, 61 * MS, &f) == 1, "60 ms asleep did not fire offcpu>50ms");
	GT_CHECK(f.tid == 101 && f.ts == 61 * MS && f.span_ns == 60 * MS,
		 "fired on %u at %llu for %llu", f.tid, (unsigned long long)f.ts,
		 (unsigned long long)f.span_ns);
}

static void test_trigger_sched_delay(void)
{
	struct gt_flight_opts o = trig_opts(GT_FLIGHT_SCHED_DELAY, -1, 20 * MS);
	struct gt_flight_fired f;

	/* a long sleep is no scheduling delay */
	GT_CHECK(fires(&o, -1, 500 * MS, 505 * MS, &f) == 0, "5 ms of delay fired sched-delay>20ms");
	GT_CHECK(fires(&o, -1, 500 * MS, 530 * MS, &f) == 1, "30 ms of delay did not fire");
	GT_CHECK(f.span_ns == 30 * MS, "span %llu, want 30 ms", (unsigned long long)f.span_ns);
}

static void test_trigger_syscall(void)
{
	struct gt_flight_opts any = trig_opts(GT_FLIGHT_SYSCALL, -1, 50 * MS);
	struct gt_flight_opts only7 = trig_opts(GT_FLIGHT_SYSCALL, 7, 50 * MS);
	struct gt_flight_fired f;

	GT_CHECK(fires(&any, -1, 90 * MS, 91 * MS, &f) == 0, "a sleep outside syscalls fired");
	GT_CHECK(fires(&any, 3, 90 * MS, 91 * MS, &f) == 1 && f.sysnr == 3, "syscall>50ms missed");
	GT_CHECK(fires(&only7, 3, 90 * MS, 91 * MS, &f) == 0, "syscall 3 fired syscall:7");
	GT_CHECK(fires(&only7, 7, 90 * MS, 91 * MS, &f) == 1, "syscall 7 did not fire syscall:7");
	GT_CHECK(fires(&only7, 7, 30 * MS, 31 * MS, &f) == 0, "30 ms fired syscall:7>50ms");
}

/* --trigger KIND>D@NAME: for a thread of that name, or of a process whose
 * main thread has it. */
static void test_trigger_named(void)
{
	struct gt_flight_opts o = trig_opts(GT_FLIGHT_OFFCPU, -1, 50 * MS);
	struct gt_flight_fired f;
	struct gt_flight_trig tr;
	struct gt_kev_switch m = sw(0, 1, TGID, 1, -1, 0);

	snprintf(o.triggers[0].name, sizeof(o.triggers[0].name), "other");
	GT_CHECK(fires(&o, -1, 60 * MS, 61 * MS, &f) == 0, "fired for a thread not named other");
	snprintf(o.triggers[0].name, sizeof(o.triggers[0].name), "worker");
	GT_CHECK(fires(&o, -1, 60 * MS, 61 * MS, &f) == 1, "did not fire for the thread worker");
	/* the process's main thread (tid = tgid) is "server": 101 is its */
	snprintf(o.triggers[0].name, sizeof(o.triggers[0].name), "server");
	snprintf(m.prev_comm, sizeof(m.prev_comm), "server");
	gt_flight_trig_init(&tr);
	struct gt_kev_switch a = sw(1 * MS, 0, 101, 1, -1, 0), b = sw(61 * MS, 0, 0, 0, -1, 101);
	int n = gt_flight_trig_event(&tr, &o, 1, &a.hdr, &f);
	n += gt_flight_trig_event(&tr, &o, 1, &b.hdr, &f);
	GT_CHECK(n == 0, "fired for process server before its main thread was seen");
	n = gt_flight_trig_event(&tr, &o, 1, &m.hdr, &f);
	a.hdr.ts = 100 * MS, b.hdr.ts = 200 * MS;
	n += gt_flight_trig_event(&tr, &o, 1, &a.hdr, &f);
	n += gt_flight_trig_event(&tr, &o, 1, &b.hdr, &f);
	GT_CHECK(n == 1 && f.tid == 101, "did not fire for a thread of process server");
	gt_flight_trig_free(&tr);
}

/* The encoder scans a word at a time (flight_codec.c): records of random
 * sparse bytes, of every length up to the largest, a type's longer record
 * then a shorter one (what lies past the shorter one is XORed with zeros),
 * zero runs and literals ending anywhere in a word, all come back. */
static void test_codec_words(void)
{
	static struct gt_flight_codec enc, dec;
	static unsigned char buf[1 << 20], in[4000][GT_FLIGHT_REC_MAX];
	static size_t lens[4000];
	uint64_t r = 12345;
	size_t used = 0, off = 0;
	int bad = -1;

	gt_flight_codec_reset(&enc);
	gt_flight_codec_reset(&dec);
	for (int i = 0; i < 4000; i++) {
		struct gt_kev_hdr *h = (struct gt_kev_hdr *)in[i];

		lens[i] = sizeof(*h) + (size_t)(i * 7919) % (GT_FLIGHT_REC_MAX - sizeof(*h) + 1);
		for (size_t k = 0; k < lens[i]; k++) {
			r = r * 6364136223846793005ull + 1442695040888963407ull;
			in[i][k] = (r >> 60) < 6 ? (unsigned char)(r >> 32) : 0; /* 3/8 non-zero */
		}
		h->type = (uint16_t)(1 + i % 3);
		used += gt_flight_encode(&enc, h, lens[i], buf + used);
	}
	for (int i = 0; i < 4000 && bad < 0; i++) {
		union gt_kev_any out;
		size_t len = 0, k = gt_flight_decode(&dec, buf + off, used - off, (void *)&out, &len);

		if (!k || len != lens[i] || memcmp(&out, in[i], len))
			bad = i;
		off += k;
	}
	GT_CHECK(bad < 0 && off == used, "record %d did not decode as it was (%zu of %zu bytes read)",
		 bad, off, used);
}

/* Records come back as they went in, and in much less room. */
static void test_codec_roundtrip(void)
{
	static struct gt_flight_codec enc, dec;
	static unsigned char buf[1 << 20];
	size_t used = 0, raw = 0, off = 0;
	int n = 0;

	gt_flight_codec_reset(&enc);
	gt_flight_codec_reset(&dec);
	for (int i = 0; i < 3000; i++) {
		struct gt_kev_switch a = sw(T0 + (uint64_t)i * 12345, i % NCPU, 101 + i % 3,
					    i % 5, i % 7 - 1, 102 + i % 2);
		struct gt_kev_wakeup w = wake(T0 + (uint64_t)i * 12345 + 7, i % NCPU, 101);
		const struct gt_kev_hdr *ev = i % 4 ? &a.hdr : &w.hdr;
		size_t len = i % 4 ? sizeof(a) : sizeof(w);

		used += gt_flight_encode(&enc, ev, len, buf + used);
		raw += len;
	}
	for (int i = 0; i < 3000; i++) {
		struct gt_kev_switch a = sw(T0 + (uint64_t)i * 12345, i % NCPU, 101 + i % 3,
					    i % 5, i % 7 - 1, 102 + i % 2);
		struct gt_kev_wakeup w = wake(T0 + (uint64_t)i * 12345 + 7, i % NCPU, 101);
		const struct gt_kev_hdr *ev = i % 4 ? &a.hdr : &w.hdr;
		size_t want = i % 4 ? sizeof(a) : sizeof(w), len = 0, k;
		union gt_kev_any out;

		k = gt_flight_decode(&dec, buf + off, used - off, (void *)&out, &len);
		if (!k || len != want || memcmp(&out, ev, len)) {
			n++;
			break;
		}
		off += k;
	}
	GT_CHECK(n == 0 && off == used, "a record did not decode as encoded (at byte %zu of %zu)",
		 off, used);
	GT_CHECK(used * 3 < raw, "%zu bytes encoded for %zu raw: less than 3x smaller", used, raw);
	GT_CHECK(gt_flight_decode(&dec, buf, 1, (void *)&buf[used + 64], &off) == 0,
		 "a truncated record decoded");
}

/* ---- the recorder ---- */

static int fake_frames(void *ctx, uint32_t tgid, int32_t ustack, int32_t kstack, uint64_t caller,
		       struct gt_frame *out, int max)
{
	/* the strings live only during the call: the segment must copy them */
	static char func[32], file[32];

	(void)ctx, (void)tgid, (void)kstack, (void)caller;
	if (ustack < 0 || max < 1)
		return 0;
	snprintf(func, sizeof(func), "work_%d", ustack);
	snprintf(file, sizeof(file), "work.c");
	out[0] = (struct gt_frame){.pc = 0x1000 + (uint64_t)ustack, .func = func, .file = file,
				   .line = 42};
	return 1;
}

static const struct gt_stack_source fake_src = {.frames = fake_frames};

struct rec {
	struct gt_flight_opts o;
	struct gt_flight *f;
};

static int rec_open_as(struct rec *r, uint64_t window, uint64_t cap, int go_version)
{
	struct gt_thread_snapshot snap[2] = {
		{.tid = 101, .tgid = TGID, .state = 'S', .syscall_nr = -1, .cpu = -1, .comm = "worker"},
		{.tid = 102, .tgid = TGID, .state = 'S', .syscall_nr = -1, .cpu = -1, .comm = "worker"},
	};
	struct gt_flight_params p = {0};
	int err;

	r->o.window_ns = window;
	r->o.size_bytes = cap;
	p.opts = &r->o;
	p.ncpus = NCPU;
	p.go_version = go_version;
	p.mask = 1;
	p.stacks = &fake_src;
	err = gt_flight_new(&r->f, &p);
	return err ? err : gt_flight_begin(r->f, T0, snap, 2);
}

static int rec_open(struct rec *r, uint64_t window, uint64_t cap)
{
	return rec_open_as(r, window, cap, GT_V1_19);
}

/* Threads 101 and 102 each run for 0.5 ms then sleep 0.5 ms, on CPUs 0
 * and 1, from `from` for `span` ns.  Returns the time reached. */
static uint64_t rec_busy(struct rec *r, uint64_t from, uint64_t span)
{
	uint64_t ts = from;

	for (; ts < from + span; ts += MS) {
		for (int c = 0; c < 2; c++) {
			uint32_t tid = 101 + (uint32_t)c;
			struct gt_kev_wakeup w = wake(ts, c, tid);
			struct gt_kev_switch in = sw(ts + 1000, c, 0, 0, -1, tid);
			struct gt_kev_switch out = sw(ts + MS / 2, c, tid, 1, 35, 0);

			int err = gt_flight_event(r->f, &w.hdr, sizeof(w));

			err = err ? err : gt_flight_event(r->f, &in.hdr, sizeof(in));
			err = err ? err : gt_flight_event(r->f, &out.hdr, sizeof(out));
			GT_CHECK(err == 0, "gt_flight_event: %d", err);
		}
	}
	return ts;
}

/* Dumps to a file at now (0: the last record), checks it with our
 * checker and Go's; fills rep. */
static void rec_dump_at(struct rec *r, const struct gt_flight_fired *mark, uint64_t now,
			struct gt_check_report *rep)
{
	char path[64] = "/tmp/gt-test-flight-XXXXXX", why[512];
	int fd = mkstemp(path), err;

	GT_REQUIRE(fd >= 0, "mkstemp: %s", strerror(errno));
	err = gt_flight_dump(r->f, fd, mark, now, why, sizeof(why));
	close(fd);
	GT_CHECK(err == 0, "dump failed: %s", why);
	err = gt_check_file(path, rep);
	GT_CHECK(err == 0, "our checker rejects the dump %s: %s", path, rep->error);
	GT_CHECK(gt_test_gocheck(path, why, sizeof(why)) == 0, "Go rejects %s: %s", path, why);
	if (!gt_test_failed_now)
		unlink(path);
}

static void rec_dump(struct rec *r, const struct gt_flight_fired *mark, struct gt_check_report *rep)
{
	rec_dump_at(r, mark, 0, rep);
}

/* 5 s of records, a window of 1 s and room for it: the dump covers at
 * least the window, much less than the 5 s, and starts from a snapshot
 * (the threads are all there, named, with their stacks). */
static void test_window_kept(void)
{
	struct rec r = {0};
	struct gt_flight_stats st;
	struct gt_check_report rep;

	GT_REQUIRE(rec_open(&r, 1 * SEC, 256ull << 20) == 0, "cannot start");
	uint64_t end = rec_busy(&r, T0 + MS, 5 * SEC);
	gt_flight_stats(r.f, &st);
	GT_CHECK(st.span_ns >= 1 * SEC && st.span_ns < 2 * SEC, "held %llu ns for a 1 s window",
		 (unsigned long long)st.span_ns);
	GT_CHECK(st.dropped > 0, "no segment dropped in 5 s of a 1 s window");
	rec_dump(&r, NULL, &rep);
	GT_CHECK(rep.duration_ticks >= 1 * SEC && rep.duration_ticks < 2 * SEC,
		 "the dump lasts %llu ns (window 1 s of %llu)", (unsigned long long)rep.duration_ticks,
		 (unsigned long long)(end - T0));
	GT_CHECK(rep.goroutines == 2, "%llu goroutines in the dump, want 2",
		 (unsigned long long)rep.goroutines);
	GT_CHECK(rep.stacks > 1, "no stack in the dump");
	/* and the recording goes on: a second dump later is valid too */
	rec_busy(&r, end, 300 * MS);
	rec_dump(&r, NULL, &rep);
	gt_flight_free(r.f);
}

/* The cap wins over the window: 1 MiB held at most (plus the segment
 * being filled), whole segments dropped, the dump valid and shorter. */
static void test_cap_wins(void)
{
	struct rec r = {0};
	struct gt_flight_stats st;
	struct gt_check_report rep;
	uint64_t ts = T0 + MS, most = 0;

	GT_REQUIRE(rec_open(&r, 60 * SEC, 1ull << 20) == 0, "cannot start");
	for (int i = 0; i < 40; i++) {
		ts = rec_busy(&r, ts, 100 * MS);
		gt_flight_stats(r.f, &st);
		most = st.held_bytes > most ? st.held_bytes : most;
	}
	gt_flight_stats(r.f, &st);
	GT_CHECK(most <= (1ull << 20), "held %llu bytes under a cap of 1 MiB",
		 (unsigned long long)most);
	GT_CHECK(st.dropped > 0 && st.span_ns < 4 * SEC, "the cap dropped nothing (span %llu ns)",
		 (unsigned long long)st.span_ns);
	rec_dump(&r, NULL, &rep);
	gt_flight_free(r.f);
}

/* A trigger: accepted once (holdoff), due after --after, its UserLog in
 * the dump; --max-dumps bounds the rest. */
static void test_trigger_dump(void)
{
	struct rec r = {0};
	struct gt_flight_fired f;
	struct gt_check_report rep;
	uint64_t ts;

	r.o = trig_opts(GT_FLIGHT_OFFCPU, -1, 50 * MS);
	r.o.after_ns = 100 * MS;
	r.o.holdoff_set = 1;
	r.o.max_dumps = 2;
	GT_REQUIRE(rec_open(&r, 1 * SEC, 64ull << 20) == 0, "cannot start");
	ts = rec_busy(&r, T0 + MS, 1500 * MS);
	GT_CHECK(!gt_flight_fired(r.f, &f), "fired on 0.5 ms sleeps");
	for (int i = 0; i < 3; i++) { /* 101 sleeps 80 ms, three times */
		struct gt_kev_switch out = sw(ts, 0, 101, 1, -1, 0);
		struct gt_kev_switch in = sw(ts + 80 * MS, 0, 0, 0, -1, 101);
		struct gt_kev_switch out2 = sw(ts + 81 * MS, 0, 101, 1, -1, 0);

		GT_REQUIRE(gt_flight_event(r.f, &out.hdr, sizeof(out)) == 0, "event");
		GT_REQUIRE(gt_flight_event(r.f, &in.hdr, sizeof(in)) == 0, "event");
		GT_REQUIRE(gt_flight_event(r.f, &out2.hdr, sizeof(out2)) == 0, "event");
		GT_CHECK(gt_flight_fired(r.f, &f) == (i < 2), "trigger %d: accepted %d", i, !(i < 2));
		GT_CHECK(!gt_flight_due(r.f, ts + 81 * MS, 0, &f), "due before --after");
		ts += 300 * MS;
		struct gt_kev_switch late = sw(ts, 1, 0, 0, -1, 0);
		GT_REQUIRE(gt_flight_event(r.f, &late.hdr, sizeof(late)) == 0, "event");
		if (i < 2) {
			GT_CHECK(gt_flight_due(r.f, ts, 0, &f), "not due after --after");
			GT_CHECK(f.tid == 101 && f.span_ns == 80 * MS, "fired %u for %llu", f.tid,
				 (unsigned long long)f.span_ns);
			rec_dump(&r, &f, &rep);
			GT_CHECK(rep.count_by_type[GT_EV_USER_LOG] == 1, "%llu UserLogs in the dump",
				 (unsigned long long)rep.count_by_type[GT_EV_USER_LOG]);
		}
	}
	GT_CHECK(!gt_flight_due(r.f, ts + 10 * SEC, 1, &f), "a third dump past --max-dumps 2");
	gt_flight_free(r.f);
}

/* --after longer than the window: the dump still holds the window before
 * the trigger (the segments before it are kept while it waits). */
static void test_after_keeps_window(void)
{
	struct rec r = {0};
	struct gt_flight_fired f;
	struct gt_check_report rep;
	uint64_t ts, fired_at;

	r.o = trig_opts(GT_FLIGHT_OFFCPU, -1, 50 * MS);
	r.o.after_ns = 3 * SEC;
	GT_REQUIRE(rec_open(&r, 1 * SEC, 64ull << 20) == 0, "cannot start");
	ts = rec_busy(&r, T0 + MS, 1500 * MS);
	struct gt_kev_switch out = sw(ts, 0, 101, 1, -1, 0);
	struct gt_kev_switch in = sw(ts + 80 * MS, 0, 0, 0, -1, 101);
	struct gt_kev_switch out2 = sw(ts + 81 * MS, 0, 101, 1, -1, 0);
	GT_REQUIRE(gt_flight_event(r.f, &out.hdr, sizeof(out)) == 0, "event");
	GT_REQUIRE(gt_flight_event(r.f, &in.hdr, sizeof(in)) == 0, "event");
	GT_REQUIRE(gt_flight_event(r.f, &out2.hdr, sizeof(out2)) == 0, "event");
	GT_REQUIRE(gt_flight_fired(r.f, &f), "the trigger did not fire");
	fired_at = f.ts;
	ts = rec_busy(&r, ts + 100 * MS, 3 * SEC);
	GT_REQUIRE(gt_flight_due(r.f, ts, 0, &f), "not due after --after");
	rec_dump(&r, &f, &rep);
	/* from at least 1 s before the trigger to 3 s after it */
	GT_CHECK(rep.duration_ticks >= ts - 1 - (fired_at - 1 * SEC),
		 "the dump lasts %llu ns: it lost the window before the trigger",
		 (unsigned long long)rep.duration_ticks);
	gt_flight_free(r.f);
}

/* A dump holds the strings and stacks it uses and no others: 300
 * distinct stacks early, then 3 s of one stack under a 1 s window. */
static void test_own_stacks_only(void)
{
	struct rec r = {0};
	struct gt_check_report rep;
	uint64_t ts = T0 + MS;

	GT_REQUIRE(rec_open(&r, 1 * SEC, 64ull << 20) == 0, "cannot start");
	for (int i = 0; i < 300; i++, ts += MS) {
		struct gt_kev_switch in = sw(ts, 0, 0, 0, -1, 101);
		struct gt_kev_switch out = sw(ts + MS / 2, 0, 101, 1, -1, 0);

		out.prev_ustack = 1000 + i;
		GT_REQUIRE(gt_flight_event(r.f, &in.hdr, sizeof(in)) == 0, "event");
		GT_REQUIRE(gt_flight_event(r.f, &out.hdr, sizeof(out)) == 0, "event");
	}
	rec_dump(&r, NULL, &rep);
	GT_CHECK(rep.stacks > 300, "the early dump has %llu stacks, not the 300",
		 (unsigned long long)rep.stacks);
	rec_busy(&r, ts, 3 * SEC);
	rec_dump(&r, NULL, &rep);
	GT_CHECK(rep.stacks < 20 && rep.strings < 40, "the late dump has %llu stacks and %llu "
		 "strings: old segments' ones too", (unsigned long long)rep.stacks,
		 (unsigned long long)rep.strings);
	gt_flight_free(r.f);
}

/* A dump ends at the moment it is asked for.  2 s busy under a 1 s
 * window, then 10 s quiet: a dump at the end of the quiet is that last
 * second (both threads asleep: the snapshot's GoStarts only), not the busy
 * window again; a
 * dump 5 s later is the second before it, not the same file; status's
 * records held count what the window holds.  Also in Go 1.23's format. */
/* One dump at now read back: its bytes (*buf, *len), how long it lasts and
 * how many GoStarts it has (our analyzer for v2, our checker for v1). */
static void idle_dump_at(struct rec *r, int v, uint64_t now, uint8_t **buf, size_t *len,
			 int64_t *dur, uint64_t *starts)
{
	char path[64] = "/tmp/gt-test-flight-idle-XXXXXX", why[512];
	struct gt_analyze_opts ao = {.until_ns = -1, .strict = 1};
	struct gt_analysis a = {0};
	struct gt_check_report rep;
	struct stat sb;
	int fd = mkstemp(path), err;

	*buf = NULL;
	GT_REQUIRE(fd >= 0, "mkstemp: %s", strerror(errno));
	err = gt_flight_dump(r->f, fd, NULL, now, why, sizeof(why));
	GT_CHECK(err == 0, "go %d: a dump of a quiet target failed: %s", v, why);
	GT_REQUIRE(fstat(fd, &sb) == 0 && sb.st_size > 16, "an empty dump");
	*len = (size_t)sb.st_size;
	*buf = malloc(*len);
	GT_REQUIRE(*buf && pread(fd, *buf, *len, 0) == sb.st_size, "read");
	close(fd);
	err = gt_analyze(&a, *buf, *len, &ao);
	GT_CHECK(err == 0, "our analyzer rejects %s: %s", path, a.error);
	GT_CHECK(gt_an_thread_of(&a, 101) && gt_an_thread_of(&a, 102),
		 "a thread is missing from the quiet window");
	*dur = a.end_ns;
	*starts = a.v1_counts[GT_EV_GO_START];
	gt_analysis_free(&a);
	if (v < GT_GO_1_22) {
		GT_CHECK(gt_check_buffer(*buf, *len, &rep) == 0, "our checker: %s", rep.error);
		*starts = rep.count_by_type[GT_EV_GO_START] + rep.count_by_type[GT_EV_GO_START_LOCAL];
	}
	GT_CHECK(gt_test_gocheck(path, why, sizeof(why)) == 0, "Go rejects %s: %s", path, why);
	if (!gt_test_failed_now)
		unlink(path);
}

/* A dump ends at the moment it is asked for.  2 s busy under a 1 s
 * window, then 10 s quiet: a dump at the end of the quiet is that last
 * second (both threads asleep: the snapshot's GoStarts only), not the busy
 * window again; a dump 5 s later is the second before it, not the same
 * bytes; status's records held count what the window holds.  Also in Go
 * 1.23's format. */
static void test_idle_dump(void)
{
	const int versions[] = {GT_V1_19, GT_GO_1_23};

	for (int i = 0; i < 2; i++) {
		int v = versions[i];
		struct rec r = {0};
		struct gt_flight_stats st;
		uint8_t *buf[2];
		size_t len[2];
		int64_t dur = 0;
		uint64_t end, starts = 0;

		GT_REQUIRE(rec_open_as(&r, 1 * SEC, 64ull << 20, v) == 0, "cannot start");
		end = rec_busy(&r, T0 + MS, 2 * SEC);
		gt_flight_stats(r.f, &st);
		GT_CHECK(st.records > 1000, "status would say %llu records held after 2 s busy",
			 (unsigned long long)st.records);
		for (int k = 0; k < 2; k++) {
			idle_dump_at(&r, v, end + (10 + 5 * (uint64_t)k) * SEC, &buf[k], &len[k], &dur,
				     &starts);
			/* (v2 moves events sharing a time 1 ns apart) */
			GT_CHECK(dur >= (int64_t)SEC && dur < (int64_t)(SEC + 1000), "go %d: dump %d "
				 "lasts %lld ns, want the 1 s window up to it", v, k, (long long)dur);
			/* a thread asleep in a syscall at the start is put there by
			 * a GoStart (docs/format.md): one each, no more */
			GT_CHECK(starts <= 2, "go %d: dump %d of a quiet second has %llu GoStarts (the "
				 "busy window again?)", v, k, (unsigned long long)starts);
		}
		GT_CHECK(len[0] != len[1] || memcmp(buf[0], buf[1], len[0]),
			 "go %d: two dumps 5 s apart of a quiet target are byte-identical", v);
		/* a dump a quarter second, 40 times: the cuts do not pile up */
		for (int k = 0; k < 40; k++) {
			char why[256];
			int fd = open("/dev/null", O_WRONLY);

			GT_REQUIRE(fd >= 0, "/dev/null: %s", strerror(errno));
			GT_CHECK(gt_flight_dump(r.f, fd, NULL, end + 16 * SEC + (uint64_t)k * SEC / 4,
						why, sizeof(why)) == 0, "dump %d: %s", k, why);
			close(fd);
		}
		gt_flight_stats(r.f, &st);
		GT_CHECK(st.segments <= 12, "go %d: %llu segments held after 40 dumps of a quiet "
			 "1 s window", v, (unsigned long long)st.segments);
		free(buf[0]);
		free(buf[1]);
		gt_flight_free(r.f);
	}
}

/* --go-version 1.22 and 1.23: the dump is a Go 1.22+ file that Go's
 * readers (gocheck.sh) and our strict v2 analyzer read to its end: a 2 s
 * window, marked by a trigger, is several generations (one a second),
 * each restating both threads. */
static void test_v2_dump(void)
{
	for (int v = GT_GO_1_22; v <= GT_GO_1_23; v++) {
		char path[64] = "/tmp/gt-test-flight-v2-XXXXXX", why[512], hdr[16];
		struct gt_analyze_opts ao = {.until_ns = -1, .strict = 1};
		struct gt_analysis a = {0};
		struct rec r = {0};
		struct gt_flight_fired f;
		struct stat st;
		uint8_t *buf;
		int fd, err;

		r.o = trig_opts(GT_FLIGHT_OFFCPU, -1, 50 * MS);
		GT_REQUIRE(rec_open_as(&r, 2 * SEC, 256ull << 20, v) == 0, "cannot start");
		uint64_t ts = rec_busy(&r, T0 + MS, 4 * SEC);
		struct gt_kev_switch out = sw(ts, 0, 101, 1, -1, 0);
		struct gt_kev_switch in = sw(ts + 80 * MS, 0, 0, 0, -1, 101);
		GT_REQUIRE(gt_flight_event(r.f, &out.hdr, sizeof(out)) == 0, "event");
		GT_REQUIRE(gt_flight_event(r.f, &in.hdr, sizeof(in)) == 0, "event");
		rec_busy(&r, ts + 81 * MS, 100 * MS);
		GT_REQUIRE(gt_flight_due(r.f, ts + 10 * SEC, 1, &f), "the trigger did not fire");
		fd = mkstemp(path);
		GT_REQUIRE(fd >= 0, "mkstemp: %s", strerror(errno));
		err = gt_flight_dump(r.f, fd, &f, 0, why, sizeof(why));
		GT_CHECK(err == 0, "go 1.%d dump failed: %s", v - 1000, why);
		GT_REQUIRE(fstat(fd, &st) == 0 && st.st_size > 16, "an empty dump");
		buf = malloc((size_t)st.st_size);
		GT_REQUIRE(buf && pread(fd, buf, (size_t)st.st_size, 0) == st.st_size, "read");
		close(fd);
		snprintf(hdr, sizeof(hdr), "go 1.%d trace", v - 1000);
		GT_CHECK(!memcmp(buf, hdr, strlen(hdr) + 1), "header %.16s, want %s", (char *)buf, hdr);
		err = gt_analyze(&a, buf, (size_t)st.st_size, &ao);
		GT_CHECK(err == 0, "our v2 analyzer rejects %s: %s", path, a.error);
		GT_CHECK(a.generations >= 2, "%llu generation(s) in a 2 s window",
			 (unsigned long long)a.generations);
		GT_CHECK(gt_an_thread_of(&a, 101) && gt_an_thread_of(&a, 102),
			 "a thread of the window is missing");
		GT_CHECK(gt_test_gocheck(path, why, sizeof(why)) == 0, "Go rejects %s: %s", path, why);
		gt_analysis_free(&a);
		free(buf);
		if (!gt_test_failed_now)
			unlink(path);
		gt_flight_free(r.f);
	}
}

int main(void)
{
	GT_RUN(test_trigger_offcpu);
	GT_RUN(test_trigger_sched_delay);
	GT_RUN(test_trigger_syscall);
	GT_RUN(test_trigger_named);
	GT_RUN(test_codec_roundtrip);
	GT_RUN(test_codec_words);
	GT_RUN(test_window_kept);
	GT_RUN(test_cap_wins);
	GT_RUN(test_trigger_dump);
	GT_RUN(test_after_keeps_window);
	GT_RUN(test_own_stacks_only);
	GT_RUN(test_v2_dump);
	GT_RUN(test_idle_dump);
	return gt_test_done();
}
