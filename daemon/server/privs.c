/* What gotraced gives up before it serves anyone (see internal.h). */
#include "internal.h"

#include <errno.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static int capset_without(int cap)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];
	unsigned idx = (unsigned)cap / 32, bit = 1u << ((unsigned)cap % 32);

	if (syscall(SYS_capget, &h, d))
		return -errno;
	d[idx].effective &= ~bit;
	d[idx].permitted &= ~bit;
	d[idx].inheritable &= ~bit;
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

int gt_drop_sys_resource(void)
{
	struct rlimit rl = {RLIM_INFINITY, RLIM_INFINITY};
	int rc;

	/* kernels before 5.11 charge BPF maps to RLIMIT_MEMLOCK: raise it
	 * while we may (systemd's LimitMEMLOCK=infinity does it before us;
	 * where it fails, capture/load.c says so in verbose mode) */
	(void)setrlimit(RLIMIT_MEMLOCK, &rl);
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, CAP_SYS_RESOURCE, 0, 0);
	rc = capset_without(CAP_SYS_RESOURCE);
	if (rc)
		gt_log("cannot drop CAP_SYS_RESOURCE: %s", strerror(-rc));
	/* not again through an exec (none is done; NoNewPrivileges anyway) */
	prctl(PR_CAPBSET_DROP, CAP_SYS_RESOURCE, 0, 0, 0);
	return rc;
}
