/* memtrack lifecycle: load bpf/memory.bpf.c on the capture's shared maps,
 * per-session requests, the global masks the BPF programs filter with, and
 * the shared attachments (rss_stat tracepoint, CPU-clock perf events) that
 * live only while some session needs them. */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "memory.skel.h"
#include "memory.h"
#include "testing.h"
#include "uprobe_multi.h"

static int reuse(struct bpf_map *map, int fd, const char *name, char *err, size_t errlen)
{
	int rc = bpf_map__reuse_fd(map, fd);

	if (rc)
		snprintf(err, errlen, "sharing the capture's %s map with the memory programs: %s",
			 name, strerror(-rc));
	return rc;
}

static int share_maps(struct memory_bpf *skel, struct gt_capture *c, char *err, size_t errlen)
{
	struct gt_capture_maps cm;
	int rc;

	gt_capture_shared_maps(c, &cm);
	if ((rc = reuse(skel->maps.tgids, cm.tgids, "tgids", err, errlen)) ||
	    (rc = reuse(skel->maps.cgroups, cm.cgroups, "cgroups", err, errlen)) ||
	    (rc = reuse(skel->maps.rings, cm.rings, "rings", err, errlen)) ||
	    (rc = reuse(skel->maps.stacks, cm.stacks, "stacks", err, errlen)) ||
	    (rc = reuse(skel->maps.stacks_spill, cm.stacks_spill, "stacks_spill", err, errlen)) ||
	    (rc = reuse(skel->maps.stats, cm.stats, "stats", err, errlen)) ||
	    (rc = reuse(skel->maps.ustack_ids, cm.ustack_ids, "ustack_ids", err, errlen)) ||
	    (rc = reuse(skel->maps.data_filter, cm.filter, "maybe_tgid", err, errlen)) ||
	    (rc = reuse(skel->maps.session_drops, cm.session_drops, "session_drops", err, errlen)) ||
	    (rc = reuse(skel->maps.go_procs, cm.go_procs, "go_procs", err, errlen)))
		return rc;
	skel->rodata->wakeup_bytes = cm.wakeup_bytes;
	skel->rodata->loaded_without = cm.without;
	skel->rodata->self_tgid = (uint32_t)getpid();
	return 0;
}

/* Where the kernel has uprobe_multi links, the allocator programs (the
 * object's kprobe-type programs) are loaded for them: they can then no
 * longer go through perf events, so this is decided once, here. */
static void choose_uprobe_links(struct gt_memtrack *m)
{
	struct bpf_program *p;

	m->multi = gt_mt_multi_available();
	if (!m->multi)
		return;
	bpf_object__for_each_program(p, m->skel->obj)
		if (bpf_program__type(p) == BPF_PROG_TYPE_KPROBE)
			bpf_program__set_expected_attach_type(
				p, (enum bpf_attach_type)GT_BPF_TRACE_UPROBE_MULTI);
}

/* Allocator probes only when asked (--heap malloc, or allocation
 * samples): see start_process. */
static int wants_probes(enum gt_heap_mode heap, unsigned alloc_every)
{
	return heap == GT_HEAP_MALLOC || alloc_every;
}

/* gt_memtrack_open's `only`: what that one request will never use is not
 * loaded (nor verified). */
static void load_only_for(struct gt_memtrack *m, const struct gt_memtrack_req *only)
{
	struct bpf_program *p;

	if (!only)
		return;
	m->no_probes = !wants_probes(only->heap, only->alloc_every);
	m->no_cpu = !only->cpu_hz;
	bpf_object__for_each_program(p, m->skel->obj)
		if ((m->no_probes && bpf_program__type(p) == BPF_PROG_TYPE_KPROBE) ||
		    (m->no_cpu && p == m->skel->progs.gt_cpu_sample))
			bpf_program__set_autoload(p, false);
}

/* A request for what load_only_for left out: refused, said why. */
static int loaded_for(const struct gt_memtrack *m, const struct gt_memtrack_req *r,
		      char *err, size_t errlen)
{
	if ((m->no_probes && wants_probes(r->heap, r->alloc_every)) || (m->no_cpu && r->cpu_hz)) {
		snprintf(err, errlen, "memtrack: the %s not loaded (loaded for one session "
			 "that did not ask for %s)", r->cpu_hz && m->no_cpu ? "CPU sampler was" :
			 "allocator probes were", r->cpu_hz && m->no_cpu ? "it" : "them");
		return -EOPNOTSUPP;
	}
	return 0;
}

int gt_memtrack_open(struct gt_memtrack **out, struct gt_capture *c,
		     const struct gt_memtrack_req *only, char *err, size_t errlen)
{
	struct gt_memtrack *m = calloc(1, sizeof(*m));
	int rc;

	*out = NULL;
	if (!m) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	m->ncpus = gt_capture_ncpus(c);
	m->skel = memory_bpf__open();
	if (!m->skel) {
		rc = errno ? -errno : -EINVAL;
		snprintf(err, errlen, "opening the memory BPF object: %s", strerror(-rc));
		free(m);
		return rc;
	}
	/* before Linux 6.1 tracing programs need preallocated maps: same
	 * capacity, its memory pinned from load (see memory.bpf.c) */
	if (!gt_capture_kernel_runtime_alloc_ok())
		bpf_map__set_map_flags(m->skel->maps.live, 0);
	choose_uprobe_links(m);
	load_only_for(m, only);
	rc = share_maps(m->skel, c, err, errlen);
	if (!rc) {
		rc = memory_bpf__load(m->skel);
		if (rc)
			snprintf(err, errlen, "loading the memory BPF programs%s: %s%s",
				 m->multi ? " (for uprobe_multi links; " GT_NO_UPROBE_MULTI_ENV
				 "=1 loads them for perf-event links)" : "", strerror(-rc),
				 rc == -EPERM ? " (need root or CAP_BPF + CAP_PERFMON)" : "");
	}
	if (rc) {
		memory_bpf__destroy(m->skel);
		free(m);
		return rc;
	}
	m->skel->data->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
	*out = m;
	return 0;
}

/* The exec tracepoint resets a process's accounting when it changes image.
 * It runs on every exec of the machine, so like everything else it is
 * attached only while a session uses memtrack: by the first one, before
 * its processes are looked at, and detached when the last one stops. */
static int attach_exec(struct gt_memtrack *m, char *err, size_t errlen)
{
	int rc;

	if (m->exec_link)
		return 0;
	m->exec_link = bpf_program__attach(m->skel->progs.gt_mem_exec);
	if (m->exec_link)
		return 0;
	rc = errno ? -errno : -EINVAL;
	snprintf(err, errlen, "attaching the exec tracepoint of the memory programs: %s",
		 strerror(-rc));
	return rc;
}

static void detach_exec(struct gt_memtrack *m)
{
	bpf_link__destroy(m->exec_link);
	m->exec_link = NULL;
}

void gt_memtrack_close(struct gt_memtrack *m)
{
	if (!m)
		return;
	for (int i = 0; i < GT_MAX_SESSIONS; i++)
		if (m->s[i].active)
			gt_memtrack_stop(m, i);
	bpf_link__destroy(m->rss_link);
	detach_exec(m);
	gt_cpu_sampler_stop(&m->cpu);
	memory_bpf__destroy(m->skel);
	free(m);
}

int gt_memtrack_wanted(enum gt_heap_mode heap, unsigned cpu_hz, unsigned alloc_every)
{
	return heap != GT_HEAP_OFF || cpu_hz || alloc_every;
}

static int any_active(const struct gt_memtrack *m)
{
	for (int i = 0; i < GT_MAX_SESSIONS; i++)
		if (m->s[i].active)
			return 1;
	return 0;
}

static int others_active(const struct gt_memtrack *m, int bit)
{
	for (int i = 0; i < GT_MAX_SESSIONS; i++)
		if (i != bit && m->s[i].active)
			return 1;
	return 0;
}

static int session_has_mode(const struct gt_mt_session *s, enum gt_heap_mode mode)
{
	for (int i = 0; i < s->nprocs; i++)
		if (s->procs[i].mode == mode)
			return 1;
	return 0;
}

/* Recomputes the BPF masks and attaches/detaches the shared programs. */
static int apply(struct gt_memtrack *m, char *err, size_t errlen)
{
	uint32_t heap = 0, rss = 0, cpu = 0, alloc = 0, every = 0, ncg = 0;
	unsigned hz = 0;
	int rc;

	for (int i = 0; i < GT_MAX_SESSIONS; i++) {
		const struct gt_mt_session *s = &m->s[i];

		if (!s->active)
			continue;
		if (session_has_mode(s, GT_HEAP_MALLOC)) {
			heap |= s->heap != GT_HEAP_OFF ? 1u << i : 0;
			if (s->alloc_every) {
				alloc |= 1u << i;
				every = every ? every : s->alloc_every;
			}
		}
		if (session_has_mode(s, GT_HEAP_RSS) || (s->by_cgroup && s->heap != GT_HEAP_OFF))
			rss |= 1u << i;
		if (s->cpu_hz) {
			cpu |= 1u << i;
			hz = hz ? hz : s->cpu_hz; /* the first session's rate rules */
		}
		ncg += s->by_cgroup;
	}
	m->skel->bss->heap_mask = heap;
	m->skel->bss->alloc_mask = alloc;
	m->skel->bss->alloc_every = every;
	m->skel->bss->rss_mask = rss;
	m->skel->bss->cpu_mask = cpu;
	m->skel->bss->n_cgroup_sessions = ncg;
	if (rss && !m->rss_link) {
		m->rss_link = bpf_program__attach(m->skel->progs.gt_rss_stat);
		if (!m->rss_link) {
			rc = -errno;
			snprintf(err, errlen, "attaching the rss_stat tracepoint: %s", strerror(-rc));
			return rc;
		}
	} else if (!rss && m->rss_link) {
		bpf_link__destroy(m->rss_link);
		m->rss_link = NULL;
	}
	if (cpu && !m->cpu.nopen)
		return gt_cpu_sampler_start(&m->cpu, m->skel->progs.gt_cpu_sample, m->ncpus, hz,
					    err, errlen);
	if (!cpu && m->cpu.nopen)
		gt_cpu_sampler_stop(&m->cpu);
	return 0;
}

/* Seeds the process's accounting entry with its cgroup limit (HeapGoal). */
static void seed_proc(struct gt_memtrack *m, pid_t pid)
{
	struct gt_mem_proc v = {0};
	uint32_t tgid = (uint32_t)pid;
	int fd = bpf_map__fd(m->skel->maps.procs);

	if (bpf_map_lookup_elem(fd, &tgid, &v))
		memset(&v, 0, sizeof(v));
	v.limit = gt_mt_cgroup_limit(pid);
	bpf_map_update_elem(fd, &tgid, &v, BPF_ANY);
}

/* --heap interpose: the command counts its own heap into the record
 * (s->ip); a Go program keeps RSS (its heap is not malloc's), and so does
 * a static program (the dynamic loader never loads the interposer). */
static int start_interposed(struct gt_memtrack *m, struct gt_mt_session *s, struct gt_mt_proc *p,
			    const struct gt_alloc_target *t)
{
	char exe[64];
	int rss;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)p->pid);
	rss = t->is_go || gt_mt_elf_is_static(exe) == 1;
	seed_proc(m, p->pid);
	p->mode = rss ? GT_HEAP_RSS : GT_HEAP_INTERPOSE;
	if (s->ip) /* after the hand-over, its taker hears of it (record_mode) */
		gt_mt_interpose_exclude(s->ip, p->pid, rss);
	return 0;
}

/* The record of the first of the session's processes that has one. */
static int open_record(struct gt_mt_session *s, const struct gt_memtrack_req *r,
		       char *err, size_t errlen)
{
	int rc = -ENOENT;

	if (r->npids < 1) {
		snprintf(err, errlen, "--heap interpose needs a command (record -- CMD)");
		return -EINVAL;
	}
	for (int i = 0; i < r->npids && rc == -ENOENT; i++)
		rc = gt_mt_interpose_open(r->pids[i], &s->ip, err, errlen);
	return rc;
}

/* A session that counts RSS alone (--heap rss, or the default without
 * allocation samples): it needs nothing of a process's binary. */
static int rss_only(const struct gt_mt_session *s)
{
	return (s->heap == GT_HEAP_RSS || s->heap == GT_HEAP_DEFAULT) &&
	       !wants_probes(s->heap, s->alloc_every);
}

/* Chooses the mode of one process and attaches its probes. */
static int start_process(struct gt_memtrack *m, struct gt_mt_session *s, struct gt_mt_proc *p,
			 char *err, size_t errlen)
{
	struct gt_alloc_target t;
	int rc;

	p->mode = GT_HEAP_OFF;
	if (s->heap == GT_HEAP_OFF && !s->alloc_every)
		return 0;
	if (rss_only(s)) {
		/* RSS alone (the default) needs nothing of the binary: not
		 * opened (its owner's file, which may never answer; this is
		 * the worker every start and stop waits behind) */
		seed_proc(m, p->pid);
		p->mode = GT_HEAP_RSS;
		return 0;
	}
	rc = gt_alloc_find(p->pid, &t);
	if (rc == -ESRCH)
		return 0; /* gone already: its exit ends it */
	if (rc) {
		snprintf(err, errlen, "finding the allocators of pid %d: %s", (int)p->pid,
			 strerror(-rc));
		return rc;
	}
	if (s->heap == GT_HEAP_INTERPOSE)
		return start_interposed(m, s, p, &t);
	seed_proc(m, p->pid);
	/* Allocator probes only when asked (--heap malloc, or allocation
	 * samples): a uprobe trap costs ~15 us a call on a VM like the test
	 * one, and slowed nginx 25-50x as a default.  The default is RSS,
	 * for every program; Go never gets a uprobe (a uretprobe crashes it). */
	if (t.is_go || !t.nlibs || !wants_probes(s->heap, s->alloc_every)) {
		/* Go programs (no uretprobe ever), rss, or nothing to probe */
		p->mode = s->heap == GT_HEAP_OFF ? GT_HEAP_OFF : GT_HEAP_RSS;
		return 0;
	}
	if (s->nprobed >= GT_MT_MAX_PROBED_PROCS) {
		snprintf(err, errlen, "allocator probes are limited to %d processes per session "
			 "(pid %d would be the %dth); record the others with --heap rss",
			 GT_MT_MAX_PROBED_PROCS, (int)p->pid, s->nprobed + 1);
		return -E2BIG;
	}
	if (!s->nprobed) {
		char why[160] = "";
		/* measured before the first probe, told to the user */
		if (!gt_memtrack_call_cost_ns(why, sizeof(why)))
			fprintf(stderr, "memtrack: cannot measure what a probed malloc "
				"costs: %s\n", why);
	}
	rc = gt_mt_attach_process(m, p, &t, err, errlen);
	if (rc)
		return rc;
	p->mode = GT_HEAP_MALLOC;
	p->ever_malloc = 1;
	m->live_used = 1;
	s->nprobed++;
	return 0;
}

int gt_memtrack_start(struct gt_memtrack *m, const struct gt_memtrack_req *r,
		      char *err, size_t errlen)
{
	struct gt_mt_session *s;
	int rc = 0;

	if (r->bit < 0 || r->bit >= GT_MAX_SESSIONS || m->s[r->bit].active) {
		snprintf(err, errlen, "memtrack: bad or busy session bit %d", r->bit);
		return -EINVAL;
	}
	rc = loaded_for(m, r, err, errlen);
	if (!rc)
		rc = attach_exec(m, err, errlen);
	if (rc)
		return rc;
	s = &m->s[r->bit];
	memset(s, 0, sizeof(*s));
	s->heap = r->heap;
	s->cpu_hz = r->cpu_hz;
	s->alloc_every = r->alloc_every;
	s->by_cgroup = r->by_cgroup;
	s->procs = calloc(r->npids > 0 ? r->npids : 1, sizeof(*s->procs));
	if (!s->procs) {
		if (!any_active(m))
			detach_exec(m);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->active = 1;
	if (r->heap == GT_HEAP_INTERPOSE)
		rc = open_record(s, r, err, errlen);
	for (int i = 0; i < r->npids && !rc; i++) {
		s->procs[i].pid = r->pids[i];
		s->nprocs++;
		rc = start_process(m, s, &s->procs[i], err, errlen);
	}
	if (!rc)
		rc = apply(m, err, errlen);
	if (rc)
		gt_memtrack_stop(m, r->bit);
	return rc;
}

/* Whether the new image needs other probes than those attached: a Go
 * program (none at all), or other allocator binaries. */
static int exec_changes(const struct gt_mt_proc *p)
{
	struct gt_alloc_target t;

	if (gt_alloc_find(p->pid, &t))
		return 0; /* gone: its exit ends it */
	if (p->mode == GT_HEAP_INTERPOSE)
		return 1; /* the new image may be Go or static: RSS then */
	if (t.is_go || t.nlibs != p->nlibs)
		return 1;
	for (int i = 0; i < t.nlibs; i++)
		if (strcmp(t.libs[i].path, p->libs[i]))
			return 1;
	return 0;
}

int gt_memtrack_exec(struct gt_memtrack *m, pid_t pid, char *err, size_t errlen)
{
	int rc = 0, changed = 0;

	for (int i = 0; i < GT_MAX_SESSIONS; i++) {
		struct gt_mt_session *s = &m->s[i];

		for (int j = 0; s->active && j < s->nprocs; j++) {
			struct gt_mt_proc *p = &s->procs[j];
			int r;

			if (p->pid != pid)
				continue;
			/* RSS alone: started again (seeded for the new image)
			 * without reading it */
			if (!rss_only(s) && !exec_changes(p))
				continue;
			/* BPF reset the accounting at the exec itself */
			s->nprobed -= p->mode == GT_HEAP_MALLOC;
			gt_mt_detach_process(p);
			r = start_process(m, s, p, err, errlen);
			rc = rc ? rc : r;
			changed = 1;
		}
	}
	if (changed) {
		int r = apply(m, err, errlen);

		rc = rc ? rc : r;
	}
	return rc;
}

static void emit_final(struct gt_memtrack *m, int bit, const struct gt_mt_proc *p,
		       uint64_t ts, gt_memtrack_emit_fn fn, void *ctx)
{
	struct gt_mem_proc v;
	uint32_t tgid = (uint32_t)p->pid;
	union {
		struct gt_kev_heap heap;
		struct gt_kev_rss rss;
	} ev;
	struct gt_kev_hdr *h = &ev.heap.hdr;

	if (p->mode == GT_HEAP_OFF || p->mode == GT_HEAP_INTERPOSE ||
	    bpf_map_lookup_elem(bpf_map__fd(m->skel->maps.procs), &tgid, &v))
		return;
	memset(&ev, 0, sizeof(ev));
	h->ts = ts;
	h->tid = h->tgid = tgid;
	h->sessions = 1u << bit;
	if (p->mode == GT_HEAP_MALLOC) {
		h->type = GT_KEV_HEAP;
		ev.heap.live_bytes = v.live > 0 ? (uint64_t)v.live : 0;
		ev.heap.limit_bytes = v.limit;
		fn(ctx, h, sizeof(ev.heap));
	} else if (v.rss > 0) {
		h->type = GT_KEV_RSS;
		ev.rss.rss_bytes = (uint64_t)v.rss;
		fn(ctx, h, sizeof(ev.rss));
	}
}

int gt_memtrack_final(struct gt_memtrack *m, int bit, uint64_t ts,
		      gt_memtrack_emit_fn fn, void *ctx)
{
	const struct gt_mt_session *s;

	if (bit < 0 || bit >= GT_MAX_SESSIONS || !m->s[bit].active)
		return -EINVAL;
	s = &m->s[bit];
	for (int i = 0; i < s->nprocs; i++)
		emit_final(m, bit, &s->procs[i], ts, fn, ctx);
	return 0;
}

/* Whether another active session still accounts pid. */
static int pid_in_use(const struct gt_memtrack *m, int except, pid_t pid)
{
	for (int i = 0; i < GT_MAX_SESSIONS; i++) {
		if (i == except || !m->s[i].active)
			continue;
		for (int j = 0; j < m->s[i].nprocs; j++)
			if (m->s[i].procs[j].pid == pid && m->s[i].procs[j].mode != GT_HEAP_OFF)
				return 1;
	}
	return 0;
}

/* Empties a hash map (deleting one key behind the walk, see
 * gt_mt_forget_process). */
static void clear_map(int fd, size_t key_size)
{
	unsigned char k[32], next[32];
	int have = 0;

	if (key_size > sizeof(k))
		return;
	while (bpf_map_get_next_key(fd, have ? k : NULL, next) == 0) {
		if (have)
			bpf_map_delete_elem(fd, k);
		memcpy(k, next, key_size);
		have = 1;
	}
	if (have)
		bpf_map_delete_elem(fd, k);
}

void gt_memtrack_stop(struct gt_memtrack *m, int bit)
{
	struct gt_mt_session *s;
	char err[256];

	if (bit < 0 || bit >= GT_MAX_SESSIONS || !m->s[bit].active)
		return;
	s = &m->s[bit];
	gt_mt_detach_procs(s->procs, s->nprocs); /* all at once: see detach.c */
	/* Walking `live` costs a scan of its 1 Mi buckets, in one
	 * non-preemptible syscall: only for a process that had allocator
	 * probes, and not when no session is left (one clear below). */
	int last = !others_active(m, bit);

	for (int i = 0; i < s->nprocs; i++) {
		const struct gt_mt_proc *p = &s->procs[i];

		if (p->mode != GT_HEAP_OFF && !pid_in_use(m, bit, p->pid))
			gt_mt_forget_process(m, p->pid, p->ever_malloc && !last);
	}
	free(s->procs);
	gt_mt_interpose_close(s->ip);
	memset(s, 0, sizeof(*s));
	apply(m, err, sizeof(err)); /* only detaches: cannot fail */
	if (!any_active(m)) {
		detach_exec(m);
		/* a long-lived daemon: entries of exited threads and of
		 * processes BPF added by itself (children, cgroup members)
		 * would otherwise fill the maps over time */
		clear_map(bpf_map__fd(m->skel->maps.pending), sizeof(uint32_t));
		clear_map(bpf_map__fd(m->skel->maps.procs), sizeof(uint32_t));
		if (m->live_used)
			clear_map(bpf_map__fd(m->skel->maps.live), sizeof(struct gt_mem_live_key));
		m->live_used = 0;
	}
}

enum gt_heap_mode gt_memtrack_mode(const struct gt_memtrack *m, int bit, pid_t pid)
{
	if (bit < 0 || bit >= GT_MAX_SESSIONS || !m->s[bit].active)
		return GT_HEAP_OFF;
	for (int i = 0; i < m->s[bit].nprocs; i++)
		if (m->s[bit].procs[i].pid == pid)
			return m->s[bit].procs[i].mode;
	return GT_HEAP_OFF;
}

void gt_memtrack_probe_count(const struct gt_memtrack *m, pid_t pid, int *uprobes,
			     int *uretprobes)
{
	*uprobes = *uretprobes = 0;
	for (int i = 0; i < GT_MAX_SESSIONS; i++) {
		for (int j = 0; m->s[i].active && j < m->s[i].nprocs; j++) {
			const struct gt_mt_proc *p = &m->s[i].procs[j];

			if (pid && p->pid != pid)
				continue;
			*uprobes += p->nuprobes;
			*uretprobes += p->nuretprobes;
		}
	}
}

int gt_memtrack_uses_multi(const struct gt_memtrack *m)
{
	return m->multi;
}

void gt_memtrack_stats(const struct gt_memtrack *m, struct gt_memtrack_stats *st)
{
	int ncpu = libbpf_num_possible_cpus();
	struct gt_mem_stats *per;
	uint32_t zero = 0;

	memset(st, 0, sizeof(*st));
	st->cpu_events_open = m->cpu.nopen;
	if (ncpu <= 0 || !(per = calloc((size_t)ncpu, sizeof(*per))))
		return;
	if (bpf_map_lookup_elem(bpf_map__fd(m->skel->maps.mstats), &zero, per) == 0) {
		for (int i = 0; i < ncpu; i++) {
			st->map_full += per[i].map_full;
			st->unknown_free += per[i].unknown_free;
		}
	}
	free(per);
}
