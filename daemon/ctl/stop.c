/* gotracectl stop ID: ends one of the daemon's sessions cleanly (its file
 * gets its footer; its own gotracectl prints the summary and exits). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "client.h"
#include "commands.h"
#include "common/parse_args.h"

static void stop_usage(FILE *f)
{
	fprintf(f, "usage: gotracectl stop [--socket PATH] ID\n\n"
		   "Stops recording session ID of the gotraced daemon (see `gotracectl status`).\n"
		   "      --socket PATH   gotraced's socket (default %s)\n", GT_DEFAULT_SOCKET);
}

int cmd_stop(int argc, char **argv)
{
	const char *sock_path;
	char err[GT_PROTO_MAX_TEXT + 64];
	uint32_t id;
	int fd, rc = gt_args_socket_opts(argc, argv, stop_usage, &sock_path);

	if (rc >= 0)
		return rc;
	if (argc - optind != 1) {
		stop_usage(stderr);
		return 2;
	}
	if (gt_args_session_id(argv[optind], &id)) {
		fprintf(stderr, "gotracectl stop: '%s' is not a session id (see gotracectl status)\n",
			argv[optind]);
		return 2;
	}
	fd = gt_client_connect(sock_path, err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "gotracectl: %s\n", err);
		return 1;
	}
	rc = gt_client_stop(fd, id, err, sizeof(err));
	close(fd);
	if (rc) {
		fprintf(stderr, "gotracectl: %s\n", err);
		return 1;
	}
	printf("session %u stopped\n", id);
	return 0;
}
