/* CPU-clock sampling: one perf_event (software cpu-clock, HZ samples per
 * second) per online CPU, each running the BPF program that keeps the
 * samples of traced threads (bpf/memory.bpf.c gt_cpu_sample).
 * Return convention: 0 or -errno, err gets a message for the user. */
#ifndef GT_CPU_SAMPLE_H
#define GT_CPU_SAMPLE_H

#include <stddef.h>

struct bpf_program;
struct bpf_link;

struct gt_cpu_sampler {
	int ncpus;
	unsigned hz;
	int nopen;                /* perf events open */
	struct bpf_link **links;  /* one per CPU, NULL for offline CPUs */
};

int gt_cpu_sampler_start(struct gt_cpu_sampler *s, struct bpf_program *prog,
			 int ncpus, unsigned hz, char *err, size_t errlen);
void gt_cpu_sampler_stop(struct gt_cpu_sampler *s);

#endif
