/* conmon command lines: which container a conmon monitors, by id and name
 * (common/conmon.h), from argv as Podman 4 and CRI-O start it; exec
 * sessions and other programs are none. */
#include <string.h>

#include "common/conmon.h"
#include "gt_test.h"

#define ID "75a39b204281a51f5828f56d914d3946b004329ebd3b65ab605fb8205a433802"

/* argv as /proc/PID/cmdline holds it: each string NUL-terminated */
#define CMDLINE(s) s, sizeof(s) - 1

static void test_podman(void)
{
	static const char c[] = "/usr/bin/conmon\0--api-version\0" "1\0-c\0" ID "\0-u\0" ID
				"\0-r\0/usr/bin/runc\0-b\0/x/userdata\0-p\0/x/pidfile\0-n\0web\0";
	static const char unnamed[] = "/usr/bin/conmon\0-c\0" ID "\0";
	char id[128], name[64];

	GT_REQUIRE(gt_conmon_cmdline(CMDLINE(c), id, sizeof(id), name, sizeof(name)) == 1,
		   "not found");
	GT_CHECK(!strcmp(id, ID) && !strcmp(name, "web"), "id %s name %s", id, name);
	GT_CHECK(gt_conmon_cmdline(CMDLINE(unnamed), id, sizeof(id), name, sizeof(name)) == 1 &&
		 !strcmp(id, ID) && !strcmp(name, ""), "no name: %s '%s'", id, name);
}

static void test_long_forms(void)
{
	static const char a[] = "conmon\0--cid\0" ID "\0--cuuid\0" ID "\0--name\0k8s_web\0";
	static const char b[] = "/usr/libexec/crio/conmon\0--cid=" ID "\0--name=k8s_db\0";
	char id[128], name[64];

	GT_CHECK(gt_conmon_cmdline(CMDLINE(a), id, sizeof(id), name, sizeof(name)) == 1 &&
		 !strcmp(id, ID) && !strcmp(name, "k8s_web"), "--cid ID --name N");
	GT_CHECK(gt_conmon_cmdline(CMDLINE(b), id, sizeof(id), name, sizeof(name)) == 1 &&
		 !strcmp(id, ID) && !strcmp(name, "k8s_db"), "--cid=ID --name=N");
}

static void test_not_a_container(void)
{
	static const char exec[] = "/usr/bin/conmon\0--api-version\0" "1\0-c\0" ID "\0-u\0"
				   "abc\0-e\0--exec-attach\0";
	static const char other[] = "/bin/sleep\0-c\0" ID "\0";
	static const char named[] = "/opt/notconmon\0-c\0" ID "\0";
	static const char last[] = "conmon\0-c\0";
	char id[128], n[64];

	GT_CHECK(!gt_conmon_cmdline(CMDLINE(exec), id, sizeof(id), n, sizeof(n)), "an exec session's");
	GT_CHECK(!gt_conmon_cmdline(CMDLINE(other), id, sizeof(id), n, sizeof(n)), "sleep taken");
	GT_CHECK(!gt_conmon_cmdline(CMDLINE(named), id, sizeof(id), n, sizeof(n)), "notconmon taken");
	GT_CHECK(!gt_conmon_cmdline(CMDLINE(last), id, sizeof(id), n, sizeof(n)), "-c, no value");
	GT_CHECK(!gt_conmon_cmdline("", 0, id, sizeof(id), n, sizeof(n)), "empty cmdline");
	GT_CHECK(!gt_conmon_cmdline(CMDLINE("conmon\0-c\0" ID "\0"), id, 10, n, sizeof(n)),
		 "id too long");
	GT_CHECK(!gt_conmon_cmdline(CMDLINE("conmon\0-c\0" ID "\0-n\0longer-than-8\0"), id,
				    sizeof(id), n, 8), "name too long");
}

int main(void)
{
	GT_RUN(test_podman);
	GT_RUN(test_long_forms);
	GT_RUN(test_not_a_container);
	return gt_test_done();
}
