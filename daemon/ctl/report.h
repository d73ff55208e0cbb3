/* Shared by the report*.c files of `gotracectl report`: the options and
 * the printers over a finished gt_analysis. */
#ifndef GT_CTL_REPORT_H
#define GT_CTL_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "analyze/gt_analyze.h"

struct report_opts {
	int top;              /* rows per table */
	int top_given;        /* --top was given: it governs stacks per reason too */
	int json;
	int folded;           /* 0, or 1 with fold_kind */
	int fold_kind;        /* GT_AN_KIND_CPU, OFFCPU + reason, -1 all off-CPU */
	const char *thread;   /* NAME or ID, or NULL */
	struct gt_analyze_opts win;
	const char *path;
	struct trace_map *merged; /* a Go 1.22+ file, for report_kernel_json; or NULL */
};

/* report_kernel.c: the merged kernel regions of a Go 1.22+ file (gotracectl
 * merge) per goroutine; prints nothing for another file.  Reads m a batch
 * at a time, letting each go.  0 or -EIO. */
struct trace_map;
int report_kernel(struct trace_map *m, const struct report_opts *o, FILE *out);
/* The same as report --json's "go_kernel" member (",\"go_kernel\":..."; null
 * for another file).  0 or -EIO. */
int report_kernel_json(struct trace_map *m, FILE *out);
/* The UserLog category of a flight dump's trigger (docs/format.md). */
#define GT_REPORT_TRIGGER_KEY "gotraced.trigger"

/* Off-CPU stacks of one reason grouped across threads: the same frames
 * (by function, file and line; by pc where a frame has no name), summed. */
struct report_sgroup {
	uint64_t stk;     /* the heaviest member's stack */
	uint64_t g;       /* the heaviest member's thread */
	uint64_t weight;  /* ns */
	uint64_t count;   /* stops */
	uint64_t threads; /* distinct threads */
	uint64_t hash;
};

/* The selected threads' off-CPU stacks of reason r grouped, heaviest first
 * (*out: free it); -ENOMEM. */
int report_stack_groups(const struct gt_analysis *a, const struct report_opts *o, int r,
			struct report_sgroup **out, size_t *n);
/* 1 if stack stk ends (its outermost frame) in libc, below a caller that
 * is not a thread's or process's natural root: the frame-pointer walk
 * stopped in code built without frame pointers. */
int report_ends_in_libc(const struct gt_analysis *a, uint64_t stk);

/* A thread's name, "G<id>" when it has none; tid or -1. */
const char *report_name(const struct gt_analysis *a, const struct gt_an_thread *t, char *buf,
			size_t len, int64_t *tid);
/* report_name for a terminal: the name escaped (util/gt_escape.h), as
 * every text a traced process chose is when printed as text. */
const char *report_shown(const struct gt_analysis *a, const struct gt_an_thread *t, char *buf,
			 size_t len, int64_t *tid);
/* 1 if want is t's name (as it is, or as report_shown shows it),
 * goroutine id or tid. */
int report_named(const struct gt_analysis *a, const struct gt_an_thread *t, const char *want);
/* 1 if t is shown under --thread (and has done anything at all). */
int report_selected(const struct gt_analysis *a, const struct gt_an_thread *t,
		    const struct report_opts *o);
/* Stacks shown per off-CPU reason: --top's N when given (0: all), else 3. */
size_t report_stacks_per_reason(const struct report_opts *o);
/* The selected threads' off-CPU stacks of reason r, heaviest first, into v
 * (room for a->naggs); returns how many. */
size_t report_reason_stacks(const struct gt_analysis *a, const struct report_opts *o, int r,
			    const struct gt_an_stackagg **v);
/* Total off-CPU time of t. */
uint64_t report_offcpu_total(const struct gt_an_thread *t);

/* One group of threads of one name. */
struct report_group {
	char name[160];
	uint64_t threads;
	struct gt_hist delay;
	int64_t worst_at_ns;
	uint64_t offcpu_ns[GT_BLK_COUNT];
	uint64_t oncpu_ns, migrations, syscalls, sys_ns;
};

/* The selected threads grouped by name; -ENOMEM. */
int report_groups(const struct gt_analysis *a, const struct report_opts *o,
		  struct report_group **out, size_t *n);
void report_groups_free(struct report_group *g, size_t n);

int report_text(const struct gt_analysis *a, const struct report_opts *o, FILE *out);
int report_json(const struct gt_analysis *a, const struct report_opts *o, FILE *out);
/* A JSON string of s (report_json.c). */
void report_jstr(FILE *f, const char *s);

#endif
