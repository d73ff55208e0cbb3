/* Folder format/wire/: the wire core of the legacy Go execution-trace format
 * (Go 1.5 to 1.21) that the writer, the checker and the analysis share: the
 * event table (this file), the block reasons, varints (gt_varint.h), the
 * batch reader (gt_reader.h), the event parser (gt_parse.h), per-P cursors
 * over a mapped file (gt_pcursor.h) and Go's merge order (gt_merge.h).  It
 * may include format/util/ and the C library; never writer/, check/,
 * analyze/, daemon/, bpf/ or a Linux header.
 *
 * The Go execution-trace event table (legacy format, Go 1.5 to 1.21).
 *
 * One X-macro list is the wire spec, as Go's tracev2 spec table: the type
 * number, the name the Go tools print, the first trace version that has the
 * event, the names of its arguments after the timestamp in the newest version
 * (stack ids included), and which of them are stack ids and which string ids
 * (GT_AT(i): argument i).  Writer, decoder, checker and analysis all read it,
 * so they cannot disagree.  Layouts follow runtime/trace.go of Go 1.19:
 *
 *   Batch         [p, ticks]                       (no time delta; absolute)
 *   Frequency     [freq]
 *   Stack         [id, n, {pc, func, file, line}*n]
 *   String        [id, len, bytes]                 (no arguments in the table)
 *   UserLog       [ts, task, key, stack] + value string
 *   CPUSample     [time delta, real ts, p, g, stack] (the reader takes the
 *                 real ts as the time; it keeps samples in a batch of their own)
 *
 * Everything else: [time delta, args..., stack id?].  Before 1.7 a sequence
 * number follows the time delta, and some events have fewer arguments
 * (gt_check_decode.c's arg_num knows which).
 */
#ifndef GT_EVENTS_H
#define GT_EVENTS_H

#define GT_AT(i) (1u << (i))

/*        enum name              num name                 minver args                              stack ids          string ids */
#define GT_EVENT_LIST(X)                                                                                                  \
	X(GT_EV_NONE,                  0, "None",              1005, (),                                0,                 0)         \
	X(GT_EV_BATCH,                 1, "Batch",             1005, ("p", "ticks"),                    0,                 0)         \
	X(GT_EV_FREQUENCY,             2, "Frequency",         1005, ("freq"),                          0,                 0)         \
	X(GT_EV_STACK,                 3, "Stack",             1005, ("id", "n"),                       0,                 0)         \
	X(GT_EV_GOMAXPROCS,            4, "Gomaxprocs",        1005, ("procs", "stack"),                GT_AT(1),          0)         \
	X(GT_EV_PROC_START,            5, "ProcStart",         1005, ("thread"),                        0,                 0)         \
	X(GT_EV_PROC_STOP,             6, "ProcStop",          1005, (),                                0,                 0)         \
	X(GT_EV_GC_START,              7, "GCStart",           1005, ("seq", "stack"),                  GT_AT(1),          0)         \
	X(GT_EV_GC_DONE,               8, "GCDone",            1005, (),                                0,                 0)         \
	X(GT_EV_GC_STW_START,          9, "GCSTWStart",        1005, ("kind"),                          0,                 0)         \
	X(GT_EV_GC_STW_DONE,          10, "GCSTWDone",         1005, (),                                0,                 0)         \
	X(GT_EV_GC_SWEEP_START,       11, "GCSweepStart",      1005, ("stack"),                         GT_AT(0),          0)         \
	X(GT_EV_GC_SWEEP_DONE,        12, "GCSweepDone",       1005, ("swept", "reclaimed"),            0,                 0)         \
	X(GT_EV_GO_CREATE,            13, "GoCreate",          1005, ("g", "new_stack", "stack"),       GT_AT(1)|GT_AT(2), 0)         \
	X(GT_EV_GO_START,             14, "GoStart",           1005, ("g", "seq"),                      0,                 0)         \
	X(GT_EV_GO_END,               15, "GoEnd",             1005, (),                                0,                 0)         \
	X(GT_EV_GO_STOP,              16, "GoStop",            1005, ("stack"),                         GT_AT(0),          0)         \
	X(GT_EV_GO_SCHED,             17, "GoSched",           1005, ("stack"),                         GT_AT(0),          0)         \
	X(GT_EV_GO_PREEMPT,           18, "GoPreempt",         1005, ("stack"),                         GT_AT(0),          0)         \
	X(GT_EV_GO_SLEEP,             19, "GoSleep",           1005, ("stack"),                         GT_AT(0),          0)         \
	X(GT_EV_GO_BLOCK,             20, "GoBlock",           1005, ("stack"),                         GT_AT(0),          0)         \
	X(GT_EV_GO_UNBLOCK,           21, "GoUnblock",         1005, ("g", "seq", "stack"),             GT_AT(2),          0)         \
	X(GT_EV_GO_BLOCK_SEND,        22, "GoBlockSend",       1005, ("stack"),                         GT_AT(0),          0)         \
	X(GT_EV_GO_BLOCK_RECV,        23, "GoBlockRecv",       1005, ("stack"),                         GT_AT(0),          0)         \
	X(GT_EV_GO_BLOCK_SELECT,      24, "GoBlockSelect",     1005, ("stack"),                         GT_AT(0),          0)         \
	X(GT_EV_GO_BLOCK_SYNC,        25, "GoBlockSync",       1005, ("stack"),                         GT_AT(0),          0)         \
	X(GT_EV_GO_BLOCK_COND,        26, "GoBlockCond",       1005, ("stack"),                         GT_AT(0),          0)         \
	X(GT_EV_GO_BLOCK_NET,         27, "GoBlockNet",        1005, ("stack"),                         GT_AT(0),          0)         \
	X(GT_EV_GO_SYSCALL,           28, "GoSysCall",         1005, ("stack"),                         GT_AT(0),          0)         \
	X(GT_EV_GO_SYSEXIT,           29, "GoSysExit",         1005, ("g", "seq", "ts"),                0,                 0)         \
	X(GT_EV_GO_SYSBLOCK,          30, "GoSysBlock",        1005, (),                                0,                 0)         \
	X(GT_EV_GO_WAITING,           31, "GoWaiting",         1005, ("g"),                             0,                 0)         \
	X(GT_EV_GO_IN_SYSCALL,        32, "GoInSyscall",       1005, ("g"),                             0,                 0)         \
	X(GT_EV_HEAP_ALLOC,           33, "HeapAlloc",         1005, ("mem"),                           0,                 0)         \
	X(GT_EV_HEAP_GOAL,            34, "HeapGoal",          1005, ("mem"),                           0,                 0)         \
	X(GT_EV_TIMER_GOROUTINE,      35, "TimerGoroutine",    1005, ("g"),                             0,                 0)         \
	X(GT_EV_FUTILE_WAKEUP,        36, "FutileWakeup",      1005, (),                                0,                 0)         \
	X(GT_EV_STRING,               37, "String",            1007, (),                                0,                 0)         \
	X(GT_EV_GO_START_LOCAL,       38, "GoStartLocal",      1007, ("g"),                             0,                 0)         \
	X(GT_EV_GO_UNBLOCK_LOCAL,     39, "GoUnblockLocal",    1007, ("g", "stack"),                    GT_AT(1),          0)         \
	X(GT_EV_GO_SYSEXIT_LOCAL,     40, "GoSysExitLocal",    1007, ("g", "ts"),                       0,                 0)         \
	X(GT_EV_GO_START_LABEL,       41, "GoStartLabel",      1008, ("g", "seq", "label"),             0,                 GT_AT(2))  \
	X(GT_EV_GO_BLOCK_GC,          42, "GoBlockGC",         1008, ("stack"),                         GT_AT(0),          0)         \
	X(GT_EV_GC_MARK_ASSIST_START, 43, "GCMarkAssistStart", 1009, ("stack"),                         GT_AT(0),          0)         \
	X(GT_EV_GC_MARK_ASSIST_DONE,  44, "GCMarkAssistDone",  1009, (),                                0,                 0)         \
	X(GT_EV_USER_TASK_CREATE,     45, "UserTaskCreate",    1011, ("task", "parent", "name", "stack"), GT_AT(3),        GT_AT(2))  \
	X(GT_EV_USER_TASK_END,        46, "UserTaskEnd",       1011, ("task", "stack"),                 GT_AT(1),          0)         \
	X(GT_EV_USER_REGION,          47, "UserRegion",        1011, ("task", "mode", "name", "stack"), GT_AT(3),          GT_AT(2))  \
	X(GT_EV_USER_LOG,             48, "UserLog",           1011, ("task", "key", "stack"),          GT_AT(2),          GT_AT(1))  \
	X(GT_EV_CPU_SAMPLE,           49, "CPUSample",         1019, ("ts", "p", "g", "stack"),         GT_AT(3),          0)

enum gt_event_type {
#define GT_X_ENUM(e, num, name, minver, args, stacks, strings) e = num,
	GT_EVENT_LIST(GT_X_ENUM)
#undef GT_X_ENUM
	GT_EV_COUNT
};

#define GT_EVENT_MAX_ARGS 4

struct gt_event_desc {
	const char *name;
	int min_version; /* 1005 = go 1.5 */
	int has_stack;   /* the last argument is a stack id */
	int nargs;       /* arguments after the timestamp, that stack id excluded */
	/* The arguments after the timestamp in the newest version, stack ids
	 * included (args[nargs] is the trailing stack id if has_stack). */
	const char *args[GT_EVENT_MAX_ARGS];
	unsigned stack_args;  /* GT_AT(i): args[i] is a stack id */
	unsigned string_args; /* GT_AT(i): args[i] is a string id */
};

/* Indexed by enum gt_event_type; defined in gt_events.c. */
extern const struct gt_event_desc gt_event_descs[GT_EV_COUNT];

/* The position of the argument named name among type's arguments after
 * the timestamp (newest version), or -1. */
int gt_event_arg(int type, const char *name);

/* Why a goroutine stopped running: the blocks columns of `inspect
 * --goroutines` and `report`, from the event that stopped it (gt_block.c). */
enum gt_block_reason {
	GT_BLK_SYNC,     /* GoBlockSync, GoBlockCond, GoBlockSend, GoBlockRecv */
	GT_BLK_SLEEP,    /* GoSleep */
	GT_BLK_SELECT,   /* GoBlockSelect */
	GT_BLK_NET,      /* GoBlockNet */
	GT_BLK_SYSCALL,  /* GoSysBlock */
	GT_BLK_BLOCK,    /* GoBlock, GoBlockGC, GoStop */
	GT_BLK_PREEMPT,  /* GoPreempt */
	GT_BLK_SCHED,    /* GoSched */
	GT_BLK_COUNT
};

/* "sync", "sleep", "select", "net", "syscall", "block", "preempt", "sched" */
extern const char *const gt_block_reason_names[GT_BLK_COUNT];

/* The reason a goroutine stopped by an event of this type stopped
 * (GT_BLK_BLOCK for GoBlock, GoBlockGC, GoStop and any other type). */
enum gt_block_reason gt_block_reason_of(int type);

/* Trace versions the Go readers have accepted (header "go 1.N trace"). */
enum gt_version {
	GT_V1_5 = 1005,
	GT_V1_7 = 1007,
	GT_V1_8 = 1008,
	GT_V1_9 = 1009,
	GT_V1_10 = 1010,
	GT_V1_11 = 1011,
	GT_V1_19 = 1019,
	GT_V1_21 = 1021,
};

/* 1 if some Go reader accepted this version, else 0. */
int gt_version_known(int version);

#endif
