/* What the running kernel offers the BPF programs, read from its own BTF
 * (/sys/kernel/btf/vmlinux): the enums of BPF program types, map types and
 * helpers name every feature the kernel has, so a missing one is named
 * before loading rather than guessed from a verifier error.  The oldest
 * kernel with everything needed is Linux 5.8 (BPF ring buffers); older
 * features the programs can do without are shimmed in bpf/compat.bpf.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/btf.h>

#include "capture.h"
#include "testing.h"

/* A feature the programs cannot do without, and the kernel that added it. */
struct required {
	const char *enum_name, *value, *what, *since;
};

static const struct required required[] = {
	{ "bpf_prog_type", "BPF_PROG_TYPE_TRACING", "BTF tracepoints (tp_btf)", "5.5" },
	{ "bpf_attach_type", "BPF_TRACE_RAW_TP", "BTF tracepoints (tp_btf)", "5.5" },
	{ "bpf_func_id", "BPF_FUNC_probe_read_kernel", "bpf_probe_read_kernel()", "5.5" },
	{ "bpf_map_type", "BPF_MAP_TYPE_RINGBUF", "BPF ring buffers", "5.8" },
	{ "bpf_func_id", "BPF_FUNC_ringbuf_query", "bpf_ringbuf_query()", "5.8" },
};

/* Whether enum `name` of the kernel's BTF has the value `value`. */
static int has_enum_value(const struct btf *btf, const char *name, const char *value)
{
	int id = btf__find_by_name_kind(btf, name, BTF_KIND_ENUM);
	const struct btf_type *t;
	const struct btf_enum *v;

	if (id < 0)
		return 0;
	t = btf__type_by_id(btf, id);
	v = btf_enum(t);
	for (int i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, v[i].name_off), value))
			return 1;
	return 0;
}

static const char *release(void)
{
	static struct utsname u;

	return uname(&u) ? "?" : u.release;
}

/* Whether the kernel allocates hash maps at run time safely in tracing
 * programs, once known (from the BTF read at open): -1 not yet. */
static int runtime_alloc_known = -1;

static int runtime_alloc_ok(const struct btf *btf)
{
	return btf__find_by_name_kind(btf, "bpf_mem_alloc", BTF_KIND_STRUCT) >= 0;
}

/* Whether the BTF in `path` has every required feature; its absence, or one
 * it cannot read, is named in err.  *out keeps the BTF read (NULL: freed). */
static int check_file(const char *path, struct btf **out, char *err, size_t errlen)
{
	struct btf *btf;
	int rc = 0;

	if (access(path, R_OK) != 0) {
		snprintf(err, errlen, "the kernel (%s) has no BTF (%s: %s): gotraced needs "
			 "Linux 5.8+ built with CONFIG_DEBUG_INFO_BTF=y", release(), path,
			 strerror(errno));
		return -ENOENT;
	}
	btf = btf__parse_raw(path);
	if (!btf) {
		rc = errno ? -errno : -EINVAL;
		snprintf(err, errlen, "reading the kernel's BTF (%s): %s", path, strerror(-rc));
		return rc;
	}
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		const struct required *r = &required[i];

		if (has_enum_value(btf, r->enum_name, r->value))
			continue;
		snprintf(err, errlen, "the kernel (%s) has no %s (%s, Linux %s): gotraced needs "
			 "Linux 5.8 or later", release(), r->what, r->value, r->since);
		rc = -EOPNOTSUPP;
		break;
	}
	if (out && !rc)
		*out = btf;
	else
		btf__free(btf);
	return rc;
}

int gt_capture_kernel_check_file(const char *path, char *err, size_t errlen)
{
	return check_file(path, NULL, err, errlen);
}

int gt_capture_kernel_check(char *err, size_t errlen)
{
	return check_file("/sys/kernel/btf/vmlinux", NULL, err, errlen);
}

int gt_capture_kernel_read(struct btf **out, char *err, size_t errlen)
{
	int rc;

	*out = NULL;
	rc = check_file("/sys/kernel/btf/vmlinux", out, err, errlen);
	if (!rc)
		__atomic_store_n(&runtime_alloc_known, runtime_alloc_ok(*out), __ATOMIC_RELAXED);
	return rc;
}

/* Linux 6.1 ("bpf: Introduce any context BPF specific memory allocator",
 * "bpf: Relax the requirement to use preallocated hash maps in tracing
 * progs") made run-time allocated hash maps safe in tracing programs;
 * before it, loading one WARNs in the kernel log (a tainted kernel) and is
 * refused on PREEMPT_RT.  The allocator's struct says which side we are on. */
int gt_capture_kernel_runtime_alloc_ok(void)
{
	int known = __atomic_load_n(&runtime_alloc_known, __ATOMIC_RELAXED);
	struct btf *btf;

	if (known >= 0) /* a capture read the BTF already: not again */
		return known;
	btf = btf__load_vmlinux_btf();
	if (!btf)
		return 0;
	known = runtime_alloc_ok(btf);
	btf__free(btf);
	return known;
}
