/* Folder sym/: addresses to names: ELF, DWARF, Go pclntab, kallsyms, /proc
 * maps, demangling. It may include common/ and nothing else of daemon/ (no
 * BPF).
 *
 * The symbolizer: user and kernel instruction addresses -> {func, file, line}.
 *
 * User space: a process's /proc/PID/maps is snapshotted when the caller
 * first sees it (and again after exec); every executable mapping's binary
 * is opened then (through /proc/PID/root/<path>, falling back to
 * /proc/PID/map_files/ and the plain path), so addresses still resolve
 * after the process has exited.  Binaries are parsed once per (dev, inode)
 * and shared by all processes that map them.  Names come from .symtab /
 * .dynsym (libelf), file:line from DWARF (libdw) when present, and Go
 * binaries are decoded from .gopclntab, even when stripped.  Code in an
 * anonymous executable mapping (a JIT's) is named from the process's
 * /tmp/perf-PID.map (jit.h, perfmap.h), as perf names it.
 *
 * Kernel: /proc/kallsyms (real addresses need root).  Kernel frames are
 * marked with file "[kernel]" and module "[kernel]" (or "[MODNAME]").
 *
 * Addresses: pass ip exactly as it should be looked up.  Frame 0 of a
 * stack is the interrupted instruction: pass it as-is.  Other frames are
 * return addresses (the instruction after the call): pass ip - 1 so the
 * line is the call's and a call at a function's very end stays inside it.
 *
 * Thread safety: none; one symbolizer per session (or a lock around it).
 * Return convention: 0 or -errno.  Lookups always fill *out, even on
 * failure, with a printable fallback ("module+0xOFF" or "0xADDR").
 */
#ifndef GT_SYMBOLIZE_H
#define GT_SYMBOLIZE_H

#include <stdint.h>
#include <sys/types.h>

#include "cfi.h" /* struct gt_ra_rule */

struct gt_symbolizer;

/* Strings are owned by the symbolizer and valid until gt_symbolizer_free,
 * or until it holds no process any more (the last one forgotten: what was
 * learned from processes goes, so that a daemon's symbolizer comes back
 * to its first size between sessions); never NULL.  line is 0 and file ""
 * when unknown. */
struct gt_sym {
	const char *func;   /* function; unknown: "module+0xOFF" or "0xADDR" */
	const char *file;   /* source file, "[kernel]" for kernel frames */
	unsigned line;
	const char *module; /* binary path as mapped, "[kernel]", "[MOD]", "?" */
};

struct gt_symbolizer *gt_symbolizer_new(void);
void gt_symbolizer_free(struct gt_symbolizer *s);

/* wait 1 (the default): a lookup that first needs a binary waits for its
 * load while the load makes progress (loader.h).  wait 0: never; until
 * the load is done, its frames are "module+0xOFF" (and a JIT's perf map
 * is read in the background alike).  gotraced's engine does not wait:
 * its thread serves every user's sessions, and a user's files decide how
 * long their load takes. */
void gt_symbolizer_set_wait(struct gt_symbolizer *s, int wait);

/* Whether a lookup since the last call met a binary still loading (it
 * gave "module+0xOFF", or no return-address rule, for now): then the
 * loads' clock (gt_symbolizer_clock) as it was at the last call, else 0.
 * Each call starts afresh: call it before the lookups, then after. */
uint64_t gt_symbolizer_pending(struct gt_symbolizer *s);

/* The loads' clock: never 0, moves each time a load ends (in any
 * symbolizer of the process). */
uint64_t gt_symbolizer_clock(void);

/* From now on each user's loads run within a budget (sym/loader.h): a
 * process that serves many users (gotraced). */
void gt_symbolizer_per_user_budget(void);

/* Snapshots /proc/PID/maps now and opens the mapped binaries.  Calling it
 * again for the same pid (after exec) re-reads: new mappings replace the
 * old ones they overlap, the others are kept for stacks taken earlier; a
 * process that has no maps any more (exited) keeps its last snapshot.
 * Returns 0, or -errno if the maps cannot be read (-ENOENT, -ESRCH: gone). */
int gt_symbolizer_add_process(struct gt_symbolizer *s, pid_t pid);

/* Closes the binaries no process maps any more, parked for the next that
 * maps them (at most 32: a launched command's maps are dropped at its exec
 * and announced again just after).  The engine does it once no session is
 * left, so that an idle daemon holds no user's file. */
void gt_symbolizer_close_parked(struct gt_symbolizer *s);

/* Starts loading the C library this process maps, parked (unused until a
 * process that maps the same file takes it, loaded or still loading): a
 * recorder about to launch a command does it before the slow BPF load,
 * so the command's first stacks do not wait for libc's debug info.  0, or
 * -errno (-ENOENT: no libc.so.* mapped). */
int gt_symbolizer_prefetch_libc(struct gt_symbolizer *s);

/* A forked child maps what its parent mapped until it execs: child gets a
 * copy of parent's snapshot (nothing if parent is unknown), so that the
 * stacks of a child that is gone before its own maps are read (a short
 * PostgreSQL backend) still resolve.  0 or -errno. */
int gt_symbolizer_clone_process(struct gt_symbolizer *s, pid_t parent, pid_t child);

/* One executable mapping of pid, as a /proc/PID/maps line would give it
 * (m->executable is not looked at), from a record the kernel wrote when
 * it was made (perf MMAP2): for a process gone before its maps could be
 * read.  Creates the pid's snapshot if it has none; the mapping replaces
 * those it overlaps, and a later gt_symbolizer_add_process replaces it
 * where they overlap.  The binary is opened through /proc/PID/root, then
 * the plain path, and used only if its device and inode are m's (a file
 * replaced since is not the one mapped).  0 or -errno (-EINVAL: empty
 * range). */
struct gt_map_line;
int gt_symbolizer_add_mapping(struct gt_symbolizer *s, pid_t pid, const struct gt_map_line *m);

/* Lookups so far that found JIT code its process's perf map did not name
 * (yet): a caller compares two counts to know whether a stack may be
 * named better later. */
uint64_t gt_symbolizer_jit_misses(const struct gt_symbolizer *s);

/* The next lookup of pid's JIT code that misses looks at its perf map
 * again, whatever the wait between reads (jit.h): the map may have been
 * written at exit. */
void gt_symbolizer_jit_recheck(struct gt_symbolizer *s, pid_t pid);

/* Drops the pid's snapshot (binaries stay cached for other processes). */
void gt_symbolizer_forget_process(struct gt_symbolizer *s, pid_t pid);

/* Returns 0 if the function is known, -ESRCH if the pid was never added
 * (or forgotten) or its maps were read too late to hold anything, -EFAULT
 * if ip is in no executable mapping of the process (a broken frame-pointer
 * chain: nothing is there), -ENOENT if it is mapped but no symbol covers
 * it.  *out is always filled; after -EFAULT, out->func ("0xADDR") is
 * valid only until the next lookup: such addresses are garbage, countless
 * with ASLR, and kept they would grow the symbolizer without end. */
int gt_symbolize_user(struct gt_symbolizer *s, pid_t pid, uint64_t ip,
		      struct gt_sym *out);

/* Where the function running at ip keeps its return address at that
 * instruction (ip as frame 0 of a stack: the interrupted instruction),
 * from its binary's call-frame information: on the stack at sp +
 * out->sp_off, or still in the link register.  Returns 0, -ENOENT when
 * unknown (no CFI there, or the frame is addressed from a frame pointer,
 * which a frame-pointer walk already follows), -EFAULT or -ESRCH as
 * gt_symbolize_user. */
int gt_symbolize_ra(struct gt_symbolizer *s, pid_t pid, uint64_t ip, struct gt_ra_rule *out);

/* Returns 0 if a kernel symbol covers ip, -ENOENT if not (out gets
 * "0xADDR"), -EACCES if kallsyms shows only zero addresses (not root). */
int gt_symbolize_kernel(struct gt_symbolizer *s, uint64_t ip,
			struct gt_sym *out);

/* What a mapped binary offers for unwinding and lines, so callers can say
 * when a stack may be short. */
enum gt_sym_info_flags {
	GT_SYM_HAS_SYMTAB = 1 << 0,  /* .symtab or .dynsym names */
	GT_SYM_HAS_DWARF = 1 << 1,   /* .debug_info (file:line) */
	GT_SYM_HAS_PCLNTAB = 1 << 2, /* Go binary (Go keeps frame pointers) */
	GT_SYM_HAS_EH_FRAME = 1 << 3,/* .eh_frame: DWARF CFI present */
	GT_SYM_FRAME_POINTERS = 1 << 4, /* likely built with frame pointers */
};


#endif
