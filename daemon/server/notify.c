/* systemd integration by hand (no libsystemd): the readiness protocol of
 * sd_notify(3) and socket activation of sd_listen_fds(3). */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define SD_LISTEN_FDS_START 3

/* The socket systemd passed (LISTEN_PID is us, LISTEN_FDS >= 1), or -1.
 * The variables are unset so children do not inherit them. */
int gt_sd_listen_fd(void)
{
	const char *pid = getenv("LISTEN_PID"), *n = getenv("LISTEN_FDS");
	struct stat st;
	int fd = SD_LISTEN_FDS_START;

	if (!pid || !n || atol(pid) != (long)getpid() || atoi(n) < 1)
		return -1;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (atoi(n) > 1)
		gt_log("systemd passed %d sockets; serving the first", atoi(n));
	if (fstat(fd, &st) || !S_ISSOCK(st.st_mode)) {
		gt_log("LISTEN_FDS is set but fd %d is not a socket; ignoring it", fd);
		return -1;
	}
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
}

void gt_sd_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	socklen_t salen;
	size_t len;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@'))
		return;
	len = strlen(path);
	if (len >= sizeof(sa.sun_path)) {
		gt_log("NOTIFY_SOCKET path is too long; cannot tell systemd '%s'", state);
		return;
	}
	memcpy(sa.sun_path, path, len);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0'; /* abstract namespace */
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || sendto(fd, state, strlen(state), MSG_NOSIGNAL,
			     (struct sockaddr *)&sa, salen) < 0)
		gt_log("cannot notify systemd (%s): %s", state, strerror(errno));
	if (fd >= 0)
		close(fd);
}
