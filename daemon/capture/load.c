/* Lifecycle of the capture layer: open the skeleton, size the maps, create
 * one ring buffer per CPU, load, fill the ring array, map the rings; attach
 * at open, or later and only while needed (gt_capture_attach/detach).
 * Every failure says what failed and why, in terms a user can act on. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "common/clock.h"
#include "internal.h"
#include "gotraced.skel.h"
#include "testing.h"

/* Default ring size per CPU: 16 MiB on small machines (a burst of about
 * 200k events, 100+ ms of a busy CPU, before the consumer must run), less
 * per CPU on large ones so the total stays near 128 MiB, never under 4. */
#define RING_BYTES_MAX (16u << 20)
#define RING_BYTES_MIN (4u << 20)
#define RING_BYTES_TOTAL (128u << 20)
#define DEFAULT_STACK_ENTRIES 16384
#define DEFAULT_LAG_US 2000
#define MERGE_SLOTS 65536

static int verbose_libbpf;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !verbose_libbpf)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

unsigned gt_capture_ring_default(int ncpus)
{
	unsigned want = RING_BYTES_TOTAL / (unsigned)(ncpus > 0 ? ncpus : 1);

	return want > RING_BYTES_MAX ? RING_BYTES_MAX :
	       want < RING_BYTES_MIN ? RING_BYTES_MIN : want;
}

static unsigned ring_size(unsigned want, int ncpus)
{
	unsigned page = (unsigned)sysconf(_SC_PAGESIZE), sz = page;

	if (!want)
		want = gt_capture_ring_default(ncpus);
	while (sz < want && sz < (1u << 30))
		sz <<= 1;
	return sz;
}

/* Explains a load failure: the errno alone does not tell a user what to do. */
static void explain_load(int rc, char *err, size_t errlen)
{
	if (rc == -EPERM || rc == -EACCES)
		snprintf(err, errlen, "loading the BPF programs was refused (%s): run as root "
			 "or with CAP_BPF and CAP_PERFMON", strerror(-rc));
	else /* the features it needs were checked: gt_capture_kernel_check */
		snprintf(err, errlen, "loading the BPF programs failed: %s (the verifier's "
			 "reasons: run with --verbose)", strerror(-rc));
}

static int create_rings(struct gt_capture *c, unsigned size, int *fds, char *err, size_t errlen)
{
	for (int i = 0; i < c->ncpus; i++) {
		fds[i] = bpf_map_create(BPF_MAP_TYPE_RINGBUF, NULL, 0, 0, size, NULL);
		if (fds[i] < 0) {
			int rc = -errno;

			snprintf(err, errlen, "creating the ring buffer of CPU %d (%u bytes): %s%s", i,
				 size, strerror(errno),
				 rc == -EPERM ? " (need root or CAP_BPF)" : "");
			return rc;
		}
	}
	return 0;
}

/* Each CPU's ring into the outer map.  Every update of a map of maps waits
 * for an RCU grace period (the kernel's maybe_wait_bpf_programs(): ~12 ms
 * each on the test machine, one per CPU), so load_progs.c does it while
 * the programs verify, not after: asleep, it costs the verifier nothing. */
int gt_capture_install_rings(struct gt_capture *c, char *err, size_t errlen)
{
	int outer = bpf_map__fd(c->skel->maps.rings);

	for (int i = 0; i < c->ncpus; i++) {
		uint32_t key = i;

		if (bpf_map_update_elem(outer, &key, &c->ring_fds[i], BPF_ANY)) {
			snprintf(err, errlen, "installing the ring of CPU %d: %s", i, strerror(errno));
			return -errno;
		}
	}
	return 0;
}

static int setup_rings(struct gt_capture *c, unsigned size, int *fds, char *err, size_t errlen)
{
	struct epoll_event ev = { .events = EPOLLIN };

	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (c->epfd < 0) {
		snprintf(err, errlen, "epoll_create1: %s", strerror(errno));
		return -errno;
	}
	for (int i = 0; i < c->ncpus; i++) {
		int rc = gt_ring_map(&c->rings[i], fds[i], size, err, errlen);

		if (rc)
			return rc;
		ev.data.u32 = i;
		if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, fds[i], &ev)) {
			snprintf(err, errlen, "epoll_ctl on ring %d: %s", i, strerror(errno));
			return -errno;
		}
	}
	return 0;
}

/* The spill map takes the stacks whose bucket in the main one is taken:
 * a quarter of its size, and some room even for a tiny main map. */
static unsigned spill_entries(unsigned stack_entries)
{
	return stack_entries / 4 > 64 ? stack_entries / 4 : 64;
}

/* Without the offsets every wakeup looks like one from task context, as
 * before interrupts were told apart: worth a word, not a failure. */
static void set_percpu_offsets(struct gt_capture *c, const struct gt_capture_opts *o,
			       const struct btf *btf)
{
	struct gt_percpu_offsets po;
	int rc = gt_capture_percpu_offsets(btf, &po);

	if (rc && o->verbose)
		fprintf(stderr, "gotraced: per-CPU preempt count not found in the kernel's BTF "
			"(%s): wakeups from interrupts are not told apart\n", strerror(-rc));
	c->skel->rodata->preempt_count_from_rq = po.preempt_count_from_rq;
	c->skel->rodata->hrtimer_bases_from_rq = po.hrtimer_bases_from_rq;
}

/* make bench's per-part timing (tests/bench/bpf_parts.sh): parts of the
 * hot programs left out, GT_PARTS_OFF_* bits (and GT_PARTS_UWALK_*: how
 * the user stack walk reads frames).  Only a bench build of
 * gotracectl defines this (tests/bench/parts_off.c, docs/testing.md); the
 * programs shipped have no such knob, and always load every part. */
uint32_t gt_bench_parts_off(void) __attribute__((weak));

static void set_parts_off(struct gt_capture *c)
{
	uint32_t off = gt_bench_parts_off ? gt_bench_parts_off() : 0;

	c->skel->rodata->parts_off = off & 0xff;
	c->skel->rodata->uwalk_mode = off >> 8; /* GT_PARTS_UWALK_* */
}

static int open_skel(struct gt_capture *c, const struct gt_capture_opts *o,
		     const struct btf *btf, int *fds, char *err, size_t errlen)
{
	unsigned size = ring_size(o->ring_bytes_per_cpu, c->ncpus);
	uint64_t start = gt_now_ns(), t0;
	int rc;

	c->skel = gotraced_bpf__open();
	if (!c->skel) {
		snprintf(err, errlen, "opening the BPF object: %s", strerror(errno));
		return errno ? -errno : -EINVAL;
	}
	bpf_map__set_max_entries(c->skel->maps.stacks,
				 o->stack_map_entries ? o->stack_map_entries : DEFAULT_STACK_ENTRIES);
	bpf_map__set_max_entries(c->skel->maps.stacks_spill,
				 spill_entries(o->stack_map_entries ? o->stack_map_entries : DEFAULT_STACK_ENTRIES));
	bpf_map__set_max_entries(c->skel->maps.ustack_ids,
				 o->stack_map_entries ? o->stack_map_entries : DEFAULT_STACK_ENTRIES);
	bpf_map__set_max_entries(c->skel->maps.rings, c->ncpus);
	c->skel->rodata->wakeup_bytes = size / 4;
	c->skel->rodata->self_tgid = (uint32_t)getpid();
	c->skel->rodata->loaded_without = o->without;
	set_percpu_offsets(c, o, btf);
	set_parts_off(c);
	rc = create_rings(c, size, fds, err, errlen);
	if (rc)
		return rc;
	/* every inner ring has the same size, so ring 0 is the template */
	rc = bpf_map__set_inner_map_fd(c->skel->maps.rings, fds[0]);
	if (rc) {
		snprintf(err, errlen, "setting the ring template: %s", strerror(-rc));
		return rc;
	}
	if (o->no_syscall_entries) {
		bpf_program__set_autoload(c->skel->progs.gt_sys_enter, false);
		c->skel->data->syscall_sessions = 0;
	}
	t0 = gt_now_ns();
	c->timing.open_ns = t0 - start;
	c->ring_fds = fds; /* installed while the programs load */
	rc = gt_capture_load_progs(c, o, err, errlen);
	c->ring_fds = NULL;
	if (rc) {
		if (!err[0])
			explain_load(rc, err, errlen);
		return rc;
	}
	c->sys_prog = gt_capture_prog(c, c->skel->progs.gt_sys_enter);
	rc = setup_rings(c, size, fds, err, errlen);
	c->timing.load_ns = gt_now_ns() - t0;
	return rc;
}

/* Programs someone turned off (not loaded, or attached by hand, e.g. one a
 * session enables on demand) are not ours to attach. */
static int attaches_itself(const struct gt_capture *c, const struct bpf_program *p)
{
	return bpf_program__autoload(p) && bpf_program__autoattach(p) && bpf_program__fd(p) >= 0 &&
	       p != c->sys_prog;
}

/* sys_enter runs at every syscall of the machine: it has a link of its
 * own, there only while attached and some session wants syscall entries. */
static int sync_sys_link(struct gt_capture *c, char *err, size_t errlen)
{
	int want = c->attached && c->skel->data->syscall_sessions;

	if (!want && c->sys_link) {
		bpf_link__destroy(c->sys_link);
		c->sys_link = NULL;
	}
	if (want && !c->sys_link && !c->sys_prog) {
		snprintf(err, errlen, "recording every syscall entry: its program was not loaded "
			 "(this recorder was opened without syscall entries)");
		return -EINVAL;
	}
	if (want && !c->sys_link) {
		c->sys_link = bpf_program__attach(c->sys_prog);
		if (!c->sys_link) {
			int rc = errno ? -errno : -EINVAL;

			snprintf(err, errlen, "attaching the tracepoints: gt_sys_enter: %s", strerror(-rc));
			return rc;
		}
	}
	return 0;
}

int gt_capture_syscall_entries(struct gt_capture *c, uint32_t sessions, char *err, size_t errlen)
{
	__atomic_store_n(&c->skel->data->syscall_sessions, sessions, __ATOMIC_RELAXED);
	return sync_sys_link(c, err, errlen);
}

/* No fixed list of names: whatever bpf/gotraced.bpf.c defines today. */
int gt_capture_attach(struct gt_capture *c, char *err, size_t errlen)
{
	struct bpf_program *p;
	uint64_t t0 = gt_now_ns(), t1;
	int n = 0;

	if (c->attached)
		return 0;
	bpf_object__for_each_program(p, c->skel->obj)
		n++;
	c->links = calloc(n > 0 ? n : 1, sizeof(*c->links));
	if (!c->links) {
		snprintf(err, errlen, "attaching the tracepoints: out of memory");
		return -ENOMEM;
	}
	for (int k = 0; k < GT_CAPTURE_LOAD_GROUPS; k++) {
		bpf_object__for_each_program(p, c->groups[k]->obj) {
			struct bpf_link *l;

			if (!attaches_itself(c, p))
				continue;
			l = bpf_program__attach(p);
			if (!l) {
				int rc = errno ? -errno : -EINVAL;

				snprintf(err, errlen, "attaching the tracepoints: %s: %s",
					 bpf_program__name(p), strerror(-rc));
				gt_capture_detach(c); /* all or nothing */
				return rc;
			}
			c->links[c->nlinks++] = l;
		}
	}
	c->attached = 1;
	t1 = gt_now_ns();
	gt_mmaps_enable(c, 1);
	c->timing.perf_events_ns = gt_now_ns() - t1;
	int rc = sync_sys_link(c, err, errlen);
	c->timing.links_ns = gt_now_ns() - t0 - c->timing.perf_events_ns;
	if (rc)
		gt_capture_detach(c);
	return rc;
}

void gt_capture_detach(struct gt_capture *c)
{
	uint64_t t0 = gt_now_ns();

	while (c->nlinks > 0)
		bpf_link__destroy(c->links[--c->nlinks]);
	free(c->links);
	c->links = NULL;
	if (c->attached)
		gt_mmaps_enable(c, 0);
	c->attached = 0;
	sync_sys_link(c, NULL, 0);
	c->timing.detach_ns = gt_now_ns() - t0;
}

void gt_capture_timing(const struct gt_capture *c, struct gt_capture_timing *t)
{
	*t = c->timing;
}

int gt_capture_attached(const struct gt_capture *c)
{
	return c->attached;
}

static void note_fds(struct gt_capture *c)
{
	c->tgids_fd = bpf_map__fd(c->skel->maps.tgids);
	c->py_procs_fd = bpf_map__fd(c->skel->maps.py_procs);
	c->go_procs_fd = bpf_map__fd(c->skel->maps.go_procs);
	c->go_procs_any = &c->skel->bss->go_procs_any;
	c->cgroups_fd = bpf_map__fd(c->skel->maps.cgroups);
	c->stacks_fd = bpf_map__fd(c->skel->maps.stacks);
	c->spill_fd = bpf_map__fd(c->skel->maps.stacks_spill);
	c->stats_fd = bpf_map__fd(c->skel->maps.stats);
}

int gt_capture_open(struct gt_capture **out, const struct gt_capture_opts *o,
		    char *err, size_t errlen)
{
	struct gt_capture_opts def = { 0 };
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	struct gt_capture *c;
	struct btf *btf;
	uint64_t t0 = gt_now_ns(), checked;
	int *fds, rc;

	if (!o)
		o = &def;
	verbose_libbpf = o->verbose;
	libbpf_set_print(libbpf_print);
	/* the kernel's BTF read once, for the check and the per-CPU offsets
	 * (libbpf reads it again for CO-RE: no way to hand it over) */
	rc = gt_capture_kernel_read(&btf, err, errlen);
	checked = gt_now_ns();
	if (rc)
		return rc;
	/* libbpf 1.1 does not raise RLIMIT_MEMLOCK itself on kernels that
	 * still charge BPF memory to it (before 5.11) */
	if (setrlimit(RLIMIT_MEMLOCK, &rl) && o->verbose)
		fprintf(stderr, "gotraced: setrlimit(RLIMIT_MEMLOCK): %s\n", strerror(errno));
	c = calloc(1, sizeof(*c));
	if (!c) {
		btf__free(btf);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->epfd = -1;
	c->timing.kernel_check_ns = checked - t0;
	c->ncpus = libbpf_num_possible_cpus();
	c->lag_ns = (uint64_t)(o->merge_lag_us ? o->merge_lag_us : DEFAULT_LAG_US) * 1000;
	c->rings = calloc(c->ncpus > 0 ? c->ncpus : 1, sizeof(*c->rings));
	fds = calloc(c->ncpus > 0 ? c->ncpus : 1, sizeof(*fds));
	if (c->ncpus <= 0 || !c->rings || !fds || gt_ring_merge_init(&c->m, c->ncpus, MERGE_SLOTS)) {
		rc = c->ncpus <= 0 ? -EINVAL : -ENOMEM; /* before c is freed */
		snprintf(err, errlen, rc == -EINVAL ? "cannot count possible CPUs" : "out of memory");
		free(fds);
		btf__free(btf);
		gt_capture_close(c);
		return rc;
	}
	for (int i = 0; i < c->ncpus; i++)
		fds[i] = c->rings[i].fd = -1;
	rc = open_skel(c, o, btf, fds, err, errlen);
	btf__free(btf);
	for (int i = 0; i < c->ncpus; i++)
		c->rings[i].fd = fds[i]; /* the capture owns them from here */
	free(fds);
	if (rc) {
		gt_capture_close(c);
		return rc;
	}
	note_fds(c);
	t0 = gt_now_ns();
	gt_mmaps_probe(c);
	c->timing.probe_ns = gt_now_ns() - t0;
	if (!o->load_only)
		rc = gt_capture_attach(c, err, errlen);
	if (rc)
		gt_capture_close(c);
	else
		*out = c;
	return rc;
}

void gt_capture_close(struct gt_capture *c)
{
	if (!c)
		return;
	gt_capture_detach(c);
	gt_capture_unload_progs(c);
	if (c->skel)
		gotraced_bpf__destroy(c->skel);
	for (int i = 0; c->rings && i < c->ncpus; i++) {
		gt_ring_unmap(&c->rings[i]);
		if (c->rings[i].fd >= 0)
			close(c->rings[i].fd);
	}
	if (c->epfd >= 0)
		close(c->epfd);
	gt_mmaps_close(c);
	free(c->rings);
	gt_ring_merge_free(&c->m);
	free(c);
}

int gt_capture_fd(struct gt_capture *c)
{
	return c->epfd;
}

/* Added by ha (memtrack): see capture.h. */
void gt_capture_shared_maps(struct gt_capture *c, struct gt_capture_maps *m)
{
	/* from the maps: asked while the capture opens too (beside_load) */
	m->tgids = bpf_map__fd(c->skel->maps.tgids);
	m->cgroups = bpf_map__fd(c->skel->maps.cgroups);
	m->rings = bpf_map__fd(c->skel->maps.rings);
	m->stacks = bpf_map__fd(c->skel->maps.stacks);
	m->stacks_spill = bpf_map__fd(c->skel->maps.stacks_spill);
	m->stats = bpf_map__fd(c->skel->maps.stats);
	m->ustack_ids = bpf_map__fd(c->skel->maps.ustack_ids);
	m->filter = bpf_map__fd(c->skel->maps.data_filter);
	m->session_drops = bpf_map__fd(c->skel->maps.session_drops);
	m->go_procs = bpf_map__fd(c->skel->maps.go_procs);
	m->wakeup_bytes = c->skel->rodata->wakeup_bytes;
	m->without = c->skel->rodata->loaded_without;
}

int gt_capture_ncpus(struct gt_capture *c)
{
	return c->ncpus;
}
