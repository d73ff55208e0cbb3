/* Linked into make bench's own gotracectl only ($(BUILD)/bench/parts/,
 * tests/bench/bpf_parts.sh), never into the one installed: the parts of the
 * hot BPF programs to leave out, GT_PARTS_OFF_* bits (bpf/gotraced.h) from
 * GOTRACED_BENCH_PARTS_OFF, for daemon/capture/load.c's weak hook.  Such a
 * recording is not exact, and says so. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

uint32_t gt_bench_parts_off(void);

uint32_t gt_bench_parts_off(void)
{
	const char *v = getenv("GOTRACED_BENCH_PARTS_OFF");
	unsigned long off = v ? strtoul(v, NULL, 0) : 0;

	if (off)
		fprintf(stderr, "gotraced: GOTRACED_BENCH_PARTS_OFF=%#lx: parts of the recording "
			"left out (a bench run, not a trace to trust)\n", off);
	return (uint32_t)off;
}
