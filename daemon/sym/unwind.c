/* See unwind.h. */
#include "unwind.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "safe_open.h"

#define GT_UNWIND_PROCS 64 /* libdwfl sessions kept (one per process) */

struct proc {
	pid_t tgid;
	Dwfl *dwfl;
	uint64_t used;          /* LRU tick */
	uint64_t reported_ns;   /* when its maps were read (just before) */
};

struct gt_unwinder {
	struct proc procs[GT_UNWIND_PROCS];
	uint64_t tick;
	const struct gt_unwind_in *in; /* the copy being unwound */
	uint64_t *ips;
	int n, max;
};

/* The process whose modules libdwfl is opening: its callbacks are told
 * no pid (set around every libdwfl call that may open a module). */
static __thread pid_t opening_pid;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A module's file, opened inside its process's root without links (the
 * path comes from /proc/PID/maps: the process chose it).  The vDSO and
 * other [names] are libdwfl's own business (read from memory). */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	char path[4096 + 64];
	int fd;

	if (name[0] != '/')
		return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)opening_pid, name);
	fd = gt_sym_open_rooted(path, GT_SYM_FILE_MAX);
	if (fd < 0)
		return -1;
	*elfp = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!*elfp) {
		close(fd);
		return -1;
	}
	return fd;
}

/* No separate debug files: .eh_frame is in every binary that needs one
 * (and a binary's own .debug_frame is read from the binary). */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
	(void)debuglink_file, (void)debuglink_crc, (void)debuginfo_file_name;
	return -1;
}

static const Dwfl_Callbacks callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = find_debuginfo,
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct gt_unwinder *u = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = arg;
	return u->in->tid;
}

/* A word of the copied stack; anything else is unknown. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct gt_unwinder *u = arg;
	const struct gt_unwind_in *in = u->in;

	(void)dwfl;
	if (addr < in->sp || addr - in->sp > in->size || in->size - (addr - in->sp) < 8)
		return false;
	memcpy(result, in->stack + (addr - in->sp), 8);
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct gt_unwinder *u = arg;
	const struct gt_unwind_in *in = u->in;
	Dwarf_Word regs[GT_UNWIND_REGS];
#if defined(__x86_64__)
	const int nregs = 17; /* rax..r15, rip */
#elif defined(__aarch64__)
	const int nregs = 32; /* x0..x30, sp */
#else
	const int nregs = 0;
#endif

	if (!nregs)
		return false;
	for (int i = 0; i < nregs; i++)
		regs[i] = in->regs[i];
	if (!dwfl_thread_state_registers(thread, 0, nregs, regs))
		return false;
	dwfl_thread_state_register_pc(thread, in->ip);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static void proc_drop(struct proc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	memset(p, 0, sizeof(*p));
}

/* A libdwfl session told tgid's modules, attached to our callbacks. */
static int proc_open(struct gt_unwinder *u, struct proc *p, pid_t tgid)
{
	proc_drop(p);
	p->dwfl = dwfl_begin(&callbacks);
	if (!p->dwfl)
		return -ENOMEM;
	p->tgid = tgid;
	p->reported_ns = now_ns();
	dwfl_report_begin(p->dwfl);
	if (dwfl_linux_proc_report(p->dwfl, tgid) != 0) {
		proc_drop(p);
		return -ESRCH;
	}
	dwfl_report_end(p->dwfl, NULL, NULL);
	if (!dwfl_attach_state(p->dwfl, NULL, tgid, &thread_callbacks, u)) {
		proc_drop(p);
		return -ENOEXEC;
	}
	return 0;
}

static struct proc *proc_get(struct gt_unwinder *u, pid_t tgid, uint64_t ip)
{
	struct proc *p = NULL, *lru = &u->procs[0];

	for (int i = 0; i < GT_UNWIND_PROCS; i++) {
		if (u->procs[i].dwfl && u->procs[i].tgid == tgid)
			p = &u->procs[i];
		if (u->procs[i].used < lru->used)
			lru = &u->procs[i];
	}
	if (p && !dwfl_addrmodule(p->dwfl, ip) && now_ns() - p->reported_ns > GT_UNWIND_REREPORT_NS)
		p = proc_open(u, p, tgid) ? NULL : p; /* a library loaded since */
	else if (!p)
		p = proc_open(u, lru, tgid) ? NULL : lru;
	if (p)
		p->used = ++u->tick;
	return p;
}

static int on_frame(Dwfl_Frame *frame, void *arg)
{
	struct gt_unwinder *u = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(frame, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	/* frames after the first are return addresses; a signal frame's pc
	 * is exact: one byte more, as the symbolizer takes one back */
	if (u->n > 0 && activation)
		pc++;
	if (u->n == 0)
		pc = u->in->ip;
	u->ips[u->n++] = pc;
	return u->n < u->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

int gt_unwind(struct gt_unwinder *u, const struct gt_unwind_in *in, uint64_t *ips, int max)
{
	struct proc *p;

	if (!in->ip || max < 1)
		return -EINVAL;
	u->in = in;
	u->ips = ips;
	u->max = max;
	u->n = 0;
	opening_pid = in->tgid;
	p = proc_get(u, in->tgid, in->ip);
	if (p)
		(void)dwfl_getthread_frames(p->dwfl, in->tid, on_frame, u);
	if (u->n == 0)
		ips[u->n++] = in->ip; /* at least where it stopped */
	u->in = NULL;
	return u->n;
}

struct gt_unwinder *gt_unwinder_new(void)
{
	return calloc(1, sizeof(struct gt_unwinder));
}

void gt_unwinder_forget(struct gt_unwinder *u, pid_t tgid, uint64_t exec_ns)
{
	for (int i = 0; u && i < GT_UNWIND_PROCS; i++)
		if (u->procs[i].dwfl && u->procs[i].tgid == tgid &&
		    u->procs[i].reported_ns < exec_ns)
			proc_drop(&u->procs[i]);
}

void gt_unwinder_free(struct gt_unwinder *u)
{
	if (!u)
		return;
	for (int i = 0; i < GT_UNWIND_PROCS; i++)
		proc_drop(&u->procs[i]);
	free(u);
}
