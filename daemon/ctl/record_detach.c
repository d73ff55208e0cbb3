/* `record --flight --detach`: a flight recording that gotraced keeps after
 * this command returns.  -o names a directory (made if missing) that this
 * process opens with its own rights and passes to the daemon, which
 * creates the triggered dumps there with the user's ids; the session's ID
 * is printed for `dump`, `status` and `stop` (docs/design.md, "Flight
 * recorder"). */
#include "record_run.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "common/flight_opts.h"

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

int gt_record_detached(struct gt_record_opts *o)
{
	struct gt_session_opts so;
	char why[1100] = "";
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
	fprintf(stderr, "gotracectl: flight session %u records in gotraced; triggered dumps go "
		"to %s; `gotracectl dump %u` writes its window, `gotracectl stop %u` ends it\n",
		id, o->out, id, id);
	printf("%u\n", id);
	return 0;
}
