/* Opening and parsing a mapped binary (or a JIT's perf map) off the
 * caller's thread.
 *
 * Opening a user's file can block where no flag helps (a FUSE file system
 * that never answers, a dead NFS server), and reading one can cost CPU
 * seconds the user chose (a 1 GiB debug-link candidate read whole for its
 * CRC): the symbolizer never opens nor parses a binary on its own thread.
 * A load is posted to a pool of loader threads (process-wide, detached:
 * at most GT_SYM_LOADERS_MAX, a new one started when every thread is
 * busy, so one stuck load costs one thread, never the queue behind it; a
 * thread that finds nothing to run ends unless it would be the
 * GT_SYM_LOADERS_IDLE+1th idle one, so the pool shrinks back after a
 * burst of loads instead of keeping its peak size, each thread with its
 * stack and its allocator's cache).
 *
 * In a process that serves many users (gotraced: gt_sym_loader_budget),
 * each user has a budget: at most GT_SYM_LOADS_PER_UID of the loads of
 * that user's processes (the owner of /proc/PID; a perf map's: its
 * process's user) run at once, the others wait in the queue behind them
 * while other users' loads go on.  A load dropped by every symbolizer
 * that posted it (no session needs it any more) is cancelled: taken out of
 * the queue if it has not started, else it stops at its next chunk
 * (gt_sym_cancelled, checked between a CRC's reads).
 *
 * A caller that lets it wait (gotracectl's own recording: the user waits
 * on their own files; never gotraced's event loop, which serves every
 * user), when it first needs the binary, waits for its load only while
 * the load makes progress: its thread uses CPU (parsing libc and its
 * debug file takes 60-90 ms of it), is runnable or waits for a disk, and
 * at most GT_SYM_LOAD_STALL_NS asleep without progress (a FUSE open that
 * never returns sleeps), GT_SYM_LOAD_WAIT_MAX_NS in all: a normal load is
 * waited for whole and nothing changes for the caller's results.  A load
 * given up on is "late": its binary's frames show as module+0xOFF until
 * it finishes, and while any load is late no caller waits for any other
 * (a stuck file system costs the caller one stall, not one per binary).
 * A load never finished is abandoned with the symbolizer: the thread
 * frees it if it ever returns; nobody joins it, the process may exit.
 */
#ifndef GT_SYM_LOADER_H
#define GT_SYM_LOADER_H

#include <stdint.h>
#include <sys/types.h>

struct gt_binary;
struct gt_map_line;
struct gt_sym_job;

#define GT_SYM_LOAD_STALL_NS 40000000ull
#define GT_SYM_LOAD_WAIT_MAX_NS 5000000000ull
#define GT_SYM_LOADERS_MAX 64
#define GT_SYM_LOADERS_IDLE 1
#define GT_SYM_LOADS_PER_UID 2

/* Posts the open (through pid's root, map_files, the plain path: see
 * symbolize.c) and parse of the binary m maps.  NULL without memory. */
struct gt_sym_job *gt_sym_job_post(pid_t pid, const struct gt_map_line *m);

/* With wait, waits for the job as said above; 1 if it is finished. */
int gt_sym_job_wait(struct gt_sym_job *j, int wait);

/* A finished job's result, moved into *b: 0 loaded, -ENOENT the file could
 * not be opened (or was refused), another -errno it did not parse. */
int gt_sym_job_take(struct gt_sym_job *j, struct gt_binary *b);

/* Lets the job go: freed now if finished, else by its thread. */
void gt_sym_job_drop(struct gt_sym_job *j);

/* A perf map's file as last read: a re-read that finds the same one
 * (inode, size and change time) parses nothing; one that grew (a JIT
 * appends) parses only the lines after the used bytes, if the last bytes
 * read are still there: a file truncated and written again (jcmd PID
 * Compiler.perfmap) is read whole. */
struct gt_perfmap_stamp {
	uint64_t dev, ino, size, mtime_ns;
	uint64_t used;   /* bytes of whole lines read */
	uint64_t lines;  /* lines in them, with those of earlier reads: the
			  * next line's seq (perfmap.h) */
	uint64_t tail;   /* a hash of the last GT_PERFMAP_TAIL bytes used */
};
#define GT_PERFMAP_TAIL 4096

/* Posts the read of a JIT's perf map (perfmap.h) at path inside root_fd
 * (a process's root, duplicated: the caller keeps its own), opened as
 * safe_open.h says and only if owned by owner or root; a file the same as
 * *seen is not read again.  NULL without memory. */
struct gt_perfmap;
struct gt_sym_job *gt_sym_perfmap_post(int root_fd, const char *path, uid_t owner,
				       const struct gt_perfmap_stamp *seen);

/* A finished perf map job's result, moved into *pm with the file's new
 * stamp in *seen: 0 a whole map (a new file or one written again), 1 the
 * lines appended since (both to merge: perfmap.h, gt_perfmap_merge, their
 * lines numbered after those seen); -EALREADY the file is the one seen,
 * -ENOENT none (or refused), another -errno. */
int gt_sym_perfmap_take(struct gt_sym_job *j, struct gt_perfmap *pm,
			struct gt_perfmap_stamp *seen);

/* Posts call(arg) to a loader thread, on pid's user's budget as a load:
 * a read of a process's own binary or memory that gotraced's loop must
 * not wait for (the Go build info: engine/go_procs.c), what naming it (gt_sym_load_hook's
 * path, and the logs).  The caller polls it with gt_sym_job_wait(j, 0)
 * and lets it go with gt_sym_job_drop, which frees arg with arg_free
 * (then, or when an unfinished call returns).  Calls have a budget of
 * their own, as many per user as loads (they are short: they do not
 * wait behind a user's long loads; a user's stuck files hold at most
 * GT_SYM_LOADS_PER_UID threads of each kind).  NULL without memory (arg
 * is the caller's then). */
struct gt_sym_job *gt_sym_call_post(pid_t pid, const char *what, int (*call)(void *arg),
				    void *arg, void (*arg_free)(void *arg));

/* A finished call's arg (still the job's: valid until the drop) and, in
 * *rc, what call returned. */
void *gt_sym_call_result(struct gt_sym_job *j, int *rc);

/* An eventfd (non-blocking, process-wide, made on the first ask; -errno)
 * written each time a call ends, so that a loop that polls its calls
 * (gotraced's: Go build info, pprof labels, CPython's detection and code
 * objects) takes the answer then, not at its next event; gt_sym_calls_ack
 * reads it (the loop's poll, before it looks at its calls). */
int gt_sym_calls_fd(void);
void gt_sym_calls_ack(void);

/* Loads late now (see above). */
unsigned gt_sym_loads_late(void);

/* At most per_uid loads of one user run at once from now on (0: no
 * budget, the default: gotracectl's own recording has one user). */
void gt_sym_loader_budget(unsigned per_uid);

/* Loads ended so far (process-wide). */
uint64_t gt_sym_loads_ended(void);

/* On a loader thread: whether the job it runs was dropped by everyone
 * who wanted it (stop, the result would be thrown away); 0 elsewhere. */
int gt_sym_cancelled(void);

#endif
