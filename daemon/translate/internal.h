/* Private state of the translator, shared by daemon/translate*.c. */
#ifndef GT_TRANSLATE_INTERNAL_H
#define GT_TRANSLATE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "translate.h"
#include "util/gt_idmap.h"

/* Thread states, mirroring what the Go parser believes of its goroutine. */
enum gt_th_state {
	GT_TH_RUNNABLE,     /* created, preempted, yielded or woken */
	GT_TH_RUNNING,      /* the G running on P cpu */
	GT_TH_WAITING,      /* blocked: woken by GoUnblock */
	GT_TH_WAITING_SYS,  /* GoSysBlock / GoInSyscall: woken by GoSysExit */
	GT_TH_DEAD,         /* GoEnd written; kept until its last switch-out */
};

#define GT_UNKNOWN_COMM "[unknown]"

struct gt_thread {
	uint32_t tid, tgid;
	uint64_t goid;
	uint64_t seq;           /* Go's per-goroutine sequence counter */
	uint64_t born;          /* time of its GoCreate */
	enum gt_th_state state;
	int cpu;                /* P while running */
	int last_p;             /* P of its last state change: a start or
				   unblock on that same P is written as a
				   *Local event, with no sequence number */
	bool fresh;             /* never started since created */
	int64_t snap_sysnr;     /* syscall it was blocked in at the snapshot,
				   -1 none or unknown */
	uint64_t ident;         /* reserved identity stack of its GoCreate,
				   0 once defined (with the last comm) */
	/* Go 1.22+ forgets the name of a goroutine whose state a GoStatus
	 * set (snapshot threads, GoWaiting) and takes the root frame of its
	 * next stack instead: that stack (root_id, reserved) becomes root_base
	 * plus the identity frame, defined with it. */
	bool unnamed122;
	uint64_t root_id, root_base;
	char comm[GT_COMM_LEN]; /* the thread's latest name */
	/* A wakeup that came while it was still switching out to sleep
	 * (GT_WAKEUP_SWITCHING): it ends the block its switch-out, the next
	 * event about it, is about to write. */
	bool wake_pending;
	/* The goroutine and labels of a GT_KEV_GOID record written at its
	 * switch-out (a labelled goroutine's), for that switch's log: the
	 * switch record has the same ts (one whose reserve failed leaves this
	 * held, and a later switch's ts tells it is not its own). */
	struct gt_go_held {
		uint64_t goid, labels;
		uint32_t hash0, count;
		uint64_t ts;
	} go_held;
	/* A wakeup that came while it was still queued on its CPU, about to
	 * block (GT_WAKEUP_RACING): its next switch-out decides whether it
	 * ends that block (GT_SWITCH_RACED). */
	bool race_pending;
	/* Its syscall entries are recorded (--syscalls=all): a generic
	 * syscall wait with no entry since its last GoSysCall is that call
	 * blocking again (after a wakeup or a preemption inside it), and
	 * writes no second GoSysCall (report counts calls,
	 * docs/mapping.md#syscalls). */
	bool entries_seen;
	struct gt_kev_wakeup_sender pending; /* .wk; the rest with GT_WAKEUP_SENDER */
	/* Its last syscall entry's user stack and the caller found in its
	 * stack top (0: none): later events of that same stack (its switch
	 * out of the syscall, a wakeup or fork it does there) take that
	 * caller, the function at frame 0 not having returned. */
	int32_t sys_ustack;
	uint64_t sys_caller;
	/* Allocation samples read while it was off CPU (alloc.c): written
	 * as its UserLogs when it next starts; NULL until one is held. */
	struct gt_held_sample *held;
	unsigned nheld;
};

/* alloc.c: one allocation sample waiting for its thread to run */
struct gt_held_sample {
	uint64_t stack;         /* writer stack id */
	uint64_t size;
};
/* Samples one thread holds at most; more are lost (counted). */
#define GT_TR_HELD_MAX 64

struct gt_cpu {
	struct gt_thread *cur;  /* G running on this P (NULL = none) */
	bool p_running;         /* ProcStart written, no ProcStop since */
	int last_type;          /* last event written on this P */
	/* The GoSysCall of the running G's syscall, held back until the next
	 * event on this P: if that is the syscall blocking, it gets the
	 * switch's fuller stack (with the kernel's frames).  Written by
	 * gt_tr_emit before any other event of this P, at its own time. */
	bool sys_pending;
	bool sys_at_block; /* the pending entry was written where it blocks */
	uint64_t sys_ts, sys_stack;
};

/* heap.c: the last heap (or RSS) value of each process of the session */
struct gt_heap_share {
	uint32_t tgid;
	uint64_t bytes;
};
struct gt_heap_shares {
	struct gt_heap_share *v;
	size_t n, cap;
	uint64_t total;         /* what HeapAlloc says: the sum of v */
};

#define GT_IRQ_KINDS 5 /* gt_tr_irq_stack */

/* throttle.c: a throttled cgroup's id and its name in the logs ("cgroup
 * PATH", or "cgroup id N" when the lookup found nothing: not tried again) */
#define GT_TR_CGROUPS 64
struct gt_tr_cgroup {
	uint64_t id;
	char name[248];
};

struct gt_tr_v2;
struct gt_tr_late;

struct gt_translator {
	struct gt_writer *w;    /* v1 output, or NULL with v2 */
	struct gt_tr_v2 *v2;    /* v2 output (output_v2.c), or NULL */
	int ncpus;              /* real Ps; P ncpus is a virtual one for G 0 */
	const struct gt_stack_source *stacks;
	const struct gt_title_source *titles;
	const struct gt_golabels_source *golabels;
	int (*cgroup_path)(uint64_t id, int tid, char *out, size_t len);
	struct gt_tr_cgroup *cgroups; /* throttle.c: the names looked up, */
	unsigned ncgroups;      /* GT_TR_CGROUPS at most, the oldest replaced */
	struct gt_comm_owner *owners; /* names.c: which comms processes share */
	size_t nowners, nowners_used;
	int version;
	uint32_t mask;
	struct gt_cpu *cpus;    /* ncpus + 1 */
	struct gt_idmap threads; /* tid -> struct gt_thread * (gt_tr_thread_at) */
	struct gt_idmap stack_ids; /* (tgid, ustack, kstack, caller) -> writer stack id */
	struct gt_idmap ra_slots;  /* (tgid, ustack) -> return-address slot */
	/* keys of both given while a binary was loading -> the names' clock
	 * then (gt_stack_source.pending): asked again once it moved */
	struct gt_idmap stack_pending, ra_pending;
	struct gt_frame *frames; /* scratch, GT_MAX_STACK_FRAMES */
	struct gt_tr_late *late; /* stacks waiting for names (late_stack.c) */
	size_t nlate, caplate;
	uint64_t next_goid;     /* ids of reused TIDs: from GT_TR_REUSED_GOID */
	uint64_t *tid_used;     /* bitmap: TIDs already given as goroutine ids */
	size_t ntid_used;       /* its words */
	uint64_t now;           /* time of the event being translated */
	uint64_t begin_ts;      /* the snapshot's time (its GoCreates') */
	bool snapshot_done;     /* its Gomaxprocs is written */
	uint64_t survivors;     /* events Go 1.22+ keeps (not the snapshot's
				   GoCreates, its Gomaxprocs, GoSysBlock) */
	uint64_t heap_goal;
	struct gt_heap_shares heap;
	uint64_t irq_stacks[GT_IRQ_KINDS]; /* interrupt kinds' one-frame stacks, 0 = not
				    written yet (gt_tr_irq_stack) */
	bool begun, ended;
	int err;                /* first writer/allocation error */
	struct gt_translator_stats st;
};

/* A thread's goroutine id is its TID, the first time the recording sees
 * that TID (pid_max is at most 2^22); a reused TID's next thread gets an
 * id from here up, never a TID: ids stay unique and the TID shows in
 * every viewer. */
#define GT_TR_REUSED_GOID (1ull << 32)

/* ProcStart's thread (the M of Go 1.22+: its thread view's rows, -d=1's
 * M=) is not a thread of ours: no one thread runs a CPU for the whole
 * of a P's run.  It is this base plus the P's number, one M per CPU (and
 * per spare P), never a TID (pid_max is at most 2^22). */
#define GT_TR_M_BASE 1000000000ull

/* translate_state.c: thread table, emission, P helpers */
/* The thread in slot i of t->threads, or NULL: for (i = 0; i < t->threads.cap;
 * i++) if ((th = gt_tr_thread_at(t, i))) ... */
static inline struct gt_thread *gt_tr_thread_at(const struct gt_translator *t, size_t i)
{
	return gt_idmap_full(&t->threads, i) ? *(struct gt_thread **)gt_idmap_val(&t->threads, i) : NULL;
}
struct gt_thread *gt_tr_lookup(struct gt_translator *t, uint32_t tid);
struct gt_thread *gt_tr_add(struct gt_translator *t, uint32_t tid, uint32_t tgid,
			    const char *comm);
void gt_tr_remove(struct gt_translator *t, struct gt_thread *th);
void gt_tr_rekey(struct gt_translator *t, struct gt_thread *th, uint32_t tid);
/* Writes P p's held-back GoSysCall, if any (see struct gt_cpu). */
void gt_tr_flush_syscall(struct gt_translator *t, int p);
void gt_tr_emit(struct gt_translator *t, int p, int type, const uint64_t *args, int n);
void gt_tr_repair(struct gt_translator *t, enum gt_repair_kind k);
bool gt_tr_traced(const struct gt_translator *t, uint32_t sessions);
int gt_tr_g0_p(struct gt_translator *t, int hint);
void gt_tr_set_comm(struct gt_translator *t, struct gt_thread *th, const char *comm);

/* output.c: events and stacks out, to the v1 writer or through output_v2.c
 * to the v2 encoder (gt_translator_opts.v2); 0 or a negative errno */
int gt_tr_out_event(struct gt_translator *t, int p, int type, uint64_t ts, const uint64_t *args,
		    int n);
uint64_t gt_tr_out_stack(struct gt_translator *t, const struct gt_frame *f, int n);
uint64_t gt_tr_out_stack_reserve(struct gt_translator *t);
int gt_tr_out_stack_define(struct gt_translator *t, uint64_t id, const struct gt_frame *f, int n);
int gt_tr_out_stack_define_rooted(struct gt_translator *t, uint64_t id, uint64_t base,
				  const struct gt_frame *root);
/* UserLog (category, value) at t->now on P p */
int gt_tr_out_user_log(struct gt_translator *t, int p, const char *category, uint64_t stack,
		       const char *value);
/* output_v2.c */
struct gt_v2enc;
int gt_tr_v2_new(struct gt_tr_v2 **out, struct gt_v2enc *e, int ncpus);
void gt_tr_v2_free(struct gt_tr_v2 *v);
int gt_tr_v2_event(struct gt_tr_v2 *v, int p, int type, uint64_t ts, const uint64_t *a, int n);
/* id 0: a new stack (reserved if n is 0); else (re)defines id.  The id, 0
 * without memory.  v2 stacks may be defined again: tables are per
 * generation, each generation takes the frames known when it uses them. */
uint64_t gt_tr_v2_stack(struct gt_tr_v2 *v, uint64_t id, const struct gt_frame *f, int n);
int gt_tr_v2_stack_rooted(struct gt_tr_v2 *v, uint64_t id, uint64_t base,
			  const struct gt_frame *root);
int gt_tr_v2_user_log(struct gt_tr_v2 *v, int p, uint64_t ts, const char *category,
		      uint64_t stack, const char *value);
uint64_t gt_tr_v2_dropped(const struct gt_tr_v2 *v);
/* p if a goroutine holds it, else the first P one holds (a marker, whose
 * v2 UserLog needs a running goroutine), else p. */
int gt_tr_v2_busy_p(const struct gt_tr_v2 *v, int p);
/* At the translator's end: the open generation's names. */
int gt_tr_v2_end(struct gt_tr_v2 *v);

/* translate_stack.c: stack ids -> writer stacks, identity stacks */
/* A kernel stack id meaning "no kernel stack, a [loopback] frame on top of
 * the user stack": the stack of a loopback sender credited with the
 * wakeup its packet caused (GT_WAKEUP_LOOPBACK). */
#define GT_KSTACK_LOOPBACK (-2)
uint64_t gt_tr_stack(struct gt_translator *t, uint32_t tgid, int32_t ustack, int32_t kstack);
/* ... with caller inserted as user frame 1 where the source finds it fits */
uint64_t gt_tr_stack_caller(struct gt_translator *t, uint32_t tgid, int32_t ustack,
			    int32_t kstack, uint64_t caller);
/* The caller in a user stack's top (gt_stack_source.ra_slot), 0 if none */
uint64_t gt_tr_caller(struct gt_translator *t, uint32_t tgid, int32_t ustack,
		      const struct gt_utop *top);
/* A stack of thread th, with the caller of its last syscall entry when
 * ustack is that entry's (struct gt_thread) */
uint64_t gt_tr_thread_stack(struct gt_translator *t, const struct gt_thread *th, int32_t ustack,
			    int32_t kstack);
uint64_t gt_tr_identity_reserve(struct gt_translator *t);
void gt_tr_identity_define(struct gt_translator *t, struct gt_thread *th);
/* v2 only: th's identity (and rooted) stack defined now with its current
 * name, defined again later (a generation uses the name it knows) */
void gt_tr_identity_now(struct gt_translator *t, struct gt_thread *th);
uint64_t gt_tr_comm_pc(const char *comm);
uint64_t gt_tr_irq_stack(struct gt_translator *t, uint32_t wakeup_flags);
/* G 0's stack for a loopback wakeup whose sender is not ours: one frame
 * naming the sender where the session may see it, else [loopback]; e is
 * the whole record (a struct gt_kev_wakeup_sender) */
uint64_t gt_tr_loopback_stack(struct gt_translator *t, const struct gt_kev_wakeup *e);
uint64_t gt_tr_named_stack(struct gt_translator *t, struct gt_thread *th, uint64_t stack);
void gt_tr_stack_free(struct gt_translator *t);

/* late_stack.c: stacks with frames the source may name later (struct
 * gt_stack_source, unnamed).  At most GT_TR_LATE_MAX are held; more are
 * written as they are. */
#define GT_TR_LATE_MAX 8192
/* A stack id for t->frames[0..n) (of process tgid) whose frames are given
 * at gt_tr_late_settle; 0 if it is not held (written as it is then). */
uint64_t gt_tr_late_stack(struct gt_translator *t, uint32_t tgid, int n);
/* Names and defines the held stacks of tgid (all: of every process). */
void gt_tr_late_settle(struct gt_translator *t, uint32_t tgid, bool all);
void gt_tr_late_free(struct gt_translator *t);

/* names.c: comms shared between processes, and a goroutine's name */
struct gt_comm_owner {
	uint64_t hash;          /* gt_tr_comm_pc of the comm; 0 = free slot */
	uint32_t tgid;          /* the first process seen with it */
	bool shared;            /* another process had it too */
};
void gt_tr_note_comm(struct gt_translator *t, const struct gt_thread *th);
void gt_tr_name(struct gt_translator *t, const struct gt_thread *th, char *out, size_t len);
void gt_tr_names_free(struct gt_translator *t);

/* translate_goroutine.c: goroutine transitions (each writes its event) */
struct gt_thread *gt_tr_create(struct gt_translator *t, int p, uint64_t creator_stack,
			       uint32_t tid, uint32_t tgid, const char *comm);
struct gt_thread *gt_tr_create_midflight(struct gt_translator *t, int hint, uint32_t tid,
					 uint32_t tgid, const char *comm);
void gt_tr_start(struct gt_translator *t, struct gt_thread *th, int c);
void gt_tr_deschedule(struct gt_translator *t, struct gt_thread *th, int type, uint64_t stack);
void gt_tr_end_g(struct gt_translator *t, struct gt_thread *th);
void gt_tr_make_runnable(struct gt_translator *t, struct gt_thread *th, int p, uint64_t stack);
void gt_tr_free_p(struct gt_translator *t, int c);
/* ProcStart of P c (M GT_TR_M_BASE + c) unless it runs already. */
void gt_tr_proc_start(struct gt_translator *t, int c);
void gt_tr_stop_p(struct gt_translator *t, int c);
void gt_tr_ensure_running(struct gt_translator *t, struct gt_thread *th, int c);
void gt_tr_retire(struct gt_translator *t, struct gt_thread *th);
struct gt_thread *gt_tr_current(struct gt_translator *t, const struct gt_kev_hdr *h,
				const char *comm);

/* translate_sched.c and translate_syscall.c: one handler per kernel event */
/* The block event of a thread asleep in syscall sysnr (-1: none known). */
int gt_tr_block_type(int64_t sysnr);
void gt_tr_on_switch(struct gt_translator *t, const struct gt_kev_switch *e);
void gt_tr_on_wakeup(struct gt_translator *t, const struct gt_kev_wakeup *e);
void gt_tr_on_fork(struct gt_translator *t, const struct gt_kev_fork *e);
void gt_tr_on_exec(struct gt_translator *t, const struct gt_kev_exec *e);
void gt_tr_on_exit(struct gt_translator *t, const struct gt_kev_exit *e);
void gt_tr_on_leave(struct gt_translator *t, const struct gt_kev_leave *e);
struct gt_thread *gt_tr_lookup_ours(struct gt_translator *t, uint32_t tid, uint32_t sessions,
				    int c);
void gt_tr_on_rename(struct gt_translator *t, const struct gt_kev_rename *e);
void gt_tr_on_sys_enter(struct gt_translator *t, const struct gt_kev_sys_enter *e);
void gt_tr_on_switch_entry(struct gt_translator *t, const struct gt_kev_switch_entry *x);
void gt_tr_on_heap(struct gt_translator *t, const struct gt_kev_heap *e);
void gt_tr_on_rss(struct gt_translator *t, const struct gt_kev_rss *e);
/* heap.c: a process left the session (its last thread exited) */
void gt_tr_heap_process_gone(struct gt_translator *t, uint32_t tgid, int cpu);
void gt_tr_heap_free(struct gt_translator *t);
void gt_tr_on_cpu_sample(struct gt_translator *t, const struct gt_kev_cpu_sample *e);
/* goid.c: the goroutine a Go thread ran, as UserLog "goroutine" on P p
 * at its switch-out (the switch's goid, else th's held one) */
void gt_tr_throttle_log(struct gt_translator *t, int p, const struct gt_kev_switch *e);
void gt_tr_goid_log(struct gt_translator *t, int p, struct gt_thread *th, uint64_t goid,
		    uint64_t ts);
/* goid.c: GT_KEV_GOID */
void gt_tr_on_goid(struct gt_translator *t, const struct gt_kev_goid *e);

/* alloc.c: allocation samples as UserLog "alloc" */
void gt_tr_on_alloc_sample(struct gt_translator *t, const struct gt_kev_alloc_sample *e);
/* th has just started on its P: its held samples are written there. */
void gt_tr_alloc_flush(struct gt_translator *t, struct gt_thread *th);
/* th will not run again (removed, or the recording ends): its held
 * samples are counted lost and freed. */
void gt_tr_alloc_drop(struct gt_translator *t, struct gt_thread *th);

#endif
