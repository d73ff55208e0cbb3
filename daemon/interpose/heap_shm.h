/* Folder interpose/: the allocator interposer that `gotracectl record
 * -- CMD` preloads into the command (build/libgotraced-heap.so, built from
 * preload.c alone: it links nothing of the daemon), and the shared-memory
 * record through which it hands live heap bytes to the recording.  It
 * includes nothing but libc; memtrack/ (the reader) and ctl/ (the launcher
 * that creates the record) include this header.
 *
 * The record is a memfd named GT_HEAP_SHM_NAME that the launcher creates
 * before it forks the command; the descriptor stays open across exec and
 * GT_HEAP_SHM_ENV_FD names its number.  The recorder finds it again
 * through /proc/PID/fd (so the daemon needs no new message to get it).
 *
 * Layout: a 64-byte header, then GT_HEAP_SHM_SLOTS slots of one cache line.
 * A slot belongs to one thread (tid != 0) or is a process's base slot
 * (tid == 0).  Only its thread writes a thread slot (relaxed load + store,
 * no locked instruction on the fast path); base slots are shared by a
 * process's threads (atomic add): threads that exited were folded into
 * it, threads that found no free slot count there directly.  A process's
 * live heap = the sum of `live` over the slots whose tgid is its pid.
 *
 * Slot ownership: tgid 0 = free, -1 = being claimed, > 0 = its process.
 * A claimer CASes 0 (or a dead process's tgid) to -1, zeroes the slot, then
 * publishes its tgid (release): a reader never sees a stale value under a
 * new owner.  `used` is the high-water mark of slots ever claimed, so the
 * reader scans only [0, used).
 *
 * Allocation samples (--alloc-stacks N): every Nth allocation of a thread
 * (sample_every, written by the launcher) goes into a ring of
 * GT_HEAP_RING entries after the slots, with its stack as return
 * addresses (backtrace()).  A writer takes index i = head++ (atomic), sets
 * the entry's seq to 2i+1 (being written), fills it, then sets 2i+2
 * (release).  The reader keeps its own tail: an entry whose seq is not
 * 2i+2 when read, or changed while copied, is lost (counted), never
 * misread; a ring overrun loses the oldest.
 *
 * Fixed widths and explicit padding: both sides may be built apart; the
 * sizes are checked below (the size table of this record). */
#ifndef GT_INTERPOSE_HEAP_SHM_H
#define GT_INTERPOSE_HEAP_SHM_H

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#define GT_HEAP_SHM_NAME "gotraced-heap"
#define GT_HEAP_SHM_ENV_FD "GOTRACED_HEAP_FD"
#define GT_HEAP_SHM_MAGIC 0x3170616568746700ull /* "\0gtheap1" */
#define GT_HEAP_SHM_VERSION 1u
#define GT_HEAP_SHM_SLOTS 4096u
#define GT_HEAP_LIB_NAME "libgotraced-heap.so"
#define GT_HEAP_RING 1024u
#define GT_HEAP_SAMPLE_PCS 30

struct gt_heap_slot {
	_Atomic int32_t tgid;      /* 0 free, -1 being claimed, else owner */
	int32_t tid;               /* 0 = the process's base slot */
	_Atomic int64_t live;      /* bytes allocated - bytes freed here */
	uint8_t pad[48];
};

struct gt_heap_shm {
	uint64_t magic;            /* GT_HEAP_SHM_MAGIC once initialized */
	uint32_t version;          /* GT_HEAP_SHM_VERSION */
	uint32_t nslots;           /* GT_HEAP_SHM_SLOTS */
	_Atomic uint32_t used;     /* slots [0, used) were claimed at least once */
	_Atomic uint32_t full;     /* claims that found no slot (counting stopped) */
	_Atomic uint32_t bypassed; /* processes whose malloc was not ours (another
				    * allocator came first): not counted */
	uint32_t sample_every;     /* 0 = no allocation samples */
	_Atomic uint64_t head;     /* samples ever written (next ring index) */
	uint8_t pad[24];
	struct gt_heap_slot slot[];
};

struct gt_heap_sample {
	_Atomic uint64_t seq;      /* 2i+1 being written, 2i+2 entry i complete */
	uint64_t ts;               /* CLOCK_MONOTONIC ns */
	int32_t tgid, tid;
	uint32_t cpu;              /* where the allocation ran */
	uint32_t npcs;             /* return addresses in pcs, innermost first */
	uint64_t size;             /* bytes asked for */
	uint64_t addr;
	uint64_t pcs[GT_HEAP_SAMPLE_PCS];
};

_Static_assert(sizeof(struct gt_heap_slot) == 64, "gt_heap_slot is one cache line");
_Static_assert(sizeof(struct gt_heap_shm) == 64, "gt_heap_shm header is 64 bytes");
_Static_assert(sizeof(struct gt_heap_sample) == 48 + 8 * GT_HEAP_SAMPLE_PCS,
	       "gt_heap_sample has no hidden padding");

#define GT_HEAP_RING_OFFSET \
	(sizeof(struct gt_heap_shm) + GT_HEAP_SHM_SLOTS * sizeof(struct gt_heap_slot))
#define GT_HEAP_SHM_BYTES (GT_HEAP_RING_OFFSET + GT_HEAP_RING * sizeof(struct gt_heap_sample))

static inline struct gt_heap_sample *gt_heap_shm_ring(const struct gt_heap_shm *h)
{
	return (struct gt_heap_sample *)((char *)h + GT_HEAP_RING_OFFSET);
}

/* Live bytes of process tgid: the sum of its slots (0 if it has none);
 * *found says whether it had any.  Lock-free: a slot changing while it is
 * read gives a value that was true a moment before or after. */
static inline int64_t gt_heap_shm_live(const struct gt_heap_shm *h, int32_t tgid, int *found)
{
	uint32_t used = atomic_load_explicit(&((struct gt_heap_shm *)h)->used,
					     memory_order_acquire);
	int64_t sum = 0;

	*found = 0;
	if (used > h->nslots || used > GT_HEAP_SHM_SLOTS)
		used = GT_HEAP_SHM_SLOTS; /* a corrupt count: never read past the map */
	for (uint32_t i = 0; i < used; i++) {
		struct gt_heap_slot *s = (struct gt_heap_slot *)&h->slot[i];

		if (atomic_load_explicit(&s->tgid, memory_order_acquire) != tgid)
			continue;
		sum += atomic_load_explicit(&s->live, memory_order_relaxed);
		*found = 1;
	}
	return sum;
}

/* Writes the header of a zeroed record (the magic last). */
static inline void gt_heap_shm_init(struct gt_heap_shm *h, uint32_t sample_every)
{
	h->sample_every = sample_every;
	h->version = GT_HEAP_SHM_VERSION;
	h->nslots = GT_HEAP_SHM_SLOTS;
	atomic_store_explicit(&h->used, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	h->magic = GT_HEAP_SHM_MAGIC;
}

/* The launcher's side: a fresh record in a memfd (not close-on-exec: the
 * command inherits it), sampling every Nth allocation of each thread
 * (0 = none).  Returns the descriptor or -errno. */
static inline int gt_heap_shm_create(uint32_t sample_every)
{
	int fd = memfd_create(GT_HEAP_SHM_NAME, 0), err;
	void *p;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)GT_HEAP_SHM_BYTES) < 0)
		goto fail;
	p = mmap(NULL, GT_HEAP_SHM_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	gt_heap_shm_init(p, sample_every);
	munmap(p, GT_HEAP_SHM_BYTES);
	return fd;
fail:
	err = errno;
	close(fd);
	return -err;
}

#endif
