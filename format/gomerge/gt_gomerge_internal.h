/* format/gomerge/'s own declarations: the kernel recording read into
 * off-CPU intervals per thread (gt_gomerge_kernel.c). */
#ifndef GT_GOMERGE_INTERNAL_H
#define GT_GOMERGE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "util/gt_idmap.h"

/* One interval in which the kernel had a thread off the CPU. */
struct gt_gm_koff {
	uint64_t tid;
	int64_t start, end;     /* CLOCK_MONOTONIC ns */
	int64_t cpu_from, cpu_to;
	int why;                /* enum gt_gm_why */
	uint64_t culprit;       /* the recording's goroutine the preempting
				 * switch started, 0: a task not recorded */
	uint64_t stk;           /* the stop's stack in the recording */
	uint64_t culprit_stk;   /* the culprit's stack: a CPU sample of it
				 * inside the interval, else its stop that
				 * ended the run this switch began; 0: none */
	int culprit_sampled;    /* culprit_stk is a sample */
	const uint8_t *cgroup;  /* GT_GM_THROTTLED: "cgroup PATH", the log's */
	size_t cgroup_len;      /* text in the recording's buffer */
};

struct gt_gm_kernel {
	struct gt_gm_koff *off; /* sorted by (tid, start) */
	size_t noff;
	int version;
	const uint8_t *data;
	size_t len;
	struct gt_idmap strings; /* id -> struct gt_gm_str */
	struct gt_idmap stacks;  /* id -> file offset of its Stack record */
	struct gt_idmap titles;  /* goroutine -> its creation stack */
};

struct gt_gm_str {
	const uint8_t *p;
	size_t n;
};

int gt_gm_kernel_read(struct gt_gm_kernel *k, const uint8_t *data, size_t len,
		      char *err, size_t errlen);
void gt_gm_kernel_free(struct gt_gm_kernel *k);

/* The first frame of stack stk: function and file names (NUL-terminated,
 * cut to fit), and line.  0, or -1 if unknown. */
int gt_gm_kernel_frame(const struct gt_gm_kernel *k, uint64_t stk, size_t idx, char *fn,
		       size_t fnlen, char *file, size_t filelen, uint64_t *line);

/* A recorded goroutine's title (its thread's name as gotraced titles it,
 * and " (tid N)") into buf; "" if unknown. */
void gt_gm_kernel_title(const struct gt_gm_kernel *k, uint64_t g, char *buf, size_t len);

#endif
