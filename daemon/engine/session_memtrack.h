/* Glue between recording sessions (session.c) and memtrack: the engine
 * loads the memory programs on first use; each session attaches what its
 * options ask for (--heap, --cpu-profile, --alloc-stacks) and, at its end,
 * writes the exact final heap values before detaching. */
#ifndef GT_ENGINE_SESSION_MEMTRACK_H
#define GT_ENGINE_SESSION_MEMTRACK_H

#include "session.h"

struct gt_memtrack;
struct gt_kev_hdr;

/* After the session's targets are attached.  An explicit request that
 * cannot be honoured is an error (message in the engine's error); the
 * default heap mode only does its best. */
int gt_session_mem_start(struct gt_session *s, const struct gt_session_opts *o);
/* Before the translator ends: final values, then detach. */
void gt_session_mem_stop(struct gt_session *s);
void gt_engine_mem_close(struct gt_engine *e);
/* For every event before it is dispatched: an exec re-decides the
 * process's probes (cheap for any other event). */
void gt_engine_mem_event(struct gt_engine *e, const struct gt_kev_hdr *ev);
/* --heap interpose: the poll timeout shortened so the heap records are
 * read every few ms, and the reading itself (after the rings' events). */
int gt_engine_mem_timeout(struct gt_engine *e, int timeout_ms);
void gt_engine_mem_tick(struct gt_engine *e);


#endif
