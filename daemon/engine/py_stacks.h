/* Python frames on the engine's side (docs/mapping.md, "Python frames"):
 * the CPython processes BPF walks (told to capture as they are followed,
 * exec or map a libpython), and the stacks of their threads: each
 * GT_KEV_PYSTACK record capture reads is named at once, while the process
 * lives (sym/python.h), and each distinct {native stack, Python frames}
 * of a process is kept once under an id of its own (GT_STACK_PY | index)
 * that capture puts in the records that name it, as dwarf_stacks.h does
 * for copies.  The engine's thread only. */
#ifndef GT_ENGINE_PY_STACKS_H
#define GT_ENGINE_PY_STACKS_H

#include <stdint.h>

struct gt_capture;
struct gt_py_stacks;

/* One named Python frame: pc is the instruction's address in the code
 * object (one pc, one function: the trace's frame tables key on it). */
struct gt_py_named {
	uint64_t pc;
	const char *func, *file;
	unsigned line;
	int entry; /* the first frame of a C call of the evaluation loop */
};

/* Installed as capture's GT_KEV_PYSTACK callback.  NULL: no memory. */
struct gt_py_stacks *gt_py_stacks_new(struct gt_capture *c);
void gt_py_stacks_free(struct gt_py_stacks *p);

/* Whether process tgid runs a known CPython, told to BPF if so.  Asked
 * once per process image (again after forget): a process with no CPython
 * mapped is asked again only when mapped (its python3.X or libpython3.X
 * was just mapped) says one is.  0, or -errno as gt_python_detect. */
int gt_py_stacks_check(struct gt_py_stacks *p, uint32_t tgid, int mapped);
/* Process tgid exec'd or is forgotten: BPF stops walking it, its code
 * objects' names go. */
void gt_py_stacks_forget(struct gt_py_stacks *p, uint32_t tgid);

/* No session is left: every process forgotten, and the names and stacks
 * freed (what they held is bounded, but not small); nothing done if
 * nothing is held (it is called at every idle check). */
void gt_py_stacks_reset(struct gt_py_stacks *p);
/* A new drain of the rings: it may read new code objects again (a bounded
 * number each: sym/python.h). */
void gt_py_stacks_round(struct gt_py_stacks *p);

/* The stack id (GT_STACK_PY | index): its native stack's id and Python
 * frames (innermost first; valid until the next record is read).
 * -ENOENT if unknown, else the number of frames. */
int gt_py_stacks_get(const struct gt_py_stacks *p, int32_t id, int32_t *native,
		     const struct gt_py_named **frames);

#endif
