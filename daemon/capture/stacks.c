/* Stack-trace map access and the counters kept by BPF. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "internal.h"
#include "gotraced.skel.h"

int gt_capture_stack(struct gt_capture *c, int32_t stack_id, uint64_t *ips, int max)
{
	uint64_t frames[GT_STACK_DEPTH];
	uint32_t key = (uint32_t)stack_id & ~(uint32_t)GT_STACK_SPILL;
	int fd = stack_id & GT_STACK_SPILL ? c->spill_fd : c->stacks_fd;
	int n = 0;

	if (stack_id < 0 || max < 0)
		return -EINVAL;
	if (bpf_map_lookup_elem(fd, &key, frames))
		return -errno;
	/* unused trailing frames are zero */
	while (n < GT_STACK_DEPTH && frames[n])
		n++;
	if (n > max)
		n = max;
	memcpy(ips, frames, n * sizeof(*ips));
	return n;
}

/* Deletes every entry of a map (keys of at most 8 bytes); deleting the
 * first key each time avoids walking a changing map. */
static int empty_map(int fd)
{
	uint64_t key = 0, next = 0;

	while (bpf_map_get_next_key(fd, NULL, &next) == 0) {
		key = next;
		if (bpf_map_delete_elem(fd, &key))
			return -errno;
	}
	return 0;
}

int gt_capture_clear_stacks(struct gt_capture *c)
{
	/* the cache of user stack ids first: its ids die with the stacks */
	int rc = empty_map(bpf_map__fd(c->skel->maps.ustack_ids));

	if (!rc)
		rc = empty_map(c->spill_fd);
	return rc ? rc : empty_map(c->stacks_fd);
}

/* Sums (or picks one CPU of) the BPF per-CPU counters. */
static int read_bpf_stats(struct gt_capture *c, int cpu, struct gt_bpf_stats *out)
{
	struct gt_bpf_stats *v = calloc(c->ncpus, sizeof(*v));
	uint32_t zero = 0;

	memset(out, 0, sizeof(*out));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(c->stats_fd, &zero, v)) {
		free(v);
		return -errno;
	}
	for (int i = 0; i < c->ncpus; i++) {
		if (cpu >= 0 && i != cpu)
			continue;
		out->drops += v[i].drops;
		out->stack_errors += v[i].stack_errors;
		out->uwalk_checks += v[i].uwalk_checks;
		out->uwalk_mismatches += v[i].uwalk_mismatches;
	}
	free(v);
	return 0;
}

void gt_capture_stats(struct gt_capture *c, struct gt_capture_stats *st)
{
	struct gt_bpf_stats b;

	*st = c->st;
	if (read_bpf_stats(c, -1, &b) == 0) {
		st->drops = b.drops;
		st->stack_errors = b.stack_errors;
		st->uwalk_checks = b.uwalk_checks;
		st->uwalk_mismatches = b.uwalk_mismatches;
	}
	st->bad_records = c->bad_records;
	st->mmap_records = c->mm.records;
	st->mmap_lost = c->mm.lost + c->mm.dropped;
	st->mmap_bad = c->mm.bad;
}

uint64_t gt_capture_drops(struct gt_capture *c)
{
	struct gt_bpf_stats b;

	return read_bpf_stats(c, -1, &b) == 0 ? b.drops : 0;
}

uint64_t gt_capture_drops_cpu(struct gt_capture *c, int cpu)
{
	struct gt_bpf_stats b;

	if (cpu < 0 || cpu >= c->ncpus)
		return 0;
	return read_bpf_stats(c, cpu, &b) == 0 ? b.drops : 0;
}

uint64_t gt_capture_session_drops(struct gt_capture *c, int session_bit)
{
	struct gt_bpf_session_drops *v;
	uint32_t zero = 0;
	uint64_t sum = 0;

	if (session_bit < 0 || session_bit >= GT_MAX_SESSIONS)
		return 0;
	v = calloc(c->ncpus, sizeof(*v));
	if (!v)
		return 0;
	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.session_drops), &zero, v) == 0)
		for (int i = 0; i < c->ncpus; i++)
			sum += v[i].n[session_bit];
	free(v);
	return sum;
}
