/* Internals shared by the capture_*.c files (not for other modules). */
#ifndef GT_CAPTURE_INTERNAL_H
#define GT_CAPTURE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h> /* before gotraced.h: libbpf headers need the UAPI types */

#include "capture.h"

struct gotraced_bpf;
struct bpf_link;
struct bpf_program;

/* User stack copies remembered per ring: the records that name a copy
 * follow it in its ring, from the same BPF program (ustack.bpf.h). */
#define GT_RING_COPIES 4

/* One CPU's ring buffer, read through its own mmap (libbpf 1.1 cannot stop
 * between records without losing one, nor tell which ring is behind). */
struct gt_ring {
	int fd;
	unsigned long *consumer;  /* consumer position page (read-write) */
	unsigned long *producer;  /* producer position page + data (read-only) */
	uint8_t *data;            /* data area, mapped once (ring.c says why) */
	uint64_t mask;            /* data size - 1 */
	size_t prod_len;          /* length of the producer mapping */
	uint8_t *wrap;            /* a record that wraps, copied whole */
	size_t wrap_cap;
	uint64_t newest_ts;       /* newest timestamp copied out of this ring */
	/* the last user stack copies read (GT_KEV_USTACK, GT_KEV_PYSTACK):
	 * their ids in BPF (GT_STACK_DWARF or GT_STACK_PY | seq) and the ids
	 * the callbacks gave them */
	struct { int32_t bpf_id, id; } copies[GT_RING_COPIES];
	unsigned ncopies;
};

/* A filter map's key found last (poll.c): 8 bytes, a tgid's 4 or a
 * cgroup id's 8. */
struct gt_any_key {
	uint64_t key;
	int have;
};

/* seq = arrival order, which breaks ties between equal timestamps. */
struct gt_slot {
	uint64_t seq;
	uint32_t len;
	uint32_t pad;
	union gt_kev_any ev;
};

/* What a slot of the perf records' queue holds: the time, and the held
 * record (up to 4 KiB of path: too big for a slot, so the slot points at
 * the one copy made of it). */
struct gt_mmap_kev {
	struct gt_kev_hdr hdr;     /* ts only */
	struct gt_mmap_held *h;
};
_Static_assert(sizeof(struct gt_mmap_kev) <= sizeof(union gt_kev_any),
	       "a perf record's slot must fit the merge's slots");

/* The events copied out of one ring, in timestamp order: a ring is in
 * order but for events of nested programs (an interrupt's record stamped
 * between another's reservation and its stamp), which push() sorts in. */
struct gt_fifo {
	struct gt_slot *slots;     /* cap entries, allocated once */
	uint32_t cap;              /* a power of 2 */
	uint32_t head, tail;       /* free-running; tail - head = count */
};

struct gt_ring_merge {
	struct gt_fifo *q;         /* one per ring, then the perf records' */
	int nq;
	int mq;                    /* the perf records' queue: the last */
	uint32_t nbuf;             /* events buffered, all queues */
	uint64_t seq;
	uint64_t last_ts;          /* last delivered timestamp */
	int touched;               /* slots written since the last release */
};

/* mmap_events.c: one CPU's dummy perf event and its ring. */
struct gt_mmap_ring {
	int fd;                    /* -1: none (CPU offline at open) */
	void *base;                /* control page + data */
	size_t len;
};

struct gt_mmaps {
	struct gt_mmap_ring *cpu;  /* n entries; NULL: not available (why) */
	int n;
	gt_capture_mmap_cb cb;
	void *ctx;
	uint8_t *copy;             /* a record that wraps, copied out */
	uint64_t records, lost, bad;
	uint64_t dropped;          /* not kept: out of memory */
	char why[200];
};

struct gt_capture {
	struct gotraced_bpf *skel;  /* the maps' owner; its programs are not loaded */
	struct gotraced_bpf *groups[GT_CAPTURE_LOAD_GROUPS]; /* the programs, shared out */
	struct bpf_program *sys_prog; /* gt_sys_enter as loaded, or NULL */
	const int *ring_fds;       /* while opening: each CPU's ring, to install */
	struct bpf_link **links;   /* while attached: one per attached program */
	int nlinks;
	struct bpf_link *sys_link; /* sys_enter's, while attached and wanted */
	int attached;
	int ncpus;
	int epfd;
	struct gt_ring *rings;
	struct gt_ring_merge m;
	uint64_t lag_ns;
	int tgids_fd, cgroups_fd, stacks_fd, stats_fd, spill_fd;
	struct gt_any_key any_tgid, any_cgroup; /* poll.c tracing_any */
	int py_procs_fd;           /* bpf/python.bpf.h's py_procs */
	int go_procs_fd;           /* bpf/goid.bpf.h's go_procs */
	volatile uint32_t *go_procs_any; /* its flag in the skeleton's .bss */
	struct gt_capture_stats st;
	uint64_t bad_records;      /* records with an impossible length */
	unsigned dwarf_bytes[GT_MAX_SESSIONS]; /* each session's dwarf copy size */
	gt_capture_ustack_cb ustack_cb;
	gt_capture_exec_cb exec_cb;
	void *ustack_ctx;
	gt_capture_pystack_cb py_cb; /* GT_KEV_PYSTACK records (py_procs.c) */
	void *py_ctx;
	gt_capture_goid_cb goid_cb; /* labelled GT_KEV_GOID records (ring.c) */
	void *goid_ctx;
	uint64_t hold_ts;          /* deliver nothing from it on (poll.c); 0: none */
	struct gt_mmaps mm;
	struct gt_capture_timing timing;
};

/* percpu.c: distances of per-CPU variables from `runqueues` (0 = not
 * found), for the wakeup program's interrupt test.  0 or -errno. */
struct gt_percpu_offsets {
	int64_t preempt_count_from_rq;
	int64_t hrtimer_bases_from_rq;
};
struct btf;
int gt_capture_percpu_offsets(const struct btf *btf, struct gt_percpu_offsets *o);

/* kernel_check.c: gt_capture_kernel_check() that keeps the kernel's BTF it
 * read (*out, for btf__free) for the rest of the open: read once. */
int gt_capture_kernel_read(struct btf **out, char *err, size_t errlen);

/* load_progs.c: c->skel's programs with autoload on, loaded in groups on
 * threads at once, on c->skel's maps (created here), o->beside_load run
 * meanwhile; 0 or -errno (err says why, or is empty: libbpf said it). */
int gt_capture_load_progs(struct gt_capture *c, const struct gt_capture_opts *o, char *err,
			  size_t errlen);
/* load.c: c->ring_fds into the rings' outer map; 0 or -errno (err says). */
int gt_capture_install_rings(struct gt_capture *c, char *err, size_t errlen);
/* The loaded copy of c->skel's program `owner`, or NULL. */
struct bpf_program *gt_capture_prog(struct gt_capture *c, const struct bpf_program *owner);
void gt_capture_unload_progs(struct gt_capture *c);

/* ring.c */
int gt_ring_map(struct gt_ring *r, int fd, size_t size, char *err, size_t errlen);
/* The n bytes of a record at offset off of a ring of mask + 1 bytes at
 * data: in place, or copied whole into *buf (grown as needed) when they
 * wrap around the end; NULL when *buf cannot grow. */
const uint8_t *gt_ring_bytes(const uint8_t *data, uint64_t mask, uint64_t off, size_t n,
			     uint8_t **buf, size_t *cap);
void gt_ring_unmap(struct gt_ring *r);
/* Copies up to `budget` committed records into ring q's merge queue,
 * stopping early if the queue is full.  Returns 1 if the ring was emptied, 0 if
 * records remain. */
int gt_ring_drain(struct gt_capture *c, int q, unsigned budget);

/* mmap_events.c: probe at open (mm.why says why they fail, and the
 * capture goes on without), open while attached (enable), close.  drain()
 * queues the records of every ring in the merge, up to `budget` a ring;
 * it returns 1 if every ring was emptied, else 0 with *newest the lowest
 * of the last times read from the rings that hold more (the rest of those
 * is later, and unseen). */
void gt_mmaps_probe(struct gt_capture *c);
void gt_mmaps_close(struct gt_capture *c);
void gt_mmaps_enable(struct gt_capture *c, int on);
int gt_mmaps_drain(struct gt_capture *c, unsigned budget, uint64_t *newest);
/* Whether perf rings are open now (records may still come). */
int gt_mmaps_open(const struct gt_capture *c);

/* poll.c: the longest a poll sleeps while records are buffered, a ring
 * holds some or anything is traced: the tick (GT_CAPTURE_TICK_MS), or the
 * merge lag when that is longer; never the lag alone (docs/design.md,
 * "Cost": an embedded recorder woke ~300 times a second at the lag). */
int gt_capture_tick_ms(uint64_t lag_ns);

/* merge.c: nrings queues and the perf records' one. */
int gt_ring_merge_init(struct gt_ring_merge *m, int nrings, uint32_t nslots);
void gt_ring_merge_free(struct gt_ring_merge *m);
/* Slot to copy ring q's next event into, or NULL if its queue is full. */
struct gt_slot *gt_ring_merge_slot(struct gt_ring_merge *m, int q);
/* Queues the slot gt_ring_merge_slot() gave, once filled. */
void gt_ring_merge_push(struct gt_ring_merge *m, int q, struct gt_slot *s);
/* Queues a perf record (the merge owns h from then on), or -ENOSPC when
 * the queue is full (h stays the caller's). */
int gt_ring_merge_push_mmap(struct gt_ring_merge *m, struct gt_mmap_held *h);
/* Delivers buffered events with ts <= upto (UINT64_MAX: all): events to
 * cb, perf records to c->mm.cb (freed if none). */
int gt_ring_merge_deliver(struct gt_capture *c, uint64_t upto, gt_capture_cb cb,
		     void *ctx, int *stopped);
/* Returns the slots' pages to the system if nothing is buffered. */
void gt_ring_merge_release(struct gt_ring_merge *m);

#endif
