/* The recorder's side of --heap interpose: finds the heap record
 * (interpose/heap_shm.h) a launched command inherited, maps it read-only,
 * and turns its per-process sums into GT_KEV_HEAP events when they change.
 * Private to memtrack/ (memtrack.c drives it). */
#ifndef GT_MEMTRACK_INTERPOSE_H
#define GT_MEMTRACK_INTERPOSE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "memtrack.h"

struct gt_mt_interpose;

/* Maps the heap record open in pid (a memfd named GT_HEAP_SHM_NAME among
 * its descriptors).  0; -ENOENT if it has none; -errno with err set. */
int gt_mt_interpose_open(pid_t pid, struct gt_mt_interpose **out, char *err, size_t errlen);
void gt_mt_interpose_close(struct gt_mt_interpose *ip);

/* Whether tgid's heap comes from this record: a process that exec'd a Go
 * program does not (set by the caller, RSS mode then). */
void gt_mt_interpose_exclude(struct gt_mt_interpose *ip, pid_t tgid, int excluded);

/* Stacks of allocation samples, interned: the same return addresses in the
 * same process get the same id (GT_STACK_INTERPOSED | index), shared by
 * every session (the engine's stack resolver reads them back). */
struct gt_mt_pcs;
struct gt_mt_pcs *gt_mt_pcs_new(void);
void gt_mt_pcs_free(struct gt_mt_pcs *t);
/* The id of (tgid, pcs), added if new; -1 when the table is full. */
int32_t gt_mt_pcs_intern(struct gt_mt_pcs *t, uint32_t tgid, const uint64_t *pcs, int n);
/* Copies the return addresses of id into ips; their count or -ENOENT. */
int gt_mt_pcs_get(const struct gt_mt_pcs *t, int32_t id, uint64_t *ips, int max);

/* Emits a GT_KEV_HEAP (sessions = 1 << bit, stamped ts) for every process
 * of the record whose live bytes changed since the last call (all of them
 * the first time), skipping processes that are gone; then a
 * GT_KEV_ALLOC_SAMPLE (stamped when it was taken, hdr.cpu = 0xffff: the
 * thread may run elsewhere by now) for each new sample of the ring, its
 * stack interned in pcs.  Returns how many events. */
/* Only the new samples, as gt_mt_interpose_poll emits them (no /proc
 * read): cheap enough for every thread exit.  Returns how many. */
int gt_mt_interpose_samples(struct gt_mt_interpose *ip, struct gt_mt_pcs *pcs, int bit,
			    gt_memtrack_emit_fn fn, void *ctx);
int gt_mt_interpose_poll(struct gt_mt_interpose *ip, struct gt_mt_pcs *pcs, int bit, uint64_t ts,
			 gt_memtrack_emit_fn fn, void *ctx);

/* 1 if the ELF file at path (/proc/PID/exe: followed) has no program
 * interpreter (a static program: LD_PRELOAD means nothing to it), 0 if
 * it has one, -errno. */
int gt_mt_elf_is_static(const char *path);

struct gt_mt_interpose_stats {
	uint32_t slots_used, full, bypassed;
	uint64_t samples, samples_lost;
};
void gt_mt_interpose_stats(const struct gt_mt_interpose *ip, struct gt_mt_interpose_stats *st);

#endif
