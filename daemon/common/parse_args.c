#include "parse_args.h"
#include "procfs.h"
#include "session_opts.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PF_KTHREAD 0x00200000 /* include/linux/sched.h */

int gt_args_go_version(const char *s, int *v)
{
	if (!strcmp(s, "1.11")) *v = GT_V1_11;
	else if (!strcmp(s, "1.19")) *v = GT_V1_19;
	else if (!strcmp(s, "1.21")) *v = GT_V1_21;
	else if (!strcmp(s, "1.22")) *v = GT_GO_1_22;
	else if (!strcmp(s, "1.23")) *v = GT_GO_1_23;
	else return -EINVAL;
	return 0;
}

int gt_args_size(const char *s, uint64_t min, uint64_t max, uint64_t *bytes)
{
	static const struct { const char *unit; int shift; } units[] = {
		{"", 0}, {"K", 10}, {"k", 10}, {"KiB", 10}, {"M", 20}, {"MiB", 20},
		{"G", 30}, {"GiB", 30},
	};
	char *end;
	unsigned long long v;

	if (!s || !*s || s[0] == '-' || s[0] == '+' || s[0] == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		int sh = units[i].shift;

		if (strcmp(end, units[i].unit))
			continue;
		if (v > (UINT64_MAX >> sh) || (v << sh) < min || (v << sh) > max)
			return -EINVAL;
		*bytes = (uint64_t)v << sh;
		return 0;
	}
	return -EINVAL;
}

int gt_args_duration(const char *s, uint64_t *ns)
{
	static const struct { const char *unit; double ns; } units[] = {
		{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}, {"", 1e9},
	};
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v <= 0 || v != v)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit) == 0) {
			double t = v * units[i].ns;
			if (t < 1 || t > 1e18)
				return -EINVAL;
			*ns = (uint64_t)t;
			return 0;
		}
	}
	return -EINVAL;
}

int gt_pids_dedup(pid_t *pids, int n)
{
	int out = 0;

	/* n is at most a request's 1024 PIDs: quadratic is a millisecond */
	for (int i = 0; i < n; i++) {
		int seen = 0;

		for (int j = 0; j < out && !seen; j++)
			seen = pids[j] == pids[i];
		if (!seen)
			pids[out++] = pids[i];
	}
	return out;
}

int gt_args_pids(const char *s, pid_t *pids, int max)
{
	int n = 0;
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;
	while (*p) {
		char *end;
		long v;

		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || end == p || v <= 0 || v > 0x3fffffff || (*end && *end != ','))
			return -EINVAL;
		for (int i = 0; i < n; i++)
			if (pids[i] == v)
				goto next; /* a PID named twice is traced once */
		if (n == max)
			return -E2BIG;
		pids[n++] = (pid_t)v;
next:
		p = *end ? end + 1 : end;
		if (*end == ',' && !*p)
			return -EINVAL;
	}
	return n;
}

int gt_args_target_pid(pid_t pid, char *why, size_t whylen)
{
	struct gt_proc_stat st;
	int err = gt_proc_stat(pid, 0, &st);

	if (err == -ENOENT) {
		snprintf(why, whylen, "no such process");
		return -ESRCH;
	}
	if (err) {
		snprintf(why, whylen, "cannot read /proc/%d/stat: %s", (int)pid, strerror(-err));
		return err;
	}
	if (st.flags & PF_KTHREAD) {
		snprintf(why, whylen, "it is a kernel thread (only user-space processes can be recorded)");
		return -EPERM;
	}
	return 0;
}

int gt_args_socket_opts(int argc, char **argv, void (*usage)(FILE *), const char **sock_path)
{
	static const struct option longopts[] = {
		{"socket", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	int c;

	*sock_path = NULL;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 's') {
			*sock_path = optarg;
		} else if (c == 'h') {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	return -1;
}

int gt_args_session_id(const char *s, uint32_t *id)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v == 0 || v > 0x7fffffffUL || s[0] == '-')
		return -EINVAL;
	*id = (uint32_t)v;
	return 0;
}
