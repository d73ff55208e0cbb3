/* gotracectl dump ID [-o FILE]: writes a flight session's window up to now
 * while it goes on recording.  With -o this process makes the file (its rights,
 * the usual rules: ctl/trace_output.c) and passes it to gotraced, which
 * writes into it with this user's ids; without, the daemon writes a new
 * file into the session's directory, as the session's owner. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "commands.h"
#include "common/parse_args.h"
#include "common/clock.h"
#include "trace_output.h"

static void dump_usage(FILE *f)
{
	fprintf(f, "usage: gotracectl dump ID [-o FILE] [--socket PATH]\n\n"
		   "Writes the window of flight session ID of the gotraced daemon now: the\n"
		   "last WINDOW up to this moment, quiet time included (see `gotracectl\n"
		   "record --flight --detach` and `gotracectl status`); the recording goes\n"
		   "on.  Options go before or after ID.  A dump asked while another of the\n"
		   "session is written waits for it (4 at most wait; more are refused).\n"
		   "  -o, --output FILE   write it to FILE (atomically, as for record -o);\n"
		   "                      default: a new file in the session's directory\n"
		   "      --socket PATH   gotraced's socket (default %s)\n", GT_DEFAULT_SOCKET);
}

static const struct option longopts[] = {
	{"output", required_argument, NULL, 'o'},
	{"socket", required_argument, NULL, 'S'},
	{"help", no_argument, NULL, 'h'},
	{0},
};

/* Sends the request (with out's descriptor if any) and says what came of it. */
static int ask(const char *sock_path, uint32_t id, struct gt_output *out, int have_out)
{
	struct gt_msg_dumped d;
	char err[GT_PROTO_MAX_TEXT + 64];
	uint64_t t0 = gt_now_ns();
	int fd = gt_client_connect(sock_path, err, sizeof(err)), rc;

	if (fd < 0) {
		if (have_out)
			gt_output_discard(out);
		fprintf(stderr, "gotracectl: %s\n", err);
		return 1;
	}
	rc = gt_client_dump(fd, id, have_out ? out->fd : -1, &d, err, sizeof(err));
	close(fd);
	if (!rc && have_out)
		rc = gt_output_commit(out, err, sizeof(err));
	else if (have_out)
		gt_output_discard(out);
	if (rc) {
		fprintf(stderr, "gotracectl: dump of session %u failed: %s\n", id, err);
		return 1;
	}
	printf("session %u: wrote %s%s (%" PRIu64 " bytes in %.1f ms)\n", id,
	       have_out ? out->path : d.name, have_out ? "" : " in its directory", d.bytes,
	       (gt_now_ns() - t0) / 1e6);
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	const char *sock_path = NULL, *path = NULL, *ids[2] = {NULL, NULL};
	struct gt_output out;
	char why[1100];
	uint32_t id;
	int c, nids = 0;

	optind = 1;
	/* "-": the ID is taken where it stands, options before or after it
	 * (`dump ID -o FILE` as the README writes it), whatever
	 * POSIXLY_CORRECT says */
	while ((c = getopt_long(argc, argv, "-o:h", longopts, NULL)) != -1) {
		if (c == 1) {
			if (nids < 2)
				ids[nids] = optarg;
			nids++;
		} else if (c == 'o') {
			path = optarg;
		} else if (c == 'S') {
			sock_path = optarg;
		} else if (c == 'h') {
			dump_usage(stdout);
			return 0;
		} else {
			dump_usage(stderr);
			return 2;
		}
	}
	for (; optind < argc; optind++) /* after "--" */
		if (nids++ < 2)
			ids[nids - 1] = argv[optind];
	if (nids != 1) {
		if (nids > 1)
			fprintf(stderr, "gotracectl dump: one session id (got '%s' and '%s')\n\n",
				ids[0], ids[1]);
		else
			fprintf(stderr, "gotracectl dump: which session? (see gotracectl status)\n\n");
		dump_usage(stderr);
		return 2;
	}
	if (gt_args_session_id(ids[0], &id)) {
		fprintf(stderr, "gotracectl dump: '%s' is not a session id (see gotracectl status)\n",
			ids[0]);
		return 2;
	}
	if (path && gt_output_open(&out, path, why, sizeof(why))) {
		fprintf(stderr, "gotracectl: %s\n", why);
		return 1;
	}
	return ask(sock_path, id, &out, path != NULL);
}
