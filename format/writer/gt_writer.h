/* Folder format/writer/: producing trace files (the writer and its string
 * and stack interning).  It may include format/wire/ and format/util/;
 * never check/ or analyze/ (the tests check what it writes), never daemon/,
 * bpf/ or a Linux header.
 *
 * Writer of Go execution traces (legacy wire format, versions 1.11, 1.19, 1.21).
 *
 * Modelled on runtime/trace.go: one buffer per P, each starting with a Batch
 * header, time written as deltas that never go backwards within a P, strings
 * and stacks interned and dumped in the footer after every batch.
 *
 * Return convention: 0 or a negative errno.  After the first write error the
 * writer is poisoned: every later call returns that error, and gt_writer_close
 * returns it without presenting a footer.  The writer never touches signal
 * dispositions: a process writing to a pipe must ignore SIGPIPE itself to see
 * -EPIPE rather than die.
 *
 * Versions: 1.11, 1.19 and 1.21 share one byte layout for every event this
 * writer accepts (checked against the Go 1.19 reader and Go's oldtrace parser
 * for 1.11-1.21); they differ in the header, in which events exist
 * (CPUSample needs 1.19), and in what GCSTWStart's kind argument means
 * (1.21 numbers every stop-the-world reason) -- that is the caller's business.
 *
 * Not thread-safe: one writer is driven by one thread.
 */
#ifndef GT_WRITER_H
#define GT_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "wire/gt_events.h"

#define GT_MAX_STACK_FRAMES 128
/* The readers reject strings longer than 1e6 bytes (not 1 MiB). */
#define GT_MAX_STRING_LEN 1000000
/* UserLog values longer than this are truncated (they live in a P buffer). */
#define GT_MAX_USER_LOG_LEN 32768

#define GT_MAX_P 65535

struct gt_writer;

/* One stack frame; func and file are copied (interned) by gt_writer_stack. */
struct gt_frame {
	uint64_t pc;
	const char *func;
	const char *file;
	uint64_t line;
};

/* Opens a writer on fd (not closed by the writer).  version is one of
 * GT_V1_11, GT_V1_19, GT_V1_21; freq is ticks per second (1e9 for ns). */
int gt_writer_open(struct gt_writer **out, int fd, int version, uint64_t freq);

/* How a writer puts bytes into its fd: like write(2) (the count, or -1 with
 * errno).  gotraced writes a user's trace with the user's file-system ids. */
typedef long (*gt_writer_write_fn)(void *ctx, int fd, const void *buf, size_t n);
/* gt_writer_open, every byte going through fn(ctx, ...) (NULL: write(2)). */
int gt_writer_open_with(struct gt_writer **out, int fd, int version, uint64_t freq,
			gt_writer_write_fn fn, void *ctx);

/* Emits one event on P p at absolute time ts (ticks).  args are the event's
 * arguments after the timestamp, in table order, the stack id last when the
 * event has one (0 = no stack).  A ts earlier than the P's last one is
 * clamped forward (the clamp is counted, see gt_writer_stats).  Batch,
 * Frequency, Stack and String are written by the writer itself and rejected
 * here with -EINVAL, as are events the version does not have.
 * GT_EV_USER_LOG takes its value string through gt_writer_user_log.
 * p is the stream (0 <= p <= GT_MAX_P); CPUSample goes into stream p like
 * any event, its args being [real ts, real p, g, stack], with a time delta
 * of 0 that leaves the P's clock as it was (the readers disagree on
 * whether a sample's delta counts). */
int gt_writer_event(struct gt_writer *w, int p, int type, uint64_t ts,
		    const uint64_t *args, int nargs);

/* UserLog [ts, task, key string id, stack] followed by the value string
 * (NULL = "", truncated to GT_MAX_USER_LOG_LEN bytes). */
int gt_writer_user_log(struct gt_writer *w, int p, uint64_t ts, uint64_t task,
		       uint64_t key_id, uint64_t stack_id, const char *value);

/* Interns s (truncated to GT_MAX_STRING_LEN at a UTF-8 boundary) and
 * returns its id (> 0);
 * "" and NULL return 0.  Returns 0 on allocation failure too (poisons). */
uint64_t gt_writer_string(struct gt_writer *w, const char *s);

/* Interns a stack (frames[0] is the innermost), capped to
 * GT_MAX_STACK_FRAMES frames and trimmed until its record fits the readers'
 * 2048-byte limit.  Returns its id (> 0); n == 0 returns 0. */
uint64_t gt_writer_stack(struct gt_writer *w, const struct gt_frame *frames, int n);

/* A stack id decided now, its frames given later (before close): the
 * footer holds the stack table, so an event may refer to a stack whose
 * contents are only known afterwards (a goroutine's name, known when the
 * thread ends).  Returns the id (> 0), 0 on allocation failure (poisons).
 * A reserved id is never returned by gt_writer_stack, even for equal
 * frames. */
uint64_t gt_writer_stack_reserve(struct gt_writer *w);

/* Gives reserved stack id its frames (copied, capped and trimmed as by
 * gt_writer_stack).  -EINVAL if id is not a reserved id or n <= 0,
 * -EALREADY if it was defined already (the first definition stays), the
 * writer's error if it is poisoned, -ENOMEM (poisons).  Ids still
 * undefined at gt_writer_close get the one fallback frame below, so every
 * stack referred to exists with a non-zero top PC. */
int gt_writer_stack_define(struct gt_writer *w, uint64_t id, const struct gt_frame *frames,
			   int n);

/* Gives reserved stack id the frames of stack base (an id this writer
 * returned, defined; 0 = none) with root appended as the outermost frame
 * (base's outer frames give way if the result would exceed the frame cap
 * or the record limit).  Errors as gt_writer_stack_define; -EINVAL also
 * for an unknown or still undefined base.  Go 1.22+ names a goroutine
 * that existed before the trace after the root frame of its first stack:
 * the translator roots one stack of such a goroutine in its name. */
int gt_writer_stack_define_rooted(struct gt_writer *w, uint64_t id, uint64_t base,
				  const struct gt_frame *root);

#define GT_STACK_FALLBACK_PC 1
#define GT_STACK_FALLBACK_FUNC "[unnamed]"
#define GT_STACK_FALLBACK_FILE "[gotraced]"

struct gt_writer_stats {
	uint64_t events;        /* events emitted (header/footer not counted) */
	uint64_t bytes;         /* bytes written to fd so far */
	uint64_t buffered;      /* bytes of open batches, not written yet */
	uint64_t strings;
	uint64_t stacks;        /* ids given, reserved ones included */
	uint64_t clamped;       /* timestamps clamped forward */
	uint64_t batches;       /* batches flushed (footer not counted) */
	uint64_t trimmed;       /* stacks cut to fit 128 frames / 2048 bytes */
};
void gt_writer_stats(const struct gt_writer *w, struct gt_writer_stats *st);

/* Flushes every batch, defines leftover reserved stacks (fallback frame)
 * and writes the footer (Batch p=0, Frequency, strings, stacks).  Frees the writer in all cases.  Returns 0 or the first error.
 * Go rejects a trace without events: a caller that may have written none
 * checks gt_writer_stats().events before closing. */
int gt_writer_close(struct gt_writer *w);

/* Frees the writer without writing anything more (the file is not valid). */
void gt_writer_free(struct gt_writer *w);

#endif
