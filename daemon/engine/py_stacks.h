/* Python frames on the engine's side (docs/mapping.md, "Python frames"):
 * the CPython processes BPF walks (told to capture as they are followed,
 * exec or map a libpython), and the stacks of their threads: each
 * GT_KEV_PYSTACK record capture reads asks for the names of its code
 * objects at once (read on loader threads: sym/python.h, async), and each
 * distinct {native stack, Python frames} of a process is kept once, as
 * code object and instruction addresses, under an id of its own
 * (GT_STACK_PY | index) that capture puts in the records that name it,
 * as dwarf_stacks.h does for copies.  A stack is named when a translator
 * asks for it; one with a read still under way then is named late
 * (translate/late_stack.c: gt_resolve_unnamed, gt_resolve_rename).  The
 * engine's thread only. */
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
 * was just mapped) says one is.  0, or -errno as gt_python_detect.  After
 * gt_py_stacks_async_detect, asked of a loader thread (it reads the
 * process's maps and its CPython binary, its owner's file: gotraced's
 * loop never waits for it) and told to BPF at the next round after its
 * answer: 0 (or -ENOMEM) at once. */
int gt_py_stacks_check(struct gt_py_stacks *p, uint32_t tgid, int mapped);
/* Detections off the caller's thread from now on (gotraced; gotracectl's
 * own recording detects at once, as it waits for its loads: the first
 * Python frames of a short script depend on it). */
void gt_py_stacks_async_detect(struct gt_py_stacks *p);
/* Process tgid exec'd or is forgotten: BPF stops walking it, its code
 * objects' names go. */
void gt_py_stacks_forget(struct gt_py_stacks *p, uint32_t tgid);

/* No session is left: every process forgotten, and the names and stacks
 * freed (what they held is bounded, but not small); nothing done if
 * nothing is held (it is called at every idle check). */
void gt_py_stacks_reset(struct gt_py_stacks *p);
/* A new drain of the rings: the detections answered since are taken,
 * and it may read new code objects again (a bounded number each:
 * sym/python.h). */
void gt_py_stacks_round(struct gt_py_stacks *p);

/* The stack id (GT_STACK_PY | index) of process tgid: its native stack's
 * id and Python frames (innermost first; valid until the next call),
 * named now from the names read so far; *later is 1 when a frame's code
 * object is still being read (a loader thread: sym/python.h), its name
 * "[python]" until gt_py_stacks_rename gives it.  -ENOENT if unknown,
 * else the number of frames. */
int gt_py_stacks_get(struct gt_py_stacks *p, uint32_t tgid, int32_t id, int32_t *native,
		     const struct gt_py_named **frames, int *later);
/* The frame of process tgid at pc (a Python frame's, as gt_py_stacks_get
 * gave it), named again with the answers come since: 0, or -ENOENT when
 * pc is no Python frame's (or its process was forgotten since). */
int gt_py_stacks_rename(struct gt_py_stacks *p, uint32_t tgid, uint64_t pc, const char **func,
			const char **file, unsigned *line);

#endif
