/* Where the kernel keeps the per-CPU variables the wakeup program reads to
 * tell an interrupt from a task (bpf/compat.bpf.h, gt_preempt_count): their
 * distance from `runqueues` in the per-CPU section, read from the section's
 * variable list in the kernel's BTF.  Typed __ksym variables would be
 * simpler, but need the kernel's data symbols in kallsyms, which kernels
 * built without CONFIG_KALLSYMS_ALL (Debian's among them) do not list. */
#include <errno.h>
#include <string.h>

#include <bpf/btf.h>

#include "internal.h"

/* Offset of variable `name` in DATASEC sec, -1 if it is not there; its
 * type id in *type. */
static long var_offset(const struct btf *btf, const struct btf_type *sec,
		       const char *name, __u32 *type)
{
	const struct btf_var_secinfo *v = btf_var_secinfos(sec);

	for (int i = 0; i < btf_vlen(sec); i++, v++) {
		const struct btf_type *var = btf__type_by_id(btf, v->type);

		if (var && !strcmp(btf__name_by_offset(btf, var->name_off), name)) {
			*type = var->type;
			return (long)v->offset;
		}
	}
	return -1;
}

/* Byte offset of member `name` in struct type id, -1 if none. */
static long member_offset(const struct btf *btf, __u32 id, const char *name)
{
	const struct btf_type *t = btf__type_by_id(btf, btf__resolve_type(btf, id));

	if (!t || !btf_is_struct(t))
		return -1;
	const struct btf_member *m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), name))
			return (long)(btf_member_bit_offset(t, i) / 8);
	return -1;
}

int gt_capture_percpu_offsets(const struct btf *btf, struct gt_percpu_offsets *o)
{
	memset(o, 0, sizeof(*o));
	int rc = -ENOENT;
	int id = btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC);
	const struct btf_type *sec = id > 0 ? btf__type_by_id(btf, id) : NULL;
	__u32 type;
	long rq = sec ? var_offset(btf, sec, "runqueues", &type) : -1;
	if (rq >= 0) {
		long pc = var_offset(btf, sec, "__preempt_count", &type);
		if (pc < 0) { /* Linux 6.2 to 6.14 (see gt_preempt_count) */
			long hot = var_offset(btf, sec, "pcpu_hot", &type);
			long in = hot >= 0 ? member_offset(btf, type, "preempt_count") : -1;
			pc = in >= 0 ? hot + in : -1;
		}
		long hrt = var_offset(btf, sec, "hrtimer_bases", &type);
		o->preempt_count_from_rq = pc >= 0 ? pc - rq : 0;
		o->hrtimer_bases_from_rq = hrt >= 0 ? hrt - rq : 0;
		rc = o->preempt_count_from_rq ? 0 : -ENOENT;
	}
	return rc;
}
