/* The kernel's records of executable mappings, for the symbolizer: one
 * dummy perf event per online CPU, system-wide, that counts nothing but
 * writes a MMAP2 record at every executable mmap (synchronously, in the
 * mmap call), and a COMM record at every exec.  A process that exits
 * before its /proc/PID/maps is read (anything under ~50 ms: its exec event
 * is still in a BPF ring) keeps its mappings that way, as perf's own
 * recordings do.
 *
 * Open only while attached (an idle daemon costs nothing); read without
 * wakeups: poll.c drains them at the start of every round, before the BPF
 * rings, into the merge's perf queue (merge.c), which delivers them in one
 * time order with the events.
 *
 * The watermark for these rings (the T0 rule).  A process migrates: its
 * exec's COMM record may be in CPU 1's ring and the mmaps that follow in
 * CPU 0's, and the rings are read one after the other, so a drain could
 * see a record of one task without the earlier one on another CPU, if
 * that one was written after its ring was read.  Taking the time T0 before
 * reading any ring settles it: a record stamped up to T0 was written before
 * T0, and so was every earlier record of the same task; those are complete
 * once every ring was read to its end, and the rest waits for the next
 * drain.  poll.c takes T0 (its `now`) before calling gt_mmaps_drain and
 * delivers nothing newer than T0 while these rings are open; a ring left
 * unfinished (its budget spent) holds records newer than the last
 * one read from it, which bounds the delivery too. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* Ring bytes, all CPUs together, within [MIN, MAX] a CPU.  A record is
 * about 100 bytes; a ring is read every tick (10 ms), but the engine's
 * thread can stall far longer on a loaded machine (360 ms measured between
 * the attach and the first drain, at load 12 on 2 CPUs), while machine-
 * wide process churn writes ~7000 records a second: a full ring drops the
 * newest records, the ones of the command just launched. */
#define RING_TOTAL (4u << 20)
#define RING_MIN (128u << 10)
#define RING_MAX (512u << 10)
#define MAX_RECORD 65536 /* a record's size is a u16 */

static int perf_open(struct perf_event_attr *a, int cpu)
{
	return (int)syscall(SYS_perf_event_open, a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void fill_attr(struct perf_event_attr *a, size_t data_bytes)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a->sample_id_all = 1;
	a->mmap = 1;  /* executable mappings only (no mmap_data) */
	a->mmap2 = 1; /* with device and inode, to check the file opened */
	a->comm = 1;
	a->comm_exec = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC; /* bpf_ktime_get_ns's clock */
	a->disabled = 1;
	/* nobody sleeps on these descriptors: wake as rarely as possible */
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(data_bytes - data_bytes / 4);
}

static void close_ring(struct gt_mmap_ring *r)
{
	if (r->base)
		munmap(r->base, r->len);
	if (r->fd >= 0)
		close(r->fd);
	r->base = NULL;
	r->fd = -1;
}

/* Data pages a CPU: a power of 2, as perf wants. */
static size_t data_pages(int ncpus, long page)
{
	size_t want = RING_TOTAL / (size_t)(ncpus > 0 ? ncpus : 1), pages = 1;

	want = want < RING_MIN ? RING_MIN : want > RING_MAX ? RING_MAX : want;
	while (pages * (size_t)page < want)
		pages *= 2;
	return pages;
}

static int open_ring(struct gt_mmap_ring *r, int cpu, size_t pages, long page)
{
	struct perf_event_attr a;

	fill_attr(&a, pages * (size_t)page);
	r->fd = perf_open(&a, cpu);
	if (r->fd < 0)
		return -errno;
	r->len = (pages + 1) * (size_t)page;
	r->base = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->base == MAP_FAILED) {
		int e = -errno;

		r->base = NULL;
		close_ring(r);
		return e;
	}
	return 0;
}

static const char *explain(int err)
{
	switch (err) {
	case -EACCES:
	case -EPERM:
		return "not allowed (needs CAP_PERFMON or root, or a lower kernel.perf_event_paranoid)";
	case -ENOSYS:
		return "the kernel has no perf events (CONFIG_PERF_EVENTS)";
	default:
		return strerror(-err);
	}
}

/* Opens an event and its ring on every online CPU; 0, or -errno with
 * mm.why saying why (and nothing left open). */
static int open_all(struct gt_capture *c)
{
	struct gt_mmaps *m = &c->mm;
	long page = sysconf(_SC_PAGESIZE);
	int err = 0, any = 0;

	m->cpu = calloc((size_t)c->ncpus, sizeof(*m->cpu));
	m->copy = malloc(MAX_RECORD);
	if (!m->cpu || !m->copy) {
		snprintf(m->why, sizeof(m->why), "mmap records: out of memory");
		gt_mmaps_close(c);
		return -ENOMEM;
	}
	m->n = c->ncpus;
	for (int i = 0; i < m->n; i++)
		m->cpu[i].fd = -1;
	for (int i = 0; i < m->n && !err; i++) {
		err = open_ring(&m->cpu[i], i, data_pages(c->ncpus, page), page);
		any |= !err;
		if (err == -ENODEV)
			err = 0; /* an offline CPU runs nothing */
	}
	if (!err && !any)
		err = -ENODEV;
	if (err) {
		snprintf(m->why, sizeof(m->why), "perf_event_open of the mmap records: %s",
			 explain(err));
		gt_mmaps_close(c);
		return err;
	}
	m->why[0] = 0;
	return 0;
}

/* Whether the events open here, so that the engine can say at its start
 * why there will be none (mm.why); nothing stays open. */
void gt_mmaps_probe(struct gt_capture *c)
{
	if (open_all(c) == 0)
		gt_mmaps_close(c);
}

void gt_mmaps_close(struct gt_capture *c)
{
	struct gt_mmaps *m = &c->mm;

	for (int i = 0; m->cpu && i < m->n; i++)
		close_ring(&m->cpu[i]);
	free(m->cpu);
	free(m->copy);
	m->cpu = NULL;
	m->copy = NULL;
	m->n = 0;
}

/* Open only while attached: an idle daemon holds no perf event (and
 * daemon_idle.sh counts them).  A failure leaves mm.why and the capture
 * goes on without. */
void gt_mmaps_enable(struct gt_capture *c, int on)
{
	gt_mmaps_close(c);
	if (on && open_all(c) == 0)
		for (int i = 0; i < c->mm.n; i++)
			if (c->mm.cpu[i].fd >= 0)
				ioctl(c->mm.cpu[i].fd, PERF_EVENT_IOC_ENABLE, 0);
}

/* Parsed once here, for its time stamp (and kept only if it is a record
 * we read), and held: the one copy made of it, which the merge delivers.
 * A record that finds the merge's queue full is dropped and counted, like
 * the kernel's own losses: left in the ring, it would hold the records
 * behind it, and with them the watermark of every ring. */
static void keep(struct gt_capture *c, const void *rec, size_t len, uint64_t *ts)
{
	struct gt_mmaps *m = &c->mm;
	struct gt_mmap_rec r;
	struct gt_mmap_held *h;
	int err = gt_mmap_record_parse(rec, len, &r);

	if (err == -EINVAL)
		m->bad++;
	if (err)
		return;
	m->records++;
	*ts = r.ts;
	if (r.kind == GT_MMAP_LOST)
		m->lost += r.lost;
	h = gt_mmap_record_hold(&r);
	if (!h || gt_ring_merge_push_mmap(&c->m, h)) {
		free(h);
		m->dropped++;
	}
}

/* The record at tail, contiguous (one that wraps is copied out first). */
static const void *record_at(struct gt_capture *c, uint8_t *data, uint64_t size,
			     uint64_t off, uint32_t len)
{
	if (off + len <= size)
		return data + off;
	memcpy(c->mm.copy, data + off, size - off);
	memcpy(c->mm.copy + (size - off), data, len - (size - off));
	return c->mm.copy;
}

/* Reads up to `budget` records into the merge; 1 if the ring is empty
 * now, else 0 with *newest the time of the last record read (the ones
 * left are written later: a CPU's ring is in time order). */
static int drain_ring(struct gt_capture *c, struct gt_mmap_ring *r, unsigned budget,
		      uint64_t *newest)
{
	struct perf_event_mmap_page *pg = r->base;
	uint8_t *data = (uint8_t *)r->base + pg->data_offset;
	uint64_t size = pg->data_size, mask = size - 1;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail;

	if (!pg->data_offset || !size || size & mask || pg->data_offset + size > r->len ||
	    head - tail > size) {
		c->mm.bad++; /* a layout we do not know, or a torn head */
		__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
		return 1;
	}
	for (; tail < head && budget; budget--) {
		/* 8-byte records in a power-of-2 ring: a header never wraps */
		const struct perf_event_header *h = (const void *)(data + (tail & mask));

		if (h->size < sizeof(*h) || h->size % 8 || h->size > head - tail) {
			c->mm.bad++;
			tail = head;
			break;
		}
		keep(c, record_at(c, data, size, tail & mask, h->size), h->size, newest);
		tail += h->size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	return tail == head;
}

int gt_mmaps_drain(struct gt_capture *c, unsigned budget, uint64_t *newest)
{
	int all = 1;

	*newest = UINT64_MAX;
	for (int i = 0; i < c->mm.n; i++) {
		uint64_t t = 0;

		if (c->mm.cpu[i].fd >= 0 && !drain_ring(c, &c->mm.cpu[i], budget, &t)) {
			all = 0;
			if (t < *newest)
				*newest = t;
		}
	}
	return all;
}

int gt_mmaps_open(const struct gt_capture *c)
{
	return c->mm.n > 0;
}

void gt_capture_on_mmap(struct gt_capture *c, gt_capture_mmap_cb cb, void *ctx)
{
	c->mm.cb = cb;
	c->mm.ctx = ctx;
}

const char *gt_capture_mmap_unavailable(struct gt_capture *c)
{
	return c->mm.why[0] ? c->mm.why : NULL;
}
