/* `record --flight --detach`: a flight recording that gotraced keeps after
 * this command returns.  -o names a directory (made if missing) that this
 * process opens with its own rights and passes to the daemon, which
 * creates the triggered dumps there with the user's ids; the session's ID
 * is printed for `dump`, `status` and `stop` (docs/design.md, "Flight
 * recorder"). */
#include "record_run.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "common/flight_opts.h"
#include "common/protocol.h"

/* The dump directory -o names, opened here (the daemon gets the fd). */
static int open_dir(const char *path, char *why, size_t whylen)
{
	char what[PATH_MAX + 32];
	size_t n;
	int fd;

	snprintf(what, sizeof(what), "the dump directory %s", path);
	fd = gt_flight_dir_open(path, what, why, whylen);
	n = strlen(why);
	if (fd < 0 && n < whylen)
		snprintf(why + n, whylen - n, " (-o names a directory with --detach)");
	return fd;
}

/* " --socket PATH" when a socket other than the default was asked for (the
 * hint's commands must reach the same daemon), quoted for a shell when it
 * needs it; else "". */
static void socket_arg(const char *sock, char *out, size_t len)
{
	int plain = 1;

	if (!sock || !strcmp(sock, GT_DEFAULT_SOCKET)) {
		out[0] = 0;
		return;
	}
	for (const char *c = sock; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("/._-+:@%", *c))
			plain = 0;
	if (plain || strchr(sock, '\''))
		snprintf(out, len, " --socket %s", sock);
	else
		snprintf(out, len, " --socket '%s'", sock);
}

int gt_record_detached(struct gt_record_opts *o)
{
	struct gt_session_opts so;
	char why[1100] = "", sockarg[PATH_MAX + 16];
	uint32_t id = 0;
	int dir = -1, cg = -1, sock, err = -1;

	sock = gt_client_connect(o->socket, why, sizeof(why));
	if (sock < 0)
		goto out;
	dir = open_dir(o->out, why, sizeof(why));
	if (dir < 0)
		goto out;
	gt_record_session_opts(o, &so);
	if (so.cgroup_path &&
	    (cg = open(so.cgroup_path, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		snprintf(why, sizeof(why), "cannot open cgroup %s: %s", so.cgroup_path,
			 strerror(errno));
		goto out;
	}
	err = gt_client_record(sock, &so, 0, dir, cg, &id, why, sizeof(why));
out:
	if (cg >= 0)
		close(cg);
	if (dir >= 0)
		close(dir);
	if (sock >= 0)
		close(sock);
	if (err) {
		fprintf(stderr, "gotracectl: %s\n", why);
		return 1;
	}
	socket_arg(o->socket, sockarg, sizeof(sockarg));
	fprintf(stderr, "gotracectl: flight session %u records in gotraced; triggered dumps go "
		"to %s; `gotracectl dump%s %u` writes its window, `gotracectl stop%s %u` ends it\n",
		id, o->out, sockarg, id, sockarg, id);
	printf("%u\n", id);
	return 0;
}
