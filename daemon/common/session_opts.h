/* What a recording session is asked to record, and what it reports: the two
 * records that cross every layer (command line -> client -> protocol ->
 * daemon -> engine, and engine -> daemon -> protocol -> client -> summary).
 *
 * Each record is one X-macro list; every copy of it (struct fields, wire
 * encoding, bounds checks, copies between layers) is generated from the
 * list, so a new option or figure is one line here plus the code that uses
 * it.
 *
 * common/ is the lowest layer of daemon/: it includes nothing of the other
 * folders (only libc, the kernel's UAPI and format/'s constants).
 * Return convention: 0 or -errno, with a message for the user in why.
 */
#ifndef GT_COMMON_SESSION_OPTS_H
#define GT_COMMON_SESSION_OPTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "wire/gt_events.h" /* GT_V1_*: trace format versions */
#include "flight_opts.h"

/* Go 1.22+ trace formats (v2: generations, batches per M), written through
 * format/v2/gt_v2enc.h; go_version's values past GT_V1_21. */
#define GT_GO_1_22 1022
#define GT_GO_1_23 1023

/* INTERPOSE: live heap counted by build/libgotraced-heap.so inside a command
 * that `record -- CMD` launched (daemon/interpose/). */
enum gt_heap_mode { GT_HEAP_DEFAULT = 0, GT_HEAP_OFF, GT_HEAP_MALLOC, GT_HEAP_RSS,
		    GT_HEAP_INTERPOSE };

#define GT_MAX_CPU_HZ 100000u            /* perf's own ceiling is lower still */
#define GT_MAX_ALLOC_EVERY (1u << 30)
#define GT_MAX_DURATION_NS (366ull * 24 * 3600 * 1000000000ull) /* a year */
/* --call-graph=dwarf,SIZE: bytes of user stack copied (bpf/gotraced.h's
 * GT_DWARF_STACK_MAX), a multiple of 8; 0 = frame-pointer walks. */
#define GT_MAX_DWARF_STACK 16384u
#define GT_MIN_DWARF_STACK 64u

/* The numeric options: X(type, name, wire, max, what).
 *   wire  u32 or u64, the field's width in a RECORD message
 *   max   the largest value accepted, by the CLI and the daemon alike
 *         (0 always means "default" or "off")
 * go_version is also checked against the set of versions we write. */
#define GT_SESSION_NUMBERS(X)                                                        \
	X(uint64_t, duration_ns, u64, GT_MAX_DURATION_NS, "duration (ns)")           \
	X(int, go_version, u32, GT_GO_1_23, "trace format version")                         \
	X(enum gt_heap_mode, heap, u32, GT_HEAP_INTERPOSE, "heap mode")              \
	X(unsigned, cpu_profile_hz, u32, GT_MAX_CPU_HZ, "CPU profile rate (Hz)")     \
	X(unsigned, alloc_stack_every, u32, GT_MAX_ALLOC_EVERY, "allocation sampling") \
	X(unsigned, dwarf_stack_bytes, u32, GT_MAX_DWARF_STACK, "--call-graph=dwarf stack copy (bytes)")

/* The on/off options: X(name, bit, what); on the wire, bits of the RECORD's
 * flags word (bit 0 is the request's own "send progress"). */
#define GT_SESSION_SWITCHES(X)                                                       \
	X(kernel_stacks, 0x2u, "kernel stack at every blocking switch-out")          \
	X(all_syscalls, 0x4u, "GoSysCall at every syscall entry, not just those that block") \
	X(from_exec, 0x8u, "the pids are a command held before its exec: begin there") \
	X(all_processes, 0x10u, "every process of the machine (record -a)")       \
	X(kernel_threads, 0x20u, "with -a, kernel threads too")                   \
	X(children, 0x40u, "the pids' existing descendants too")

#define GT_OPT_FIELD_(type, name, wire, max, what) type name;
#define GT_OPT_SWITCH_FIELD_(name, bit, what) int name;
/* The options as struct members, for every struct that carries them. */
#define GT_SESSION_OPTION_FIELDS                                                     \
	GT_SESSION_NUMBERS(GT_OPT_FIELD_)                                            \
	GT_SESSION_SWITCHES(GT_OPT_SWITCH_FIELD_)

#define GT_OPT_COPY_(type, name, wire, max, what) gt_dst_->name = gt_src_->name;
#define GT_OPT_SWITCH_COPY_(name, bit, what) gt_dst_->name = gt_src_->name;
/* Copies every option between two structs that carry GT_SESSION_OPTION_FIELDS. */
#define GT_SESSION_OPTIONS_COPY(dst, src)                                            \
	do {                                                                         \
		__typeof__(dst) gt_dst_ = (dst);                                     \
		__typeof__(src) gt_src_ = (src);                                     \
		GT_SESSION_NUMBERS(GT_OPT_COPY_)                                     \
		GT_SESSION_SWITCHES(GT_OPT_SWITCH_COPY_)                             \
	} while (0)

/* record --name: how many names, and how long each (a comm is 15 bytes:
 * longer names match existing processes by exe or argv[0] only). */
#define GT_MAX_NAMES 32
#define GT_MAX_NAME_LEN 255

struct gt_session_opts {
	const pid_t *pids;             /* processes to trace (all their threads) */
	int npids;
	const char *const *names;      /* or processes by comm, exe or argv[0] */
	int nnames;
	const char *cgroup_path;       /* or a cgroup v2 directory (absolute path) */
	int out_fd;                    /* trace output; the session does not close it */
	uid_t owner_uid;               /* who asked (status; non-root: ptrace's rules) */
	gid_t owner_gid;               /* its gid, for ptrace's rules */
	pid_t owner_pid;               /* the client process (Yama scope 1), 0 unknown */
	const struct gt_flight_opts *flight; /* a flight recording; NULL none */
	int detach;                    /* (flight, daemon) outlives its client */
	GT_SESSION_OPTION_FIELDS
};

/* Checks every option against its bounds (the same for the CLI and the
 * daemon): 0, or -EINVAL with why naming the option and its limits. */
int gt_session_opts_check(const struct gt_session_opts *o, char *why, size_t whylen);

/* What a session reports: X(name, what), all uint64_t. */
#define GT_SESSION_COUNTERS(X)                                                       \
	X(elapsed_ns, "elapsed (ns)")                                                \
	X(kernel_events, "kernel events received")                                   \
	X(trace_events, "Go trace events written")                                   \
	X(bytes, "bytes written")                                                    \
	X(drops, "events the kernel dropped")                                        \
	X(threads, "threads seen")                                                   \
	X(repairs, "model repairs by the translator")                                \
	X(left, "processes that left the recording (privileges)")                    \
	X(refused, "processes found but not recorded (ptrace's rule)")               \
	X(loopback_anon, "loopback wakeups whose sender could not be named")         \
	X(samples_lost, "allocation samples not written (their thread never ran again)") \
	X(probe_call_ns, "what one probed allocator call costs here (ns)")           \
	X(window_start_ns, "the trace's first instant (CLOCK_MONOTONIC ns, 0 unopened)") \
	X(start_attach_ns, "starting: attaching the tracepoints (ns)")               \
	X(start_perf_ns, "starting: opening the mmap perf events (ns)")              \
	X(start_targets_ns, "starting: finding the targets, /proc snapshot (ns)")    \
	X(start_probes_ns, "starting: heap and CPU-profile probes (ns)")             \
	X(stop_notice_ns, "stopping: from the trace's end to the stop (ns)")       \
	X(stop_flush_ns, "stopping: translating what the rings held (ns)")           \
	X(stop_detach_ns, "stopping: detaching the programs (ns)")                   \
	X(stop_mem_ns, "stopping: memory tracking's last values and detach (ns)")    \
	X(stop_finish_ns, "stopping: the closing events and the footer (ns)")

#define GT_COUNTER_FIELD_(name, what) uint64_t name;
#define GT_SESSION_COUNTER_FIELDS GT_SESSION_COUNTERS(GT_COUNTER_FIELD_)

#define GT_COUNTER_COPY_(name, what) gt_dst_->name = gt_src_->name;
/* Copies every counter between two structs with GT_SESSION_COUNTER_FIELDS. */
#define GT_SESSION_COUNTERS_COPY(dst, src)                                           \
	do {                                                                         \
		__typeof__(dst) gt_dst_ = (dst);                                     \
		__typeof__(src) gt_src_ = (src);                                     \
		GT_SESSION_COUNTERS(GT_COUNTER_COPY_)                                \
	} while (0)

#endif
