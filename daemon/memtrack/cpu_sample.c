/* perf_event_open(cpu-clock) per CPU + bpf_program__attach_perf_event. */
#include "cpu_sample.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/libbpf.h>

static int open_cpu_clock(int cpu, unsigned hz)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		/* cpu-clock counts nanoseconds: a fixed period is exact */
		.sample_period = 1000000000ull / hz,
	};

	/* pid -1, one CPU: every task on it; BPF keeps the traced ones */
	return (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void explain(int cpu, unsigned hz, int e, char *err, size_t errlen)
{
	const char *hint = "";

	if (e == EACCES || e == EPERM)
		hint = " (need root or CAP_PERFMON)";
	else if (e == EINVAL)
		hint = " (rate above kernel.perf_event_max_sample_rate?)";
	snprintf(err, errlen, "perf_event_open(cpu-clock, %u Hz) on CPU %d: %s%s", hz, cpu,
		 strerror(e), hint);
}

int gt_cpu_sampler_start(struct gt_cpu_sampler *s, struct bpf_program *prog,
			 int ncpus, unsigned hz, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	s->links = calloc(ncpus > 0 ? ncpus : 1, sizeof(*s->links));
	if (!s->links) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->ncpus = ncpus;
	s->hz = hz;
	for (int cpu = 0; cpu < ncpus; cpu++) {
		int fd = open_cpu_clock(cpu, hz), rc;

		if (fd < 0 && errno == ENODEV)
			continue; /* possible but offline CPU */
		if (fd < 0) {
			rc = -errno;
			explain(cpu, hz, -rc, err, errlen);
			gt_cpu_sampler_stop(s);
			return rc;
		}
		s->links[cpu] = bpf_program__attach_perf_event(prog, fd);
		if (!s->links[cpu]) {
			rc = -errno;
			close(fd);
			snprintf(err, errlen, "attaching the CPU-sample program on CPU %d: %s", cpu,
				 strerror(-rc));
			gt_cpu_sampler_stop(s);
			return rc;
		}
		s->nopen++;
	}
	if (!s->nopen) {
		snprintf(err, errlen, "no online CPU to sample");
		gt_cpu_sampler_stop(s);
		return -ENODEV;
	}
	return 0;
}

void gt_cpu_sampler_stop(struct gt_cpu_sampler *s)
{
	/* destroying a perf-event link also closes its perf event */
	for (int cpu = 0; s->links && cpu < s->ncpus; cpu++)
		bpf_link__destroy(s->links[cpu]);
	free(s->links);
	memset(s, 0, sizeof(*s));
}
