/* CPython processes (docs/mapping.md, "Python frames"): which processes
 * run a CPython whose layout gotraced knows (3.11, 3.12), where their
 * _PyRuntime is (for bpf/python.bpf.h), and the names of the code objects
 * BPF copied: `function` (co_name, as traceback shows it), file
 * (co_filename) and the line of an instruction (co_linetable), read from
 * /proc/PID/mem once per code object and cached.  The process writes that
 * memory: every read is bounded, every length checked, and a code object
 * that does not read as one is named "[python]".  A set of names is one
 * thread's (the engine's); gt_python_detect and gt_python_open_mem may run
 * on any (gotraced's engine runs them on a loader thread: docs/security.md). */
#ifndef GT_SYM_PYTHON_H
#define GT_SYM_PYTHON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gotraced.h"

/* Whether pid maps a CPython (its python3.X executable or libpython3.X)
 * of a known version: *out is what BPF needs.  0, -ENOENT (no CPython
 * mapped, or not yet: a libpython loads after exec), -ENOTSUP (a version
 * without a layout here: native frames only), or another -errno. */
int gt_python_detect(pid_t pid, struct gt_py_proc *out);
/* (-ENODATA: a CPython mapped, its _PyRuntime not found.) */

/* Whether path[0..len)'s base name is a CPython's: python3.X, or
 * libpython3.X[.so...]. */
int gt_python_binary_name(const char *path, size_t len);

/* pid's memory, opened once at detection and kept: the fd reads the
 * address space it was opened on, never a later process given the same
 * pid.  fd or -errno. */
int gt_python_open_mem(pid_t pid);

/* The line of byte offset addr of a 3.11/3.12 code object whose location
 * table (co_linetable) is tab[0..n) and first line firstlineno, as
 * PyCode_Addr2Line gives it; -1 if the table says none. */
int gt_python_addr2line(const uint8_t *tab, size_t n, int firstlineno, int addr);

struct gt_python_names;
struct gt_python_names *gt_python_names_new(void);
void gt_python_names_free(struct gt_python_names *n);

/* Bounds (tests lower them): interned bytes and code objects kept. */
void gt_python_names_limit(struct gt_python_names *n, size_t bytes, size_t codes);
size_t gt_python_names_bytes(const struct gt_python_names *n);
/* async: a new code object is read on a loader thread (loader.h), never
 * on the caller's, and named "[python]" until the answer is taken (a
 * process whose memory does not answer holds a loader thread, not the
 * caller).  The engine's: its stacks keep the code objects and are named
 * when a translator needs them, late when a read was under way then
 * (engine/py_stacks.h, translate/late_stack.c). */
void gt_python_names_async(struct gt_python_names *n, int async);
/* A new drain of the rings: at most PY_READS_PER_ROUND (64) new code
 * objects are read (async: asked, with at most as many under way) until
 * the next; async, the reads finished since are taken into the cache. */
void gt_python_names_round(struct gt_python_names *n);
/* Async: the reads finished since, into the cache (no new round). */
void gt_python_names_harvest(struct gt_python_names *n);

/* Python frame f (one of a GT_KEV_PYSTACK record's) of process pid, laid
 * out as p, whose memory is open at mem (gt_python_open_mem): its
 * function, file (stable strings, valid until gt_python_names_free) and
 * line (0 if unknown).  0, or -errno (func and file then "[python]": the
 * code object unreadable, for good once its header read or after a few
 * tries; past the budgets), -EINPROGRESS when it may be named later
 * (past this round's reads, or being read: async). */
int gt_python_name(struct gt_python_names *n, pid_t pid, int mem, const struct gt_py_proc *p,
		   const struct gt_py_frame *f, const char **func, const char **file,
		   unsigned *line);

/* Process pid ended or exec'd: its code objects' names go (their
 * addresses are another image's now). */
void gt_python_names_forget(struct gt_python_names *n, pid_t pid);

#endif
