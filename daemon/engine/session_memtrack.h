/* Glue between recording sessions (session.c) and memtrack: the engine
 * loads the memory programs on first use; each session attaches what its
 * options ask for (--heap, --cpu-profile, --alloc-stacks) and, at its end,
 * writes the exact final heap values before detaching.  Both run on the
 * engine's worker (worker.h); with no worker thread, at once. */
#ifndef GT_ENGINE_SESSION_MEMTRACK_H
#define GT_ENGINE_SESSION_MEMTRACK_H

#include <sys/types.h>

#include "session.h"

struct gt_memtrack;
struct gt_capture;
struct gt_kev_hdr;

/* After the session's targets are attached: posts the attach, and marks
 * the session starting until it is done.  An explicit request that cannot
 * be honoured fails the session (start_err; at once without a thread, an
 * error returned with the message in the engine's error); the default heap
 * mode only does its best. */
int gt_session_mem_start(struct gt_session *s, const struct gt_session_opts *o);
/* After the session left the rings: posts the final values (stamped at
 * its end) and the detach.  Returns non-zero while that is pending; the
 * session is finished by gt_session_mem_settled. */
int gt_session_mem_stop(struct gt_session *s);
/* session.c: a memtrack job of s completed (on the engine's thread). */
void gt_session_mem_settled(struct gt_session *s);
void gt_engine_mem_close(struct gt_engine *e);
/* The capture's beside_load (gotracectl embedded, e->only set): the memory
 * programs that one session will want, loaded while the capture's own
 * verify; failing, the session's start loads them again and says why. */
void gt_engine_mem_preload(struct gt_capture *c, void *engine);
/* For every event before it is dispatched: an exec re-decides the
 * process's probes (posted, cheap for any other event). */
void gt_engine_mem_event(struct gt_engine *e, const struct gt_kev_hdr *ev);

/* session_record.c, --heap interpose on the engine's thread: the poll
 * timeout shortened so the heap records are read every few ms, and the
 * reading itself (after the rings' events). */
int gt_engine_mem_timeout(struct gt_engine *e, int timeout_ms);
void gt_engine_mem_tick(struct gt_engine *e);
/* Before the attach is posted: the table of the records' sample stacks
 * when the session will need it (0, or -ENOMEM with the engine's error). */
int gt_engine_record_stacks(struct gt_engine *e, const struct gt_session_opts *o);
/* Before s's translator sees a thread's exit: the record's new samples,
 * which that thread wrote before it exited, delivered while it can still
 * take them (translate/alloc.c writes a sample only on its own thread,
 * and a thread that has ended takes none). */
void gt_session_record_before_exit(struct gt_session *s, const struct gt_kev_hdr *ev);
/* The session's record read a last time (stamped at its end) and closed;
 * nothing without one. */
void gt_session_record_close(struct gt_session *s);
/* After pid's exec: its mode in each session (by bit) told to the records
 * of the sessions recording. */
void gt_engine_records_exec(struct gt_engine *e, pid_t pid, const enum gt_heap_mode *modes);

#endif
