/* Folder ctl/: the gotracectl program: its commands, options, the daemon
 * client, progress and summary, the output file, the launched child. It may
 * include common/ and engine/ (embedded mode), never server/ (gotracectl
 * links no server code); `inspect` needs only format/.
 *
 * gotracectl subcommands: each gets argv from its own name on and returns
 * the exit status (0 ok, 1 failure, 2 usage error). */
#ifndef GT_COMMANDS_H
#define GT_COMMANDS_H

#include <stddef.h>
#include <stdint.h>

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
int cmd_merge(int argc, char **argv);
/* merge.c: the merge of two files into a third; 0 or 1 (said why). */
int gomerge_files(const char *rt_path, const char *k_path, const char *out_path);
/* The same with the runtime's trace in memory. */
int gomerge_data(const uint8_t *rt_data, size_t rt_len, const char *k_path, const char *out_path);

#endif
