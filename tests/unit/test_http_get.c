/* daemon/ctl/http_get.c: the status line is parsed within the bytes read
 * (atoi ran past a buffer without NUL), and a signal during the wait for
 * the answer neither ends it early nor leaves it in a recv without a
 * deadline (poll's EINTR fell through to a blocking recv). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gt_test.h"
#include "ctl/http_get.h"

static int status_of(const char *s)
{
	size_t n = strlen(s);
	uint8_t *p = malloc(n ? n : 1); /* exactly n bytes: no NUL after them */
	int code;

	memcpy(p, s, n);
	code = gt_http_status(p, n);
	free(p);
	return code;
}

static void test_status(void)
{
	GT_CHECK(status_of("HTTP/1.1 200") == 200, "a bare status line");
	GT_CHECK(status_of("HTTP/1.0 404 Not Found\r\n") == 404, "404");
	GT_CHECK(status_of("HTTP/1.1 2000000000000000000000") == -1, "digits to the end");
	GT_CHECK(status_of("HTTP/1.1 20") == -1, "short");
	GT_CHECK(status_of("HTTP/1.1 2x0 OK") == -1, "not digits");
	GT_CHECK(status_of("HTTP/1.1  200 OK") == -1, "two spaces");
	GT_CHECK(status_of("HTTX/1.1 200 OK") == -1, "not HTTP");
}

static void on_usr1(int sig) { (void)sig; }

/* A server that accepts, has the client signalled once (SA_RESTART, as a
 * shell's SIGCHLD or SIGWINCH would be), and never answers: the GET ends
 * with -ETIMEDOUT at its deadline.  alarm() guards the old hang. */
static void test_signal_in_wait(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	struct gt_http_body b;
	char url[64], why[256] = "";
	int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rc, st;
	pid_t pid;

	GT_REQUIRE(ls >= 0 && bind(ls, (struct sockaddr *)&a, al) == 0 && listen(ls, 4) == 0 &&
		   getsockname(ls, (struct sockaddr *)&a, &al) == 0, "listen: %s", strerror(errno));
	sigaction(SIGUSR1, &sa, NULL);
	pid = fork();
	GT_REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		int c = accept(ls, NULL, NULL);

		usleep(100 * 1000);
		kill(getppid(), SIGUSR1);
		pause();
		_exit(c < 0);
	}
	close(ls);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/debug/pprof/trace", ntohs(a.sin_port));
	alarm(30);
	rc = gt_http_get(url, 1500, &b, why, sizeof(why));
	alarm(0);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	GT_CHECK(rc == -ETIMEDOUT, "rc %d (%s)", rc, why);
}

int main(void)
{
	GT_RUN(test_status);
	GT_RUN(test_signal_in_wait);
	return gt_test_done();
}
