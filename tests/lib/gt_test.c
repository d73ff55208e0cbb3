#include "gt_test.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int gt_test_failed_now;
int gt_test_failures;
int gt_test_passes;
static const char *current;

void gt_test_fail_at(const char *file, int line, const char *cond,
		     const char *fmt, ...)
{
	va_list ap;

	if (!gt_test_failed_now)
		printf("FAIL %s: ", current ? current : "?");
	else
		printf("     also: ");
	printf("%s:%d: (%s) ", file, line, cond);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	gt_test_failed_now = 1;
}

void gt_test_run(const char *name, void (*fn)(void))
{
	current = name;
	gt_test_failed_now = 0;
	fn();
	if (gt_test_failed_now) {
		gt_test_failures++;
	} else {
		gt_test_passes++;
		printf("ok %s\n", name);
	}
	fflush(stdout);
	current = NULL;
}

void gt_test_report(const char *name, int passed, const char *why)
{
	if (passed) {
		gt_test_passes++;
		printf("ok %s\n", name);
	} else {
		gt_test_failures++;
		printf("FAIL %s: %s\n", name, why ? why : "");
	}
	fflush(stdout);
}

int gt_test_done(void)
{
	return gt_test_failures ? 1 : 0;
}

int gt_test_skip_bpf(void)
{
	const char *s = getenv("GOTRACED_SKIP_BPF");

	return s && strcmp(s, "1") == 0;
}

int gt_test_gocheck(const char *path, char *why, size_t whylen)
{
	char cmd[4096];
	FILE *p;
	size_t n = 0;
	int rc;

	snprintf(cmd, sizeof(cmd), "tests/lib/gocheck.sh '%s' 2>&1", path);
	p = popen(cmd, "r");
	if (!p) {
		snprintf(why, whylen, "cannot run gocheck.sh");
		return -1;
	}
	if (why && whylen)
		why[0] = 0;
	while (why && n + 1 < whylen) {
		size_t got = fread(why + n, 1, whylen - 1 - n, p);
		if (got == 0)
			break;
		n += got;
	}
	if (why && whylen)
		why[n] = 0;
	{
		char sink[4096];
		while (fread(sink, 1, sizeof(sink), p) > 0)
			;
	}
	rc = pclose(p);
	return rc == 0 ? 0 : -1;
}

int gt_test_fd_write(void *ctx, const void *p, size_t n)
{
	int fd = *(int *)ctx;
	const char *b = p;

	while (n) {
		ssize_t k = write(fd, b, n);

		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		b += k;
		n -= (size_t)k;
	}
	return 0;
}

const char *gt_test_build_dir(const char *argv0)
{
	static char dir[512];
	const char *env = getenv("GT_BUILD");
	const char *t = argv0 ? strstr(argv0, "/tests/") : NULL;

	if (env && *env)
		return env;
	if (!t)
		return "build";
	snprintf(dir, sizeof(dir), "%.*s", (int)(t - argv0), argv0);
	return dir;
}
