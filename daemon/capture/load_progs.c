/* The programs of bpf/gotraced.bpf.c verified on several threads at once.
 *
 * The kernel verifies a program on the thread that loads it, and libbpf
 * loads an object's programs one after the other: the verifier was most of
 * an embedded recording's start (docs/design.md, "Cost").  So the capture's
 * own object (c->skel) is loaded with no program at all, which creates the
 * maps (.rodata filled and frozen); then GT_CAPTURE_LOAD_GROUPS more instances of
 * the same object, each pointed at those maps (bpf_map__reuse_fd, as the
 * memory object shares them) and each with a share of the programs, are
 * loaded side by side, one thread each.  A program is verified against the
 * same frozen .rodata and the same maps as in one object, so it is the
 * same program.  Their .data and .bss are the shared maps too: every
 * instance's skeleton pointers map the same pages. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/clock.h"
#include "internal.h"
#include "gotraced.skel.h"
#include "testing.h"

/* Programs in the object, at most (it has a dozen): the tables below. */
#define MAX_PROGS 64

struct group_load {
	struct gotraced_bpf *skel;
	pthread_t thread;
	int started;
	int rc;
	uint64_t ns;
};

/* The instance's maps are the capture's: same object, same order. */
static int share_maps(struct gotraced_bpf *skel, struct gotraced_bpf *owner, char *err,
		      size_t errlen)
{
	struct bpf_map *m, *o = bpf_object__next_map(owner->obj, NULL);

	bpf_object__for_each_map(m, skel->obj) {
		int rc = o ? bpf_map__reuse_fd(m, bpf_map__fd(o)) : -EINVAL;

		if (rc) {
			snprintf(err, errlen, "sharing the map %s between the program groups: %s",
				 bpf_map__name(m), strerror(-rc));
			return rc;
		}
		o = bpf_object__next_map(owner->obj, o);
	}
	return 0;
}

/* Longest first onto the least loaded group: the programs' sizes before
 * CO-RE stand for their verification time (roughly; enough to balance). */
static void assign(struct gotraced_bpf *owner, const int *wanted, int nprogs, int *group)
{
	size_t load[GT_CAPTURE_LOAD_GROUPS] = {0};
	int done[MAX_PROGS] = {0};

	for (int k = 0; k < nprogs; k++) {
		struct bpf_program *p;
		int best = -1, i = 0, g = 0;
		size_t most = 0;

		bpf_object__for_each_program(p, owner->obj) {
			if (i < MAX_PROGS && wanted[i] && !done[i] && (best < 0 || bpf_program__insn_cnt(p) > most)) {
				best = i;
				most = bpf_program__insn_cnt(p);
			}
			i++;
		}
		if (best < 0)
			return;
		for (int j = 1; j < GT_CAPTURE_LOAD_GROUPS; j++)
			if (load[j] < load[g])
				g = j;
		done[best] = 1;
		group[best] = g;
		load[g] += most;
	}
}

/* The rings into their outer map: each update sleeps through a grace
 * period, on a thread of its own so that nothing waits on it. */
struct rings_install {
	struct gt_capture *c;
	pthread_t thread;
	int started, rc;
	uint64_t ns;
	char err[200];
};

static void *install_rings(void *arg)
{
	struct rings_install *r = arg;
	uint64_t t0 = gt_now_ns();

	r->rc = gt_capture_install_rings(r->c, r->err, sizeof(r->err));
	r->ns = gt_now_ns() - t0;
	return NULL;
}

static void *load_one(void *arg)
{
	struct group_load *g = arg;
	uint64_t t0 = gt_now_ns();

	g->rc = gotraced_bpf__load(g->skel);
	g->ns = gt_now_ns() - t0;
	return NULL;
}

static int open_group(struct gt_capture *c, int k, const int *wanted, const int *group, int nprogs,
		      char *err, size_t errlen)
{
	struct gotraced_bpf *skel = gotraced_bpf__open();
	struct bpf_program *p;
	int i = 0;

	if (!skel) {
		snprintf(err, errlen, "opening the BPF object: %s", strerror(errno));
		return errno ? -errno : -EINVAL;
	}
	c->groups[k] = skel;
	bpf_object__for_each_program(p, skel->obj) {
		bpf_program__set_autoload(p, i < nprogs && wanted[i] && group[i] == k);
		i++;
	}
	return share_maps(skel, c->skel, err, errlen);
}

int gt_capture_load_progs(struct gt_capture *c, const struct gt_capture_opts *o, char *err,
			  size_t errlen)
{
	struct group_load g[GT_CAPTURE_LOAD_GROUPS] = {0};
	struct rings_install ri = { .c = c };
	int wanted[MAX_PROGS] = {0}, group[MAX_PROGS] = {0}, nprogs = 0, rc;
	struct bpf_program *p;
	uint64_t t0 = gt_now_ns();

	err[0] = 0;
	bpf_object__for_each_program(p, c->skel->obj) {
		if (nprogs < MAX_PROGS)
			wanted[nprogs] = bpf_program__autoload(p);
		else if (bpf_program__autoload(p)) {
			snprintf(err, errlen, "too many BPF programs to share out (at most %d)", MAX_PROGS);
			return -E2BIG;
		}
		nprogs++;
		bpf_program__set_autoload(p, false);
	}
	/* the maps alone: created, .rodata filled and frozen */
	rc = gotraced_bpf__load(c->skel);
	if (rc)
		return rc;
	c->timing.maps_ns = gt_now_ns() - t0;
	assign(c->skel, wanted, nprogs, group);
	for (int k = 0; k < GT_CAPTURE_LOAD_GROUPS; k++) {
		rc = open_group(c, k, wanted, group, nprogs, err, errlen);
		if (rc)
			return rc;
		g[k].skel = c->groups[k];
	}
	/* a thread each (one that cannot start: done here), and meanwhile
	 * here what the caller loads beside on the same maps */
	ri.started = !pthread_create(&ri.thread, NULL, install_rings, &ri);
	if (!ri.started)
		install_rings(&ri);
	for (int k = 0; k < GT_CAPTURE_LOAD_GROUPS; k++) {
		g[k].started = !pthread_create(&g[k].thread, NULL, load_one, &g[k]);
		if (!g[k].started)
			load_one(&g[k]);
	}
	if (o->beside_load) {
		uint64_t t1 = gt_now_ns();

		o->beside_load(c, o->beside_ctx);
		c->timing.beside_ns = gt_now_ns() - t1;
	}
	if (ri.started)
		pthread_join(ri.thread, NULL);
	c->timing.rings_ns = ri.ns;
	rc = ri.rc;
	if (rc)
		snprintf(err, errlen, "%s", ri.err);
	for (int k = 0; k < GT_CAPTURE_LOAD_GROUPS; k++) {
		if (g[k].started)
			pthread_join(g[k].thread, NULL);
		c->timing.group_ns[k] = g[k].ns;
		if (g[k].rc && !rc)
			rc = g[k].rc;
	}
	if (!rc) {
		uint64_t xlated;

		gt_capture_loaded_progs(c, &xlated, &c->timing.verified_insns);
	}
	return rc;
}

/* The loaded instance of a program of the capture's object, by the owner's
 * pointer (c->skel->progs.x); NULL when no group loaded it. */
struct bpf_program *gt_capture_prog(struct gt_capture *c, const struct bpf_program *owner)
{
	const char *name = bpf_program__name(owner);

	for (int k = 0; k < GT_CAPTURE_LOAD_GROUPS; k++) {
		struct bpf_program *p;

		if (!c->groups[k])
			continue;
		p = bpf_object__find_program_by_name(c->groups[k]->obj, name);
		if (p && bpf_program__fd(p) >= 0)
			return p;
	}
	return NULL;
}

int gt_capture_loaded_progs(struct gt_capture *c, uint64_t *xlated, uint64_t *verified)
{
	const char *names[MAX_PROGS];
	int n = 0;

	*xlated = *verified = 0;
	for (int k = 0; k < GT_CAPTURE_LOAD_GROUPS; k++) {
		struct bpf_program *p;

		bpf_object__for_each_program(p, c->groups[k]->obj) {
			struct bpf_prog_info info;
			__u32 len = sizeof(info);

			if (bpf_program__fd(p) < 0)
				continue;
			memset(&info, 0, sizeof(info));
			if (bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len))
				return -errno;
			for (int i = 0; i < n; i++)
				if (!strcmp(names[i], bpf_program__name(p)))
					return -EEXIST; /* loaded twice */
			if (n < MAX_PROGS)
				names[n] = bpf_program__name(p);
			n++;
			*xlated += info.xlated_prog_len;
			*verified += info.verified_insns; /* 0 before Linux 5.16 */
		}
	}
	return n;
}

void gt_capture_unload_progs(struct gt_capture *c)
{
	for (int k = 0; k < GT_CAPTURE_LOAD_GROUPS; k++) {
		gotraced_bpf__destroy(c->groups[k]);
		c->groups[k] = NULL;
	}
}
