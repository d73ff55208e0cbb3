/* gotracectl status: the daemon's recording sessions, one line each. */
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "commands.h"
#include "common/parse_args.h"
#include "util/gt_escape.h"

static void status_usage(FILE *f)
{
	fprintf(f, "usage: gotracectl status [--socket PATH]\n\n"
		   "Lists the recording sessions of the gotraced daemon: ID, OWNER, ELAPSED,\n"
		   "EVENTS, BYTES, DROPS (events the kernel dropped), LOANON (loopback\n"
		   "wakeups whose sender could not be named), TARGETS (label); for a flight\n"
		   "recording EVENTS and BYTES are the kernel records its window holds and\n"
		   "their memory, and a line under it says what it keeps, its dumps and its\n"
		   "triggers.\n"
		   "      --socket PATH   gotraced's socket (default %s)\n", GT_DEFAULT_SOCKET);
}

static const char *user_name(uint32_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid((uid_t)uid);

	if (pw)
		snprintf(buf, len, "%s", pw->pw_name);
	else
		snprintf(buf, len, "%u", uid);
	return buf;
}

/* Targets, label and flight line carry users' text (paths, labels,
 * trigger specs, comms): escaped, so no session line can forge another
 * or send a terminal an escape sequence. */
static void print_sessions(const struct gt_msg_status_reply *r)
{
	static char targets[GT_ESCAPE_SIZE(sizeof(r->sessions[0].targets))];
	static char label[GT_ESCAPE_SIZE(sizeof(r->sessions[0].label))];
	static char flight[GT_ESCAPE_SIZE(sizeof(r->sessions[0].flight))];
	char who[64];

	if (r->count == 0) {
		printf("no recording sessions\n");
		return;
	}
	/* LOANON: loopback wakeups whose sender could not be named */
	printf("%-4s %-10s %9s %10s %12s %7s %7s  %s\n", "ID", "OWNER", "ELAPSED", "EVENTS",
	       "BYTES", "DROPS", "LOANON", "TARGETS");
	for (uint32_t i = 0; i < r->count; i++) {
		const struct gt_msg_session_info *s = &r->sessions[i];

		printf("%-4u %-10s %8.1fs %10llu %12llu %7llu %7llu  %s%s%s%s\n", s->stats.id,
		       user_name(s->stats.owner_uid, who, sizeof(who)), s->stats.elapsed_ns / 1e9,
		       (unsigned long long)s->stats.trace_events, (unsigned long long)s->stats.bytes,
		       (unsigned long long)s->stats.drops,
		       (unsigned long long)s->stats.loopback_anon,
		       gt_esc(targets, sizeof(targets), s->targets), s->label[0] ? " (" : "",
		       gt_esc(label, sizeof(label), s->label), s->label[0] ? ")" : "");
		if (s->flight[0])
			printf("     %s\n", gt_esc(flight, sizeof(flight), s->flight));
	}
}

int cmd_status(int argc, char **argv)
{
	static struct gt_msg_status_reply r;
	const char *sock_path;
	char err[GT_PROTO_MAX_TEXT + 64];
	int fd, rc = gt_args_socket_opts(argc, argv, status_usage, &sock_path);

	if (rc >= 0)
		return rc;
	if (optind < argc) {
		fprintf(stderr, "gotracectl status: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	fd = gt_client_connect(sock_path, err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "gotracectl: %s\n", err);
		return 1;
	}
	rc = gt_client_status(fd, &r, err, sizeof(err));
	close(fd);
	if (rc) {
		fprintf(stderr, "gotracectl: %s\n", err);
		return 1;
	}
	print_sessions(&r);
	return 0;
}
