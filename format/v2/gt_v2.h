/* Folder format/v2/: the decoder and the encoder of Go 1.22+ execution
 * traces (the "v2" format: generations of per-M batches, per-generation
 * string and stack tables).  It owns the v2 event table (this file), the
 * header, the batch and event decoders and the grouping of batches into
 * generations; the encoder (gt_v2enc.h) writes files from the same table.  It may
 * include format/util/, format/wire/ and the C library; never writer/,
 * check/, analyze/, daemon/, bpf/ or a Linux header.  The analysis
 * (format/analyze/gt_analyze_v2.c) and the checker read v2 files through it.
 *
 * The spec is Go's own source (go 1.23: internal/trace/event/go122/event.go,
 * internal/trace/batch.go, generation.go; docs/format.md, "Go 1.22+ native
 * format (v2)"):
 *
 *   header       "go 1.22 trace\0\0\0" or "go 1.23 trace\0\0\0" (16 bytes)
 *   batch        EventBatch [gen, m, time, size] then size bytes, or
 *                ExperimentalBatch exp [gen, m, time, size] then size bytes
 *   batch data   events: a type byte, then varint arguments; a timed
 *                event's first argument is its time delta from the batch's
 *                previous event (the first: from the batch's time); String
 *                [id, len, bytes]; Stack [id, n, {pc, func, file, line}*n]
 *
 * This is a parser of outside input: every length is checked against the
 * bytes that hold it (a batch against the file, an event against its
 * batch), and the limits of Go's runtime are enforced (64 KiB batches,
 * 128 frames, 1 KiB strings).  Nothing is allocated here: the caller keeps
 * what it wants per generation. */
#ifndef GT_V2_H
#define GT_V2_H

#include <stddef.h>
#include <stdint.h>

#define GT_V2_HEADER_LEN 16
#define GT_V2_MAX_BATCH (64u << 10)
#define GT_V2_MAX_FRAMES 128u
#define GT_V2_MAX_STRING (1u << 10)
#define GT_V2_MAX_ARGS 6

/*        enum name                   num  name                nargs timed */
#define GT_V2_EVENT_LIST(X)                                                        \
	X(GT_V2_NONE,                   0, "None",                0, 0)          \
	X(GT_V2_EVENT_BATCH,            1, "EventBatch",          4, 0)          \
	X(GT_V2_STACKS,                 2, "Stacks",              0, 0)          \
	X(GT_V2_STACK,                  3, "Stack",               2, 0)          \
	X(GT_V2_STRINGS,                4, "Strings",             0, 0)          \
	X(GT_V2_STRING,                 5, "String",              1, 0)          \
	X(GT_V2_CPU_SAMPLES,            6, "CPUSamples",          0, 0)          \
	X(GT_V2_CPU_SAMPLE,             7, "CPUSample",           5, 0)          \
	X(GT_V2_FREQUENCY,              8, "Frequency",           1, 0)          \
	X(GT_V2_PROCS_CHANGE,           9, "ProcsChange",         3, 1)          \
	X(GT_V2_PROC_START,            10, "ProcStart",           3, 1)          \
	X(GT_V2_PROC_STOP,             11, "ProcStop",            1, 1)          \
	X(GT_V2_PROC_STEAL,            12, "ProcSteal",           4, 1)          \
	X(GT_V2_PROC_STATUS,           13, "ProcStatus",          3, 1)          \
	X(GT_V2_GO_CREATE,             14, "GoCreate",            4, 1)          \
	X(GT_V2_GO_CREATE_SYSCALL,     15, "GoCreateSyscall",     2, 1)          \
	X(GT_V2_GO_START,              16, "GoStart",             3, 1)          \
	X(GT_V2_GO_DESTROY,            17, "GoDestroy",           1, 1)          \
	X(GT_V2_GO_DESTROY_SYSCALL,    18, "GoDestroySyscall",    1, 1)          \
	X(GT_V2_GO_STOP,               19, "GoStop",              3, 1)          \
	X(GT_V2_GO_BLOCK,              20, "GoBlock",             3, 1)          \
	X(GT_V2_GO_UNBLOCK,            21, "GoUnblock",           4, 1)          \
	X(GT_V2_GO_SYSCALL_BEGIN,      22, "GoSyscallBegin",      3, 1)          \
	X(GT_V2_GO_SYSCALL_END,        23, "GoSyscallEnd",        1, 1)          \
	X(GT_V2_GO_SYSCALL_END_BLOCKED,24, "GoSyscallEndBlocked", 1, 1)          \
	X(GT_V2_GO_STATUS,             25, "GoStatus",            4, 1)          \
	X(GT_V2_STW_BEGIN,             26, "STWBegin",            3, 1)          \
	X(GT_V2_STW_END,               27, "STWEnd",              1, 1)          \
	X(GT_V2_GC_ACTIVE,             28, "GCActive",            2, 1)          \
	X(GT_V2_GC_BEGIN,              29, "GCBegin",             3, 1)          \
	X(GT_V2_GC_END,                30, "GCEnd",               2, 1)          \
	X(GT_V2_GC_SWEEP_ACTIVE,       31, "GCSweepActive",       2, 1)          \
	X(GT_V2_GC_SWEEP_BEGIN,        32, "GCSweepBegin",        2, 1)          \
	X(GT_V2_GC_SWEEP_END,          33, "GCSweepEnd",          3, 1)          \
	X(GT_V2_GC_MARK_ASSIST_ACTIVE, 34, "GCMarkAssistActive",  2, 1)          \
	X(GT_V2_GC_MARK_ASSIST_BEGIN,  35, "GCMarkAssistBegin",   2, 1)          \
	X(GT_V2_GC_MARK_ASSIST_END,    36, "GCMarkAssistEnd",     1, 1)          \
	X(GT_V2_HEAP_ALLOC,            37, "HeapAlloc",           2, 1)          \
	X(GT_V2_HEAP_GOAL,             38, "HeapGoal",            2, 1)          \
	X(GT_V2_GO_LABEL,              39, "GoLabel",             2, 1)          \
	X(GT_V2_USER_TASK_BEGIN,       40, "UserTaskBegin",       5, 1)          \
	X(GT_V2_USER_TASK_END,         41, "UserTaskEnd",         3, 1)          \
	X(GT_V2_USER_REGION_BEGIN,     42, "UserRegionBegin",     4, 1)          \
	X(GT_V2_USER_REGION_END,       43, "UserRegionEnd",       4, 1)          \
	X(GT_V2_USER_LOG,              44, "UserLog",             5, 1)          \
	X(GT_V2_GO_SWITCH,             45, "GoSwitch",            3, 1)          \
	X(GT_V2_GO_SWITCH_DESTROY,     46, "GoSwitchDestroy",     3, 1)          \
	X(GT_V2_GO_CREATE_BLOCKED,     47, "GoCreateBlocked",     4, 1)          \
	X(GT_V2_GO_STATUS_STACK,       48, "GoStatusStack",       5, 1)          \
	X(GT_V2_EXPERIMENTAL_BATCH,    49, "ExperimentalBatch",   4, 0)

#define GT_V2_X_ENUM(e, n, name, nargs, timed) e = n,
enum gt_v2_type { GT_V2_EVENT_LIST(GT_V2_X_ENUM) GT_V2_NTYPES };
#undef GT_V2_X_ENUM

struct gt_v2_desc {
	const char *name;
	uint8_t nargs;  /* varint arguments (a timed event's first is its delta) */
	uint8_t timed;
};
extern const struct gt_v2_desc gt_v2_descs[GT_V2_NTYPES];

/* The name of a type, "Invalid" past the table. */
const char *gt_v2_name(unsigned type);

/* Go's statuses (go122.GoStatus, go122.ProcStatus). */
enum { GT_V2_GO_BAD, GT_V2_G_RUNNABLE, GT_V2_G_RUNNING, GT_V2_G_SYSCALL, GT_V2_G_WAITING };
enum { GT_V2_P_BAD, GT_V2_P_RUNNING, GT_V2_P_IDLE, GT_V2_P_SYSCALL, GT_V2_P_SYSCALL_ABANDONED };

/* What a batch holds, from its first byte (Go's isStringsBatch, ...). */
enum gt_v2_kind { GT_V2_K_EVENTS, GT_V2_K_STRINGS, GT_V2_K_STACKS, GT_V2_K_SAMPLES,
		  GT_V2_K_FREQ, GT_V2_K_EXPERIMENTAL };

struct gt_v2_batch {
	uint64_t gen, m, time;
	size_t off, end;     /* its data: file bytes [off, end) */
	size_t hdr;          /* offset of its header */
	int kind;            /* enum gt_v2_kind */
};

/* One decoded event of a batch. */
struct gt_v2_ev {
	uint8_t type;
	uint8_t nargs;
	uint64_t args[GT_V2_MAX_ARGS];
	uint64_t ts;          /* timed events: absolute, the deltas summed */
	const uint8_t *data;  /* String: its bytes; Stack: its frames */
	size_t data_len;      /* String: bytes; Stack: frames (args[1]) */
	size_t off;           /* offset of the type byte in the file */
};

/* A reader over a whole file (mapped or read). */
struct gt_v2_file {
	const uint8_t *data;
	size_t len, pos;
	int version;          /* 22 or 23 */
	char error[256];
};

/* 1 if data starts with a v2 header ("go 1.22 trace", "go 1.23 trace"). */
int gt_v2_is(const uint8_t *data, size_t len);

/* Checks the header.  0 or -EINVAL (f->error says why). */
int gt_v2_open(struct gt_v2_file *f, const uint8_t *data, size_t len);

/* The next batch header, its size checked against the file and Go's limit.
 * 1, 0 at the end, -EINVAL (f->error names the rule). */
int gt_v2_next_batch(struct gt_v2_file *f, struct gt_v2_batch *b);

/* A cursor over one batch's events. */
struct gt_v2_cursor {
	const struct gt_v2_file *f;
	const struct gt_v2_batch *b;
	size_t pos;
	uint64_t ts;
};

void gt_v2_cursor_init(struct gt_v2_cursor *c, const struct gt_v2_file *f,
		       const struct gt_v2_batch *b);

/* The batch's next event (the section markers Strings, Stacks, CPUSamples
 * are returned too).  1, 0 at the batch's end, -EINVAL (err says why:
 * an unknown type, an argument or a string past the batch, a type that
 * the batch's kind may not hold, too many frames, a string too long). */
int gt_v2_next_event(struct gt_v2_cursor *c, struct gt_v2_ev *e, char *err, size_t errlen);

/* The first frames of a Stack event, innermost first, at most max: pc,
 * func and file string ids, line.  Returns how many (the frames were
 * checked by gt_v2_next_event). */
size_t gt_v2_frames(const struct gt_v2_ev *e, uint64_t (*out)[4], size_t max);

#endif
