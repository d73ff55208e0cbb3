/* libFuzzer target for the translator: the input is read as a kernel event
 * stream (a snapshot, then records of every type with fields folded into
 * small ranges so that threads, CPUs and timestamps collide); whatever it
 * says, the trace written must be valid for our checker, with one
 * goroutine per thread lifetime, each named by the translator (never the
 * writer's fallback for an identity stack left undefined), else trap.
 *
 * Layout: [ncpus][nsnap][4 bytes per snapshot thread] then records of
 * [selector][struct bytes...]; the selector picks the type and, with its
 * high bit, a truncated record.
 */
// fuzz-links: daemon/translate daemon/common/procfs.c
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check/gt_check.h"
#include "writer/gt_writer.h"
#include "translate/translate.h"

#define NTID 24

static const int64_t nrs[] = {-1, 0, 1, 7, 24, 35, 45, 202, 230, 232, 288, 61};

static int frames(void *ctx, uint32_t tgid, int32_t u, int32_t k, uint64_t caller,
		  struct gt_frame *out, int max)
{
	(void)ctx;
	int n = (int)(((uint32_t)u ^ (uint32_t)k ^ tgid) % 5u);
	for (int i = 0; i < n && i < max; i++)
		out[i] = (struct gt_frame){0x1000u + (uint64_t)i, "fn", "f.c", (uint64_t)i};
	if (caller && n > 0 && n < max) /* one frame more, as the engine inserts */
		out[n++] = (struct gt_frame){caller, "caller", "f.c", 1};
	return n;
}

/* Where frame 0 keeps its return address: every kind, by the id. */
static int ra_slot(void *ctx, uint32_t tgid, int32_t u)
{
	(void)ctx;
	return (int)(((uint32_t)u + tgid) % (GT_UTOP_WORDS + 3u)) - 2; /* LR, none, words, past */
}

static uint32_t fold_tid(uint32_t v)
{
	return v % NTID; /* 0 = idle task */
}

/* One record, aligned and big enough for any type. */
union rec {
	struct gt_kev_hdr h;
	struct gt_kev_exec big;
	struct gt_kev_switch_entry swe;
	uint64_t align;
};

/* Folds the raw fields of one record into ranges where they interact. */
static void fold(union rec *r, int type, int ncpus, uint64_t *ts)
{
	struct gt_kev_hdr *h = &r->h;
	uint64_t raw = h->ts;
	if (raw & 0x8000)
		h->ts = *ts - (raw >> 16 & 0xfff); /* late: before the last */
	else
		h->ts = (*ts += raw & 0xfff);
	h->type = (uint16_t)type;
	h->cpu = (uint16_t)(h->cpu % (ncpus + 2));
	h->tid = fold_tid(h->tid);
	h->tgid = 1;
	h->sessions &= 3;
	switch (type) {
	case GT_KEV_SWITCH: {
		struct gt_kev_switch *e = &r->swe.sw;
		r->swe.entry_sessions &= 3; /* GT_SWITCH_ENTRY: the entry folded in */
		r->swe.top.nwords %= GT_UTOP_WORDS + 2;
		r->swe.top.lr %= 4;
		for (int i = 0; i < GT_UTOP_WORDS; i++)
			r->swe.top.words[i] %= 4;
		e->next_tid = fold_tid(e->next_tid);
		e->prev_sessions &= 3;
		e->next_sessions &= 3;
		e->prev_state &= 0xff;
		e->prev_ustack %= 8;
		e->prev_kstack %= 8;
		e->prev_sysnr = e->prev_sysnr < 0 ? -1 : nrs[(uint32_t)e->prev_sysnr % (sizeof(nrs) / sizeof(nrs[0]))];
		break;
	}
	case GT_KEV_WAKEUP: {
		struct gt_kev_wakeup *e = (void *)r;
		e->target_tid = fold_tid(e->target_tid);
		e->waker_sessions &= 3;
		e->waker_ustack %= 8;
		break;
	}
	case GT_KEV_FORK: {
		struct gt_kev_fork *e = (void *)r;
		e->child_tid = fold_tid(e->child_tid);
		e->parent_ustack %= 8;
		break;
	}
	case GT_KEV_EXEC: {
		struct gt_kev_exec *e = (void *)r;
		e->old_tid = fold_tid(e->old_tid);
		break;
	}
	case GT_KEV_SYS_ENTER: {
		struct gt_kev_sys_enter *e = (void *)r;
		e->nr = nrs[(uint64_t)e->nr % (sizeof(nrs) / sizeof(nrs[0]))];
		e->ustack %= 8;
		/* callers that collide: a few distinct addresses, or none */
		e->top.nwords %= GT_UTOP_WORDS + 2;
		e->top.lr %= 4;
		for (int i = 0; i < GT_UTOP_WORDS; i++)
			e->top.words[i] %= 4;
		break;
	}
	case GT_KEV_CPU_SAMPLE: {
		struct gt_kev_cpu_sample *e = (void *)r;
		e->ustack %= 8;
		e->kstack %= 8;
		break;
	}
	}
}

struct name_tally {
	uint64_t goroutines, unnamed;
};

/* A goroutine is named by the translator iff the top frame of its
 * identity stack is in the file "[thread]" (the checker then reports the
 * frame's line as tid >= 0): the writer's fallback frame is in
 * GT_STACK_FALLBACK_FILE.  The function name is the thread's comm, which
 * the input controls: a comm spelling GT_STACK_FALLBACK_FUNC is a name,
 * not the fallback, so the name's text proves nothing. */
static void tally_name(const struct gt_goroutine_stats *g, void *arg)
{
	struct name_tally *nt = arg;
	nt->goroutines++;
	if (g->name_len == 0 || g->tid < 0)
		nt->unnamed++;
}

static void check_output(int fd, uint64_t threads)
{
	struct stat sb;
	if (fstat(fd, &sb) < 0 || sb.st_size <= 0)
		__builtin_trap();
	uint8_t *data = malloc((size_t)sb.st_size);
	if (!data || pread(fd, data, (size_t)sb.st_size, 0) != sb.st_size)
		__builtin_trap();
	struct gt_check_report rep;
	struct name_tally nt = {0};
	if (gt_check_run(data, (size_t)sb.st_size, 0, &rep, tally_name, &nt) == 1) {
		fprintf(stderr, "invalid trace: %s\n", rep.error);
		__builtin_trap();
	}
	if (nt.goroutines != threads || nt.unnamed) {
		fprintf(stderr, "%llu goroutines for %llu threads, %llu unnamed\n",
			(unsigned long long)nt.goroutines, (unsigned long long)threads,
			(unsigned long long)nt.unnamed);
		__builtin_trap();
	}
	free(data);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	int ncpus = 1 + data[0] % 4, nsnap = data[1] % 8;
	size_t pos = 2;
	struct gt_thread_snapshot snap[8];
	for (int i = 0; i < nsnap; i++, pos += 4) {
		if (pos + 4 > size)
			return 0;
		memset(&snap[i], 0, sizeof(snap[i]));
		snap[i].tid = 1 + data[pos] % (NTID - 1);
		snap[i].tgid = 1;
		snap[i].state = "RSDZTX"[data[pos + 1] % 6];
		snap[i].syscall_nr = nrs[data[pos + 2] % (sizeof(nrs) / sizeof(nrs[0]))];
		snap[i].cpu = (int)(data[pos + 3] % 6) - 1;
		snprintf(snap[i].comm, sizeof(snap[i].comm), "c%u", data[pos] % 3u);
	}
	int fd = memfd_create("fuzz-translate", 0);
	if (fd < 0)
		return 0;
	struct gt_writer *w = NULL;
	struct gt_translator *t = NULL;
	struct gt_stack_source src = {frames, ra_slot, NULL};
	struct gt_translator_opts o = {.ncpus = ncpus, .stacks = &src};
	if (gt_writer_open(&w, fd, GT_V1_19, 1000000000ull) < 0)
		__builtin_trap();
	if (gt_translator_new(&t, w, &o) < 0 || gt_translator_begin(t, 1 << 20, snap, nsnap) < 0)
		__builtin_trap();
	uint64_t ts = 1 << 20;
	while (pos < size) {
		uint8_t sel = data[pos++];
		int type = sel % (GT_KEV_TYPE_MAX + 1);
		size_t want = gt_kev_size(type) ? gt_kev_size(type) : sizeof(struct gt_kev_hdr);
		if (type == GT_KEV_SWITCH) /* read as one only with GT_SWITCH_ENTRY */
			want = sizeof(struct gt_kev_switch_entry);
		size_t n = size - pos < want ? size - pos : want;
		union rec r;
		memset(&r, 0, sizeof(r));
		memcpy(&r, data + pos, n);
		pos += n;
		fold(&r, type, ncpus, &ts);
		size_t len = (sel & 0x80) && n > 8 ? n - 8 : want;
		if (gt_translator_event(t, &r.h, len) < 0)
			__builtin_trap(); /* only the writer can fail, on a memfd */
	}
	if (gt_translator_end(t, ts + 1) < 0)
		__builtin_trap();
	struct gt_translator_stats st;
	gt_translator_stats(t, &st);
	gt_translator_free(t);
	if (gt_writer_close(w) < 0)
		__builtin_trap();
	check_output(fd, st.threads);
	close(fd);
	return 0;
}
