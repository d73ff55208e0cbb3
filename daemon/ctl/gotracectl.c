/* gotracectl: the command-line client.  One file per subcommand
 * (cmd_*.c); this file only dispatches. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{"record", cmd_record, "record processes, a cgroup or a command into a Go trace"},
	{"inspect", cmd_inspect, "summarize and validate a Go trace file"},
	{"report", cmd_report, "latency report of a Go trace: delays, off-CPU, syscalls, wakers"},
	{"merge", cmd_merge, "merge a Go runtime's own trace with a recording of its threads"},
	{"status", cmd_status, "list the daemon's recording sessions"},
	{"stop", cmd_stop, "stop a daemon recording session"},
	{"dump", cmd_dump, "write a daemon flight session's window up to now"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: gotracectl COMMAND [ARGS...]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n`gotracectl COMMAND --help` describes each.\n");
}

int main(int argc, char **argv)
{
	/* SIGUSR1 asks a flight recording for a dump (record.c), and users
	 * send it to them all (`kill -USR1 $(pidof gotracectl)`): it must end
	 * no other gotracectl, above all not a recording, whose trace would
	 * be lost.  A `record -- CMD` gets the default back at its exec
	 * (child_launch.c). */
	signal(SIGUSR1, SIG_IGN);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "gotracectl: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
