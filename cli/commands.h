/* commands.h -- the subcommands, one cmd_<name>(argc, argv) each
 *
 * argv[0] is the command's own name ("record"); the return value is the
 * process exit status (see enum sb_exit in common/util.h; record and guard
 * pass their command's status through). Each command prints its own --help.
 */
#ifndef SB_COMMANDS_H
#define SB_COMMANDS_H

int cmd_record(int argc, char **argv);  /* runner/record.c */
int cmd_guard(int argc, char **argv);   /* runner/guard.c */
int cmd_compare(int argc, char **argv); /* runner/compare.c */
int cmd_analyze(int argc, char **argv); /* analyze/cmd_analyze.c */
int cmd_table(int argc, char **argv);   /* analyze/cmd_table.c */
int cmd_latents(int argc, char **argv); /* analyze/cmd_latents.c */
int cmd_check(int argc, char **argv);   /* analyze/cmd_check.c */
int cmd_plot(int argc, char **argv);    /* plots/plot.c */

#endif
