/* Folder format/check/: deciding whether a trace file is one every Go reader
 * accepts, and the per-goroutine figures of `inspect --goroutines`.  It may
 * include format/wire/ and format/util/; never writer/ or analyze/, never
 * daemon/, bpf/ or a Linux header.
 *
 * Validity check of a Go execution trace (legacy format, Go 1.5 to 1.21).
 *
 * Re-implements in C what Go 1.19's internal/trace parser enforces
 * (readTrace, parseEvents, order1007/order1005, removeFutile,
 * postProcessTrace) plus the rules of docs/format.md that only the viewer or
 * newer readers enforce: every goroutine descheduled and every P stopped at
 * the end, every GoCreate's new-goroutine stack present, non-empty and with
 * a non-zero top PC, stacks of at most 128 frames and under 2048 bytes,
 * strings and stacks only after the first batch.  And, for files of 1.11
 * and later, what Go 1.22+ refuses when it converts them to its new model
 * and what makes Go 1.23's viewer panic on the result (gt_check_go122.c).
 *
 * Every error names the event type, its byte offset and the rule broken.
 * The check reads the buffer in place, in two passes (gt_check_stream.c):
 * its memory grows with goroutines, Ps, stacks, strings, batches and CPU
 * samples, never with events, so a file of any size fits; files of Go 1.5
 * and 1.6 and files with FutileWakeup records are checked in memory.
 */
#ifndef GT_CHECK_H
#define GT_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "wire/gt_events.h"

struct gt_check_report {
	int version;             /* 1019 for "go 1.19 trace"; 0 if unreadable */
	uint64_t bytes;          /* input size */
	uint64_t events;         /* events `go tool trace -d` would print */
	uint64_t duration_ticks; /* last minus first timestamp, in ticks */
	uint64_t freq;           /* ticks per second (Frequency event) */
	uint64_t count_by_type[GT_EV_COUNT]; /* as decoded, before Go merges */
	uint64_t goroutines, procs, strings, stacks;
	int ok;                  /* 1 valid, 0 invalid */
	char error[512];         /* why invalid: rule, event type, offset */
	uint64_t error_offset;   /* byte offset of the offending record */
};

/* Checks the trace in data[0..len).  Returns 0 if valid, 1 if invalid
 * (rep->error says why), -ENOMEM if a table could not be allocated. */
int gt_check_buffer(const uint8_t *data, size_t len, struct gt_check_report *rep);

/* Same for a file (mapped read-only).  0 valid, 1 invalid, -errno on I/O
 * failure (rep->error then holds "cannot open PATH: reason"). */
int gt_check_file(const char *path, struct gt_check_report *rep);

/* Rule sets.  The default (flags 0) is the producer contract of docs/format.md:
 * everything below.  Real Go runtime traces meet GT_CHECK_GO_TOOLS but
 * not always the contract (their Ps keep running at the end, Go 1.9 puts
 * PC 0 in new-goroutine stacks).
 *
 * GT_CHECK_PARSER_ONLY: only what Go 1.19 `go tool trace -d` checks.
 * GT_CHECK_GO_TOOLS: that, plus what makes the Go 1.19 viewer fail or
 *   crash: a goroutine still running at the end, a GC, STW or sweep never
 *   finished, a GoCreate whose new-goroutine stack is missing or empty, a
 *   GoSysExit not preceded by GoSysBlock/GoInSyscall; and what Go 1.22+
 *   refuses or Go 1.23's viewer panics on (files of 1.11 and later): a
 *   record over 2048 bytes, a CPUSample with a time delta followed by
 *   other events of its batch, a goroutine the proc, thread or goroutine
 *   view stops while its start time reads as unset or while it executes
 *   nowhere (running or in a syscall from the trace's first timestamp, a
 *   blocked syscall whose P keeps running, a syscall from the start on a
 *   P without ProcStart), nothing left once the snapshot is dropped.
 * 0: that, plus docs/format.md: every P stopped at the end, non-zero top PC in
 *   new-goroutine stacks, strings and stacks only after the first batch,
 *   stacks of at most 128 frames and under 2048 bytes, time never going
 *   backwards within a P, a Gomaxprocs event present. */
#define GT_CHECK_PARSER_ONLY 0x1u
#define GT_CHECK_GO_TOOLS 0x2u

enum gt_gstate { GT_G_DEAD, GT_G_RUNNABLE, GT_G_RUNNING, GT_G_WAITING };

/* "dead", "runnable", "running", "waiting" */
extern const char *const gt_gstate_names[4];

/* What one goroutine did, for `gotracectl inspect --goroutines`. */
struct gt_goroutine_stats {
	uint64_t id;
	const char *name;   /* function of the top frame of its GoCreate
			     * new-goroutine stack; "" if unknown */
	size_t name_len;
	int64_t tid;        /* line of that frame when its file is "[thread]",
			     * else -1 */
	uint64_t starts;    /* GoStart / GoStartLabel */
	uint64_t blocks[GT_BLK_COUNT];
	uint64_t running_ns;        /* time between starts and stops */
	uint64_t runnable_ns;       /* time between runnable and start */
	uint64_t unblocks_received; /* GoUnblock naming it */
	int ended;                  /* GoEnd seen */
	enum gt_gstate end_state;   /* state after the last event */
};

typedef void (*gt_goroutine_fn)(const struct gt_goroutine_stats *g, void *arg);

/* The check with options: flags is 0 or one GT_CHECK_* rule set; if fn
 * is not NULL it is called once per goroutine, in id order, after the
 * check (also when the state pass finds the trace invalid: with what was
 * seen up to the error; not when it fails earlier, in decoding or
 * ordering).  The stats and name pointers are valid during the call only.
 * Returns as gt_check_buffer. */
int gt_check_run(const uint8_t *data, size_t len, unsigned flags,
		 struct gt_check_report *rep, gt_goroutine_fn fn, void *arg);

/* gt_check_run on a file; returns as gt_check_file. */
int gt_check_file_run(const char *path, unsigned flags, struct gt_check_report *rep,
		      gt_goroutine_fn fn, void *arg);

#endif
