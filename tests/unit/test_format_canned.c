/* Every real trace that ships with Go's source (written by Go runtimes
 * 1.5 to 1.19): our checker must give `go tool trace -d`'s verdict and
 * count exactly the events it prints (after Go merges the Ps and drops
 * futile wakeups).  Go 1.5 traces need a binary to symbolize: /bin/true
 * stands in, its symbols do not matter for the verdict. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "check/gt_check.h"
#include "gt_test.h"

static int go_root(char *buf, size_t len)
{
	FILE *p = popen("go env GOROOT", "r");
	int ok;

	if (!p)
		return -1;
	ok = fgets(buf, (int)len, p) != NULL;
	pclose(p);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* Runs `go tool trace -d`; returns its exit status, *lines = events printed. */
static int go_verdict(const char *path, int v15, long *lines, char *err, size_t errlen)
{
	char cmd[4096], line[4096];
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "go tool trace -d %s '%s' 2>/tmp/gt_canned_err.$$ ; rc=$?; "
		 "tail -1 /tmp/gt_canned_err.$$ >&2; rm -f /tmp/gt_canned_err.$$; exit $rc",
		 v15 ? "/bin/true" : "", path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	*lines = 0;
	while (fgets(line, sizeof(line), p))
		if (strchr(line, '\n'))
			(*lines)++;
	st = pclose(p);
	snprintf(err, errlen, "exit %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void check_one(const char *dir, const char *name, int *seen)
{
	char path[2048], tname[300], why[1024], goerr[64], msg[2048];
	struct gt_check_report rep, strict;
	long lines = 0;
	int rc, gorc, v15 = strstr(name, "_1_5_") != NULL;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tname, sizeof(tname), "canned_%s", name);
	rc = gt_check_file_run(path, GT_CHECK_PARSER_ONLY, &rep, NULL, NULL);
	gorc = go_verdict(path, v15, &lines, goerr, sizeof(goerr));
	(*seen)++;
	if (rc < 0) {
		snprintf(why, sizeof(why), "%s", rep.error);
		gt_test_report(tname, 0, why);
		return;
	}
	if ((rc == 0) != (gorc == 0)) {
		snprintf(why, sizeof(why), "verdict differs: ours %s (%s), go tool trace -d %s",
			 rc ? "invalid" : "valid", rep.error, goerr);
		gt_test_report(tname, 0, why);
		return;
	}
	if (rc == 0 && (long)rep.events != lines) {
		snprintf(why, sizeof(why), "event count differs: ours %llu, go tool trace -d printed %ld",
			 (unsigned long long)rep.events, lines);
		gt_test_report(tname, 0, why);
		return;
	}
	/* The Go-tools rules add the viewer's demands; the Go runtime's own
	 * traces open in the viewer, so they must pass those too. */
	gt_check_file_run(path, GT_CHECK_GO_TOOLS, &strict, NULL, NULL);
	if (strict.ok != rep.ok) {
		snprintf(why, sizeof(why), "Go-tools check disagrees with the parser-only check: %s",
			 strict.error);
		gt_test_report(tname, 0, why);
		return;
	}
	/* The viewer pass itself (gocheck.sh) on the small files: the
	 * Go-tools verdict must be the viewer's.  (1.5 files need a binary,
	 * the large ones take long: the parser verdict covers those.) */
	if (!v15 && rep.bytes < 100000 && (gt_test_gocheck(path, why, sizeof(why)) == 0) != strict.ok) {
		snprintf(msg, sizeof(msg), "Go-tools verdict %s, but Go's viewer pass says: %s",
			 strict.ok ? "valid" : strict.error, strict.ok ? why : "valid");
		gt_test_report(tname, 0, msg);
		return;
	}
	/* the producer contract of docs/format.md is stricter than the Go runtime
	 * itself: say where a real trace departs from it. */
	gt_check_file_run(path, 0, &strict, NULL, NULL);
	printf("# %s: version %d, %s, %llu events (go: %ld lines)%s%s; producer contract: %s\n",
	       name, rep.version, rc ? "invalid" : "valid", (unsigned long long)rep.events, lines,
	       rc ? ": " : "", rc ? rep.error : "", strict.ok ? "met" : strict.error);
	gt_test_report(tname, 1, NULL);
}

int main(void)
{
	char root[1024], dir[1100];
	struct dirent **names;
	int n, seen = 0;

	if (go_root(root, sizeof(root)) < 0) {
		gt_test_report("canned_traces", 0, "cannot run `go env GOROOT` (golang-go missing?)");
		return gt_test_done();
	}
	snprintf(dir, sizeof(dir), "%s/src/internal/trace/testdata", root);
	n = scandir(dir, &names, NULL, alphasort);
	if (n < 0) {
		gt_test_report("canned_traces", 0, "cannot list the canned traces directory");
		return gt_test_done();
	}
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.')
			check_one(dir, names[i]->d_name, &seen);
		free(names[i]);
	}
	free(names);
	gt_test_report("canned_traces_found", seen >= 15, "fewer than 15 canned traces found");
	return gt_test_done();
}
