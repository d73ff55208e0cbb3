/* CPython processes (docs/mapping.md, "Python frames"): which processes
 * run a CPython whose layout gotraced knows (3.11, 3.12), where their
 * _PyRuntime is (for bpf/python.bpf.h), and the names of the code objects
 * BPF copied: `function` (co_name, as traceback shows it), file
 * (co_filename) and the line of an instruction (co_linetable), read from
 * /proc/PID/mem once per code object and cached.  The process writes that
 * memory: every read is bounded, every length checked, and a code object
 * that does not read as one is named "[python]".  The engine's thread
 * only. */
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

/* The line of byte offset addr of a 3.11/3.12 code object whose location
 * table (co_linetable) is tab[0..n) and first line firstlineno, as
 * PyCode_Addr2Line gives it; -1 if the table says none. */
int gt_python_addr2line(const uint8_t *tab, size_t n, int firstlineno, int addr);

struct gt_python_names;
struct gt_python_names *gt_python_names_new(void);
void gt_python_names_free(struct gt_python_names *n);

/* Python frame f (one of a GT_KEV_PYSTACK record's) of process pid, laid
 * out as p: its function, file (stable strings, valid until
 * gt_python_names_free) and line (0 if unknown).  0, or -errno (the code
 * object unreadable: func and file then "[python]"). */
int gt_python_name(struct gt_python_names *n, pid_t pid, const struct gt_py_proc *p,
		   const struct gt_py_frame *f, const char **func, const char **file,
		   unsigned *line);

/* Process pid ended or exec'd: its code objects' names go (their
 * addresses are another image's now). */
void gt_python_names_forget(struct gt_python_names *n, pid_t pid);

#endif
