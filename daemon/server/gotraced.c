/* gotraced: the recording daemon.  Loads the BPF programs once and serves
 * recording sessions to gotracectl over a Unix socket (see server.h and
 * protocol.h).  Runs in the foreground and logs to stderr (the journal). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/protocol.h"
#include "server.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gotraced [--socket PATH] [--ring-kb N] [--request-timeout S]\n"
		"                [--idle-timeout S] [--verbose]\n"
		"                [--flight-unit NAME | --flight-cgroup PATH [--flight-dir DIR]\n"
		"                 [--flight-window D] [--flight-size B] [--flight-trigger SPEC]...\n"
		"                 [--flight-after D] [--flight-holdoff D] [--flight-max-dumps N]\n"
		"                 [--flight-go-version V]]\n"
		"\n"
		"Serves gotracectl recording sessions over a Unix socket.\n"
		"  -s, --socket PATH   listen on PATH (default %s,\n"
		"                      or the socket passed by systemd socket activation)\n"
		"      --ring-kb N     ring buffer per CPU in KiB (default 16384, less\n"
		"                      per CPU beyond 8 CPUs)\n"
		"      --request-timeout S  a connection must send each whole request\n"
		"                      within S seconds of connecting or of its first\n"
		"                      byte, or is closed with the reason (default %d)\n"
		"      --idle-timeout S  a connection that records nothing is closed\n"
		"                      S seconds after its last request (default %d)\n"
		"      --flight-unit NAME, --flight-cgroup PATH  an always-on flight\n"
		"                      recording of a systemd unit (or container) or a\n"
		"                      cgroup v2 path, from the daemon's start, as\n"
		"                      gotracectl record --flight --detach; its dumps go\n"
		"                      to --flight-dir (default %s);\n"
		"                      --flight-window, -size, -trigger, -after, -holdoff,\n"
		"                      -max-dumps, -go-version as record's --flight,\n"
		"                      --flight-size, ..., --go-version (default 1.19)\n"
		"  -v, --verbose       libbpf debug output\n"
		"  -h, --help          this text\n",
		GT_DEFAULT_SOCKET, GT_SRV_REQUEST_S, GT_SRV_IDLE_S, GT_SRV_FLIGHT_DIR);
}

/* A timeout option: 1..GT_SRV_TIMEOUT_MAX_S whole seconds. */
static int seconds(const char *arg, const char *opt, unsigned *out)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (end == arg || *end || v < 1 || v > GT_SRV_TIMEOUT_MAX_S) {
		fprintf(stderr, "gotraced: %s wants 1..%d seconds, not '%s'\n", opt,
			GT_SRV_TIMEOUT_MAX_S, arg);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

static const struct option longopts[] = {
	{"socket", required_argument, NULL, 's'},
	{"ring-kb", required_argument, NULL, 'r'},
	{"request-timeout", required_argument, NULL, 'T'},
	{"idle-timeout", required_argument, NULL, 'I'},
	{"verbose", no_argument, NULL, 'v'},
	{"help", no_argument, NULL, 'h'},
	{"flight-unit", required_argument, NULL, 'F'},
	{"flight-cgroup", required_argument, NULL, 'F'},
	{"flight-dir", required_argument, NULL, 'F'},
	{"flight-window", required_argument, NULL, 'F'},
	{"flight-size", required_argument, NULL, 'F'},
	{"flight-trigger", required_argument, NULL, 'F'},
	{"flight-after", required_argument, NULL, 'F'},
	{"flight-holdoff", required_argument, NULL, 'F'},
	{"flight-max-dumps", required_argument, NULL, 'F'},
	{"flight-go-version", required_argument, NULL, 'F'},
	{0},
};

/* --ring-kb KB: 0, or -1 (said why). */
static int ring_kb(const char *arg, struct gt_server_opts *o)
{
	char *end;
	long kb = strtol(arg, &end, 10);

	if (*end || kb < 64 || kb > 1024 * 1024) {
		fprintf(stderr, "gotraced: --ring-kb wants 64..1048576, not '%s'\n", arg);
		return -1;
	}
	o->ring_bytes_per_cpu = (unsigned)kb * 1024u;
	return 0;
}

/* One option c (longopts[li] when long) into *o: -1 go on, else the exit
 * status (0 after --help, 2 for a bad option). */
static int parse_one(int c, int li, struct gt_server_opts *o)
{
	switch (c) {
	case 'F':
		return gt_srv_flight_option(longopts[li].name, optarg, o) ? 2 : -1;
	case 's':
		o->socket_path = optarg;
		return -1;
	case 'r':
		return ring_kb(optarg, o) ? 2 : -1;
	case 'T':
	case 'I':
		if (seconds(optarg, c == 'T' ? "--request-timeout" : "--idle-timeout",
			    c == 'T' ? &o->request_timeout_s : &o->idle_timeout_s))
			return 2;
		return -1;
	case 'v':
		o->verbose = 1;
		return -1;
	case 'h':
		usage(stdout);
		return 0;
	default:
		usage(stderr);
		return 2;
	}
}

int main(int argc, char **argv)
{
	struct gt_server_opts o = {0};
	int c, li = 0, rc;

	while ((c = getopt_long(argc, argv, "s:vh", longopts, &li)) != -1)
		if ((rc = parse_one(c, li, &o)) >= 0)
			return rc;
	if (optind < argc) {
		fprintf(stderr, "gotraced: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (gt_srv_flight_config_check(&o))
		return 2;
	if (geteuid() != 0)
		fprintf(stderr, "gotraced: warning: not running as root; loading BPF will likely fail\n");
	setvbuf(stderr, NULL, _IOLBF, 0);
	return gt_server_run(&o);
}
