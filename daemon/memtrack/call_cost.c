/* What one probed allocator call costs on this machine, measured once.
 *
 * --heap malloc puts a uprobe and a uretprobe on every allocator entry
 * point, so each call in the target traps into the kernel twice.  That
 * cost depends on the machine far more than on us (about 1 us on bare
 * metal, 15 us or more in a VM with page-table isolation and no PCID), so
 * the user is told the figure measured here, not a guess: a function of
 * our own gets the same pair of probes (perf's uprobe PMU, counting only:
 * no sample buffer, no BPF program), is called N times with and without
 * them, and the difference per call is the trap cost.  The probes' BPF
 * work comes on top of it, but is small next to the trap.
 */
#include "memtrack.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/clock.h"
#include "sym/maps.h"

#define CALLS 2000

/* The probed function: not inlined, not optimised away. */
__attribute__((noinline, used)) static int probed_call(int x)
{
	__asm__ volatile("" : "+r"(x) : : "memory");
	return x + 1;
}

static uint64_t time_calls(void)
{
	volatile int sink = 0;
	uint64_t t0 = gt_now_ns();

	for (int i = 0; i < CALLS; i++)
		sink = probed_call(sink);
	return gt_now_ns() - t0;
}

static int read_uint_file(const char *path, unsigned *v)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%u", v) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

/* The retprobe bit of the uprobe PMU's config ("config:0" on every kernel
 * so far, read rather than assumed). */
static int retprobe_bit(unsigned *bit)
{
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/format/retprobe", "r");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "config:%u", bit) == 1;
	fclose(f);
	return ok && *bit < 64 ? 0 : -EINVAL;
}

/* The file and file offset that hold probed_call's first instruction. */
static int locate(char *path, size_t len, uint64_t *offset)
{
	uintptr_t want = (uintptr_t)&probed_call;
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096 + 128];
	struct gt_map_line m;
	int rc = -ENOENT;

	if (!f)
		return -errno;
	while (rc && fgets(line, sizeof(line), f)) {
		if (gt_map_line_parse(line, strlen(line), &m) || want < m.start ||
		    want >= m.end || !m.path_len || m.path[0] != '/')
			continue;
		snprintf(path, len, "%.*s", (int)m.path_len, m.path);
		*offset = want - m.start + m.offset;
		rc = 0;
	}
	fclose(f);
	return rc;
}

static int open_probe(unsigned type, uint64_t config, const char *path, uint64_t offset)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.config1 = (uint64_t)(uintptr_t)path;  /* uprobe_path */
	a.config2 = offset;                     /* probe_offset */
	a.exclude_kernel = 1;
	/* this thread only, any CPU: the breakpoint traps only here */
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static uint64_t best_of(int rounds)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < rounds; i++) {
		uint64_t t = time_calls();
		if (t < best)
			best = t;
	}
	return best;
}

static _Atomic uint64_t measured_ns;
static char measured_why[200];

static void measure(void)
{
	char path[4096];
	uint64_t offset = 0, bare, probed;
	unsigned type, bit;
	int entry, ret, rc;

	if ((rc = read_uint_file("/sys/bus/event_source/devices/uprobe/type", &type)) ||
	    (rc = retprobe_bit(&bit)) || (rc = locate(path, sizeof(path), &offset))) {
		snprintf(measured_why, sizeof(measured_why), "the uprobe PMU: %s", strerror(-rc));
		return;
	}
	bare = best_of(3);
	entry = open_probe(type, 0, path, offset);
	ret = entry < 0 ? -1 : open_probe(type, 1ull << bit, path, offset);
	if (entry < 0 || ret < 0) {
		snprintf(measured_why, sizeof(measured_why), "a uprobe on %.100s: %s", path,
			 strerror(errno));
	} else {
		probed = best_of(3);
		measured_ns = probed > bare ? (probed - bare) / CALLS : 1;
	}
	if (ret >= 0)
		close(ret);
	if (entry >= 0)
		close(entry);
}

uint64_t gt_memtrack_call_cost_ns(char *why, size_t whylen)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, measure);
	if (!measured_ns && why && whylen)
		snprintf(why, whylen, "%s", measured_why);
	return measured_ns;
}

uint64_t gt_memtrack_call_cost_known(void)
{
	return measured_ns;
}
