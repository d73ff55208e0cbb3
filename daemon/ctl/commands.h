/* Folder ctl/: the gotracectl program: its commands, options, the daemon
 * client, progress and summary, the output file, the launched child. It may
 * include common/ and engine/ (embedded mode), never server/ (gotracectl
 * links no server code); `inspect` needs only format/.
 *
 * gotracectl subcommands: each gets argv from its own name on and returns
 * the exit status (0 ok, 1 failure, 2 usage error). */
#ifndef GT_COMMANDS_H
#define GT_COMMANDS_H

int cmd_record(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_stop(int argc, char **argv);

#endif
