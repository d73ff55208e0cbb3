/* The in-kernel filters: traced thread groups, cgroups and exec'd names,
 * each mapped to a bit mask of sessions, and the masks of all-process
 * sessions.  The BPF side consults the cgroup map only while the global
 * n_cgroup_sessions is non-zero, kept equal to its entry count, and the
 * names map only while name_sessions (the sessions with a name) is not 0. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "internal.h"
#include "gotraced.skel.h"
#include "testing.h"

/* Sets or clears `bit` in the mask stored under key; deletes a zero mask.
 * Returns 1 if an entry was created, -1 if one was deleted, 0 otherwise,
 * or -errno. */
static int update_mask(int fd, const void *key, int bit, int on)
{
	uint32_t mask = 0, want;
	int had = bpf_map_lookup_elem(fd, key, &mask) == 0;

	want = on ? mask | (1u << bit) : mask & ~(1u << bit);
	if (had && want == mask)
		return 0;
	if (!want) {
		if (!had)
			return 0;
		if (bpf_map_delete_elem(fd, key) && errno != ENOENT)
			return -errno;
		return -1;
	}
	if (bpf_map_update_elem(fd, key, &want, BPF_ANY))
		return -errno;
	return had ? 0 : 1;
}

static int check_bit(int bit)
{
	return bit >= 0 && bit < GT_MAX_SESSIONS ? 0 : -EINVAL;
}

/* The BPF side's negative filter (maybe_tgid, see bpf/common.bpf.h) may only
 * forget a tgid while no tgid is traced at all: clear it then, so a
 * long-lived daemon does not accumulate stale slots.  (BPF adds a tgid only
 * at the fork of a traced parent, which needs a non-empty map.) */
static void reset_maybe_if_idle(struct gt_capture *c)
{
	uint32_t key;

	if (bpf_map_get_next_key(c->tgids_fd, NULL, &key) == 0 || errno != ENOENT)
		return;
	memset(c->skel->data_filter->maybe_tgid, 0, sizeof(c->skel->data_filter->maybe_tgid));
}

int gt_capture_trace_tgid(struct gt_capture *c, uint32_t tgid, int session_bit, int on)
{
	size_t nslots = sizeof(c->skel->data_filter->maybe_tgid);
	int rc = check_bit(session_bit);

	if (rc)
		return rc;
	if (!tgid)
		return -EINVAL; /* the idle tasks are never traced */
	if (on) /* before the map entry: BPF must never miss a traced tgid */
		__atomic_store_n(&c->skel->data_filter->maybe_tgid[tgid % nslots], 1, __ATOMIC_SEQ_CST);
	rc = update_mask(c->tgids_fd, &tgid, session_bit, on);
	if (rc == -1)
		reset_maybe_if_idle(c);
	return rc < 0 && rc != -1 ? rc : 0;
}

int gt_capture_tgid_sessions(struct gt_capture *c, uint32_t tgid, uint32_t *mask)
{
	*mask = 0;
	if (bpf_map_lookup_elem(c->tgids_fd, &tgid, mask))
		return -errno;
	return 0;
}

/* -EOPNOTSUPP when the capture was loaded without `what` (GT_WITHOUT_*):
 * its code is not in the programs, a session asking for it would record
 * nothing of it. */
static int loaded_with(const struct gt_capture *c, uint32_t what)
{
	return c->skel->rodata->loaded_without & what ? -EOPNOTSUPP : 0;
}

int gt_capture_trace_cgroup(struct gt_capture *c, uint64_t cgroup_id, int session_bit, int on)
{
	int rc = check_bit(session_bit);

	if (!rc && on)
		rc = loaded_with(c, GT_WITHOUT_CGROUPS);
	if (rc)
		return rc;
	rc = update_mask(c->cgroups_fd, &cgroup_id, session_bit, on);
	if (rc == 1 || rc == -1)
		__atomic_add_fetch(&c->skel->bss->n_cgroup_sessions, rc, __ATOMIC_RELAXED);
	return rc < 0 && rc != -1 ? rc : 0;
}

static void set_bit_in(volatile uint32_t *mask, uint32_t bit, int on)
{
	if (on)
		__atomic_or_fetch(mask, bit, __ATOMIC_SEQ_CST);
	else
		__atomic_and_fetch(mask, ~bit, __ATOMIC_SEQ_CST);
}

int gt_capture_trace_all(struct gt_capture *c, int session_bit, int kthreads, int on)
{
	int rc = check_bit(session_bit);

	if (!rc && on)
		rc = loaded_with(c, GT_WITHOUT_ALL);
	if (rc)
		return rc;
	set_bit_in(&c->skel->bss->all_kthread_sessions, 1u << session_bit, on && kthreads);
	set_bit_in(&c->skel->bss->all_sessions, 1u << session_bit, on);
	return 0;
}

int gt_capture_all_except(struct gt_capture *c, uint32_t tgid, int session_bit, int on)
{
	int rc = check_bit(session_bit);

	if (rc)
		return rc;
	if (!tgid)
		return -EINVAL;
	/* the map entry before the bit: BPF looks it up once it sees the bit */
	rc = update_mask(bpf_map__fd(c->skel->maps.all_except), &tgid, session_bit, on);
	if (rc < 0 && rc != -1)
		return rc;
	set_bit_in(&c->skel->bss->all_except_sessions, 1u << session_bit, on);
	return 0;
}

int gt_capture_trace_name(struct gt_capture *c, const char *name, int session_bit, int on)
{
	char key[GT_COMM_LEN] = {0};
	int rc = check_bit(session_bit);

	if (rc)
		return rc;
	if (!name[0])
		return -EINVAL;
	/* the kernel keeps comm NUL-padded, 15 bytes at most */
	strncpy(key, name, sizeof(key) - 1);
	rc = update_mask(bpf_map__fd(c->skel->maps.names), key, session_bit, on);
	if (rc < 0 && rc != -1)
		return rc;
	if (on)
		set_bit_in(&c->skel->bss->name_sessions, 1u << session_bit, 1);
	return 0;
}

/* Clears the bit from every key of one map (keys collected first: deleting
 * while walking a hash map can restart the walk). */
static int forget_in(struct gt_capture *c, int fd, size_t ksz, int bit, int is_cgroup)
{
	size_t n = 0, cap = 1024;
	uint8_t *keys = malloc(cap * ksz), key[GT_COMM_LEN], *prev = NULL;
	int rc = 0;

	if (!keys)
		return -ENOMEM;
	while (bpf_map_get_next_key(fd, prev, key) == 0) {
		if (n == cap) {
			uint8_t *k = realloc(keys, 2 * cap * ksz);

			if (!k) {
				free(keys);
				return -ENOMEM;
			}
			keys = k;
			cap *= 2;
		}
		memcpy(keys + n * ksz, key, ksz);
		prev = keys + n * ksz;
		n++;
	}
	for (size_t i = 0; i < n && rc >= 0; i++) {
		rc = update_mask(fd, keys + i * ksz, bit, 0);
		if (rc == -1 && is_cgroup)
			__atomic_sub_fetch(&c->skel->bss->n_cgroup_sessions, 1, __ATOMIC_RELAXED);
		if (rc == -1)
			rc = 0;
	}
	free(keys);
	return rc < 0 ? rc : 0;
}

int gt_capture_kernel_stacks(struct gt_capture *c, int session_bit, int on)
{
	uint32_t bit = 1u << session_bit;
	int rc = check_bit(session_bit);

	if (rc)
		return rc;
	if (on)
		__atomic_or_fetch(&c->skel->bss->kstack_sessions, bit, __ATOMIC_RELAXED);
	else
		__atomic_and_fetch(&c->skel->bss->kstack_sessions, ~bit, __ATOMIC_RELAXED);
	return 0;
}

int gt_capture_dwarf_stacks(struct gt_capture *c, int session_bit, unsigned bytes)
{
	uint32_t bit = 1u << session_bit, most = 0;
	int rc = check_bit(session_bit);

	if (!rc && bytes)
		rc = loaded_with(c, GT_WITHOUT_DWARF);
	if (rc)
		return rc;
	if (bytes % 8 || bytes > GT_DWARF_STACK_MAX)
		return -EINVAL;
	c->dwarf_bytes[session_bit] = bytes;
	for (int i = 0; i < GT_MAX_SESSIONS; i++)
		if (c->dwarf_bytes[i] > most)
			most = c->dwarf_bytes[i];
	/* the size first: BPF copies as soon as it sees the bit */
	if (most)
		__atomic_store_n(&c->skel->bss->dwarf_bytes, most, __ATOMIC_SEQ_CST);
	if (bytes)
		__atomic_or_fetch(&c->skel->bss->dwarf_sessions, bit, __ATOMIC_SEQ_CST);
	else
		__atomic_and_fetch(&c->skel->bss->dwarf_sessions, ~bit, __ATOMIC_SEQ_CST);
	return 0;
}

void gt_capture_set_ustack_cb(struct gt_capture *c, gt_capture_ustack_cb cb,
			      gt_capture_exec_cb exec_cb, void *ctx)
{
	c->ustack_cb = cb;
	c->exec_cb = exec_cb;
	c->ustack_ctx = ctx;
}

int gt_capture_session_owner(struct gt_capture *c, int session_bit, uid_t uid, gid_t gid)
{
	uint32_t bit = 1u << session_bit;
	int rc = check_bit(session_bit);

	if (rc)
		return rc;
	if (!uid) {
		__atomic_and_fetch(&c->skel->data_filter->owner_sessions, ~bit, __ATOMIC_SEQ_CST);
		return 0;
	}
	rc = loaded_with(c, GT_WITHOUT_OWNERS);
	if (rc)
		return rc;
	/* the ids before the bit: BPF reads them once it sees the bit */
	c->skel->data_filter->owner_uid[session_bit] = (uint32_t)uid;
	c->skel->data_filter->owner_gid[session_bit] = (uint32_t)gid;
	__atomic_or_fetch(&c->skel->data_filter->owner_sessions, bit, __ATOMIC_SEQ_CST);
	return 0;
}

int gt_capture_forget_session(struct gt_capture *c, int session_bit)
{
	int rc = check_bit(session_bit);

	/* the ways in first (names, all), so that no tgid is added back
	 * behind the walk of the tgids map */
	if (!rc) {
		set_bit_in(&c->skel->bss->name_sessions, 1u << session_bit, 0);
		rc = forget_in(c, bpf_map__fd(c->skel->maps.names), GT_COMM_LEN, session_bit, 0);
	}
	if (!rc)
		rc = gt_capture_trace_all(c, session_bit, 0, 0);
	if (!rc) {
		set_bit_in(&c->skel->bss->all_except_sessions, 1u << session_bit, 0);
		rc = forget_in(c, bpf_map__fd(c->skel->maps.all_except), sizeof(uint32_t),
			       session_bit, 0);
	}
	if (!rc)
		rc = gt_capture_kernel_stacks(c, session_bit, 0);
	if (!rc)
		rc = gt_capture_dwarf_stacks(c, session_bit, 0);
	if (!rc)
		rc = gt_capture_session_owner(c, session_bit, 0, 0);
	if (!rc)
		rc = forget_in(c, c->tgids_fd, sizeof(uint32_t), session_bit, 0);
	if (!rc)
		rc = forget_in(c, c->cgroups_fd, sizeof(uint64_t), session_bit, 1);
	reset_maybe_if_idle(c);
	return rc;
}
