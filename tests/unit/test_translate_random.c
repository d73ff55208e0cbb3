/* Adversarial kernel streams through the translator: a small simulated
 * kernel (CPUs, threads, syscalls, forks, exits, tid reuse) produces a
 * plausible event stream, which is then damaged the ways real capture
 * damages it (dropped, duplicated and swapped events, clock skew between
 * CPUs, CPUs >= ncpus, garbage records, threads first seen mid-flight).
 * Every output file must pass our checker and Go's (`-d` + viewer pages).
 *
 * Seeds are printed; GT_SEED=N reruns one stream, GT_STREAMS=N sets how
 * many run (default 30).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "analyze/gt_analyze.h"
#include "check/gt_check.h"
#include "gt_test.h"
#include "v2/gt_v2enc.h"
#include "writer/gt_writer.h"
#include "translate/translate.h"

#define MAXT 64          /* simulated thread slots */
#define MAXCPU 6
#define TID0 200         /* traced tids are TID0 + slot (+ reuse offset) */

struct rng {
	uint64_t s;
};

static uint32_t rnd(struct rng *r, uint32_t n)
{
	r->s ^= r->s << 13;
	r->s ^= r->s >> 7;
	r->s ^= r->s << 17;
	return n ? (uint32_t)(r->s % n) : 0;
}

enum sim_state { SIM_FREE, SIM_RUN, SIM_READY, SIM_SLEEP };

struct sim_thread {
	enum sim_state st;
	uint32_t tid;
	int cpu;
	int64_t sys;       /* -1 none */
};

struct sim {
	struct rng r;
	int ncpus;         /* CPUs the translator is told about */
	int kcpus;         /* CPUs events come from (may exceed ncpus) */
	struct sim_thread th[MAXT];
	int cur[MAXCPU];   /* slot running on the CPU, -1 idle/untraced */
	uint64_t ts;
	int64_t skew[MAXCPU];
	/* the damaged stream */
	uint8_t *buf;
	size_t len, cap;
	size_t *offs;
	size_t nev, capev;
	int pct_drop, pct_dup, pct_swap, pct_garbage;
};

static const int64_t sys_nrs[] = {0, 1, 7, 23, 24, 35, 45, 46, 202, 230, 232, 281, 288, 61, -1};

static void push_raw(struct sim *s, const void *ev, size_t len)
{
	if (!s->buf || s->len + len > s->cap) { /* a first, empty record too */
		s->cap = (s->cap + len) * 2 + 64;
		s->buf = realloc(s->buf, s->cap);
	}
	if (s->nev == s->capev) {
		s->capev = s->capev ? s->capev * 2 : 1024;
		s->offs = realloc(s->offs, (s->capev + 1) * sizeof(*s->offs));
	}
	if (!s->buf || !s->offs)
		abort();
	memcpy(s->buf + s->len, ev, len);
	s->offs[s->nev++] = s->len;
	s->len += len;
	s->offs[s->nev] = s->len;
}

/* Applies damage as the event is produced. */
static void emit(struct sim *s, struct gt_kev_hdr *h, size_t len)
{
	h->ts = s->ts + (uint64_t)((int64_t)1000000 + s->skew[h->cpu % MAXCPU]);
	if ((int)rnd(&s->r, 100) < s->pct_drop)
		return;
	if ((int)rnd(&s->r, 100) < s->pct_garbage) {
		uint8_t *g = (uint8_t *)h;
		for (size_t i = sizeof(*h); i < len; i++)
			if (rnd(&s->r, 4) == 0)
				g[i] = (uint8_t)rnd(&s->r, 256);
		if (rnd(&s->r, 3) == 0)
			len = rnd(&s->r, (uint32_t)len + 1);
	}
	push_raw(s, h, len);
	if ((int)rnd(&s->r, 100) < s->pct_dup)
		push_raw(s, h, len);
}

static uint32_t sessions_of(int slot)
{
	return slot >= 0 ? 1 : 0;
}

static void hdr(struct sim *s, struct gt_kev_hdr *h, int type, int cpu, int slot)
{
	h->type = (uint16_t)type;
	h->cpu = (uint16_t)cpu;
	h->tid = slot >= 0 ? s->th[slot].tid : (uint32_t)(rnd(&s->r, 3) ? 0 : 5000 + rnd(&s->r, 4));
	h->tgid = slot >= 0 ? TID0 : h->tid;
	h->sessions = sessions_of(slot);
}

static int pick(struct sim *s, enum sim_state want)
{
	int start = (int)rnd(&s->r, MAXT);
	for (int i = 0; i < MAXT; i++) {
		int k = (start + i) % MAXT;
		if (s->th[k].st == want)
			return k;
	}
	return -1;
}

static void do_switch(struct sim *s, int c)
{
	struct gt_kev_switch e = {0};
	int prev = s->cur[c];
	int next = rnd(&s->r, 4) ? pick(s, SIM_READY) : -1;
	hdr(s, &e.hdr, GT_KEV_SWITCH, c, prev);
	if (prev >= 0) {
		struct sim_thread *p = &s->th[prev];
		int how = (int)rnd(&s->r, 3);
		if (how == 0 || p->sys == 24) {
			e.prev_state = 0;
			e.flags = rnd(&s->r, 2) ? GT_SWITCH_PREEMPT : 0;
			p->st = SIM_READY;
		} else {
			e.prev_state = how == 1 ? 1 : 2;
			/* now and then the end of a racing waking, whether
			 * or not one is pending (its waking may be lost) */
			e.flags = rnd(&s->r, 8) ? 0 : GT_SWITCH_RACED;
			p->st = SIM_SLEEP;
		}
		p->cpu = -1;
	}
	e.prev_sessions = sessions_of(prev);
	e.next_sessions = sessions_of(next);
	e.prev_sysnr = prev >= 0 ? (int32_t)s->th[prev].sys : -1;
	e.prev_ustack = (int32_t)rnd(&s->r, 8) - 1;
	e.prev_kstack = (int32_t)rnd(&s->r, 8) - 1;
	if (next >= 0) {
		e.next_tid = s->th[next].tid;
		e.next_tgid = TID0;
		s->th[next].st = SIM_RUN;
		s->th[next].cpu = c;
	} else if (rnd(&s->r, 2)) {
		e.next_tid = 6000 + rnd(&s->r, 3);
		e.next_tgid = e.next_tid;
	}
	snprintf(e.prev_comm, sizeof(e.prev_comm), "w%u", e.hdr.tid % 5);
	snprintf(e.next_comm, sizeof(e.next_comm), "w%u", e.next_tid % 5);
	s->cur[c] = next;
	emit(s, &e.hdr, sizeof(e));
}

/* The sched_wakeup that ended a racing waking (GT_WAKEUP_DONE, from an
 * earlier build's programs: still read), for any thread: its waking may
 * have been lost, or it may never have raced. */
static void do_wakeup_done(struct sim *s, int c)
{
	struct gt_kev_wakeup e = {0};
	hdr(s, &e.hdr, GT_KEV_WAKEUP, c, s->cur[c]);
	e.target_tid = s->th[rnd(&s->r, MAXT)].tid;
	e.target_tgid = TID0;
	e.flags = GT_WAKEUP_DONE;
	e.waker_ustack = -1;
	emit(s, &e.hdr, sizeof(e));
}

/* A wakeup of a sleeper, from task or interrupt context; now and then one
 * of a running thread flagged as racing its block (GT_WAKEUP_SWITCHING, or
 * GT_WAKEUP_RACING, still queued), whether or not it blocks next. */
static void do_wakeup(struct sim *s, int c)
{
	static const uint32_t kinds[] = {0, 0, 0, GT_WAKEUP_HARDIRQ | GT_WAKEUP_TIMER,
					 GT_WAKEUP_HARDIRQ, GT_WAKEUP_SOFTIRQ, GT_WAKEUP_NMI};
	int racing = rnd(&s->r, 10) == 0;
	int t = pick(s, racing ? SIM_RUN : SIM_SLEEP);
	if (t < 0)
		return;
	struct gt_kev_wakeup e = {0};
	hdr(s, &e.hdr, GT_KEV_WAKEUP, c, s->cur[c]);
	e.target_tid = s->th[t].tid;
	e.target_tgid = TID0;
	e.flags = kinds[rnd(&s->r, sizeof(kinds) / sizeof(kinds[0]))] |
		  (!racing ? 0 : rnd(&s->r, 2) ? GT_WAKEUP_SWITCHING : GT_WAKEUP_RACING);
	e.waker_sessions = e.hdr.sessions;
	e.waker_ustack = (int32_t)rnd(&s->r, 8) - 1;
	if (!racing)
		s->th[t].st = SIM_READY;
	emit(s, &e.hdr, sizeof(e));
	if (rnd(&s->r, 4) == 0)
		do_wakeup_done(s, c);
}

static void do_syscall(struct sim *s, int c)
{
	int t = s->cur[c];
	if (t < 0)
		return;
	struct sim_thread *th = &s->th[t];
	if (th->sys >= 0 && rnd(&s->r, 2)) {
		th->sys = -1; /* a return: only later switches show it */
		return;
	}
	struct gt_kev_sys_enter e = {0};
	hdr(s, &e.hdr, GT_KEV_SYS_ENTER, c, t);
	e.nr = sys_nrs[rnd(&s->r, sizeof(sys_nrs) / sizeof(sys_nrs[0]))];
	e.ustack = (int32_t)rnd(&s->r, 8) - 1;
	e.top.nwords = rnd(&s->r, 2) ? GT_UTOP_WORDS : 0;
	e.top.lr = rnd(&s->r, 3) ? 0x401000 + 16 * rnd(&s->r, 4) : 0;
	for (int i = 0; i < GT_UTOP_WORDS; i++)
		e.top.words[i] = rnd(&s->r, 2) ? 0x402000 + 16 * rnd(&s->r, 4) : 0;
	th->sys = e.nr;
	emit(s, &e.hdr, sizeof(e));
}

static void do_fork(struct sim *s, int c)
{
	int child = pick(s, SIM_FREE);
	if (child < 0)
		return;
	struct gt_kev_fork e = {0};
	hdr(s, &e.hdr, GT_KEV_FORK, c, s->cur[c]);
	struct sim_thread *k = &s->th[child];
	/* A slot's tid is reused (same tid again) half of the time. */
	if (!k->tid || rnd(&s->r, 2))
		k->tid = TID0 + (uint32_t)child + 1000 * rnd(&s->r, 3);
	k->st = SIM_READY;
	k->sys = -1;
	e.child_tid = k->tid;
	e.child_tgid = TID0;
	e.parent_ustack = (int32_t)rnd(&s->r, 8) - 1;
	snprintf(e.child_comm, sizeof(e.child_comm), "w%u", rnd(&s->r, 5));
	emit(s, &e.hdr, sizeof(e));
}

static void do_exit(struct sim *s, int c)
{
	int t = s->cur[c];
	if (t < 0)
		return;
	struct gt_kev_exit e = {0};
	hdr(s, &e.hdr, GT_KEV_EXIT, c, t);
	emit(s, &e.hdr, sizeof(e));
	s->ts += 50;
	struct gt_kev_switch w = {0};
	hdr(s, &w.hdr, GT_KEV_SWITCH, c, t);
	w.prev_state = 0x80;
	w.prev_sessions = 1;
	w.prev_ustack = w.prev_kstack = -1;
	s->th[t].st = SIM_FREE;
	s->cur[c] = -1;
	emit(s, &w.hdr, sizeof(w));
}

static void do_misc(struct sim *s, int c)
{
	int t = s->cur[c];
	switch (rnd(&s->r, 5)) {
	case 0: {
		struct gt_kev_rename e = {0};
		hdr(s, &e.hdr, GT_KEV_RENAME, c, t);
		snprintf(e.newcomm, sizeof(e.newcomm), "n%u", rnd(&s->r, 4));
		emit(s, &e.hdr, sizeof(e));
		break;
	}
	case 1: {
		struct gt_kev_heap e = {0};
		hdr(s, &e.hdr, GT_KEV_HEAP, c, t);
		e.live_bytes = rnd(&s->r, 1 << 20);
		e.limit_bytes = rnd(&s->r, 2) << 24;
		emit(s, &e.hdr, sizeof(e));
		break;
	}
	case 2: {
		struct gt_kev_cpu_sample e = {0};
		hdr(s, &e.hdr, GT_KEV_CPU_SAMPLE, c, t);
		e.ustack = (int32_t)rnd(&s->r, 8) - 1;
		e.kstack = (int32_t)rnd(&s->r, 8) - 1;
		emit(s, &e.hdr, sizeof(e));
		break;
	}
	case 3: {
		if (t < 0)
			break;
		struct gt_kev_exec e = {0};
		hdr(s, &e.hdr, GT_KEV_EXEC, c, t);
		e.old_tid = s->th[t].tid;
		snprintf(e.comm, sizeof(e.comm), "exe%u", rnd(&s->r, 3));
		emit(s, &e.hdr, sizeof(e));
		break;
	}
	default: {
		struct gt_kev_rss e = {0};
		hdr(s, &e.hdr, GT_KEV_RSS, c, t);
		e.rss_bytes = rnd(&s->r, 1 << 30);
		emit(s, &e.hdr, sizeof(e));
	}
	}
}

/* Swaps some neighbouring records (reordering by a late merge) into out;
 * afterwards offs[i] is where the i-th record of out starts. */
static void reorder(struct sim *s, uint8_t *out)
{
	size_t *order = malloc((s->nev + 1) * sizeof(*order));
	size_t *noffs = malloc((s->nev + 1) * sizeof(*noffs));
	if (!order || !noffs)
		abort();
	for (size_t i = 0; i < s->nev; i++)
		order[i] = i;
	for (size_t i = 0; i + 1 < s->nev; i++)
		if ((int)rnd(&s->r, 100) < s->pct_swap) {
			size_t x = order[i];
			order[i] = order[i + 1];
			order[i + 1] = x;
		}
	size_t pos = 0;
	for (size_t i = 0; i < s->nev; i++) {
		size_t k = order[i], n = s->offs[k + 1] - s->offs[k];
		memcpy(out + pos, s->buf + s->offs[k], n);
		noffs[i] = pos;
		pos += n;
	}
	noffs[s->nev] = pos;
	free(order);
	free(s->offs);
	s->offs = noffs;
}

/* Where a user stack's frame 0 keeps its return address: derived from
 * the id, every kind (a word, beyond the words, the link register, none). */
static int fake_ra_slot(void *ctx, uint32_t tgid, int32_t u)
{
	static const int slots[] = {0, 5, GT_UTOP_WORDS, GT_RA_LR, GT_RA_NONE};
	(void)ctx;
	return slots[((uint32_t)u + tgid) % 5u];
}

/* Synthetic symbolized stacks: depth and names derived from the ids. */
static int fake_frames(void *ctx, uint32_t tgid, int32_t u, int32_t k, uint64_t caller,
		       struct gt_frame *out, int max)
{
	static const char *const fn[] = {"main", "worker_loop", "read_request", "[k] schedule"};
	(void)ctx;
	int n = (int)(((uint32_t)u + 2u) * ((uint32_t)k + 2u) % 9u);
	if (u == 6)
		n = 300; /* more than a trace can hold: the translator caps */
	for (int i = 0; i < n && i < max; i++)
		out[i] = (struct gt_frame){0x400000 + 16u * ((uint64_t)i + (uint32_t)u * 31u + (uint32_t)k * 7u),
					   fn[((uint32_t)i + tgid) % 4],
					   "/src/w.c", (uint64_t)i + 1};
	/* the caller a syscall's stack top named, as user frame 1 */
	if (caller && n >= 2 && n < max) {
		memmove(&out[2], &out[1], (size_t)(n - 1) * sizeof(*out));
		out[1] = (struct gt_frame){caller, "read_blocking", "/src/w.c", 7};
		n++;
	}
	return n < max ? n : max;
}

/* Goroutine names as our checker reads them from the identity stacks. */
struct name_tally {
	uint64_t goroutines, unnamed;
	char first_unnamed[64];
};

static void tally_name(const struct gt_goroutine_stats *g, void *arg)
{
	struct name_tally *nt = arg;
	nt->goroutines++;
	if (g->name_len == 0 || g->tid < 0 ||
	    (g->name_len == strlen(GT_STACK_FALLBACK_FUNC) &&
	     !memcmp(g->name, GT_STACK_FALLBACK_FUNC, g->name_len))) {
		if (!nt->unnamed++)
			snprintf(nt->first_unnamed, sizeof(nt->first_unnamed), "g%llu '%.*s'",
				 (unsigned long long)g->id, (int)g->name_len, g->name);
	}
}

/* The same stream through the v2 output (record --go-version 1.22|1.23):
 * the encoder accepts every call (Go's rules), our analysis reads the file
 * strictly with one goroutine per thread lifetime, each named by its
 * thread (its tid known), and Go 1.22/1.23's parsers and Go 1.23's viewer
 * accept it. */
static int run_v2(uint64_t seed, int version, int ncpus, const uint8_t *stream,
		  const size_t *offs, size_t nev, const struct gt_thread_snapshot *snap, int nsnap,
		  uint64_t end, uint64_t want_threads, char *why, size_t whylen)
{
	char path[] = "/tmp/gt-test-translate-random-v2-XXXXXX";
	int fd = mkstemp(path), rc = -1, ok;
	struct gt_v2enc e;
	struct gt_translator *t = NULL;
	struct gt_stack_source src = {fake_frames, fake_ra_slot, NULL};
	struct gt_translator_opts o = {.ncpus = ncpus, .stacks = &src, .go_version = 1000 + version,
				       .v2 = &e};
	struct gt_analysis a;
	struct gt_analyze_opts ao = {.since_ns = 0, .until_ns = -1, .strict = 1};
	struct stat st;
	size_t unnamed = 0, ng = 0;
	unsigned long long gens = 0;
	void *data;
	int r;

	memset(&e, 0, sizeof(e));
	r = fd < 0 ? -errno : gt_v2enc_init(&e, version, 1000000000ull, gt_test_fd_write, &fd);
	if (!r) {
		gt_v2enc_stage(&e);
		r = gt_translator_new(&t, NULL, &o);
	}
	if (!r)
		r = gt_translator_begin(t, 1000000, snap, nsnap);
	for (size_t i = 0; !r && i < nev; i++)
		r = gt_translator_event(t, (const struct gt_kev_hdr *)(stream + offs[i]),
					offs[i + 1] - offs[i]);
	if (!r)
		r = gt_translator_end(t, end);
	if (!r)
		r = gt_v2enc_finish(&e);
	gt_translator_free(t);
	if (r) {
		snprintf(why, whylen, "v2 (1.%d): translate/encode failed: %s: %s", version,
			 strerror(-r), e.failed ? e.error : "");
		goto out;
	}
	data = fstat(fd, &st) == 0 && st.st_size ?
		mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	if (data == MAP_FAILED) {
		snprintf(why, whylen, "v2: empty file");
		goto out;
	}
	ok = gt_analyze(&a, data, (size_t)st.st_size, &ao) == 0;
	for (size_t i = 0; ok && i < a.nthreads; i++) {
		size_t len;
		int64_t tid;

		gt_an_thread_name(&a, &a.threads[i], &len, &tid);
		unnamed += tid < 0;
	}
	ng = a.nthreads;
	gens = a.generations;
	if (!ok)
		snprintf(why, whylen, "v2 (1.%d): our analysis: %s", version, a.error);
	else if (ng != want_threads || unnamed)
		snprintf(why, whylen, "v2 (1.%d): %zu goroutines for %llu thread lifetimes, %zu "
			 "without their thread's name", version, ng,
			 (unsigned long long)want_threads, unnamed);
	gt_analysis_free(&a);
	munmap(data, (size_t)st.st_size);
	if (!ok || ng != want_threads || unnamed)
		goto out;
	if (gt_test_gocheck(path, why, whylen) != 0)
		goto out;
	printf("seed %llu: v2 1.%d: %lld bytes, %llu generations\n", (unsigned long long)seed,
	       version, (long long)st.st_size, gens);
	rc = 0;
out:
	gt_v2enc_free(&e);
	if (fd >= 0)
		close(fd);
	if (rc == 0 || !getenv("GT_KEEP"))
		unlink(path);
	else
		fprintf(stderr, "kept %s\n", path);
	return rc;
}

static int run_stream(uint64_t seed, char *why, size_t whylen)
{
	struct sim s;
	memset(&s, 0, sizeof(s));
	s.r.s = seed * 0x9e3779b97f4a7c15ull + 1;
	s.ncpus = 1 + (int)rnd(&s.r, 4);
	s.kcpus = s.ncpus + (rnd(&s.r, 4) == 0);
	s.pct_drop = (int)rnd(&s.r, 15);
	s.pct_dup = (int)rnd(&s.r, 5);
	s.pct_swap = (int)rnd(&s.r, 10);
	s.pct_garbage = (int)rnd(&s.r, 3);
	for (int c = 0; c < MAXCPU; c++) {
		s.cur[c] = -1;
		s.skew[c] = rnd(&s.r, 3) == 0 ? (int64_t)rnd(&s.r, 4000) - 2000 : 0;
	}
	/* Initial threads: a snapshot that is itself partly wrong. */
	struct gt_thread_snapshot snap[16];
	int nsnap = (int)rnd(&s.r, 12);
	for (int i = 0; i < nsnap; i++) {
		struct sim_thread *th = &s.th[i];
		th->tid = TID0 + (uint32_t)i;
		th->sys = -1;
		th->st = rnd(&s.r, 2) ? SIM_SLEEP : SIM_READY;
		th->cpu = -1;
		memset(&snap[i], 0, sizeof(snap[i]));
		snap[i].tid = th->tid;
		snap[i].tgid = TID0;
		snap[i].state = "RSDZT"[rnd(&s.r, 5)];
		snap[i].syscall_nr = sys_nrs[rnd(&s.r, sizeof(sys_nrs) / sizeof(sys_nrs[0]))];
		snap[i].cpu = (int)rnd(&s.r, (uint32_t)s.kcpus + 1) - 1;
		snprintf(snap[i].comm, sizeof(snap[i].comm), "w%d", i % 3);
	}
	int nsteps = 300 + (int)rnd(&s.r, 1500);
	for (int i = 0; i < nsteps; i++) {
		/* one stream in three spans seconds: v2's generations (one a
		 * second) cut it, with threads blocked, runnable and running
		 * across each boundary */
		s.ts += 1 + rnd(&s.r, seed % 3 ? 2000 : 4000000);
		int c = (int)rnd(&s.r, (uint32_t)s.kcpus);
		switch (rnd(&s.r, 10)) {
		case 0: case 1: case 2: do_switch(&s, c); break;
		case 3: case 4: do_wakeup(&s, c); break;
		case 5: case 6: do_syscall(&s, c); break;
		case 7: do_fork(&s, c); break;
		case 8: if (rnd(&s.r, 3) == 0) do_exit(&s, c); break;
		default: do_misc(&s, c);
		}
	}
	uint8_t *stream = malloc(s.len + 1);
	if (!stream)
		abort();
	reorder(&s, stream);

	char path[] = "/tmp/gt-test-translate-random-XXXXXX";
	int fd = mkstemp(path), rc = -1;
	struct gt_writer *w = NULL;
	struct gt_translator *t = NULL;
	struct gt_stack_source src = {fake_frames, fake_ra_slot, NULL};
	struct gt_translator_opts o = {.ncpus = s.ncpus, .stacks = &src};
	int r = fd < 0 ? -errno : gt_writer_open(&w, fd, GT_V1_19, 1000000000ull);
	if (!r)
		r = gt_translator_new(&t, w, &o);
	if (!r)
		r = gt_translator_begin(t, 1000000, snap, nsnap);
	for (size_t i = 0; !r && i < s.nev; i++) {
		size_t len = s.offs[i + 1] - s.offs[i];
		r = gt_translator_event(t, (const struct gt_kev_hdr *)(stream + s.offs[i]), len);
	}
	struct gt_translator_stats st = {0};
	if (!r)
		r = gt_translator_end(t, s.ts + 2000000);
	if (t)
		gt_translator_stats(t, &st);
	gt_translator_free(t);
	if (w) {
		int c = gt_writer_close(w);
		if (!r)
			r = c;
	}
	if (fd >= 0)
		close(fd);
	if (r) {
		snprintf(why, whylen, "translate/write failed: %s", strerror(-r));
		goto out;
	}
	struct gt_check_report rep;
	struct name_tally nt = {0};
	if (gt_check_file_run(path, 0, &rep, tally_name, &nt) != 0) {
		snprintf(why, whylen, "our checker: %s", rep.error);
		goto out;
	}
	/* One goroutine per thread lifetime, each named by the translator
	 * (never the writer's fallback for an identity left undefined). */
	if (nt.goroutines != st.threads || nt.unnamed) {
		snprintf(why, whylen, "%llu goroutines for %llu thread lifetimes, %llu unnamed (%s)",
			 (unsigned long long)nt.goroutines, (unsigned long long)st.threads,
			 (unsigned long long)nt.unnamed, nt.first_unnamed);
		goto out;
	}
	if (gt_test_gocheck(path, why, whylen) != 0)
		goto out;
	if (run_v2(seed, seed % 2 ? 22 : 23, s.ncpus, stream, s.offs, s.nev, snap, nsnap,
		   s.ts + 2000000, st.threads, why, whylen))
		goto out;
	printf("seed %llu: ncpus %d, %zu kernel events, %llu go events, %llu repairs\n",
	       (unsigned long long)seed, s.ncpus, s.nev, (unsigned long long)st.events_out,
	       (unsigned long long)st.repairs);
	rc = 0;
out:
	if (rc == 0 || !getenv("GT_KEEP"))
		unlink(path);
	else
		fprintf(stderr, "kept %s\n", path);
	free(stream);
	free(s.buf);
	free(s.offs);
	return rc;
}

int main(void)
{
	const char *one = getenv("GT_SEED");
	const char *ns = getenv("GT_STREAMS");
	int n = ns ? atoi(ns) : 30;
	uint64_t base = one ? strtoull(one, NULL, 0) : (uint64_t)getpid() * 1000003u;
	if (one)
		n = 1;
	for (int i = 0; i < n; i++) {
		uint64_t seed = base + (uint64_t)i;
		char name[64], why[4096] = "";
		/* The name stays the same from run to run; the seed is on its own line. */
		snprintf(name, sizeof(name), "random_stream_%d", i);
		printf("# %s: seed %llu (rerun: GT_SEED=%llu)\n", name, (unsigned long long)seed,
		       (unsigned long long)seed);
		int ok = run_stream(seed, why, sizeof(why)) == 0;
		gt_test_report(name, ok, why);
		if (!ok)
			printf("     also: rerun with GT_SEED=%llu\n", (unsigned long long)seed);
	}
	return gt_test_done();
}
