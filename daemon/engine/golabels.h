/* The pprof labels of Go goroutines for the translator (a
 * gt_golabels_source): read from /proc/PID/mem by sym/golabels.h on the
 * symbol loader threads (sym/loader.h), never on the event loop, and
 * cached by (process, map address, hash seed, count).
 *
 * A read is posted when the rings are read (gt_golabels_want, from the
 * capture's hook on GT_KEV_GOID records), a merge lag before the record
 * reaches a translator, and the capture holds back the records from that
 * one on (every session's) until the answer comes, at most
 * GT_GOLABELS_HOLD_NS: a read that answers in time names every log of
 * its map; one that does not (the target's page faults block: a FUSE
 * file that never answers) costs the sessions that delay once, and its
 * logs say "(labels not read in time)" until it answers.  A process one
 * of whose reads outlived the hold is not waited for again until one of
 * its reads answers, so a program cannot delay the recordings at every
 * new map (docs/security.md). */
#ifndef GT_ENGINE_GOLABELS_H
#define GT_ENGINE_GOLABELS_H

#include <stddef.h>
#include <stdint.h>

#include "translate/translate.h"
#include "util/gt_idmap.h"

/* GT_GOLABELS_WAYS maps of a set live side by side (the least recently
 * used one goes): direct-mapped, two live maps of one slot took turns
 * evicting each other and every log of both waited for a read again */
#define GT_GOLABELS_CACHE 256
#define GT_GOLABELS_WAYS  8
_Static_assert(GT_GOLABELS_CACHE % GT_GOLABELS_WAYS == 0, "whole sets");
#define GT_GOLABELS_TEXT  256 /* the text kept of one map (cut to fit) */
#define GT_GOLABELS_HOLD_NS 50000000ull

struct gt_sym_job;

struct gt_golabels_entry {
	uint32_t tgid, hash0, count; /* tgid 0 = empty */
	uint64_t map;
	struct gt_sym_job *job;      /* its read, while it has not answered */
	uint64_t posted_ns;          /* when it was posted */
	uint64_t hold_ts;            /* the first record waiting for it (0: none) */
	uint64_t used;               /* the last use (gt_golabels.uses), for eviction */
	int len;                     /* answered: < 0 could not be read (not asked again) */
	char text[GT_GOLABELS_TEXT];
};

struct gt_golabels {
	struct gt_golabels_entry *cache; /* on first use */
	struct gt_golabels_source src;
	struct gt_idmap slow;            /* processes a read of which outlived the hold */
	unsigned pending;                /* entries with a job */
	uint64_t uses;                   /* lookups so far */
	uint64_t reads, failed;          /* maps read, and of them failed */
	uint64_t late;                   /* logs written before their map's answer */
};

/* The source to hand a translator (its ctx is gl): a map whose read has
 * not answered yet gives -EAGAIN (one not asked for yet is asked for). */
const struct gt_golabels_source *gt_golabels_source(struct gt_golabels *gl);
/* A record of process tgid names this map (the rings are being read):
 * its read is posted if it is new.  1 when the record (ts) should wait
 * for the answer. */
int gt_golabels_want(struct gt_golabels *gl, uint32_t tgid, uint64_t map, uint32_t hash0,
		     uint32_t count, uint64_t ts);
/* Takes the answers come since; the oldest record that still waits for
 * one (UINT64_MAX: none): the capture delivers nothing from it on. */
uint64_t gt_golabels_poll(struct gt_golabels *gl, uint64_t now_ns);
/* Process tgid is gone, or exec'd: its maps are not its any more. */
void gt_golabels_forget(struct gt_golabels *gl, uint32_t tgid);
void gt_golabels_free(struct gt_golabels *gl);

#endif
