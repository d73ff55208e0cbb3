/* What a flight recording is asked to keep and when it writes it
 * (`record --flight`, docs/design.md "Flight recorder"): the window, the
 * memory cap, the triggers and how often they may fire.  Filled by the
 * command line (ctl/record_flight.c), carried to gotraced in a RECORD
 * (common/protocol.c, GT_REC_FLIGHT), read by the engine (engine/flight*.c).
 *
 * common/ includes nothing of the other folders. */
#ifndef GT_COMMON_FLIGHT_OPTS_H
#define GT_COMMON_FLIGHT_OPTS_H

#include <stddef.h>
#include <stdint.h>

#define GT_FLIGHT_DEFAULT_WINDOW_NS (10ull * 1000000000ull)
#define GT_FLIGHT_DEFAULT_SIZE (64ull << 20)   /* bytes held, at most */
#define GT_FLIGHT_MIN_SIZE (1ull << 20)
#define GT_FLIGHT_MAX_SIZE (16ull << 30)  /* --flight-size at most */
#define GT_FLIGHT_MAX_TRIGGERS 8
#define GT_FLIGHT_MAX_DUMPS 1000000u

/* What a trigger measures, for one thread of the recording:
 *  SCHED_DELAY  from the moment it became runnable (woken, or preempted)
 *               to the moment it ran again;
 *  OFFCPU       from its switch-out to sleep to the moment it ran again;
 *  SYSCALL      the same, when it slept inside a syscall (sysnr, or any
 *               when sysnr is -1): one continuous block of that call. */
enum gt_flight_kind { GT_FLIGHT_SCHED_DELAY, GT_FLIGHT_OFFCPU, GT_FLIGHT_SYSCALL };

struct gt_flight_trigger {
	enum gt_flight_kind kind;
	int64_t sysnr;           /* SYSCALL: the call, -1 = any */
	uint64_t threshold_ns;   /* fires when the span is longer */
	char name[16];           /* only for a thread of this comm, or of a
				    process whose main thread has it; "" any */
	char spec[64];           /* as the user wrote it, for names and messages */
};

struct gt_flight_opts {
	uint64_t window_ns;      /* keep at least this much (unless the cap wins) */
	uint64_t size_bytes;     /* memory held for the window, at most */
	struct gt_flight_trigger triggers[GT_FLIGHT_MAX_TRIGGERS];
	int ntriggers;
	uint64_t after_ns;       /* keep recording this long after a trigger */
	uint64_t holdoff_ns;     /* ignore triggers this long after one fired */
	int holdoff_set;         /* --holdoff given (else: the window) */
	unsigned max_dumps;      /* triggered dumps at most, 0 = no limit */
};

/* What fired: a trigger, on which thread, when, and for how long. */
struct gt_flight_fired {
	int trigger;             /* index in opts.triggers */
	uint32_t tid, tgid;
	char comm[16];
	int64_t sysnr;           /* the syscall it slept in, -1 none */
	uint64_t ts;             /* when it ran again: CLOCK_MONOTONIC ns */
	uint64_t span_ns;        /* what was measured */
	/* 1: not taken, though longer than the one taken before it (at
	 * taken_ts, taken_span_ns): inside its holdoff, or while it waited
	 * for --after (its dump holds this one then: pending) */
	int held, pending;
	uint64_t taken_ts, taken_span_ns;
};

/* A flight recording's figures. */
struct gt_flight_stats {
	uint64_t held_bytes;     /* memory held for the window now */
	uint64_t segments;       /* segments held */
	uint64_t records;        /* kernel records they hold (status EVENTS) */
	uint64_t span_ns;        /* time they cover */
	uint64_t dropped;        /* segments dropped (age or cap) */
	uint64_t fired;          /* triggers accepted */
	uint64_t ignored;        /* triggers ignored (holdoff, max, pending) */
	uint64_t held_longer;    /* of those, ones longer than the one taken
				    before them (said as they fire) */
	uint64_t dumps;          /* files written */
	uint64_t threads;        /* threads the live model knows */
	uint32_t names_seen;     /* bit i: trigger i has no @NAME, or a thread
				    of that name (or of a process of that
				    name) was seen switching */
};

/* Checks what a client sent (the daemon) or the command line made: the
 * bounds above, known kinds, syscall numbers from -1 to 4095, thresholds
 * above 0, names and specs NUL-terminated in their arrays.  0, or -EINVAL
 * with why naming what is wrong. */
int gt_flight_opts_check(const struct gt_flight_opts *o, char *why, size_t whylen);

/* The dumps' directory PATH, made (0750, one level) if missing, opened
 * O_PATH without following a link: its fd, or -1 with why saying
 * "cannot make|open WHAT: reason", WHAT being what (PATH itself if NULL). */
int gt_flight_dir_open(const char *path, const char *what, char *why, size_t whylen);

#endif
