/* The perf map of one process (perfmap.h), for the symbolizer: found as
 * perf finds it, /tmp/perf-PID.map with PID the process's own pid in its
 * pid namespace (the last NSpid of /proc/PID/status), inside the
 * process's root (its mount namespace: a container's /tmp).  The root is
 * held from the first lookup, so the map is still read after the process
 * exited, as perf reads it at the end.  Every read runs on a loader thread
 * (loader.h), and is waited for as a binary's load is; a lookup that
 * misses reads the file again if it changed (a JIT appends while it runs:
 * only the lines appended are parsed; a file truncated and written again,
 * as jcmd PID Compiler.perfmap does, is read whole and its lines win over
 * the old ones, which still name code the new file no longer lists, as
 * long as all the lines held stay within GT_PERFMAP_READ_MAX bytes), at
 * most every 1 ms after a read that found it changed, twice as long after
 * each that did not, up to 250 ms (addresses no line will ever name cost
 * an open and an fstat on a loader thread that often, and code placed
 * meanwhile is named at most that late; gt_jit_recheck lifts the wait once:
 * a map written at exit is read then, translate/late_stack.c). */
#ifndef GT_SYM_JIT_H
#define GT_SYM_JIT_H

#include <stdint.h>
#include <sys/types.h>

struct gt_jit;

/* The state of pid's perf map (nothing read yet); NULL without memory.
 * A process gone already gets one that finds nothing. */
struct gt_jit *gt_jit_new(pid_t pid);

/* The name of the JIT code at ip, or NULL; with wait, waits for a read
 * as loader.h's loads are waited for.  Valid until the next call. */
const char *gt_jit_name(struct gt_jit *j, uint64_t ip, int wait);

/* The next miss reads the map again (if it changed), however soon. */
void gt_jit_recheck(struct gt_jit *j);

void gt_jit_free(struct gt_jit *j);

#endif
