// tier: system (BPF, root or real programs: not in make check-unit)
/* gt_capture_kernel_check: the start-up check names what a kernel lacks.
 * Kernels without a feature are built here as small raw BTF files (the
 * enums the check reads), so no old kernel is needed; the running kernel's
 * own BTF must pass. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/btf.h>

#include "capture/capture.h"
#include "capture/testing.h"
#include "gt_test.h"

static char path[64];
static char err[512];

/* A BTF holding one enum per (name, value) pair, minus the value `drop`,
 * written to `path`. */
static int write_btf(const char *drop)
{
	static const char *pairs[][2] = {
		{ "bpf_prog_type", "BPF_PROG_TYPE_TRACING" },
		{ "bpf_attach_type", "BPF_TRACE_RAW_TP" },
		{ "bpf_func_id", "BPF_FUNC_probe_read_kernel" },
		{ "bpf_func_id", "BPF_FUNC_ringbuf_query" },
		{ "bpf_map_type", "BPF_MAP_TYPE_RINGBUF" },
	};
	struct btf *btf = btf__new_empty();
	const void *raw;
	__u32 size;
	FILE *f;
	int rc = 0;

	if (!btf)
		return -1;
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]) && !rc; i++) {
		const char *name = pairs[i][0];
		int id = btf__find_by_name_kind(btf, name, BTF_KIND_ENUM);

		if (id < 0)
			id = btf__add_enum(btf, name, 4);
		if (id < 0 || btf__add_enum_value(btf, "GT_PLACEHOLDER_ZERO", 0))
			rc = -1;
		else if (strcmp(pairs[i][1], drop) && btf__add_enum_value(btf, pairs[i][1], 1 + (int)i))
			rc = -1;
	}
	raw = rc ? NULL : btf__raw_data(btf, &size);
	f = raw ? fopen(path, "w") : NULL;
	if (!f || fwrite(raw, 1, size, f) != size)
		rc = -1;
	if (f && fclose(f))
		rc = -1;
	btf__free(btf);
	return rc;
}

static void test_running_kernel(void)
{
	int rc = gt_capture_kernel_check(err, sizeof(err));

	GT_CHECK(rc == 0, "the running kernel fails the check: %s", err);
}

static void test_all_present(void)
{
	GT_REQUIRE(write_btf("") == 0, "cannot write a BTF file to %s", path);
	GT_CHECK(gt_capture_kernel_check_file(path, err, sizeof(err)) == 0,
		 "a BTF with every feature fails: %s", err);
}

static void test_no_ringbuf(void)
{
	GT_REQUIRE(write_btf("BPF_MAP_TYPE_RINGBUF") == 0, "cannot write a BTF file to %s", path);
	GT_CHECK(gt_capture_kernel_check_file(path, err, sizeof(err)) == -EOPNOTSUPP,
		 "a kernel without ring buffers passes");
	GT_CHECK(strstr(err, "BPF ring buffers") && strstr(err, "Linux 5.8"),
		 "the message does not name ring buffers and 5.8: %s", err);
}

static void test_no_tp_btf(void)
{
	GT_REQUIRE(write_btf("BPF_PROG_TYPE_TRACING") == 0, "cannot write a BTF file to %s", path);
	GT_CHECK(gt_capture_kernel_check_file(path, err, sizeof(err)) == -EOPNOTSUPP,
		 "a kernel without BTF tracepoints passes");
	GT_CHECK(strstr(err, "tp_btf") && strstr(err, "Linux 5.5"),
		 "the message does not name tp_btf and 5.5: %s", err);
}

static void test_no_btf(void)
{
	unlink(path);
	GT_CHECK(gt_capture_kernel_check_file(path, err, sizeof(err)) == -ENOENT,
		 "a kernel without BTF passes");
	GT_CHECK(strstr(err, "CONFIG_DEBUG_INFO_BTF"), "the message does not say what to enable: %s",
		 err);
}

static void test_garbage(void)
{
	FILE *f = fopen(path, "w");

	GT_REQUIRE(f && fputs("not BTF at all", f) >= 0 && fclose(f) == 0, "cannot write %s", path);
	GT_CHECK(gt_capture_kernel_check_file(path, err, sizeof(err)) < 0,
		 "an unreadable BTF passes");
	GT_CHECK(strstr(err, "reading the kernel's BTF"), "the message does not say what failed: %s",
		 err);
}

int main(void)
{
	int fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(path, sizeof(path), "/tmp/gt-kernel-check.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0) {
		gt_test_report("kernel_check_tmpfile", 0, strerror(errno));
		return gt_test_done();
	}
	close(fd);
	GT_RUN(test_running_kernel);
	GT_RUN(test_all_present);
	GT_RUN(test_no_ringbuf);
	GT_RUN(test_no_tp_btf);
	GT_RUN(test_no_btf);
	GT_RUN(test_garbage);
	unlink(path);
	return gt_test_done();
}
