/* The translator, one mapping row at a time: hand-built kernel event
 * sequences go through the real translator and writer into a file; the
 * test asserts the exact Go events Go's own reader sees (`go tool trace -d`,
 * in Go's merged order) and that the file is valid for our checker and for
 * Go (parser and viewer pages).
 *
 * Threads 100..199 are traced (pid 100), tid 0 is the idle task, tids from
 * 1000 are untraced.  Two CPUs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check/gt_check.h"
#include "wire/gt_reader.h"
#include "gt_test.h"
#include "writer/gt_writer.h"
#include "engine/proc_snapshot.h"
#include "translate/syscall_class.h"
#include "translate/translate.h"

#define TGID 100
#define NCPU 2
#define S_SLEEP 1  /* TASK_INTERRUPTIBLE */
#define S_DISK 2   /* TASK_UNINTERRUPTIBLE */
#define S_DEAD 0x80

struct tt {
	char path[64];
	int fd;
	struct gt_writer *w;
	struct gt_translator *t;
	char *dump;        /* `go tool trace -d`, ts and offsets removed */
	struct gt_translator_stats st;
	struct gt_writer_stats wst; /* the writer's, at tt_finish */
	int64_t sysnr[1000]; /* per traced tid: the syscall it is in, as the
			      * kernel's saved registers say (-1 none) */
};

/* The session bits of the traced threads' records (1: one session), and
 * the translator's own bit (0: any): test_switch_entry_other_session's. */
static uint32_t tt_bits = 1, tt_session_mask;

static uint32_t sess(uint32_t tid)
{
	return tid >= 100 && tid < 1000 ? tt_bits : 0;
}

static void hdr(struct gt_kev_hdr *h, int type, uint64_t ts, int cpu, uint32_t tid)
{
	h->ts = ts;
	h->type = (uint16_t)type;
	h->cpu = (uint16_t)cpu;
	h->tid = tid;
	h->tgid = tid >= 100 && tid < 1000 ? TGID : tid;
	h->sessions = sess(tid);
}

static int tt_open_version(struct tt *x, const struct gt_thread_snapshot *snap, int n,
			   int version);

static int tt_open(struct tt *x, const struct gt_thread_snapshot *snap, int n)
{
	return tt_open_version(x, snap, n, GT_V1_19);
}

/* The process titles and stacks tt_open's translator asks (NULL: none). */
static const struct gt_title_source *tt_titles;
static const struct gt_stack_source *tt_stacks;
static int (*tt_cgroup_path)(uint64_t id, int tid, char *out, size_t len);

static int tt_open_version(struct tt *x, const struct gt_thread_snapshot *snap, int n,
			   int version)
{
	memset(x, 0, sizeof(*x));
	for (int i = 0; i < 1000; i++)
		x->sysnr[i] = -1;
	snprintf(x->path, sizeof(x->path), "/tmp/gt-test-translate-XXXXXX");
	x->fd = mkstemp(x->path);
	if (x->fd < 0)
		return -errno;
	int r = gt_writer_open(&x->w, x->fd, version, 1000000000ull);
	if (r < 0)
		return r;
	struct gt_translator_opts o = {.ncpus = NCPU, .go_version = version, .titles = tt_titles,
				       .stacks = tt_stacks, .cgroup_path = tt_cgroup_path,
				       .session_mask = tt_session_mask};
	if ((r = gt_translator_new(&x->t, x->w, &o)) < 0)
		return r;
	return gt_translator_begin(x->t, 1000, snap, n);
}

static void feed(struct tt *x, const void *ev, size_t len)
{
	int r = gt_translator_event(x->t, ev, len);
	GT_CHECK(r == 0, "gt_translator_event: %d", r);
}

static void sw_stack(struct tt *x, uint64_t ts, int cpu, uint32_t prev, int64_t state,
		     uint32_t flags, uint32_t next, int32_t prev_ustack);

static void sw(struct tt *x, uint64_t ts, int cpu, uint32_t prev, int64_t state,
	       uint32_t flags, uint32_t next)
{
	sw_stack(x, ts, cpu, prev, state, flags, next, -1);
}

static void sw_fill(struct tt *x, struct gt_kev_switch *e, uint64_t ts, int cpu, uint32_t prev,
		    int64_t state, uint32_t flags, uint32_t next, int32_t prev_ustack);

/* A switch whose prev (traced) stopped with user stack prev_ustack. */
static void sw_stack(struct tt *x, uint64_t ts, int cpu, uint32_t prev, int64_t state,
		     uint32_t flags, uint32_t next, int32_t prev_ustack)
{
	struct gt_kev_switch e = {0};
	sw_fill(x, &e, ts, cpu, prev, state, flags, next, prev_ustack);
	feed(x, &e, sizeof(e));
}

/* A switch where prev blocks in the syscall x->sysnr[prev] says, carrying
 * that syscall's entry for the sessions entry_sessions (GT_SWITCH_ENTRY):
 * what --syscalls=blocking writes there. */
static void sw_entry(struct tt *x, uint64_t ts, int cpu, uint32_t prev, int64_t state,
		     uint32_t next, int32_t prev_ustack, const struct gt_utop *top,
		     uint32_t entry_sessions)
{
	struct gt_kev_switch_entry e = {0};
	sw_fill(x, &e.sw, ts, cpu, prev, state, GT_SWITCH_ENTRY, next, prev_ustack);
	e.entry_sessions = entry_sessions;
	e.top = *top;
	feed(x, &e, sizeof(e));
}

static void sw_fill(struct tt *x, struct gt_kev_switch *ep, uint64_t ts, int cpu, uint32_t prev,
		    int64_t state, uint32_t flags, uint32_t next, int32_t prev_ustack)
{
	struct gt_kev_switch e = {0};
	hdr(&e.hdr, GT_KEV_SWITCH, ts, cpu, prev);
	e.hdr.sessions = sess(prev) | sess(next);
	e.next_tid = next;
	e.next_tgid = sess(next) ? TGID : next;
	e.prev_state = state;
	e.prev_sessions = sess(prev);
	e.next_sessions = sess(next);
	e.prev_ustack = prev_ustack;
	e.prev_kstack = -1;
	e.prev_sysnr = sess(prev) ? (int32_t)x->sysnr[prev] : -1;
	e.flags = flags;
	snprintf(e.prev_comm, sizeof(e.prev_comm), "t%u", prev);
	snprintf(e.next_comm, sizeof(e.next_comm), "t%u", next);
	*ep = e;
}

/* A wakeup on cpu of target (last on target_cpu) by waker, whose user
 * stack is waker_ustack (-1: none). */
static void wake_stack(struct tt *x, uint64_t ts, int cpu, uint32_t waker, uint32_t target,
		       int target_cpu, int32_t waker_ustack)
{
	struct gt_kev_wakeup e = {0};
	hdr(&e.hdr, GT_KEV_WAKEUP, ts, cpu, waker);
	e.target_tid = target;
	e.target_tgid = TGID;
	e.target_cpu = (uint32_t)target_cpu;
	e.waker_sessions = sess(waker);
	e.waker_ustack = waker_ustack;
	feed(x, &e, sizeof(e));
}

static void wake(struct tt *x, uint64_t ts, int cpu, uint32_t waker, uint32_t target)
{
	wake_stack(x, ts, cpu, waker, target, cpu, -1);
}

/* A wakeup from interrupt context (GT_WAKEUP_* flags) on cpu, where
 * `current` (the interrupted task, maybe one of ours, maybe idle) runs;
 * its stack id must not be used. */
static void irq_wake(struct tt *x, uint64_t ts, int cpu, uint32_t current, uint32_t target,
		     uint32_t flags)
{
	struct gt_kev_wakeup e = {0};
	hdr(&e.hdr, GT_KEV_WAKEUP, ts, cpu, current);
	e.target_tid = target;
	e.target_tgid = TGID;
	e.target_cpu = (uint32_t)cpu;
	e.flags = flags;
	e.waker_sessions = sess(current);
	e.waker_ustack = 7;
	feed(x, &e, sizeof(e));
}

/* An entry record with user stack ustack, stack top top (NULL: none) and
 * flags GT_SYS_ENTER_* (0: the entry itself; AT_BLOCK or CALLER_ONLY:
 * written late, as --syscalls=blocking does). */
static void sys_record(struct tt *x, uint64_t ts, int cpu, uint32_t tid, int64_t nr,
		       int32_t ustack, const struct gt_utop *top, uint32_t flags)
{
	struct gt_kev_sys_enter e = {0};
	hdr(&e.hdr, GT_KEV_SYS_ENTER, ts, cpu, tid);
	e.nr = nr;
	e.ustack = ustack;
	e.flags = flags;
	if (top)
		e.top = *top;
	if (sess(tid))
		x->sysnr[tid] = nr;
	feed(x, &e, sizeof(e));
}

static void sys_enter_top(struct tt *x, uint64_t ts, int cpu, uint32_t tid, int64_t nr,
			  int32_t ustack, const struct gt_utop *top)
{
	sys_record(x, ts, cpu, tid, nr, ustack, top, 0);
}

static void sys_enter(struct tt *x, uint64_t ts, int cpu, uint32_t tid, int64_t nr)
{
	sys_enter_top(x, ts, cpu, tid, nr, -1, NULL);
}

/* The kernel reports no syscall exit (a switch-out carries the syscall it
 * sleeps in): a return only changes what later switches of tid say. */
static void sys_exit(struct tt *x, uint32_t tid)
{
	x->sysnr[tid] = -1;
}

static void fork_ev(struct tt *x, uint64_t ts, int cpu, uint32_t parent, uint32_t child,
		    const char *comm)
{
	struct gt_kev_fork e = {0};
	hdr(&e.hdr, GT_KEV_FORK, ts, cpu, parent);
	e.child_tid = child;
	e.child_tgid = TGID;
	e.parent_ustack = -1;
	snprintf(e.child_comm, sizeof(e.child_comm), "%s", comm);
	feed(x, &e, sizeof(e));
}

static void exit_ev(struct tt *x, uint64_t ts, int cpu, uint32_t tid)
{
	struct gt_kev_exit e = {0};
	hdr(&e.hdr, GT_KEV_EXIT, ts, cpu, tid);
	feed(x, &e, sizeof(e));
}

static void rename_ev(struct tt *x, uint64_t ts, int cpu, uint32_t tid, const char *comm)
{
	struct gt_kev_rename e = {0};
	hdr(&e.hdr, GT_KEV_RENAME, ts, cpu, tid);
	snprintf(e.newcomm, sizeof(e.newcomm), "%s", comm);
	feed(x, &e, sizeof(e));
}

/* Keeps "Name p=P g=G args..." of each -d line: drops the timestamp, the
 * offset and the stack frames. */
static char *go_dump(const char *path)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "go tool trace -d '%s' 2>&1", path);
	FILE *p = popen(cmd, "r");
	if (!p)
		return NULL;
	size_t cap = 1 << 16, len = 0;
	char *out = calloc(1, cap), line[4096];
	while (out && fgets(line, sizeof(line), p)) {
		char *s = line;
		if (line[0] < '0' || line[0] > '9')
			continue; /* a stack frame line */
		s = strchr(line, ' ');
		if (!s)
			continue;
		s++;
		char *off = strstr(s, " off=");
		if (off) {
			char *end = strchr(off + 1, ' ');
			memmove(off, end ? end : off + strlen(off) - 1, strlen(end ? end : "\n") + 1);
		}
		size_t n = strlen(s);
		if (len + n + 1 >= cap) {
			cap *= 2;
			char *nb = realloc(out, cap);
			if (!nb) {
				free(out);
				out = NULL;
				break;
			}
			out = nb;
		}
		memcpy(out + len, s, n + 1);
		len += n;
	}
	pclose(p);
	return out;
}

/* A goroutine's id is its thread's TID (GT_TR_REUSED_GOID and up for a
 * reused TID); the expectations here number goroutines 1, 2, ... in the
 * order the dump first names them, as the ids once were: renumber. */
static char *renumber_goids(char *dump)
{
	uint64_t seen[256];
	size_t nseen = 0, cap = dump ? strlen(dump) + 1 : 0;
	char *out = dump ? malloc(cap) : NULL, *o = out;

	if (!out) {
		free(dump);
		return NULL;
	}
	for (const char *s = dump; *s;) {
		if (strncmp(s, "g=", 2) || (s > dump && s[-1] != ' ')) {
			*o++ = *s++;
			continue;
		}
		char *end;
		uint64_t g = strtoull(s + 2, &end, 10);
		size_t i;

		for (i = 0; i < nseen && seen[i] != g; i++)
			;
		if (i == nseen && nseen < 256 && g)
			seen[nseen++] = g;
		o += sprintf(o, "g=%llu", g ? (unsigned long long)(i + 1) : 0ull);
		s = end;
	}
	*o = 0;
	free(dump);
	return out;
}

/* Ends the translation, closes the file and holds it to both checkers. */
static int tt_finish(struct tt *x, uint64_t ts)
{
	int r = gt_translator_end(x->t, ts);
	GT_CHECK(r == 0, "gt_translator_end: %d", r);
	gt_translator_stats(x->t, &x->st);
	gt_translator_free(x->t);
	gt_writer_stats(x->w, &x->wst);
	r = gt_writer_close(x->w);
	close(x->fd);
	GT_CHECK(r == 0, "gt_writer_close: %d", r);
	struct gt_check_report rep;
	r = gt_check_file(x->path, &rep);
	GT_CHECK(r == 0, "our checker rejects the file: %s", rep.error);
	char why[2048];
	int g = gt_test_gocheck(x->path, why, sizeof(why));
	GT_CHECK(g == 0, "go rejects the file: %s", why);
	x->dump = renumber_goids(go_dump(x->path));
	GT_CHECK(x->dump != NULL, "no -d output");
	return r == 0 && g == 0 && x->dump ? 0 : -1;
}

static void tt_close(struct tt *x)
{
	if (getenv("GT_KEEP"))
		fprintf(stderr, "kept %s\n%s", x->path, x->dump ? x->dump : "");
	else
		unlink(x->path);
	free(x->dump);
}

/* Finds line in the dump from pos on, at the start of a dump line.  A
 * start or unblock on the P of the goroutine's last change is written as
 * GoStartLocal/GoUnblockLocal, which Go's reader prints as GoStart /
 * GoUnblock with seq=0 (it orders them by position, not by seq; our
 * checker and Go's still verify that order): so "seq=N" in line also
 * matches "seq=0" there. */
static const char *find_line(const char *dump, const char *pos, const char *line)
{
	char local[256];
	const char *seq = strstr(line, " seq=");

	for (const char *hit = pos; (hit = strstr(hit, line)); hit++)
		if (hit == dump || hit[-1] == '\n')
			return hit;
	if (!seq)
		return NULL;
	snprintf(local, sizeof(local), "%.*s seq=0%s", (int)(seq - line), line,
		 seq + 5 + strspn(seq + 5, "0123456789"));
	for (const char *hit = pos; (hit = strstr(hit, local)); hit++)
		if (hit == dump || hit[-1] == '\n')
			return hit;
	return NULL;
}

/* The lines of want (separated by '\n') appear in this order in the dump,
 * each as the start of a line. */
static void expect_seq(struct tt *x, const char *want)
{
	if (!x->dump)
		return;
	const char *pos = x->dump;
	char line[256];
	while (*want) {
		const char *nl = strchr(want, '\n');
		size_t n = nl ? (size_t)(nl - want) : strlen(want);
		snprintf(line, sizeof(line), "%.*s", (int)n, want);
		want += n + (nl ? 1 : 0);
		const char *hit = find_line(x->dump, pos, line);
		GT_CHECK(hit != NULL, "expected `%s` after offset %zu in:\n%s", line,
			 (size_t)(pos - x->dump), x->dump);
		if (!hit)
			return;
		pos = hit + strlen(line);
	}
}

/* The function of the first frame of the stack that the first GoUnblock
 * (or GoUnblockLocal) of goroutine g carries, read from the file with our
 * raw reader (Go's -d prints no stacks); "" if none. */
static void unblock_frame(const struct tt *x, uint64_t g, char *out, size_t n)
{
	uint64_t stack = 0, func = 0;
	struct gt_raw_event *ev = malloc(sizeof(*ev));
	FILE *f = fopen(x->path, "rb");
	static uint8_t buf[1 << 20];
	size_t len = f ? fread(buf, 1, sizeof(buf), f) : 0;
	struct gt_reader r;
	out[0] = '\0';
	if (f)
		fclose(f);
	if (!ev || gt_reader_open(&r, buf, len) < 0) {
		free(ev);
		return;
	}
	/* pass 1: the stack id; pass 2: its first frame's function id; 3: the name */
	for (int pass = 1; pass <= 3; pass++) {
		gt_reader_open(&r, buf, len);
		while (gt_reader_next(&r, ev) == 1) {
			int unb = ev->type == GT_EV_GO_UNBLOCK || ev->type == GT_EV_GO_UNBLOCK_LOCAL;
			if (pass == 1 && unb && ev->nargs >= 3 && ev->args[1] == g && !stack)
				stack = ev->args[ev->nargs - 1];
			else if (pass == 2 && ev->type == GT_EV_STACK && ev->nargs >= 6 &&
				 ev->args[0] == stack && stack)
				func = ev->args[3]; /* id, n, then pc, func, file, line */
			else if (pass == 3 && ev->type == GT_EV_STRING && ev->args[0] == func && func)
				snprintf(out, n, "%.*s", (int)ev->str_len, (const char *)ev->str);
		}
	}
	free(ev);
}

static int count_lines(const struct tt *x, const char *prefix)
{
	int n = 0;
	for (const char *s = x->dump; s && (s = strstr(s, prefix)); s++)
		if (s == x->dump || s[-1] == '\n')
			n++;
	return n;
}

static void expect_no_repairs(const struct tt *x)
{
	for (int k = 0; k < GT_REPAIR_COUNT; k++)
		GT_CHECK(x->st.repair[k] == 0, "%llu repairs %s",
			 (unsigned long long)x->st.repair[k], gt_repair_names[k]);
}

struct names {
	int n;
	char name[8][128];
	int64_t tid[8];
};

static void collect_name(const struct gt_goroutine_stats *g, void *arg)
{
	struct names *nm = arg;
	if (nm->n >= 8)
		return;
	snprintf(nm->name[nm->n], sizeof(nm->name[0]), "%.*s", (int)g->name_len, g->name);
	nm->tid[nm->n++] = g->tid;
}

/* The goroutines' names and tids by our checker (from the identity
 * stacks in the footer), in id order; -1 if the checker fails. */
static int names_of(const struct tt *x, struct names *nm)
{
	struct gt_check_report rep;
	memset(nm, 0, sizeof(*nm));
	int r = gt_check_file_run(x->path, 0, &rep, collect_name, nm);
	GT_CHECK(r == 0, "checker: %s", rep.error);
	return r == 0 ? nm->n : -1;
}

static void snap(struct gt_thread_snapshot *s, uint32_t tid, char state, int64_t nr, int cpu)
{
	memset(s, 0, sizeof(*s));
	s->tid = tid;
	s->tgid = TGID;
	s->state = state;
	s->syscall_nr = nr;
	s->cpu = cpu;
	snprintf(s->comm, sizeof(s->comm), "t%u", tid);
}

/* Two threads write/read a pipe in turns: read blocks -> GoSysCall then
 * GoBlockRecv, the writer's wakeup -> GoUnblock by the writer (who woke
 * whom, as a futex wait shows it), switch in -> GoStart. */
static void test_pipe_ping_pong(void)
{
	struct tt x;
	struct gt_thread_snapshot s[2];
	snap(&s[0], 101, 'S', -1, 0);
	snap(&s[1], 102, 'S', -1, 1);
	GT_REQUIRE(tt_open(&x, s, 2) == 0, "open");
	wake(&x, 2000, 0, 0, 101);          /* idle CPU 0 wakes 101 */
	sw(&x, 2100, 0, 0, 0, 0, 101);
	wake(&x, 2200, 0, 101, 102);        /* 101 wakes 102 */
	sw(&x, 2300, 1, 0, 0, 0, 102);
	sys_enter(&x, 2400, 0, 101, 0);     /* 101 read()s the empty pipe */
	sw(&x, 2500, 0, 101, S_SLEEP, 0, 0);
	sys_enter(&x, 2600, 1, 102, 1);     /* 102 write()s */
	wake(&x, 2700, 1, 102, 101);
	sys_exit(&x, 102);
	sw(&x, 2800, 0, 0, 0, 0, 101);
	sys_exit(&x, 101);
	if (tt_finish(&x, 5000) == 0)
		expect_seq(&x, "GoCreate p=0 g=0 g=1 stack=1\n"
			       "GoWaiting p=0 g=1 g=1\n"
			       "GoCreate p=0 g=0 g=2 stack=2\n"
			       "GoWaiting p=0 g=2 g=2\n"
			       "Gomaxprocs p=0 g=0 procs=2\n"
			       "GoUnblock p=0 g=0 g=1 seq=2\n"
			       "ProcStart p=0 g=0 thread=1000000000\n"
			       "GoStart p=0 g=1 g=1 seq=3\n"
			       "GoUnblock p=0 g=1 g=2 seq=2\n"
			       "ProcStart p=1 g=0 thread=1000000001\n"
			       "GoStart p=1 g=2 g=2 seq=3\n"
			       "GoSysCall p=0 g=1\n"
			       "GoBlockRecv p=0 g=1\n"
			       "ProcStop p=0 g=0\n"
			       "GoSysCall p=1 g=2\n"
			       "GoUnblock p=1 g=2 g=1 seq=4\n"
			       "ProcStart p=0 g=0 thread=1000000000\n"
			       "GoStart p=0 g=1 g=1 seq=5\n"
			       "GoPreempt p=0 g=1\n"
			       "ProcStop p=0 g=0");
	tt_close(&x);
}

/* Thread 101 switches out to sleep at 2500 on CPU 0 in syscall nr (-1:
 * none), its goroutine goid written inline (0: none). */
static void go_block(struct tt *x, int64_t nr, uint64_t goid)
{
	struct gt_kev_switch e = {0};

	hdr(&e.hdr, GT_KEV_SWITCH, 2500, 0, 101);
	e.hdr.sessions = sess(101);
	e.prev_state = S_SLEEP;
	e.prev_sessions = sess(101);
	e.prev_ustack = -1;
	e.prev_kstack = -1;
	e.prev_sysnr = nr;
	e.prev_goid = goid;
	feed(x, &e, sizeof(e));
}

/* A Go thread's switch-out names its goroutine (a UserLog) after the
 * GoSysCall held for the call it blocks in: written after the log, the
 * GoSysCall would be clamped to the switch-out's time (the call's time
 * before it blocked lost). */
static void test_goid_log_after_syscall(void)
{
	struct tt x;
	struct gt_thread_snapshot s[1];

	snap(&s[0], 101, 'R', -1, 0);
	GT_REQUIRE(tt_open(&x, s, 1) == 0, "open");
	sys_enter(&x, 2400, 0, 101, 0); /* read(), entry recorded */
	go_block(&x, 0, 42);
	if (tt_finish(&x, 5000) == 0) {
		GT_CHECK(strstr(x.dump, "GoSysCall p=0 g=1\nUserLog p=0 g=1") != NULL &&
			 strstr(x.dump, "message=goroutine 42\nGoBlock") != NULL,
			 "want GoSysCall, the goroutine's log, the block:\n%s", x.dump);
		GT_CHECK(x.wst.clamped == 0, "%llu events clamped (the GoSysCall after the log?)",
			 (unsigned long long)x.wst.clamped);
	}
	tt_close(&x);
}

/* A labelled goroutine's GT_KEV_GOID record whose switch record was lost
 * (the ring full between the two reserves) names no later switch: the next
 * switch-out, of a thread in no goroutine (prev_goid 0, at another time),
 * gets no "goroutine" log (it had goroutine 42's, and report charged that
 * stop to it). */
static void test_goid_held_not_stale(void)
{
	struct tt x;
	struct gt_thread_snapshot s[1];
	struct gt_kev_goid g = {0};

	snap(&s[0], 101, 'R', -1, 0);
	GT_REQUIRE(tt_open(&x, s, 1) == 0, "open");
	hdr(&g.hdr, GT_KEV_GOID, 2400, 0, 101);
	g.hdr.sessions = sess(101);
	g.goid = 42;
	g.why = GT_GOID_SWITCH;
	feed(&x, &g, sizeof(g)); /* its switch at 2400 never comes */
	go_block(&x, -1, 0);
	if (tt_finish(&x, 5000) == 0)
		GT_CHECK(strstr(x.dump, "goroutine 42") == NULL,
			 "a lost switch's goroutine named another stop:\n%s", x.dump);
	tt_close(&x);
}

/* A thread switches out in syscall nr (-1 none) with a sleeping state and
 * is woken by an untraced task.  want_wake: the wakeup event with the P Go
 * shows it on (net and syscall wakeups go to Go's fake netpoll/syscall Ps). */
static void block_case(int64_t nr, int64_t state, const char *want_block, const char *want_wake)
{
	struct tt x;
	struct gt_thread_snapshot s[1];
	snap(&s[0], 101, 'R', -1, 0);
	GT_REQUIRE(tt_open(&x, s, 1) == 0, "open");
	if (nr >= 0)
		sys_enter(&x, 2000, 0, 101, nr);
	sw(&x, 2100, 0, 101, state, 0, 1000);  /* an untraced task runs next */
	wake(&x, 2200, 1, 1001, 101);          /* woken by an untraced task */
	sw(&x, 2300, 1, 0, 0, 0, 101);
	if (nr >= 0)
		sys_exit(&x, 101);
	char want[512];
	snprintf(want, sizeof(want), "ProcStart p=0 g=0 thread=1000000000\n"
		 "GoStart p=0 g=1 g=1 seq=1\n"
		 "Gomaxprocs p=0 g=1 procs=2\n"
		 "%s p=0 g=1\n"
		 "ProcStop p=0 g=0\n"
		 "%s g=%s\n"
		 "ProcStart p=1 g=0 thread=1000000001\n"
		 "GoStart p=1 g=1 g=1 seq=3", want_block, want_wake,
		 "0 g=1 seq=2");
	if (tt_finish(&x, 5000) == 0)
		expect_seq(&x, want);
	tt_close(&x);
}

static void test_futex_block(void) { block_case(202, S_SLEEP, "GoBlockSync", "GoUnblock p=1"); }
static void test_sleep(void) { block_case(230, S_SLEEP, "GoSleep", "GoUnblock p=1"); }
static void test_nanosleep(void) { block_case(35, S_SLEEP, "GoSleep", "GoUnblock p=1"); }
static void test_poll(void) { block_case(7, S_SLEEP, "GoBlockSelect", "GoUnblock p=1"); }
static void test_epoll(void) { block_case(232, S_SLEEP, "GoBlockSelect", "GoUnblock p=1"); }
static void test_socket_recv(void) { block_case(45, S_SLEEP, "GoBlockNet", "GoUnblock p=1000002"); }
static void test_accept(void) { block_case(288, S_SLEEP, "GoBlockNet", "GoUnblock p=1000002"); }
static void test_read_block(void) { block_case(0, S_DISK, "GoBlockRecv", "GoUnblock p=1"); }
static void test_write_block(void) { block_case(1, S_SLEEP, "GoBlockSend", "GoUnblock p=1"); }
static void test_wait4_block(void) { block_case(61, S_SLEEP, "GoBlockCond", "GoUnblock p=1"); }
static void test_block_outside_syscall(void) { block_case(-1, S_DISK, "GoBlock", "GoUnblock p=1"); }

/* The block reason is what the switch itself says: a thread first seen
 * asleep in futex (its sys_enter came before the recording) blocks in sync,
 * and a syscall that returned (no exit event is ever seen) leaves no trace
 * on the next block. */
static void test_block_reason_from_switch(void)
{
	struct tt x;
	struct gt_thread_snapshot s[1];
	snap(&s[0], 101, 'R', -1, 0);
	GT_REQUIRE(tt_open(&x, s, 1) == 0, "open");
	x.sysnr[101] = 202;                    /* futex, entered unseen */
	sw(&x, 2100, 0, 101, S_SLEEP, 0, 1000);
	wake(&x, 2200, 1, 1001, 101);
	sw(&x, 2300, 1, 0, 0, 0, 101);
	sys_enter(&x, 2400, 1, 101, 35);       /* nanosleep, returned */
	sys_exit(&x, 101);
	sw(&x, 2500, 1, 101, S_DISK, 0, 0);    /* then a page fault */
	if (tt_finish(&x, 5000) == 0)
		expect_seq(&x, "ProcStart p=0 g=0 thread=1000000000\n"
			       "GoStart p=0 g=1 g=1 seq=1\n"
			       "Gomaxprocs p=0 g=1 procs=2\n"
			       "GoBlockSync p=0 g=1\n"
			       "ProcStop p=0 g=0\n"
			       "GoUnblock p=1 g=0 g=1 seq=2\n"
			       "ProcStart p=1 g=0 thread=1000000001\n"
			       "GoStart p=1 g=1 g=1 seq=3\n"
			       "GoSysCall p=1 g=1\n"
			       "GoBlock p=1 g=1\n"
			       "ProcStop p=1 g=0");
	tt_close(&x);
}

/* Involuntary switch: GoPreempt, runnable, no wakeup needed to run again. */
static void test_preempt(void)
{
	struct tt x;
	struct gt_thread_snapshot s[2];
	snap(&s[0], 101, 'R', -1, 0);
	snap(&s[1], 102, 'R', -1, 0);  /* claims the same CPU: runnable */
	GT_REQUIRE(tt_open(&x, s, 2) == 0, "open");
	sw(&x, 2000, 0, 101, 0, GT_SWITCH_PREEMPT, 102);
	sw(&x, 2100, 0, 102, 0, 0, 101);  /* state 0 alone means preempted too */
	if (tt_finish(&x, 5000) == 0)
		expect_seq(&x, "GoStart p=0 g=1 g=1 seq=1\n"
			       "Gomaxprocs p=0 g=1 procs=2\n"
			       "GoPreempt p=0 g=1\n"
			       "GoStart p=0 g=2 g=2 seq=1\n"
			       "GoPreempt p=0 g=2\n"
			       "GoStart p=0 g=1 g=1 seq=2");
	expect_no_repairs(&x);
	tt_close(&x);
}

/* A throttled switch-out's cgroup: id 7 is "/quota/web", no other. */
static int cgroup_calls, cgroup_tid;

static int cgroup_7(uint64_t id, int tid, char *out, size_t len)
{
	cgroup_calls++;
	cgroup_tid = tid;
	if (id != 7)
		return -ENOENT;
	snprintf(out, len, "/quota/web");
	return 0;
}

/* A switch-out of thread prev, runnable, that CFS bandwidth throttled
 * (GT_SWITCH_THROTTLED) in cgroup id cg, to next. */
static void sw_throttled(struct tt *x, uint64_t ts, uint32_t prev, int64_t state, uint64_t cg,
			 uint32_t next)
{
	struct gt_kev_switch e = {0};

	hdr(&e.hdr, GT_KEV_SWITCH, ts, 0, prev);
	e.hdr.sessions = sess(prev) | sess(next);
	e.next_tid = next;
	e.next_tgid = sess(next) ? TGID : next;
	e.prev_state = state;
	e.prev_sessions = sess(prev);
	e.next_sessions = sess(next);
	e.prev_ustack = e.prev_kstack = -1;
	e.prev_sysnr = (int32_t)x->sysnr[prev];
	e.flags = GT_SWITCH_THROTTLED | (state ? 0 : GT_SWITCH_PREEMPT);
	e.prev_cgroup = cg;
	feed(x, &e, sizeof(e));
}

/* A throttled switch-out stays a GoPreempt (the thread is runnable, as
 * the kernel keeps it), preceded by a UserLog "throttled" naming the
 * cgroup by path, or by id when it cannot be found; the flag on a block
 * (never set there) writes nothing. */
static void test_throttled(void)
{
	struct tt x;
	struct gt_thread_snapshot s[2];

	snap(&s[0], 101, 'R', -1, 0);
	snap(&s[1], 102, 'R', -1, 0);
	tt_cgroup_path = cgroup_7;
	GT_REQUIRE(tt_open(&x, s, 2) == 0, "open");
	tt_cgroup_path = NULL;
	sw_throttled(&x, 2000, 101, 0, 7, 0);    /* the idle task next */
	sw(&x, 2100, 0, 0, 0, 0, 101);
	sw_throttled(&x, 2200, 101, 0, 8, 102);
	sw(&x, 2300, 0, 102, 0, 0, 101);
	sw_throttled(&x, 2400, 101, S_SLEEP, 7, 0);
	if (tt_finish(&x, 5000) == 0) {
		GT_CHECK(strstr(x.dump, "message=cgroup /quota/web\nGoPreempt p=0 g=1\n") &&
			 strstr(x.dump, "message=cgroup id 8\nGoPreempt p=0 g=1\n"),
			 "want each GoPreempt after its cgroup's log:\n%s", x.dump);
		GT_CHECK(x.st.throttled == 2, "%llu throttled (want 2: not the block)",
			 (unsigned long long)x.st.throttled);
	}
	expect_no_repairs(&x);
	tt_close(&x);
}

/* The cgroup lookup (a few reads and stat()s on the event loop) runs once
 * per id, with the thread switched out (the cgroup is its own or an
 * ancestor), a failed one too: ids 7, 8 (not found), 7, 8, 7 ask twice. */
static void test_throttled_lookup_once(void)
{
	struct tt x;
	struct gt_thread_snapshot s[1];

	snap(&s[0], 101, 'R', -1, 0);
	tt_cgroup_path = cgroup_7;
	cgroup_calls = cgroup_tid = 0;
	GT_REQUIRE(tt_open(&x, s, 1) == 0, "open");
	tt_cgroup_path = NULL;
	for (int i = 0; i < 5; i++) {
		sw_throttled(&x, 2000 + 200 * (uint64_t)i, 101, 0, i % 2 ? 8 : 7, 0);
		sw(&x, 2100 + 200 * (uint64_t)i, 0, 0, 0, 0, 101);
	}
	if (tt_finish(&x, 5000) == 0) {
		GT_CHECK(cgroup_calls == 2 && cgroup_tid == 101,
			 "%d lookups, last for tid %d (want 2, 101)", cgroup_calls, cgroup_tid);
		GT_CHECK(x.st.throttled == 5, "%llu throttled (want 5)",
			 (unsigned long long)x.st.throttled);
	}
	tt_close(&x);
}

/* A C thread throttled in a syscall: the GoSysCall held for the switch
 * goes before the "throttled" log, at its own time (after it, the writer
 * would clamp it to the switch-out's), as before a goroutine's log. */
static void test_throttled_after_syscall(void)
{
	struct tt x;
	struct gt_thread_snapshot s[1];

	snap(&s[0], 101, 'R', -1, 0);
	GT_REQUIRE(tt_open(&x, s, 1) == 0, "open");
	sys_enter(&x, 2400, 0, 101, 0); /* read(), entry recorded */
	sw_throttled(&x, 2500, 101, 0, 7, 0);
	if (tt_finish(&x, 5000) == 0) {
		GT_CHECK(strstr(x.dump, "GoSysCall p=0 g=1\nUserLog p=0 g=1") != NULL &&
			 strstr(x.dump, "message=cgroup id 7\nGoPreempt") != NULL,
			 "want GoSysCall, the throttled log, the preemption:\n%s", x.dump);
		GT_CHECK(x.wst.clamped == 0, "%llu events clamped (the GoSysCall after the log?)",
			 (unsigned long long)x.wst.clamped);
	}
	tt_close(&x);
}

/* A thread blocked in a generic syscall: its GoSysCall right before the
 * block, not again after a preemption inside it (entries are recorded:
 * the same call, which report keeps open), and no ProcStop when another
 * of ours runs next. */
static void test_syscall_block_shape(void)
{
	struct tt x;
	struct gt_thread_snapshot s[2];
	snap(&s[0], 101, 'R', -1, 0);
	snap(&s[1], 102, 'R', -1, 1);
	GT_REQUIRE(tt_open(&x, s, 2) == 0, "open");
	sys_enter(&x, 2000, 0, 101, 0);
	sw(&x, 2100, 0, 101, 0, GT_SWITCH_PREEMPT, 1000);  /* preempted in read() */
	sw(&x, 2200, 0, 1000, 0, 0, 101);
	sw(&x, 2300, 0, 101, S_DISK, 0, 102);               /* blocks; 102 moves here */
	if (tt_finish(&x, 5000) == 0)
		expect_seq(&x, "GoSysCall p=0 g=1\n"
			       "GoPreempt p=0 g=1\n"
			       "ProcStop p=0 g=0\n"
			       "ProcStart p=0 g=0 thread=1000000000\n"
			       "GoStart p=0 g=1 g=1 seq=2\n"
			       "GoBlockRecv p=0 g=1\n"
			       "GoStart p=0 g=2 g=2 seq=2");
	GT_CHECK(count_lines(&x, "GoSysCall p=0 g=1") == 1,
		 "the call preempted then blocked is written as %d GoSysCalls, want 1",
		 count_lines(&x, "GoSysCall p=0 g=1"));
	tt_close(&x);
}

static void test_yield(void)
{
	struct tt x;
	struct gt_thread_snapshot s[1];
	snap(&s[0], 101, 'R', -1, 1);
	GT_REQUIRE(tt_open(&x, s, 1) == 0, "open");
	sys_enter(&x, 2000, 1, 101, 24);
	sw(&x, 2100, 1, 101, 0, 0, 1000);
	sw(&x, 2200, 1, 1000, 0, 0, 101);
	sys_exit(&x, 101);
	if (tt_finish(&x, 5000) == 0)
		expect_seq(&x, "GoSysCall p=1 g=1\n"
			       "GoSched p=1 g=1\n"
			       "ProcStop p=1 g=0\n"
			       "ProcStart p=1 g=0 thread=1000000001\n"
			       "GoStart p=1 g=1 g=1 seq=2");
	tt_close(&x);
}

/* clone -> GoCreate by the parent (runnable, wakeup_new is no unblock),
 * a rename while running writes nothing (same goroutine, named "worker"),
 * exit -> GoEnd, the dead task's last switch stops the P. */
static void test_clone_and_exit(void)
{
	struct tt x;
	struct gt_thread_snapshot s[1];
	snap(&s[0], 101, 'R', -1, 0);
	GT_REQUIRE(tt_open(&x, s, 1) == 0, "open");
	fork_ev(&x, 2000, 0, 101, 102, "t101");
	struct gt_kev_wakeup wn = {0};
	hdr(&wn.hdr, GT_KEV_WAKEUP, 2050, 0, 101);
	wn.target_tid = 102;
	wn.target_tgid = TGID;
	wn.flags = GT_WAKEUP_NEW;
	wn.waker_sessions = 1;
	wn.waker_ustack = -1;
	feed(&x, &wn, sizeof(wn));
	sw(&x, 2100, 1, 0, 0, 0, 102);
	rename_ev(&x, 2150, 1, 102, "worker");
	exit_ev(&x, 2200, 1, 102);
	sw(&x, 2300, 1, 102, S_DEAD, 0, 0);
	if (tt_finish(&x, 5000) == 0) {
		expect_seq(&x, "GoCreate p=0 g=1 g=2\n"
			       "ProcStart p=1 g=0 thread=1000000001\n"
			       "GoStart p=1 g=2 g=2 seq=1\n"
			       "GoEnd p=1 g=2\n"
			       "ProcStop p=1 g=0");
		GT_CHECK(count_lines(&x, "GoUnblock") == 0, "wakeup_new made an unblock");
		GT_CHECK(count_lines(&x, "GoCreate") == 2, "GoCreate count:\n%s", x.dump);
		struct names nm;
		GT_CHECK(names_of(&x, &nm) == 2, "%d goroutines", nm.n);
		GT_CHECK(!strcmp(nm.name[1], "worker") && nm.tid[1] == 102, "g2 %s %lld",
			 nm.name[1], (long long)nm.tid[1]);
	}
	expect_no_repairs(&x);
	tt_close(&x);
}

/* Between its exit event and its last switch an exiting thread may be
 * preempted, woken and switched in again: still the one ended goroutine,
 * no new one for its tid (seen with `record -- forkexec`). */
static void test_exit_then_preempted(void)
{
	struct tt x;
	struct gt_thread_snapshot s[2];
	snap(&s[0], 101, 'R', -1, 0);
	snap(&s[1], 102, 'R', -1, 1);
	GT_REQUIRE(tt_open(&x, s, 2) == 0, "open");
	exit_ev(&x, 2000, 1, 102);
	sw(&x, 2100, 1, 102, 0, GT_SWITCH_PREEMPT, 1000);  /* preempted in do_exit */
	sw(&x, 2200, 1, 1000, 0, 0, 102);                  /* back on CPU */
	sw(&x, 2300, 1, 102, S_DISK, 0, 0);                /* blocks in exit */
	wake(&x, 2400, 0, 101, 102);
	sw(&x, 2500, 1, 0, 0, 0, 102);
	sw(&x, 2600, 1, 102, S_DEAD, 0, 0);                /* the last switch */
	if (tt_finish(&x, 5000) == 0) {
		GT_CHECK(count_lines(&x, "GoCreate") == 2, "GoCreate count:\n%s", x.dump);
		GT_CHECK(count_lines(&x, "GoEnd") == 1, "GoEnd count:\n%s", x.dump);
		GT_CHECK(count_lines(&x, "GoStart p=1 g=2") == 1, "g2 restarted:\n%s", x.dump);
		struct names nm;
		GT_CHECK(names_of(&x, &nm) == 2, "%d goroutines", nm.n);
	}
	expect_no_repairs(&x);
	tt_close(&x);
}

/* A process that left the session (GT_KEV_LEAVE: it gained privileges):
 * every goroutine of it ends there, the running one and the sleeping one
 * (woken by G 0 to end), with no repair; nothing of it is written after. */
static void test_leave_ends_process(void)
{
	struct tt x;
	struct gt_thread_snapshot s[2];
	snap(&s[0], 101, 'R', -1, 0);
	snap(&s[1], 102, 'S', 35, 1);
	GT_REQUIRE(tt_open(&x, s, 2) == 0, "open"); /* 101 runs on CPU 0 */
	struct gt_kev_leave e = {0};
	hdr(&e.hdr, GT_KEV_LEAVE, 2100, 0, 101);
	e.why = GT_LEAVE_UNDUMPABLE;
	feed(&x, &e, sizeof(e));
	if (tt_finish(&x, 5000) == 0) {
		GT_CHECK(count_lines(&x, "GoEnd") == 2, "GoEnd count:\n%s", x.dump);
		GT_CHECK(count_lines(&x, "GoUnblock p=0 g=0") == 1, "the sleeper not woken by G 0:\n%s",
			 x.dump);
	}
	expect_no_repairs(&x);
	tt_close(&x);
}

/* A switch whose prev and next masks are given (a thread BPF no longer
 * marks as the session's: 0). */
static void sw_masks(struct tt *x, uint64_t ts, int cpu, uint32_t prev, uint32_t prev_sessions,
		     int64_t state, int64_t sysnr, uint32_t next, uint32_t next_sessions)
{
	struct gt_kev_switch e = {0};
	hdr(&e.hdr, GT_KEV_SWITCH, ts, cpu, prev);
	e.hdr.sessions = prev_sessions | next_sessions;
	e.next_tid = next;
	e.next_tgid = next >= 100 && next < 1000 ? TGID : next;
	e.prev_state = state;
	e.prev_sessions = prev_sessions;
	e.next_sessions = next_sessions;
	e.prev_ustack = 5;
	e.prev_kstack = -1;
	e.prev_sysnr = (int32_t)sysnr;
	snprintf(e.prev_comm, sizeof(e.prev_comm), "root%u", prev);
	snprintf(e.next_comm, sizeof(e.next_comm), "root%u", next);
	feed(x, &e, sizeof(e));
}

/* A process of the snapshot that left the session unseen (its
 * GT_KEV_LEAVE stamped before the trace began, or it left the cgroup):
 * BPF no longer marks it, so the other side of a switch or wakeup of one
 * of ours is all that comes of it.  It ends at the first such record and
 * never runs, blocks or wakes anyone in the trace: its sleep (prev_sysnr
 * 35) is not written, and its wakeup of our 103 is G 0's, without its
 * stack. */
static void test_unmarked_thread_is_not_ours(void)
{
	struct tt x;
	struct gt_thread_snapshot s[3];
	snap(&s[0], 101, 'R', -1, 0);
	snap(&s[1], 102, 'S', 35, 1);
	snap(&s[2], 1003, 'S', 35, 1); /* another process, seeded, then left */
	s[2].tgid = 1003;
	GT_REQUIRE(tt_open(&x, s, 3) == 0, "open");
	sw_masks(&x, 2000, 1, 0, 0, 0, -1, 1003, 0);      /* 1003 runs: not ours now */
	struct gt_kev_wakeup w = {0};
	hdr(&w.hdr, GT_KEV_WAKEUP, 2100, 1, 1003);       /* 1003 wakes our 102 */
	w.hdr.sessions = 1;
	w.target_tid = 102;
	w.target_tgid = TGID;
	w.target_cpu = 1;
	w.waker_sessions = 0;
	w.waker_ustack = 9;
	feed(&x, &w, sizeof(w));
	sw_masks(&x, 2200, 1, 1003, 0, S_SLEEP, 35, 102, 1); /* 1003 sleeps, 102 runs */
	if (tt_finish(&x, 5000) == 0) {
		GT_CHECK(count_lines(&x, "GoEnd p=0 g=3") + count_lines(&x, "GoEnd p=1 g=3") +
			 count_lines(&x, "GoEnd p=2 g=3") == 1, "1003 did not end:\n%s", x.dump);
		GT_CHECK(count_lines(&x, "GoSleep") == 0, "1003's sleep is written:\n%s", x.dump);
		GT_CHECK(count_lines(&x, "GoUnblock p=1 g=0 g=2") == 1,
			 "102 not woken by G 0:\n%s", x.dump);
		GT_CHECK(count_lines(&x, "GoStart p=1 g=2") == 1, "102 did not run:\n%s", x.dump);
		GT_CHECK(count_lines(&x, "GoEnd") == 1, "only 1003 ends:\n%s", x.dump);
	}
	tt_close(&x);
}

/* Snapshot: running, runnable, sleeping, in a blocking syscall, in futex,
 * zombie (skipped), then the one Gomaxprocs. */
static void test_snapshot_states(void)
{
	struct tt x;
	struct gt_thread_snapshot s[6];
	snap(&s[0], 101, 'R', -1, 1);   /* running on CPU 1 */
	snap(&s[1], 102, 'R', -1, 1);   /* CPU 1 taken: runnable */
	snap(&s[2], 103, 'S', -1, 0);   /* sleeping outside a syscall */
	snap(&s[3], 104, 'D', 0, 0);    /* in read(): GoWaiting too */
	snap(&s[4], 105, 'S', 202, 0);  /* in futex: GoWaiting */
	snap(&s[5], 106, 'Z', -1, 0);   /* zombie: no goroutine */
	GT_REQUIRE(tt_open(&x, s, 6) == 0, "open");
	wake(&x, 2000, 0, 0, 104);      /* read done: GoUnblock by G 0 */
	sw(&x, 2100, 0, 0, 0, 0, 104);
	if (tt_finish(&x, 5000) == 0) {
		expect_seq(&x, "GoCreate p=0 g=0 g=1\n"
			       "GoCreate p=0 g=0 g=2\n"
			       "GoCreate p=0 g=0 g=3\n"
			       "GoWaiting p=0 g=3 g=3\n"
			       "GoCreate p=0 g=0 g=4\n"
			       "GoWaiting p=0 g=4 g=4\n"
			       "GoCreate p=0 g=0 g=5\n"
			       "GoWaiting p=0 g=5 g=5\n"
			       "Gomaxprocs p=0 g=0 procs=2\n"
			       "GoUnblock p=0 g=0 g=4 seq=2\n"
			       "ProcStart p=0 g=0 thread=1000000000\n"
			       "GoStart p=0 g=4 g=4 seq=3");
		expect_seq(&x, "ProcStart p=1 g=0 thread=1000000001\n"
			       "GoStart p=1 g=1 g=1 seq=1\n"
			       "GoPreempt p=1 g=1");
		GT_CHECK(count_lines(&x, "GoCreate") == 5, "zombie got a goroutine");
		GT_CHECK(count_lines(&x, "Gomaxprocs") == 1, "Gomaxprocs count");
	}
	tt_close(&x);
}

/* A timer fires on CPU 0 while our 101 spins there and wakes our 102: the
 * wakeup is G 0's, on the spare P 2 (P 0 runs 101, which woke no one and
 * keeps running), with the one frame "[timer interrupt]". */
static void test_irq_wakeup_busy_cpu(void)
{
	struct tt x;
	struct gt_thread_snapshot s[2];
	snap(&s[0], 101, 'R', -1, 0);
	snap(&s[1], 102, 'S', 230, 1);
	GT_REQUIRE(tt_open(&x, s, 2) == 0, "open");
	irq_wake(&x, 2000, 0, 101, 102, GT_WAKEUP_HARDIRQ | GT_WAKEUP_TIMER);
	sw(&x, 2100, 1, 0, 0, 0, 102);
	sw(&x, 2200, 0, 101, 0, GT_SWITCH_PREEMPT, 0);
	if (tt_finish(&x, 5000) == 0) {
		expect_seq(&x, "GoStart p=0 g=1 g=1 seq=1\n"
			       "GoUnblock p=2 g=0 g=2 seq=2\n"
			       "ProcStart p=1 g=0 thread=1000000001\n"
			       "GoStart p=1 g=2 g=2 seq=3\n"
			       "GoPreempt p=0 g=1");
		GT_CHECK(count_lines(&x, "GoPreempt p=0 g=1") == 1, "101 was descheduled:\n%s", x.dump);
		GT_CHECK(count_lines(&x, "GoUnblock p=0") == 0, "credited to 101:\n%s", x.dump);
		char f[128];
		unblock_frame(&x, 102, f, sizeof(f)); /* goroutine id = tid */
		GT_CHECK(!strcmp(f, "[timer interrupt]"), "unblock's frame: '%s'", f);
	}
	expect_no_repairs(&x);
	tt_close(&x);
}

/* Interrupts on an idle CPU (tid 0 current) or one running an untraced
 * task: G 0 on that CPU's own P, each kind with its own frame. */
static void test_irq_wakeup_kinds(void)
{
	struct tt x;
	struct gt_thread_snapshot s[3];
	snap(&s[0], 101, 'S', 0, 0);
	snap(&s[1], 102, 'S', 0, 0);
	snap(&s[2], 103, 'S', 0, 0);
	GT_REQUIRE(tt_open(&x, s, 3) == 0, "open");
	irq_wake(&x, 2000, 1, 0, 101, GT_WAKEUP_SOFTIRQ);
	irq_wake(&x, 2100, 1, 1000, 102, GT_WAKEUP_HARDIRQ);
	irq_wake(&x, 2200, 0, 0, 103, GT_WAKEUP_NMI);
	if (tt_finish(&x, 5000) == 0) {
		expect_seq(&x, "GoUnblock p=1 g=0 g=1 seq=2\n"
			       "GoUnblock p=1 g=0 g=2 seq=2\n"
			       "GoUnblock p=0 g=0 g=3 seq=2");
		const char *want[3] = {"[softirq]", "[hardirq]", "[nmi]"};
		for (int i = 0; i < 3; i++) {
			char f[128];
			unblock_frame(&x, (uint64_t)i + 101, f, sizeof(f)); /* id = tid */
			GT_CHECK(!strcmp(f, want[i]), "g%d's unblock frame '%s', want %s", i + 1,
				 f, want[i]);
		}
	}
	expect_no_repairs(&x);
	tt_close(&x);
}

/* A wakeup racing a block: the kernel wakes 101 while it is still
 * switching out (off its runqueue, on its CPU), so the wakeup is traced
 * before the switch-out.  It ends that block: by 102, the waker, still
 * running, and by G 0 with the timer's frame for a timer; never a lost
 * wakeup found at the next switch-in. */
static void test_wakeup_racing_block(void)
{
	struct tt x;
	struct gt_thread_snapshot s[2];
	snap(&s[0], 101, 'R', -1, 0);
	snap(&s[1], 102, 'R', -1, 1);
	GT_REQUIRE(tt_open(&x, s, 2) == 0, "open");
	sys_enter(&x, 1900, 0, 101, 0);
	struct gt_kev_wakeup e = {0};
	hdr(&e.hdr, GT_KEV_WAKEUP, 2000, 1, 102);
	e.target_tid = 101;
	e.target_tgid = TGID;
	e.flags = GT_WAKEUP_SWITCHING;
	e.waker_sessions = 1;
	e.waker_ustack = -1;
	feed(&x, &e, sizeof(e));
	sw(&x, 2100, 0, 101, S_SLEEP, 0, 0);     /* the block it raced */
	sw(&x, 2200, 0, 0, 0, 0, 101);
	irq_wake(&x, 2300, 1, 102, 101, GT_WAKEUP_HARDIRQ | GT_WAKEUP_TIMER | GT_WAKEUP_SWITCHING);
	x.sysnr[101] = 35;
	sw(&x, 2400, 0, 101, S_SLEEP, 0, 0);     /* nanosleep, its timer raced it */
	sw(&x, 2500, 0, 0, 0, 0, 101);
	if (tt_finish(&x, 5000) == 0) {
		expect_seq(&x, "GoBlockRecv p=0 g=1\n"
			       "GoUnblock p=1 g=2 g=1 seq=2\n"
			       "GoStart p=0 g=1 g=1 seq=3\n"
			       "GoSleep p=0 g=1\n"
			       "GoUnblock p=0 g=0 g=1 seq=4\n"
			       "GoStart p=0 g=1 g=1 seq=5");
		GT_CHECK(count_lines(&x, "GoUnblock") == 2, "unblocks:\n%s", x.dump);
	}
	expect_no_repairs(&x);
	tt_close(&x);
}

/* A waking of 101 by 102 on CPU 1 while 101 is still queued on its CPU,
 * about to block (GT_WAKEUP_RACING). */
static void racing_wake(struct tt *x, uint64_t ts, uint32_t flags)
{
	struct gt_kev_wakeup e = {0};
	hdr(&e.hdr, GT_KEV_WAKEUP, ts, 1, 102);
	e.target_tid = 101;
	e.target_tgid = TGID;
	e.flags = flags;
	e.waker_sessions = 1;
	e.waker_ustack = -1;
	feed(x, &e, sizeof(e));
}

/* A waking that races the block while its target is still queued: the
 * kernel decides later, under the runqueue lock, and the target's next
 * switch-out says which (bpf/racing.bpf.h).  Lost race for the waker
 * (101 dequeued first and switched out, GT_SWITCH_RACED, then the wakeup
 * completed): the waking ends that block, by 102.  Won (the wakeup
 * completed while 101 still ran, so it never slept; its next switch-out,
 * a block of its own, is not flagged): nothing is written, and that
 * block is ended by its own wakeup, not by this one.  A raced switch
 * seen before its waking (the clocks read in that order) is a plain
 * block, which the waking then ends. */
static void test_wakeup_racing_queued(void)
{
	struct tt x;
	struct gt_thread_snapshot s[2];
	snap(&s[0], 101, 'R', -1, 0);
	snap(&s[1], 102, 'R', -1, 1);
	GT_REQUIRE(tt_open(&x, s, 2) == 0, "open");
	x.sysnr[101] = 202; /* futex */
	racing_wake(&x, 2000, GT_WAKEUP_RACING);
	sw(&x, 2100, 0, 101, S_SLEEP, GT_SWITCH_RACED, 0); /* lost: 101 dequeued first */
	sw(&x, 2200, 0, 0, 0, 0, 101);
	racing_wake(&x, 3000, GT_WAKEUP_RACING); /* won: 101 runs on */
	sw(&x, 3100, 0, 101, S_SLEEP, 0, 0);     /* a later block of its own */
	wake(&x, 3300, 1, 102, 101);
	sw(&x, 3400, 0, 0, 0, 0, 101);
	sw(&x, 4000, 0, 101, S_SLEEP, GT_SWITCH_RACED, 0); /* before its waking */
	racing_wake(&x, 4050, GT_WAKEUP_RACING);
	sw(&x, 4100, 0, 0, 0, 0, 101);
	if (tt_finish(&x, 5000) == 0) {
		expect_seq(&x, "GoBlockSync p=0 g=1\n"
			       "GoUnblock p=1 g=2 g=1 seq=2\n"
			       "GoStart p=0 g=1 g=1 seq=3\n"
			       "GoBlockSync p=0 g=1\n"
			       "GoUnblock p=1 g=2 g=1 seq=4\n"
			       "GoStart p=0 g=1 g=1 seq=5\n"
			       "GoBlockSync p=0 g=1\n"
			       "GoUnblock p=1 g=2 g=1 seq=6\n"
			       "GoStart p=0 g=1 g=1 seq=7");
		GT_CHECK(count_lines(&x, "GoUnblock") == 3, "unblocks:\n%s", x.dump);
	}
	expect_no_repairs(&x);
	GT_CHECK(x.st.wakeups_raced == 1, "raced %llu", (unsigned long long)x.st.wakeups_raced);
	tt_close(&x);
}

/* The root frame of the stack of goroutine g's first transition that has
 * one, as Go 1.23 reads the file (`go tool trace -d=1`): how its summary
 * names a goroutine whose state came from a GoStatus.  out gets "" if none. */
static void go123_root_frame(const char *path, int g, char *out, size_t n)
{
	char cmd[512], line[4096], want[64], root[256] = "", last[256] = "";
	int mine = 0, in_stack = 0;

	out[0] = 0;
	snprintf(cmd, sizeof(cmd), "/usr/lib/go-1.23/bin/go tool trace -d=1 '%s' 2>&1", path);
	snprintf(want, sizeof(want), "Resource=Goroutine(%d) ", g);
	FILE *p = popen(cmd, "r");
	if (!p)
		return;
	while (!last[0] && fgets(line, sizeof(line), p)) {
		if (line[0] == '\t') {
			/* frames: "\tfunc @ 0xpc" then "\t\tfile:line"; the last
			 * one listed is the root */
			if (in_stack && line[1] != '\t') {
				snprintf(root, sizeof(root), "%.200s", line + 1);
				root[strcspn(root, " ")] = 0;
			}
			continue;
		}
		if (in_stack && root[0])
			snprintf(last, sizeof(last), "%s", root);
		if (strncmp(line, "TransitionStack=", 16) == 0) {
			in_stack = mine;
		} else {
			in_stack = 0;
			if (strncmp(line, "Stack=", 6) != 0)
				mine = strstr(line, want) != NULL;
		}
	}
	while (fgets(line, sizeof(line), p))
		;
	pclose(p);
	snprintf(out, n, "%s", last);
}

/* Go 1.22+ drops the GoCreate of a thread that exists at the start and
 * names its goroutine after the root frame of its next stack: that stack
 * ends in the thread's identity frame, for a thread running at the start,
 * one in a syscall at the start, and one first seen woken (GoWaiting). */
static void test_go123_names(void)
{
	struct tt x;
	struct gt_thread_snapshot s[2];
	char root[256];
	snap(&s[0], 101, 'R', -1, 0);   /* running on CPU 0 */
	snap(&s[1], 102, 'D', 0, 1);    /* in read() */
	GT_REQUIRE(tt_open(&x, s, 2) == 0, "open");
	sw(&x, 2000, 0, 101, 0, 0, 0);  /* preempted */
	wake(&x, 2100, 1, 0, 102);      /* read() returns */
	sw(&x, 2200, 1, 0, 0, 0, 102);
	sw(&x, 2300, 1, 102, 0, 0, 0);
	wake(&x, 2400, 0, 0, 103);      /* first seen woken: GoWaiting */
	sw(&x, 2500, 0, 0, 0, 0, 103);
	sw(&x, 2600, 0, 103, 0, 0, 0);
	if (tt_finish(&x, 5000) == 0) {
		go123_root_frame(x.path, 101, root, sizeof(root));
		GT_CHECK(strcmp(root, "t101") == 0, "Go 1.23 names g1 \"%s\", want t101", root);
		go123_root_frame(x.path, 102, root, sizeof(root));
		GT_CHECK(strcmp(root, "t102") == 0, "Go 1.23 names g2 \"%s\", want t102", root);
		go123_root_frame(x.path, 103, root, sizeof(root));
		GT_CHECK(strcmp(root, "t103") == 0, "Go 1.23 names g3 \"%s\", want t103", root);
	}
	tt_close(&x);
}

/* The first line of Go 1.23's `-d=1` whose M= is not GT_TR_M_BASE + its
 * P (M=-1, no thread, aside): ProcStart's thread is one M per CPU, never a
 * TID (docs/mapping.md).  out gets "" if every line agrees. */
static void go123_bad_m(const char *path, char *out, size_t n)
{
	char cmd[512], line[4096];
	long long m, p;

	out[0] = 0;
	snprintf(cmd, sizeof(cmd), "/usr/lib/go-1.23/bin/go tool trace -d=1 '%s' 2>&1", path);
	FILE *f = popen(cmd, "r");
	if (!f) {
		snprintf(out, n, "cannot run go 1.23");
		return;
	}
	while (fgets(line, sizeof(line), f))
		if (!out[0] && sscanf(line, "M=%lld P=%lld", &m, &p) == 2 && m != -1 &&
		    m != 1000000000ll + p)
			snprintf(out, n, "%.300s", line);
	pclose(f);
}

/* Threads that never run during the recording (asleep in a futex, asleep
 * outside any known syscall, runnable on a CPU another one holds): Go
 * 1.22+ gives them their state by a GoStatus and names a goroutine only
 * from a later stack of its own.  Each is started for 0 ns on the spare P
 * at the stop and stops there with its identity stack, as it was (the
 * futex sleeper in a GoBlockSync): Go 1.23 names every one. */
static void test_go123_names_idle(void)
{
	struct tt x;
	struct gt_thread_snapshot s[4];
	char root[256], bad[512];
	snap(&s[0], 101, 'S', SYS_futex, 0);
	snap(&s[1], 102, 'S', -1, 1);
	snap(&s[2], 103, 'R', -1, 0);   /* runs on CPU 0 */
	snap(&s[3], 104, 'R', -1, 0);   /* runnable: CPU 0 is taken */
	GT_REQUIRE(tt_open(&x, s, 4) == 0, "open");
	sw(&x, 2000, 0, 103, 0, 0, 0);  /* preempted */
	if (tt_finish(&x, 5000) == 0) {
		for (uint32_t tid = 101; tid <= 104; tid++) {
			char want[16];

			snprintf(want, sizeof(want), "t%u", tid);
			go123_root_frame(x.path, (int)tid, root, sizeof(root));
			GT_CHECK(strcmp(root, want) == 0, "Go 1.23 names %u \"%s\", want %s", tid,
				 root, want);
		}
		GT_CHECK(count_lines(&x, "GoBlockSync p=2 g=1") == 1 &&
			 count_lines(&x, "GoBlock p=2 g=2") == 1 &&
			 count_lines(&x, "GoPreempt p=2 g=4") == 1,
			 "want each idle thread started and stopped on the spare P:\n%s", x.dump);
		go123_bad_m(x.path, bad, sizeof(bad));
		GT_CHECK(!bad[0], "Go 1.23's M is not 10^9 + P: %s", bad);
	}
	tt_close(&x);
}

/* Go 1.23's M (its thread view's rows, -d=1's M=) is one per P, never the
 * TID of the thread that happened to start the P: threads of several
 * processes run on one CPU. */
static void test_go123_m_per_p(void)
{
	struct tt x;
	struct gt_thread_snapshot s[2];
	char bad[512];
	snap(&s[0], 101, 'R', -1, 0);
	snap(&s[1], 102, 'S', -1, 1);
	GT_REQUIRE(tt_open(&x, s, 2) == 0, "open");
	sw(&x, 2000, 0, 101, 0, 0, 0);
	wake(&x, 2100, 0, 0, 102);
	sw(&x, 2200, 1, 0, 0, 0, 102);
	sw(&x, 2300, 1, 102, 1, 0, 101);
	if (tt_finish(&x, 5000) == 0) {
		GT_CHECK(count_lines(&x, "ProcStart p=1 g=0 thread=1000000001") == 1,
			 "want P 1's M 1000000001:\n%s", x.dump);
		go123_bad_m(x.path, bad, sizeof(bad));
		GT_CHECK(!bad[0], "Go 1.23's M is not 10^9 + P: %s", bad);
	}
	tt_close(&x);
}

/* --syscalls=blocking: a snapshot thread's first stack-bearing event is a
 * block in epoll_wait, after the entry record written there (whose
 * GoSysCall is dropped: the block says what it is).  Go 1.23 must still
 * name the goroutine by its thread, from the block's stack. */
static void test_go123_names_blocking(void)
{
	struct tt x;
	struct gt_thread_snapshot s[1];
	struct gt_utop top = {.nwords = 0};
	char root[256];
	snap(&s[0], 101, 'R', -1, 0);
	GT_REQUIRE(tt_open(&x, s, 1) == 0, "open");
	sys_record(&x, 2000, 0, 101, 232, 1, &top, GT_SYS_ENTER_AT_BLOCK);
	sw_stack(&x, 2000, 0, 101, S_SLEEP, 0, 0, 1);
	wake(&x, 2100, 1, 0, 101);
	sw(&x, 2200, 1, 0, 0, 0, 101);
	if (tt_finish(&x, 5000) == 0) {
		GT_CHECK(count_lines(&x, "GoSysCall") == 0 && count_lines(&x, "GoBlockSelect") == 1,
			 "want the epoll wait alone:\n%s", x.dump);
		go123_root_frame(x.path, 101, root, sizeof(root));
		GT_CHECK(strcmp(root, "t101") == 0, "Go 1.23 names g1 \"%s\", want t101", root);
	}
	tt_close(&x);
}

/* A wakeup by an untraced task on a CPU where the model still runs one of
 * ours: that thread was switched out unseen (repair), G 0 unblocks. */
static void test_wakeup_untraced_busy_cpu(void)
{
	struct tt x;
	struct gt_thread_snapshot s[2];
	snap(&s[0], 101, 'R', -1, 0);
	snap(&s[1], 102, 'S', 202, 1);
	GT_REQUIRE(tt_open(&x, s, 2) == 0, "open");
	wake(&x, 2000, 0, 1000, 102);
	if (tt_finish(&x, 5000) == 0)
		expect_seq(&x, "GoPreempt p=0 g=1\n"
			       "GoUnblock p=0 g=0 g=2 seq=2");
	GT_CHECK(x.st.repair[GT_REPAIR_LOST_SWITCH_OUT] == 1, "lost switch-out not counted");
	tt_close(&x);
}

/* Every CPU runs one of ours and an untraced waker on a CPU >= ncpus
 * wakes a thread: G 0 on the spare P (ncpus) writes the unblock. */
static void test_wakeup_all_cpus_busy(void)
{
	struct tt x;
	struct gt_thread_snapshot s[3];
	snap(&s[0], 101, 'R', -1, 0);
	snap(&s[1], 102, 'R', -1, 1);
	snap(&s[2], 103, 'S', 7, 0);
	GT_REQUIRE(tt_open(&x, s, 3) == 0, "open");
	wake(&x, 2000, 5, 1000, 103);
	if (tt_finish(&x, 5000) == 0)
		expect_seq(&x, "GoUnblock p=2 g=0 g=3 seq=2");
	GT_CHECK(x.st.repair[GT_REPAIR_BAD_CPU] == 1, "bad cpu not counted");
	tt_close(&x);
}

/* Lost events: a thread switched in while the model has it waiting, a
 * thread running on two CPUs, a switch-out of a thread never seen, an
 * exit without switch-out, a reused tid, a duplicated switch. */
static void test_repairs(void)
{
	struct tt x;
	struct gt_thread_snapshot s[2];
	snap(&s[0], 101, 'S', 202, 0);
	snap(&s[1], 102, 'R', -1, 1);
	GT_REQUIRE(tt_open(&x, s, 2) == 0, "open");
	sw(&x, 2000, 0, 0, 0, 0, 101);            /* wakeup of 101 lost */
	sw(&x, 2100, 1, 102, 0, 0, 101);          /* 101 on CPU 1: migrated */
	sw(&x, 2100, 1, 102, 0, 0, 101);          /* duplicate */
	sw(&x, 2200, 0, 150, S_SLEEP, 0, 0);      /* 150 never seen */
	exit_ev(&x, 2300, 1, 101);
	sw(&x, 2400, 1, 0, 0, 0, 102);            /* 101's last switch lost */
	fork_ev(&x, 2500, 1, 102, 101, "t101");   /* tid 101 reused */
	sw(&x, 2600, 0, 0, 0, 0, 101);
	sw(&x, 2700, 0, 101, S_DEAD, 0, 0);       /* dies, exit event lost */
	if (tt_finish(&x, 5000) == 0) {
		GT_CHECK(x.st.repair[GT_REPAIR_LOST_WAKEUP] >= 1, "lost wakeup");
		GT_CHECK(x.st.repair[GT_REPAIR_MIGRATED] >= 1, "migrated");
		GT_CHECK(x.st.repair[GT_REPAIR_MIDFLIGHT] >= 1, "midflight");
		GT_CHECK(x.st.repair[GT_REPAIR_LOST_EXIT] == 1, "lost exit");
		GT_CHECK(count_lines(&x, "GoEnd") == 2, "GoEnd count:\n%s", x.dump);
	}
	tt_close(&x);
}

/* exec by a non-leader thread: it takes the leader's tid and the new name,
 * and stays the same goroutine (the leader's goroutine ended). */
static void test_exec_renames(void)
{
	struct tt x;
	struct gt_thread_snapshot s[2];
	snap(&s[0], 101, 'R', -1, 0);
	snap(&s[1], 100, 'S', -1, 1);
	GT_REQUIRE(tt_open(&x, s, 2) == 0, "open");
	exit_ev(&x, 1900, 1, 100);  /* the leader dies in de_thread (running now) */
	struct gt_kev_exec e = {0};
	hdr(&e.hdr, GT_KEV_EXEC, 2000, 0, 100);
	e.old_tid = 101;
	snprintf(e.comm, sizeof(e.comm), "newprog");
	feed(&x, &e, sizeof(e));
	sw(&x, 2100, 0, 100, S_SLEEP, 0, 0);
	if (tt_finish(&x, 5000) == 0) {
		expect_seq(&x, "GoStart p=0 g=1 g=1 seq=1\n"
			       "GoEnd p=1 g=2\n"
			       "GoBlock p=0 g=1");
		GT_CHECK(count_lines(&x, "GoCreate") == 2, "GoCreate count:\n%s", x.dump);
		GT_CHECK(count_lines(&x, "GoEnd") == 1, "GoEnd count:\n%s", x.dump);
		struct names nm;
		GT_CHECK(names_of(&x, &nm) == 2, "%d goroutines", nm.n);
		int a = strcmp(nm.name[0], "newprog") != 0; /* either order */
		GT_CHECK(!strcmp(nm.name[a], "newprog") && nm.tid[a] == 100, "g1 %s %lld",
			 nm.name[a], (long long)nm.tid[a]);
		GT_CHECK(!strcmp(nm.name[!a], "t100") && nm.tid[!a] == 100, "g2 %s %lld",
			 nm.name[!a], (long long)nm.tid[!a]);
	}
	tt_close(&x);
}

/* A goroutine's id is its thread's TID, seen in every viewer; a TID
 * reused in the recording gets an id from 2^32 up, never a TID. */
static void test_goid_is_tid(void)
{
	struct tt x;
	struct gt_thread_snapshot s[1];
	snap(&s[0], 101, 'R', -1, 0);
	GT_REQUIRE(tt_open(&x, s, 1) == 0, "open");
	fork_ev(&x, 2000, 0, 101, 102, "t101");
	exit_ev(&x, 2200, 1, 102);
	fork_ev(&x, 2400, 0, 101, 102, "t101"); /* the TID again */
	sw(&x, 2500, 0, 101, S_SLEEP, 0, 0);
	if (tt_finish(&x, 5000) == 0) {
		char *raw = go_dump(x.path);
		GT_CHECK(raw && strstr(raw, "GoCreate p=0 g=0 g=101 "), "no g=101 for tid 101:\n%s",
			 raw ? raw : "");
		GT_CHECK(raw && strstr(raw, "GoCreate p=0 g=101 g=102 "), "no g=102 for tid 102:\n%s",
			 raw ? raw : "");
		GT_CHECK(raw && strstr(raw, "GoCreate p=0 g=101 g=4294967296 "),
			 "the reused tid 102 is not g=2^32:\n%s", raw ? raw : "");
		free(raw);
	}
	tt_close(&x);
}

/* Heap and RSS counters become HeapAlloc/HeapGoal. */
static void test_heap(void)
{
	struct tt x;
	GT_REQUIRE(tt_open(&x, NULL, 0) == 0, "open");
	struct gt_kev_heap h = {0};
	hdr(&h.hdr, GT_KEV_HEAP, 2000, 0, 101);
	h.live_bytes = 4096;
	h.limit_bytes = 1 << 20;
	feed(&x, &h, sizeof(h));
	struct gt_kev_rss r = {0};
	hdr(&r.hdr, GT_KEV_RSS, 2100, 1, 101);
	r.rss_bytes = 8192;
	feed(&x, &r, sizeof(r));
	if (tt_finish(&x, 5000) == 0)
		expect_seq(&x, "HeapAlloc p=0 g=0 mem=4096\n"
			       "HeapGoal p=0 g=0 mem=1048576\n"
			       "HeapAlloc p=1 g=0 mem=8192");
	tt_close(&x);
}

static void alloc_ev(struct tt *x, uint64_t ts, uint32_t tid, uint64_t size)
{
	struct gt_kev_alloc_sample e = {0};
	hdr(&e.hdr, GT_KEV_ALLOC_SAMPLE, ts, 0xffff, tid); /* read late: no CPU */
	e.size = size;
	e.ustack = -1;
	feed(x, &e, sizeof(e));
}

/* An allocation sample read late (the heap interposer's) is its own
 * thread's UserLog: written at once if that thread runs, else when it next
 * starts (never on whichever goroutine runs on P 0); one whose thread does
 * not run again (unknown, ended, the recording stops) is counted lost. */
static void test_alloc_sample_waits_for_its_thread(void)
{
	struct tt x;
	GT_REQUIRE(tt_open(&x, NULL, 0) == 0, "open");
	sw(&x, 2000, 0, 0, 0, 0, 101);            /* 101 (g=1) runs on P 0 */
	alloc_ev(&x, 2050, 101, 11);              /* running: written now */
	sw(&x, 2100, 0, 101, S_SLEEP, 0, 102);    /* it sleeps, 102 (g=2) runs */
	alloc_ev(&x, 2200, 101, 22);              /* 101 off CPU: waits */
	alloc_ev(&x, 2210, 101, 33);
	alloc_ev(&x, 2220, 150, 44);              /* not a thread we know: lost */
	wake(&x, 2300, 1, 0, 101);
	sw(&x, 2400, 1, 0, 0, 0, 101);            /* 101 starts on P 1: both logs */
	sw(&x, 2500, 0, 102, S_SLEEP, 0, 0);      /* 102 sleeps to the end */
	alloc_ev(&x, 2600, 102, 55);              /* never runs again: lost */
	if (tt_finish(&x, 5000) == 0) {
		expect_seq(&x, "GoStart p=0 g=1\n"
			       "UserLog p=0 g=1 id=0 keyid=1 category=alloc message=11 bytes\n"
			       "GoBlock p=0 g=1\n"
			       "GoStart p=1 g=1\n"
			       "UserLog p=1 g=1 id=0 keyid=1 category=alloc message=22 bytes\n"
			       "UserLog p=1 g=1 id=0 keyid=1 category=alloc message=33 bytes");
		GT_CHECK(count_lines(&x, "UserLog") == 3, "UserLogs:\n%s", x.dump);
		GT_CHECK(count_lines(&x, "UserLog p=0 g=2") == 0, "a sample on g=2:\n%s", x.dump);
		GT_CHECK(x.st.samples_lost == 2, "samples lost: %llu",
			 (unsigned long long)x.st.samples_lost);
	}
	tt_close(&x);
}

static void rss_of(struct tt *x, uint64_t ts, uint32_t tgid, uint64_t bytes)
{
	struct gt_kev_rss r = {0};
	hdr(&r.hdr, GT_KEV_RSS, ts, 0, tgid);
	r.hdr.tgid = tgid;
	r.hdr.sessions = 1;
	r.rss_bytes = bytes;
	feed(x, &r, sizeof(r));
}

/* A session over several processes has one heap: their sum, never one
 * process's value then another's; an exited process leaves it. */
static void test_heap_is_the_sessions_sum(void)
{
	struct tt x;
	GT_REQUIRE(tt_open(&x, NULL, 0) == 0, "open");
	rss_of(&x, 2000, 500, 1000);
	rss_of(&x, 2100, 600, 3000);
	rss_of(&x, 2200, 500, 2000);
	struct gt_kev_exit e = {0};
	hdr(&e.hdr, GT_KEV_EXIT, 2300, 0, 600);
	e.hdr.tgid = 600;
	e.hdr.sessions = 1;
	e.group_dead = 1;
	feed(&x, &e, sizeof(e));
	rss_of(&x, 2400, 500, 1500);
	if (tt_finish(&x, 5000) == 0)
		expect_seq(&x, "HeapAlloc p=0 g=0 mem=1000\n"
			       "HeapAlloc p=0 g=0 mem=4000\n"
			       "HeapAlloc p=0 g=0 mem=5000\n"
			       "HeapAlloc p=0 g=0 mem=2000\n"
			       "HeapAlloc p=0 g=0 mem=1500");
	tt_close(&x);
}

static void sample(struct tt *x, uint64_t ts, int cpu, uint32_t tid)
{
	struct gt_kev_cpu_sample e = {0};
	hdr(&e.hdr, GT_KEV_CPU_SAMPLE, ts, cpu, tid);
	e.ustack = e.kstack = -1;
	feed(x, &e, sizeof(e));
}

/* The same small story written as 1.11, 1.19 and 1.21 traces: CPU samples
 * only where the version has them; Go 1.19 reads 1.11 and 1.19, our
 * checker all three. */
static void test_versions(void)
{
	static const int versions[] = {GT_V1_11, GT_V1_19, GT_V1_21};
	for (int i = 0; i < 3; i++) {
		int v = versions[i];
		struct tt x;
		struct gt_thread_snapshot s[1];
		snap(&s[0], 101, 'R', -1, 0);
		GT_REQUIRE(tt_open_version(&x, s, 1, v) == 0, "open %d", v);
		sample(&x, 2000, 0, 101);
		sys_enter(&x, 2100, 0, 101, 202);
		sw(&x, 2200, 0, 101, S_SLEEP, 0, 0);
		wake(&x, 2300, 1, 0, 101);
		sw(&x, 2400, 1, 0, 0, 0, 101);
		sample(&x, 2500, 1, 101);
		int r = gt_translator_end(x.t, 5000);
		GT_CHECK(r == 0, "end: %d", r);
		gt_translator_free(x.t);
		GT_CHECK(gt_writer_close(x.w) == 0, "close");
		close(x.fd);
		struct gt_check_report rep;
		GT_CHECK(gt_check_file(x.path, &rep) == 0, "version %d: %s", v, rep.error);
		uint64_t want = v >= GT_V1_19 ? 2 : 0;
		GT_CHECK(rep.count_by_type[GT_EV_CPU_SAMPLE] == want, "version %d: %llu samples",
			 v, (unsigned long long)rep.count_by_type[GT_EV_CPU_SAMPLE]);
		GT_CHECK(rep.count_by_type[GT_EV_GO_BLOCK_SYNC] == 1, "version %d: no block", v);
		char why[2048];
		if (v <= GT_V1_19)
			GT_CHECK(gt_test_gocheck(x.path, why, sizeof(why)) == 0, "version %d: %s", v, why);
		tt_close(&x);
	}
}

/* PC of the top frame of each GoCreate's new-goroutine stack, in order. */
static int create_pcs(const char *path, uint64_t *pcs, int max)
{
	static uint8_t data[1 << 16];
	static struct gt_raw_event ev;
	uint64_t stack_of[8] = {0}, sid[64] = {0}, spc[64] = {0};
	int ncreate = 0, nstack = 0;
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	size_t len = fread(data, 1, sizeof(data), f);
	fclose(f);
	struct gt_reader r;
	if (gt_reader_open(&r, data, len) < 0)
		return -1;
	while (gt_reader_next(&r, &ev) == 1) {
		if (ev.type == GT_EV_GO_CREATE && ncreate < 8 && ev.nargs >= 3)
			stack_of[ncreate++] = ev.args[2];
		if (ev.type == GT_EV_STACK && nstack < 64 && ev.nargs >= 3) {
			sid[nstack] = ev.args[0];
			spc[nstack++] = ev.args[2];
		}
	}
	for (int i = 0; i < ncreate && i < max; i++)
		for (int k = 0; k < nstack; k++)
			if (sid[k] == stack_of[i])
				pcs[i] = spc[k];
	return ncreate;
}

/* Stacks for test_syscall_caller: user stack u is {0x1000 + u, caller if
 * given, 0x2000}; frame 0 of stack 1 and 4 keeps its return address in
 * word 2 of the stack top, of stack 3 in the link register, of stack 2
 * nowhere known. */
static int caller_frames(void *ctx, uint32_t tgid, int32_t u, int32_t k, uint64_t caller,
			 struct gt_frame *out, int max)
{
	int n = 0;
	(void)ctx, (void)tgid, (void)k;
	if (u < 0 || max < 3)
		return 0;
	out[n++] = (struct gt_frame){0x1000 + (uint64_t)u, "leaf", "l.c", 1};
	if (caller)
		out[n++] = (struct gt_frame){caller, "caller", "c.c", 2};
	out[n++] = (struct gt_frame){0x2000, "root", "r.c", 3};
	return n;
}

static int caller_slot(void *ctx, uint32_t tgid, int32_t u)
{
	(void)ctx, (void)tgid;
	return u == 1 || u == 4 ? 2 : u == 3 ? GT_RA_LR : GT_RA_NONE;
}

/* Threads 101 (CPU 0) and 102 (CPU 1) running, stacks named by
 * caller_frames/caller_slot, and *top a stack top whose word 2 holds the
 * caller 0x5000 (lr 0x7000). */
static int open_with_callers(struct tt *x, struct gt_utop *top)
{
	static struct gt_stack_source src = {caller_frames, caller_slot, NULL}; /* x keeps it */
	struct gt_thread_snapshot s[2];
	int r;

	memset(top, 0, sizeof(*top));
	top->lr = 0x7000;
	top->nwords = GT_UTOP_WORDS;
	top->words[2] = 0x5000;
	snap(&s[0], 101, 'R', -1, 0);
	snap(&s[1], 102, 'R', -1, 1);
	tt_stacks = &src;
	r = tt_open(x, s, 2);
	tt_stacks = NULL;
	return r;
}

/* The pcs of the stack of each event of type `type`, in file order: up to
 * max stacks of 3 pcs (0 = no frame); returns how many events. */
static int event_stacks(const struct tt *x, int type, uint64_t (*pcs)[3], int max)
{
	static uint8_t data[1 << 16];
	static struct gt_raw_event ev;
	uint64_t ids[16];
	int n = 0;
	FILE *f = fopen(x->path, "rb");
	if (!f)
		return -1;
	size_t len = fread(data, 1, sizeof(data), f);
	fclose(f);
	struct gt_reader r;
	for (int pass = 1; pass <= 2 && gt_reader_open(&r, data, len) == 0; pass++)
		while (gt_reader_next(&r, &ev) == 1) {
			if (pass == 1 && ev.type == type && n < max && n < 16 && ev.nargs >= 1)
				ids[n++] = ev.args[ev.nargs - 1];
			for (int i = 0; pass == 2 && ev.type == GT_EV_STACK && i < n; i++)
				if (ids[i] == ev.args[0])
					for (uint64_t k = 0; k < 3; k++)
						pcs[i][k] = k < ev.args[1] ? ev.args[2 + 4 * k] : 0;
		}
	return n;
}

/* Frame 1 of the stack among pcs[0..n) whose frame 0 is leaf; 0 if none. */
static uint64_t frame1_of(uint64_t (*pcs)[3], int n, uint64_t leaf)
{
	for (int i = 0; i < n; i++)
		if (pcs[i][0] == leaf)
			return pcs[i][1];
	return 0;
}

/* The caller found in a syscall's stack top goes into its GoSysCall's
 * stack, and into the stacks of later events of the same thread with the
 * same user stack (its block in the syscall, a wakeup it does there):
 * not into another thread's, not into another stack's, not where the
 * source knows no slot or the top has no word there. */
static void test_syscall_caller(void)
{
	struct tt x;
	struct gt_utop top;
	uint64_t sys[4][3] = {{0}}, blk[2][3] = {{0}}, unb[4][3] = {{0}};

	int r = open_with_callers(&x, &top);
	GT_REQUIRE(r == 0, "open");
	sys_enter_top(&x, 2000, 0, 101, 0, 1, &top);  /* read: caller in word 2 */
	sw_stack(&x, 2100, 0, 101, S_SLEEP, 0, 0, 1);  /* blocks in it */
	sys_enter_top(&x, 2200, 1, 102, 1, 3, &top);  /* write: caller in LR */
	wake_stack(&x, 2300, 1, 102, 101, 0, 3);        /* in that write */
	sys_exit(&x, 102);
	sw(&x, 2400, 0, 0, 0, 0, 101);
	sys_exit(&x, 101);
	sys_enter_top(&x, 2500, 0, 101, 0, 2, &top);  /* no slot known */
	top.nwords = 0;
	sys_enter_top(&x, 2600, 1, 102, 39, 4, &top); /* words unreadable */
	sw_stack(&x, 2700, 0, 101, S_SLEEP, 0, 0, 5);  /* another stack */
	wake(&x, 2800, 1, 1001, 101);
	if (tt_finish(&x, 5000) == 0) {
		int ns = event_stacks(&x, GT_EV_GO_SYSCALL, sys, 4);
		int nb = event_stacks(&x, GT_EV_GO_BLOCK_RECV, blk, 2);
		int nu = event_stacks(&x, GT_EV_GO_UNBLOCK, unb, 4);
		GT_CHECK(ns == 4 && nb == 2 && nu >= 1, "%d syscalls, %d blocks, %d unblocks", ns, nb,
			 nu);
		/* events of both Ps are in file order, not in time order: each
		 * stack is known by its frame 0 (0x1000 + its id) */
		GT_CHECK(frame1_of(sys, ns, 0x1001) == 0x5000,
			 "read's syscall: caller %#llx", (unsigned long long)frame1_of(sys, ns, 0x1001));
		GT_CHECK(frame1_of(blk, nb, 0x1001) == 0x5000, "the block in read: caller %#llx",
			 (unsigned long long)frame1_of(blk, nb, 0x1001));
		GT_CHECK(frame1_of(sys, ns, 0x1003) == 0x7000, "write's syscall: caller %#llx, not the LR",
			 (unsigned long long)frame1_of(sys, ns, 0x1003));
		GT_CHECK(frame1_of(unb, nu, 0x1003) == 0x7000, "the wakeup in write: caller %#llx",
			 (unsigned long long)frame1_of(unb, nu, 0x1003));
		GT_CHECK(frame1_of(sys, ns, 0x1002) == 0x2000, "no slot known, yet caller %#llx",
			 (unsigned long long)frame1_of(sys, ns, 0x1002));
		GT_CHECK(frame1_of(sys, ns, 0x1004) == 0x2000, "no words read, yet caller %#llx",
			 (unsigned long long)frame1_of(sys, ns, 0x1004));
		GT_CHECK(frame1_of(blk, nb, 0x1005) == 0x2000, "another stack took caller %#llx",
			 (unsigned long long)frame1_of(blk, nb, 0x1005));
	}
	tt_close(&x);
}

/* A source whose binary is still loading (gotraced never waits for a
 * load: sym/loader.h): stack u is {0x1000 + u} until the load ends, then
 * {0x9000 + u}; it says so through pending and clock. */
static int pend_loaded, pend_calls;
static uint64_t pend_clock = 1;

static int pend_frames(void *ctx, uint32_t tgid, int32_t u, int32_t k, uint64_t caller,
		       struct gt_frame *out, int max)
{
	(void)ctx, (void)tgid, (void)k, (void)caller;
	if (u < 0 || max < 1)
		return 0;
	pend_calls++;
	out[0] = (struct gt_frame){(pend_loaded ? 0x9000 : 0x1000) + (uint64_t)u,
				   pend_loaded ? "leaf" : "mod+0x10", pend_loaded ? "l.c" : "", 1};
	return 1;
}

static int pend_slot(void *ctx, uint32_t tgid, int32_t u)
{
	(void)ctx, (void)tgid, (void)u;
	return GT_RA_NONE;
}

static uint64_t pend_pending(void *ctx)
{
	(void)ctx;
	return pend_loaded ? 0 : pend_clock;
}

static uint64_t pend_now(void *ctx)
{
	(void)ctx;
	return pend_clock;
}

/* A stack given while its binary was loading is asked for again at its
 * next use once a load ended (the clock moved), and kept from then on;
 * while nothing ended, the one given is reused.  A thread blocking again
 * and again in one place reuses one stack id: before, the names it got
 * at first stayed for the whole recording (module+0xOFF). */
static void test_stack_pending(void)
{
	struct tt x;
	struct gt_thread_snapshot s[1];
	struct gt_stack_source src = {.frames = pend_frames, .ra_slot = pend_slot,
				      .pending = pend_pending, .clock = pend_now};
	struct gt_utop top = {.nwords = 0};
	uint64_t sys[4][3] = {{0}};

	pend_loaded = pend_calls = 0;
	pend_clock = 1;
	snap(&s[0], 101, 'R', -1, 0);
	tt_stacks = &src;
	int r = tt_open(&x, s, 1);
	tt_stacks = NULL;
	GT_REQUIRE(r == 0, "open");
	sys_enter_top(&x, 2000, 0, 101, 0, 1, &top);
	sys_exit(&x, 101);
	sys_enter_top(&x, 2100, 0, 101, 0, 1, &top); /* nothing ended: reused */
	sys_exit(&x, 101);
	pend_loaded = 1;
	pend_clock++;
	sys_enter_top(&x, 2200, 0, 101, 0, 1, &top); /* asked again */
	sys_exit(&x, 101);
	pend_clock++;
	sys_enter_top(&x, 2300, 0, 101, 0, 1, &top); /* final: reused */
	sys_exit(&x, 101);
	GT_CHECK(pend_calls == 2, "the stack was asked for %d times (want 2)", pend_calls);
	if (tt_finish(&x, 5000) == 0) {
		int n = event_stacks(&x, GT_EV_GO_SYSCALL, sys, 4);

		GT_CHECK(n == 4 && sys[0][0] == 0x1001 && sys[1][0] == 0x1001 && sys[2][0] == 0x9001 &&
			 sys[3][0] == 0x9001, "%d syscalls, frame 0: %#llx %#llx %#llx %#llx", n,
			 (unsigned long long)sys[0][0], (unsigned long long)sys[1][0],
			 (unsigned long long)sys[2][0], (unsigned long long)sys[3][0]);
	}
	tt_close(&x);
}

/* Loopback: 101 (ours) sends on CPU 0 and the NET_RX softirq that runs in
 * its context, inside its send, wakes 102: the wakeup is 101's, on P 0,
 * with its user stack under a [loopback] frame.  A loopback packet whose
 * sender is not ours wakes 103 while 101 runs: G 0 on the spare P with
 * the one frame [loopback], counted; never 101's.  A sender another
 * session traces (1000 on CPU 1, in its own softirq) wakes 104: G 0 with
 * [loopback] too. */
static void test_loopback_wakeup(void)
{
	struct tt x;
	struct gt_thread_snapshot s[4];
	struct gt_stack_source src = {caller_frames, caller_slot, NULL};
	struct gt_translator_stats st;
	uint64_t unb[4][3] = {{0}};

	snap(&s[0], 101, 'R', -1, 0);
	snap(&s[1], 102, 'S', 0, 1);
	snap(&s[2], 103, 'S', 0, 1);
	snap(&s[3], 104, 'S', 0, 1);
	tt_stacks = &src;
	int r = tt_open(&x, s, 4);
	tt_stacks = NULL;
	GT_REQUIRE(r == 0, "open");
	struct gt_kev_wakeup e = {0};
	hdr(&e.hdr, GT_KEV_WAKEUP, 2000, 0, 101);
	e.target_tid = 102;
	e.target_tgid = TGID;
	e.target_cpu = 1;
	e.flags = GT_WAKEUP_LOOPBACK;
	e.waker_sessions = 1;
	e.waker_ustack = 6;
	feed(&x, &e, sizeof(e));
	irq_wake(&x, 2100, 0, 101, 103, GT_WAKEUP_SOFTIRQ | GT_WAKEUP_LOOPBACK);
	hdr(&e.hdr, GT_KEV_WAKEUP, 2200, 1, 1000);
	e.target_tid = 104;
	e.waker_sessions = 0;
	e.waker_ustack = 6;
	feed(&x, &e, sizeof(e));
	gt_translator_stats(x.t, &st);
	GT_CHECK(st.loopback_credited == 1 && st.loopback_anon == 2,
		 "loopback wakeups: %llu credited, %llu anonymous",
		 (unsigned long long)st.loopback_credited, (unsigned long long)st.loopback_anon);
	if (tt_finish(&x, 5000) == 0) {
		expect_seq(&x, "GoUnblock p=0 g=1 g=2 seq=2\n"
			       "GoUnblock p=2 g=0 g=3 seq=2");
		char f[128];
		unblock_frame(&x, 102, f, sizeof(f));
		GT_CHECK(!strcmp(f, "[loopback]"), "the sender's unblock frame: '%s'", f);
		unblock_frame(&x, 103, f, sizeof(f));
		GT_CHECK(!strcmp(f, "[loopback]"), "an unknown sender's unblock frame: '%s'", f);
		unblock_frame(&x, 104, f, sizeof(f));
		GT_CHECK(!strcmp(f, "[loopback]"), "another session's sender's unblock frame: '%s'", f);
		int nu = event_stacks(&x, GT_EV_GO_UNBLOCK_LOCAL, unb, 4);
		GT_CHECK(nu == 1 && unb[0][1] == 0x1006 && unb[0][2] == 0x2000,
			 "the sender's stack is not [loopback] over its own: %d unblocks, frames "
			 "%#llx %#llx", nu, (unsigned long long)unb[0][1], (unsigned long long)unb[0][2]);
	}
	expect_no_repairs(&x);
	tt_close(&x);
}

/* Loopback packets sent by a task no session traces (wrk, pid 5000, tid
 * 5001, in its own softirq: GT_WAKEUP_SENDER): G 0's wakeup of 102 names
 * it, as the record allows this session to; the same for 103 from a
 * sender the session may not see (sender_sessions 0) stays [loopback],
 * counted; a record too short for the name is [loopback] too. */
static void test_loopback_sender(void)
{
	struct tt x;
	struct gt_thread_snapshot s[4];
	struct gt_translator_stats st;

	snap(&s[0], 101, 'S', 0, 1);
	snap(&s[1], 102, 'S', 0, 1);
	snap(&s[2], 103, 'S', 0, 1);
	snap(&s[3], 104, 'S', 0, 1);
	GT_REQUIRE(tt_open(&x, s, 4) == 0, "open");
	struct gt_kev_wakeup_sender e = {0};
	hdr(&e.wk.hdr, GT_KEV_WAKEUP, 2000, 0, 5001);
	e.wk.hdr.tgid = 5000;
	e.wk.target_tid = 102;
	e.wk.target_tgid = TGID;
	e.wk.flags = GT_WAKEUP_LOOPBACK | GT_WAKEUP_SENDER;
	e.wk.waker_ustack = -1;
	e.sender_sessions = 1;
	memcpy(e.sender_comm, "wrk", 4);
	feed(&x, &e, sizeof(e));
	hdr(&e.wk.hdr, GT_KEV_WAKEUP, 2100, 0, 6000);
	e.wk.target_tid = 103;
	e.sender_sessions = 0;
	memcpy(e.sender_comm, "secret", 7);
	feed(&x, &e, sizeof(e));
	hdr(&e.wk.hdr, GT_KEV_WAKEUP, 2200, 0, 6000);
	e.wk.target_tid = 104;
	e.sender_sessions = 1;
	feed(&x, &e, sizeof(e.wk)); /* no room for the name */
	gt_translator_stats(x.t, &st);
	GT_CHECK(st.loopback_named == 1 && st.loopback_anon == 2,
		 "loopback wakeups: %llu named, %llu anonymous",
		 (unsigned long long)st.loopback_named, (unsigned long long)st.loopback_anon);
	if (tt_finish(&x, 5000) == 0) {
		char f[128];
		unblock_frame(&x, 102, f, sizeof(f));
		GT_CHECK(!strcmp(f, "[loopback from wrk 5000/5001]"), "the sender's frame: '%s'", f);
		unblock_frame(&x, 103, f, sizeof(f));
		GT_CHECK(!strcmp(f, "[loopback]"), "an unseen sender's frame: '%s'", f);
		unblock_frame(&x, 104, f, sizeof(f));
		GT_CHECK(!strcmp(f, "[loopback]"), "a short record's frame: '%s'", f);
	}
	expect_no_repairs(&x);
	tt_close(&x);
}

/* --syscalls=blocking, the default: no entries, but an entry record written
 * where a syscall blocks (GT_SYS_ENTER_AT_BLOCK) or wakes a thread or forks
 * (GT_SYS_ENTER_CALLER_ONLY), just before that record.  A read that blocks
 * shows its GoSysCall, with the wrapper's caller, as with every entry; a
 * futex wait is its block alone; a write that wakes shows no syscall, but
 * its wakeup has the caller. */
static void test_syscall_caller_blocking(void)
{
	struct tt x;
	struct gt_utop top;
	uint64_t sys[4][3] = {{0}}, blk[2][3] = {{0}}, unb[4][3] = {{0}};

	int r = open_with_callers(&x, &top);
	GT_REQUIRE(r == 0, "open");
	sys_record(&x, 2100, 0, 101, 0, 1, &top, GT_SYS_ENTER_AT_BLOCK);  /* read blocks */
	sw_stack(&x, 2100, 0, 101, S_SLEEP, 0, 0, 1);
	sys_record(&x, 2300, 1, 102, 1, 3, &top, GT_SYS_ENTER_CALLER_ONLY); /* write wakes */
	wake_stack(&x, 2300, 1, 102, 101, 0, 3);
	sys_exit(&x, 102);
	sw(&x, 2400, 0, 0, 0, 0, 101);
	sys_exit(&x, 101);
	sys_record(&x, 2500, 0, 101, 202, 5, &top, GT_SYS_ENTER_AT_BLOCK); /* futex */
	sw_stack(&x, 2500, 0, 101, S_SLEEP, 0, 0, 5);
	wake(&x, 2800, 1, 1001, 101);
	if (tt_finish(&x, 5000) == 0) {
		int ns = event_stacks(&x, GT_EV_GO_SYSCALL, sys, 4);
		int nb = event_stacks(&x, GT_EV_GO_BLOCK_RECV, blk, 2);
		int nu = event_stacks(&x, GT_EV_GO_UNBLOCK, unb, 4);
		GT_CHECK(ns == 1 && nb == 1 && nu >= 1, "%d syscalls (want the read's only), "
			 "%d blocks, %d unblocks", ns, nb, nu);
		GT_CHECK(count_lines(&x, "GoBlockSync") == 1, "the futex wait: %d GoBlockSync",
			 count_lines(&x, "GoBlockSync"));
		GT_CHECK(frame1_of(sys, ns, 0x1001) == 0x5000, "read's syscall: caller %#llx",
			 (unsigned long long)frame1_of(sys, ns, 0x1001));
		GT_CHECK(frame1_of(blk, nb, 0x1001) == 0x5000, "the block in read: caller %#llx",
			 (unsigned long long)frame1_of(blk, nb, 0x1001));
		GT_CHECK(frame1_of(unb, nu, 0x1003) == 0x7000, "the wakeup in write: caller %#llx",
			 (unsigned long long)frame1_of(unb, nu, 0x1003));
	}
	tt_close(&x);
}

/* How test_switch_entry's scenario writes a syscall's entry where it
 * blocks: its own record before the switch (before ABI 12), folded into
 * the switch (GT_SWITCH_ENTRY), or none (a session the entry is not for). */
enum entry_way { ENTRY_RECORD, ENTRY_FOLDED, ENTRY_NONE };

static void block_in(struct tt *x, enum entry_way way, uint64_t ts, uint32_t tid, int64_t nr,
		     int32_t ustack, const struct gt_utop *top, uint32_t entry_sessions)
{
	x->sysnr[tid] = nr;
	if (way == ENTRY_RECORD) {
		sys_record(x, ts, 0, tid, nr, ustack, top, GT_SYS_ENTER_AT_BLOCK);
		sw_stack(x, ts, 0, tid, S_SLEEP, 0, 0, ustack);
	} else if (way == ENTRY_FOLDED) {
		sw_entry(x, ts, 0, tid, S_SLEEP, 0, ustack, top, entry_sessions);
	} else {
		sw_stack(x, ts, 0, tid, S_SLEEP, 0, 0, ustack);
	}
}

/* test_syscall_caller_blocking's threads, the entries written `way`
 * (entry_sessions: the folded entries' sessions); the file's bytes into
 * out (malloc'd), its dump into *dump.  Returns the bytes' length. */
static size_t switch_entry_case(enum entry_way way, uint32_t entry_sessions, uint8_t **out,
				char **dump)
{
	struct tt x;
	struct gt_utop top;
	size_t len = 0;

	*out = NULL;
	*dump = NULL;
	int r = open_with_callers(&x, &top);
	GT_CHECK(r == 0, "open: %d", r);
	if (r != 0)
		return 0;
	block_in(&x, way, 2100, 101, 0, 1, &top, entry_sessions); /* read blocks */
	sys_record(&x, 2300, 1, 102, 1, 3, &top, GT_SYS_ENTER_CALLER_ONLY); /* write wakes */
	wake_stack(&x, 2300, 1, 102, 101, 0, 3);
	sys_exit(&x, 102);
	sw(&x, 2400, 0, 0, 0, 0, 101);
	sys_exit(&x, 101);
	block_in(&x, way, 2500, 101, 202, 5, &top, entry_sessions); /* futex */
	wake(&x, 2800, 1, 1001, 101);
	sw(&x, 2900, 0, 0, 0, 0, 101);
	sys_exit(&x, 101);
	block_in(&x, way, 3000, 101, 7, 4, &top, entry_sessions); /* poll */
	wake(&x, 3200, 1, 1001, 101);
	if (tt_finish(&x, 5000) == 0) {
		FILE *f = fopen(x.path, "rb");
		*out = malloc(1 << 16);
		len = f && *out ? fread(*out, 1, 1 << 16, f) : 0;
		if (f)
			fclose(f);
		*dump = x.dump;
		x.dump = NULL;
	}
	tt_close(&x);
	return len;
}

/* The dump past Go's "hh:mm:ss Parsing trace..." line (its clock). */
static const char *dump_body(const char *d)
{
	const char *nl = d && strstr(d, "Parsing trace") ? strchr(d, '\n') : NULL;

	return nl ? nl + 1 : d ? d : "";
}

static int by_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The dump's lines, sorted, as one string (malloc'd): Go's reader orders
 * events of one time on different Ps differently from run to run. */
static char *sorted_lines(const char *d)
{
	char *copy = strdup(d), *out = calloc(1, strlen(d) + 2), **v = NULL, *save = NULL;
	size_t n = 0;

	for (char *l = copy ? strtok_r(copy, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
		char **nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv)
			break;
		v = nv;
		v[n++] = l;
	}
	if (v)
		qsort(v, n, sizeof(*v), by_line);
	for (size_t i = 0; out && i < n; i++)
		strcat(strcat(out, v[i]), "\n");
	free(v);
	free(copy);
	return out;
}

/* Two runs of switch_entry_case: the same trace, byte for byte, and the
 * same events in Go's dump. */
static int same_trace(const uint8_t *a, size_t na, const char *da, const uint8_t *b, size_t nb,
		       const char *db)
{
	char *sa, *sb;
	int same;

	if (na == 0 || na != nb || memcmp(a, b, na) != 0 || !da || !db)
		return 0;
	sa = sorted_lines(dump_body(da)), sb = sorted_lines(dump_body(db));
	same = sa && sb && strcmp(sa, sb) == 0;
	free(sa), free(sb);
	return same;
}

/* ABI 12: the entry of a syscall that blocks rides in the switch record
 * (GT_SWITCH_ENTRY) instead of a record of its own just before it; the
 * trace must be the same, byte for byte, and differ from one without the
 * entries (the read's GoSysCall and block name the wrapper's caller). */
static void test_switch_entry(void)
{
	uint8_t *a, *b, *c;
	char *da, *db, *dc;
	size_t na = switch_entry_case(ENTRY_RECORD, 1, &a, &da);
	size_t nb = switch_entry_case(ENTRY_FOLDED, 1, &b, &db);
	size_t nc = switch_entry_case(ENTRY_NONE, 1, &c, &dc);

	GT_CHECK(same_trace(a, na, da, b, nb, db), "the folded entries' trace differs "
		 "(%zu and %zu bytes):\n%s\nvs\n%s", na, nb, dump_body(da), dump_body(db));
	GT_CHECK(nc > 0 && (nc != nb || memcmp(b, c, nc) != 0), "the entries changed nothing");
	free(a), free(b), free(c), free(da), free(db), free(dc);
}

/* Two sessions trace the threads; the entries folded into the switches
 * are the first one's alone (the second records every entry itself): the
 * second's translator takes none of them, as it was never given the entry
 * records before; the first's takes them all. */
static void test_switch_entry_other_session(void)
{
	uint8_t *v[4];
	char *d[4];
	size_t n[4];

	tt_bits = 3;
	tt_session_mask = 2;
	n[0] = switch_entry_case(ENTRY_NONE, 1, &v[0], &d[0]);
	n[1] = switch_entry_case(ENTRY_FOLDED, 1, &v[1], &d[1]);
	tt_session_mask = 1;
	n[2] = switch_entry_case(ENTRY_RECORD, 1, &v[2], &d[2]);
	n[3] = switch_entry_case(ENTRY_FOLDED, 1, &v[3], &d[3]);
	tt_bits = 1;
	tt_session_mask = 0;
	GT_CHECK(same_trace(v[0], n[0], d[0], v[1], n[1], d[1]),
		 "another session's entries changed the trace:\n%s\nvs\n%s", dump_body(d[0]),
		 dump_body(d[1]));
	GT_CHECK(same_trace(v[2], n[2], d[2], v[3], n[3], d[3]),
		 "the session's folded entries differ from its entry records:\n%s\nvs\n%s",
		 dump_body(d[2]), dump_body(d[3]));
	GT_CHECK(n[1] != n[3] || memcmp(v[1], v[3], n[1]) != 0, "both sessions took the entries");
	for (int i = 0; i < 4; i++)
		free(v[i]), free(d[i]);
}

/* Identity stacks: threads with the same name share the PC (the Goroutines
 * page groups by it), the frame names the thread and carries its tid. */
static void test_identity_stacks(void)
{
	struct tt x;
	struct gt_thread_snapshot s[3];
	snap(&s[0], 101, 'S', -1, 0);
	snap(&s[1], 102, 'S', -1, 0);
	snap(&s[2], 103, 'S', -1, 0);
	snprintf(s[0].comm, sizeof(s[0].comm), "worker");
	snprintf(s[1].comm, sizeof(s[1].comm), "worker");
	snprintf(s[2].comm, sizeof(s[2].comm), "bio_close_file");
	GT_REQUIRE(tt_open(&x, s, 3) == 0, "open");
	if (tt_finish(&x, 5000) != 0) {
		tt_close(&x);
		return;
	}
	uint64_t pcs[8] = {0};
	GT_CHECK(create_pcs(x.path, pcs, 8) == 3, "GoCreate count");
	GT_CHECK(pcs[0] && pcs[0] == pcs[1], "same name, different PCs: %llx %llx",
		 (unsigned long long)pcs[0], (unsigned long long)pcs[1]);
	GT_CHECK(pcs[2] && pcs[2] != pcs[0], "different names share a PC");
	struct names nm = {0};
	struct gt_check_report rep;
	GT_CHECK(gt_check_file_run(x.path, 0, &rep, collect_name, &nm) == 0, "%s", rep.error);
	GT_CHECK(nm.n == 3, "%d goroutines", nm.n);
	GT_CHECK(!strcmp(nm.name[0], "worker") && nm.tid[0] == 101, "g1 %s %lld", nm.name[0],
		 (long long)nm.tid[0]);
	GT_CHECK(!strcmp(nm.name[2], "bio_close_file") && nm.tid[2] == 103, "g3 %s %lld",
		 nm.name[2], (long long)nm.tid[2]);
	tt_close(&x);
}

/* Fake /proc for test_shared_comm_titles: processes 100 and 102 are
 * "postgres" with their titles, 106 is "other", 104 is unknown (gone). */
static int fake_title(void *ctx, uint32_t tgid, char title[GT_TITLE_LEN], char comm[GT_COMM_LEN])
{
	(void)ctx;
	if (tgid == 100 || tgid == 102) {
		snprintf(title, GT_TITLE_LEN, "postgres: %s", tgid == 100 ? "checkpointer" : "walwriter");
		snprintf(comm, GT_COMM_LEN, "postgres");
	} else if (tgid == 106) {
		snprintf(title, GT_TITLE_LEN, "other -x");
		snprintf(comm, GT_COMM_LEN, "other");
	} else {
		return -1;
	}
	return 0;
}

/* Threads of different processes sharing a comm are named by their
 * process's title (and their own comm where it is not the process's);
 * a comm only one process has stays the name; a process the title
 * source no longer knows keeps the comm. */
static void test_shared_comm_titles(void)
{
	static const struct { uint32_t tid, tgid; const char *comm, *want; } th[] = {
		{101, 100, "postgres", "postgres: checkpointer"},
		{102, 102, "postgres", "postgres: walwriter"},
		{103, 102, "solo", "solo"},
		{104, 104, "postgres", "postgres"},
		{105, 102, "pg_worker", "postgres: walwriter [pg_worker]"},
		{106, 106, "pg_worker", "other -x [pg_worker]"},
	};
	const int n = (int)(sizeof(th) / sizeof(th[0]));
	struct gt_title_source src = {fake_title, NULL};
	struct gt_thread_snapshot s[6];
	struct tt x;

	for (int i = 0; i < n; i++) {
		snap(&s[i], th[i].tid, 'S', -1, 0);
		s[i].tgid = th[i].tgid;
		snprintf(s[i].comm, sizeof(s[i].comm), "%s", th[i].comm);
	}
	tt_titles = &src;
	int r = tt_open(&x, s, n);
	tt_titles = NULL;
	GT_REQUIRE(r == 0, "open");
	if (tt_finish(&x, 5000) != 0) {
		tt_close(&x);
		return;
	}
	struct names nm = {0};
	struct gt_check_report rep;
	GT_CHECK(gt_check_file_run(x.path, 0, &rep, collect_name, &nm) == 0, "%s", rep.error);
	GT_CHECK(nm.n == n, "%d goroutines", nm.n);
	for (int i = 0; i < n && i < nm.n; i++)
		GT_CHECK(!strcmp(nm.name[i], th[i].want) && nm.tid[i] == th[i].tid,
			 "g%d named \"%s\" (tid %lld), want \"%s\"", i + 1, nm.name[i],
			 (long long)nm.tid[i], th[i].want);
	uint64_t pcs[8] = {0};
	GT_CHECK(create_pcs(x.path, pcs, 8) == n, "GoCreate records");
	GT_CHECK(pcs[0] != pcs[1], "two titles share a PC: the Goroutines page merges them");
	tt_close(&x);
}

/* pthread_create + pthread_setname_np: each worker is ONE goroutine named
 * by its last comm (renamed while running and while off CPU, or still
 * alive at the end); same names share the identity PC. */
static void test_rename_names_by_last_comm(void)
{
	struct tt x;
	struct gt_thread_snapshot s[1];
	snap(&s[0], 101, 'R', -1, 0);
	GT_REQUIRE(tt_open(&x, s, 1) == 0, "open");
	fork_ev(&x, 2000, 0, 101, 102, "t101");
	fork_ev(&x, 2010, 0, 101, 103, "t101");
	sw(&x, 2100, 1, 0, 0, 0, 102);
	rename_ev(&x, 2150, 1, 102, "tmp");      /* renamed while running */
	sw(&x, 2200, 1, 102, S_SLEEP, 0, 0);
	rename_ev(&x, 2250, 0, 102, "worker");   /* renamed while off CPU */
	wake(&x, 2300, 0, 101, 102);
	sw(&x, 2400, 1, 0, 0, 0, 102);
	exit_ev(&x, 2500, 1, 102);
	sw(&x, 2600, 1, 102, S_DEAD, 0, 103);
	rename_ev(&x, 2700, 1, 103, "worker");   /* alive at the end */
	if (tt_finish(&x, 5000) == 0) {
		expect_seq(&x, "GoStart p=1 g=2 g=2 seq=1\n"
			       "GoBlock p=1 g=2\n"
			       "GoUnblock p=0 g=1 g=2 seq=2\n"
			       "GoStart p=1 g=2 g=2 seq=3\n"
			       "GoEnd p=1 g=2\n"
			       "GoStart p=1 g=3 g=3 seq=1");
		GT_CHECK(count_lines(&x, "GoCreate") == 3, "GoCreate count:\n%s", x.dump);
		GT_CHECK(count_lines(&x, "GoEnd") == 1, "GoEnd count:\n%s", x.dump);
		struct names nm;
		GT_CHECK(names_of(&x, &nm) == 3, "%d goroutines", nm.n);
		GT_CHECK(!strcmp(nm.name[0], "t101") && nm.tid[0] == 101, "g1 %s", nm.name[0]);
		GT_CHECK(!strcmp(nm.name[1], "worker") && nm.tid[1] == 102, "g2 %s %lld",
			 nm.name[1], (long long)nm.tid[1]);
		GT_CHECK(!strcmp(nm.name[2], "worker") && nm.tid[2] == 103, "g3 %s %lld",
			 nm.name[2], (long long)nm.tid[2]);
		uint64_t pcs[8] = {0};
		GT_CHECK(create_pcs(x.path, pcs, 8) == 3, "GoCreate records");
		GT_CHECK(pcs[1] && pcs[1] == pcs[2] && pcs[1] != pcs[0], "pcs %llx %llx %llx",
			 (unsigned long long)pcs[0], (unsigned long long)pcs[1],
			 (unsigned long long)pcs[2]);
	}
	expect_no_repairs(&x);
	tt_close(&x);
}

/* `record -- CMD`: the forked recorder child (comm "gotracectl") execs the
 * command: one goroutine, named by the command, no "gotracectl" left. */
static void test_exec_keeps_goroutine(void)
{
	struct tt x;
	struct gt_thread_snapshot s[1];
	snap(&s[0], 101, 'R', -1, 0);
	snprintf(s[0].comm, sizeof(s[0].comm), "gotracectl");
	GT_REQUIRE(tt_open(&x, s, 1) == 0, "open");
	struct gt_kev_exec e = {0};
	hdr(&e.hdr, GT_KEV_EXEC, 2000, 0, 101);
	e.old_tid = 101;
	snprintf(e.comm, sizeof(e.comm), "sleep");
	feed(&x, &e, sizeof(e));
	sys_enter(&x, 2100, 0, 101, 230);
	sw(&x, 2200, 0, 101, S_SLEEP, 0, 0);
	wake(&x, 2300, 1, 0, 101);
	sw(&x, 2400, 1, 0, 0, 0, 101);
	exit_ev(&x, 2500, 1, 101);
	sw(&x, 2600, 1, 101, S_DEAD, 0, 0);
	if (tt_finish(&x, 5000) == 0) {
		expect_seq(&x, "GoStart p=0 g=1 g=1 seq=1\n"
			       "GoSleep p=0 g=1\n"
			       "GoStart p=1 g=1 g=1 seq=3\n"
			       "GoEnd p=1 g=1");
		GT_CHECK(count_lines(&x, "GoCreate") == 1, "GoCreate count:\n%s", x.dump);
		struct names nm;
		GT_CHECK(names_of(&x, &nm) == 1, "%d goroutines", nm.n);
		GT_CHECK(!strcmp(nm.name[0], "sleep") && nm.tid[0] == 101, "g1 %s", nm.name[0]);
	}
	expect_no_repairs(&x);
	tt_close(&x);
}

/* A thread renamed while waiting, then its tid reused (its exit lost):
 * the retired goroutine is named at removal with its last comm. */
static void test_retired_thread_named(void)
{
	struct tt x;
	struct gt_thread_snapshot s[2];
	snap(&s[0], 101, 'R', -1, 0);
	snap(&s[1], 102, 'S', -1, 1);
	GT_REQUIRE(tt_open(&x, s, 2) == 0, "open");
	rename_ev(&x, 2000, 1, 102, "renamed");
	fork_ev(&x, 2100, 0, 101, 102, "fresh");
	if (tt_finish(&x, 5000) == 0) {
		struct names nm;
		GT_CHECK(names_of(&x, &nm) == 3, "%d goroutines", nm.n);
		GT_CHECK(!strcmp(nm.name[1], "renamed"), "g2 %s", nm.name[1]);
		GT_CHECK(!strcmp(nm.name[2], "fresh") && nm.tid[2] == 102, "g3 %s", nm.name[2]);
	}
	GT_CHECK(x.st.repair[GT_REPAIR_TID_REUSE] == 1, "tid reuse not counted");
	tt_close(&x);
}

static void test_syscall_classes(void)
{
	GT_CHECK(gt_syscall_class(SYS_futex) == GT_SYS_FUTEX, "futex class");
	GT_CHECK(gt_syscall_class(SYS_read) == GT_SYS_READ, "read class");
	GT_CHECK(gt_syscall_class(SYS_writev) == GT_SYS_WRITE, "writev class");
	GT_CHECK(gt_syscall_class(SYS_wait4) == GT_SYS_OTHER, "wait4 class");
	GT_CHECK(gt_syscall_class(SYS_ppoll) == GT_SYS_SELECT, "ppoll class");
	GT_CHECK(gt_syscall_class(SYS_sendmsg) == GT_SYS_NET, "sendmsg class");
	GT_CHECK(gt_syscall_class(SYS_clock_nanosleep) == GT_SYS_SLEEP, "sleep class");
	GT_CHECK(!strcmp(gt_syscall_name(SYS_clock_nanosleep), "clock_nanosleep"), "name");
	GT_CHECK(!strcmp(gt_syscall_name(SYS_read), "read"), "read's name");
	GT_CHECK(!strcmp(gt_syscall_name(SYS_futex), "futex"), "futex's name");
	GT_CHECK(gt_syscall_name(-1) == NULL && gt_syscall_name(100000) == NULL, "range");
}

/* Short and unknown records are counted, never fatal. */
static void test_bad_records(void)
{
	struct tt x;
	GT_REQUIRE(tt_open(&x, NULL, 0) == 0, "open");
	struct gt_kev_switch e = {0};
	hdr(&e.hdr, GT_KEV_SWITCH, 2000, 0, 101);
	feed(&x, &e, sizeof(e.hdr));          /* short */
	e.hdr.type = 99;
	feed(&x, &e, sizeof(e));              /* unknown type */
	if (tt_finish(&x, 5000) == 0)
		GT_CHECK(x.st.repair[GT_REPAIR_BAD_RECORD] == 2, "bad records %llu",
			 (unsigned long long)x.st.repair[GT_REPAIR_BAD_RECORD]);
	tt_close(&x);
}

/* The /proc snapshot of this very process: our thread is running, a
 * helper thread sleeps in a syscall. */
static void test_proc_snapshot_self(void)
{
	struct gt_thread_snapshot *v = NULL;
	int n = 0;
	int r = gt_proc_snapshot(getpid(), &v, &n);
	GT_REQUIRE(r == 0, "gt_proc_snapshot: %s", strerror(-r));
	GT_CHECK(n >= 1, "no threads");
	int self = -1;
	for (int i = 0; i < n; i++)
		if (v[i].tid == (uint32_t)getpid())
			self = i;
	GT_CHECK(self >= 0, "own thread missing");
	if (self >= 0) {
		GT_CHECK(v[self].state == 'R', "state %c", v[self].state);
		GT_CHECK(v[self].cpu >= 0, "cpu %d", v[self].cpu);
		GT_CHECK(strncmp(v[self].comm, "test_translate", 14) == 0, "comm %s", v[self].comm);
	}
	free(v);
	GT_CHECK(gt_proc_snapshot(0x7ffffff0, &v, &n) == -ESRCH, "missing pid");
}

int main(void)
{
	GT_RUN(test_goid_log_after_syscall);
	GT_RUN(test_goid_held_not_stale);
	GT_RUN(test_pipe_ping_pong);
	GT_RUN(test_leave_ends_process);
	GT_RUN(test_unmarked_thread_is_not_ours);
	GT_RUN(test_futex_block);
	GT_RUN(test_sleep);
	GT_RUN(test_nanosleep);
	GT_RUN(test_poll);
	GT_RUN(test_epoll);
	GT_RUN(test_socket_recv);
	GT_RUN(test_accept);
	GT_RUN(test_read_block);
	GT_RUN(test_write_block);
	GT_RUN(test_wait4_block);
	GT_RUN(test_block_outside_syscall);
	GT_RUN(test_block_reason_from_switch);
	GT_RUN(test_preempt);
	GT_RUN(test_syscall_block_shape);
	GT_RUN(test_yield);
	GT_RUN(test_clone_and_exit);
	GT_RUN(test_exit_then_preempted);
	GT_RUN(test_snapshot_states);
	GT_RUN(test_go123_names);
	GT_RUN(test_go123_names_blocking);
	GT_RUN(test_go123_names_idle);
	GT_RUN(test_go123_m_per_p);
	GT_RUN(test_shared_comm_titles);
	GT_RUN(test_wakeup_untraced_busy_cpu);
	GT_RUN(test_irq_wakeup_busy_cpu);
	GT_RUN(test_irq_wakeup_kinds);
	GT_RUN(test_loopback_wakeup);
	GT_RUN(test_loopback_sender);
	GT_RUN(test_wakeup_racing_block);
	GT_RUN(test_wakeup_racing_queued);
	GT_RUN(test_wakeup_all_cpus_busy);
	GT_RUN(test_repairs);
	GT_RUN(test_exec_renames);
	GT_RUN(test_heap);
	GT_RUN(test_alloc_sample_waits_for_its_thread);
	GT_RUN(test_heap_is_the_sessions_sum);
	GT_RUN(test_versions);
	GT_RUN(test_identity_stacks);
	GT_RUN(test_syscall_caller);
	GT_RUN(test_stack_pending);
	GT_RUN(test_syscall_caller_blocking);
	GT_RUN(test_switch_entry);
	GT_RUN(test_switch_entry_other_session);
	GT_RUN(test_rename_names_by_last_comm);
	GT_RUN(test_exec_keeps_goroutine);
	GT_RUN(test_goid_is_tid);
	GT_RUN(test_throttled);
	GT_RUN(test_throttled_lookup_once);
	GT_RUN(test_throttled_after_syscall);
	GT_RUN(test_retired_thread_named);
	GT_RUN(test_syscall_classes);
	GT_RUN(test_bad_records);
	GT_RUN(test_proc_snapshot_self);
	return gt_test_done();
}
