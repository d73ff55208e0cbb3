/* gotracectl merge: a Go runtime's own trace (Go 1.22+) and gotraced's
 * kernel recording of the same process into one Go 1.22+ file
 * (format/gomerge/gt_gomerge.h; rules: docs/mapping.md, "A Go runtime's
 * trace with the kernel inside").  Also the last step of
 * `record --go-trace` (gomerge_files). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "gomerge/gt_gomerge.h"
#include "trace_output.h"
#include "util/gt_escape.h"

static const char usage_text[] =
"usage: gotracectl merge RUNTIME.trace KERNEL.trace -o OUT.trace\n"
"\n"
"Merges a Go program's own execution trace (Go 1.22+: runtime/trace,\n"
"go test -trace, /debug/pprof/trace) with a gotraced recording of the same\n"
"process over the same window (record -p PID, the default format) into one\n"
"Go 1.22+ trace.  Every event of the runtime's trace is kept; on each\n"
"goroutine, a user region \"kernel: ...\" marks each interval in which the\n"
"runtime had it running and the kernel had its thread off the CPU\n"
"(preempted, by whom when that task was recorded too; blocked), and\n"
"\"kernel\" logs say what the kernel did inside the runtime's syscalls and\n"
"where a thread changed CPU.  Open it with `go tool trace OUT.trace`\n"
"(User-defined regions, goroutine pages); `report` tables it.\n"
"\n"
"  -o, --output FILE  the merged trace (written atomically)\n";

struct mapped {
	const uint8_t *data;
	size_t len;
};

static int map_file(const char *path, struct mapped *m)
{
	char shown[GT_ESCAPE_SIZE(512)];
	struct stat st;
	/* O_NONBLOCK: a FIFO named as an input must not block the open; it is
	 * refused below with everything else that is not a regular file. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), err;
	void *p;

	gt_escape(shown, sizeof(shown), path, strlen(path));
	if (fd < 0 || fstat(fd, &st) < 0)
		err = errno;
	else /* mmap of a directory says "No such device": name what it is */
		err = S_ISDIR(st.st_mode) ? EISDIR : S_ISREG(st.st_mode) ? 0 : EINVAL;
	if (err) {
		fprintf(stderr, "gotracectl merge: cannot open %s: %s\n", shown,
			err == EINVAL ? "not a regular file" : strerror(err));
		if (fd >= 0)
			close(fd);
		return -err;
	}
	m->len = (size_t)st.st_size;
	p = m->len ? mmap(NULL, m->len, PROT_READ, MAP_PRIVATE, fd, 0) : (void *)"";
	err = errno;
	close(fd);
	if (p == MAP_FAILED) {
		fprintf(stderr, "gotracectl merge: cannot map %s: %s\n", shown, strerror(err));
		return -err;
	}
	m->data = p;
	return 0;
}

static void unmap(struct mapped *m)
{
	if (m->len)
		munmap((void *)m->data, m->len);
}

static int write_fd(void *ctx, const void *p, size_t n)
{
	const char *c = p;
	int fd = *(int *)ctx;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static void summary(const struct gt_gm_result *r)
{
	if (!r->bounds)
		fprintf(stderr,
			"gotracectl merge: clock: the runtime's ticks x 64 = CLOCK_MONOTONIC ns; no kernel off-CPU interval of its threads lies within the runtime's trace to check it (%llu contradict it): do the two files cover the same process and window?\n",
			(unsigned long long)r->violations);
	else
		fprintf(stderr,
		"gotracectl merge: clock: the runtime's ticks x 64 = CLOCK_MONOTONIC ns; %llu kernel off-CPU intervals of its threads bound the offset to [%lld, %lld] ns (residual error +-%lld ns), %llu contradict it\n",
		(unsigned long long)r->bounds,
		(long long)(r->bounds ? r->off_lo : 0), (long long)(r->bounds ? r->off_hi : 0),
		(long long)(r->bounds ? (r->off_hi - r->off_lo) / 2 : 0),
		(unsigned long long)r->violations);
	fprintf(stderr,
		"gotracectl merge: %llu intervals off-CPU while the runtime ran a goroutine (preempted %.3f ms, throttled by a CPU quota %.3f ms, blocked %.3f ms, in a syscall %.3f ms), %llu inside the runtime's syscalls (%llu of them shown on the M the goroutine ran on next, %llu not shown: it never ran again), %llu on idle threads, %llu migrations\n",
		(unsigned long long)r->regions, r->ns_by_why[GT_GM_PREEMPT] / 1e6,
		r->ns_by_why[GT_GM_THROTTLED] / 1e6,
		r->ns_by_why[GT_GM_BLOCK] / 1e6, r->ns_by_why[GT_GM_SYSCALL] / 1e6,
		(unsigned long long)r->in_syscall, (unsigned long long)r->moved,
		(unsigned long long)r->unplaced, (unsigned long long)r->idle,
		(unsigned long long)r->migrations);
}

int gomerge_files(const char *rt_path, const char *k_path, const char *out_path)
{
	struct mapped rt = { 0 };
	int rc;

	if (map_file(rt_path, &rt))
		return 1;
	rc = gomerge_data(rt.data, rt.len, k_path, out_path);
	unmap(&rt);
	return rc;
}

int gomerge_data(const uint8_t *rt_data, size_t rt_len, const char *k_path, const char *out_path)
{
	struct mapped rt = { rt_data, rt_len }, k = { 0 };
	struct gt_gm_result *res = calloc(1, sizeof(*res));
	struct gt_output out;
	char why[512];
	int rc = 1;

	if (!res) {
		fprintf(stderr, "gotracectl merge: out of memory\n");
		return 1;
	}
	if (map_file(k_path, &k))
		goto done;
	if (gt_output_open(&out, out_path, why, sizeof(why)) < 0) {
		fprintf(stderr, "gotracectl merge: %s\n", why);
		goto done;
	}
	if (gt_gomerge(rt.data, rt.len, k.data, k.len, write_fd, &out.fd, res) < 0) {
		fprintf(stderr, "gotracectl merge: %s; nothing written\n",
			res->error[0] ? res->error : "cannot write the output");
		gt_output_discard(&out);
		goto done;
	}
	if (gt_output_commit(&out, why, sizeof(why)) < 0) {
		fprintf(stderr, "gotracectl merge: %s\n", why);
		goto done;
	}
	summary(res);
	if (res->bounds && (res->off_lo > 0 || res->off_hi < 0))
		fprintf(stderr, "gotracectl merge: warning: the bounds exclude 0: the two files' clocks disagree (not the same machine or boot?); the merge assumed 0\n");
	rc = 0;
done:
	unmap(&k);
	free(res);
	return rc;
}

int cmd_merge(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *out = NULL;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			fputs(usage_text, stderr);
			return 2;
		}
	}
	if (!out || argc - optind != 2) {
		fputs(usage_text, stderr);
		return 2;
	}
	return gomerge_files(argv[optind], argv[optind + 1], out);
}
