/* uprobe_multi links through the raw bpf(2) call (see uprobe_multi.h). */
#include "uprobe_multi.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

/* The head of union bpf_attr's link_create, as Linux 6.6+ lays it out
 * (the installed UAPI header may predate it).  A kernel that knows a
 * shorter link_create sees non-zero bytes past its end and says -EINVAL. */
struct gt_link_create_umulti {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t umulti_flags;   /* BPF_F_UPROBE_MULTI_RETURN */
	uint32_t pid;
	uint32_t pad;
};

#define GT_BPF_F_UPROBE_MULTI_RETURN 1u

static int link_create(int prog_fd, const char *path, const uint64_t *offsets, uint32_t cnt,
		       uint32_t flags, uint32_t pid)
{
	struct gt_link_create_umulti a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.prog_fd = (uint32_t)prog_fd;
	a.attach_type = GT_BPF_TRACE_UPROBE_MULTI;
	a.path = (uint64_t)(uintptr_t)path;
	a.offsets = (uint64_t)(uintptr_t)offsets;
	a.cnt = cnt;
	a.umulti_flags = flags;
	a.pid = pid;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : (int)fd;
}

int gt_mt_multi_link(int prog_fd, const char *path, const uint64_t *offsets, int cnt,
		     int ret, pid_t pid)
{
	if (cnt <= 0 || pid <= 0)
		return -EINVAL;
	return link_create(prog_fd, path, offsets, (uint32_t)cnt,
			   ret ? GT_BPF_F_UPROBE_MULTI_RETURN : 0, (uint32_t)pid);
}

/* `return 0`, loaded as a uprobe_multi program. */
static int probe_prog(void)
{
	struct bpf_insn insns[2];
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = (enum bpf_attach_type)GT_BPF_TRACE_UPROBE_MULTI);

	memset(insns, 0, sizeof(insns));
	insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K; /* r0 = 0 */
	insns[1].code = BPF_JMP | BPF_EXIT;
	return bpf_prog_load(BPF_PROG_TYPE_KPROBE, "gt_umulti_probe", "GPL", insns, 2, &o);
}

/* Both attempts name "/", a directory, so neither can attach anything.
 * A kernel with uprobe_multi links gets as far as the path: -EBADF (an
 * older one says -EINVAL, not knowing the attach type).  The first
 * kernels (6.6 to 6.9) filtered by thread, not by process, and did not
 * check the pid: an invalid pid (-1) must fail before the path, -EINVAL
 * (Linux commit "bpf: fix multi-uprobe PID filtering logic"). */
static int kernel_has_multi(void)
{
	uint64_t off = 0;
	int prog = probe_prog(), fd, ok = 0;

	if (prog < 0)
		return 0;
	fd = link_create(prog, "/", &off, 1, 0, 0);
	if (fd == -EBADF) {
		fd = link_create(prog, "/", &off, 1, 0, (uint32_t)-1);
		ok = fd == -EINVAL;
	}
	if (fd >= 0)
		close(fd);
	close(prog);
	return ok;
}

int gt_mt_multi_available(void)
{
	static int known = -1;
	const char *no = getenv(GT_NO_UPROBE_MULTI_ENV);

	if (no && !strcmp(no, "1"))
		return 0;
	if (known < 0)
		known = kernel_has_multi();
	return known;
}
