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
/* inspect_v2.c: 1 if the file starts with a Go 1.22+ header; the v2
 * summary and verdict (exit code as cmd_inspect's). */
int inspect_is_v2(const char *path);
int inspect_v2(const char *path, int json, int want_g);
int cmd_report(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_dump(int argc, char **argv);

#endif
