/* commands.h -- the subcommands, one cmd_<name>(argc, argv) each
 *
 * argv[0] is the command's own name ("record"); the return value is the
 * process exit status (see enum sb_exit in common/util.h; record and guard
 * pass their command's status through). Each command's options are a table,
 * its `struct opt_cmd opt_cmd_<name>` (cli/opt.h): its --help, its man page
 * and the completions are made from it.
 */
#ifndef SB_COMMANDS_H
#define SB_COMMANDS_H

int cmd_record(int argc, char **argv);  /* cli/record.c */
int cmd_guard(int argc, char **argv);   /* cli/guard.c */
int cmd_compare(int argc, char **argv); /* cli/compare.c */
int cmd_learn(int argc, char **argv);   /* cli/compare.c */
int cmd_analyze(int argc, char **argv); /* cli/analyze.c */
int cmd_table(int argc, char **argv);   /* cli/table.c */
int cmd_latents(int argc, char **argv); /* cli/latents.c */
int cmd_check(int argc, char **argv);   /* cli/check.c */
int cmd_plot(int argc, char **argv);    /* cli/plot.c */
int cmd_history(int argc, char **argv); /* cli/history.c */
int cmd_report(int argc, char **argv);  /* cli/report.c */

struct opt_cmd;
extern const struct opt_cmd opt_cmd_record, opt_cmd_guard, opt_cmd_compare, opt_cmd_learn,
	opt_cmd_analyze, opt_cmd_table, opt_cmd_latents, opt_cmd_check, opt_cmd_plot,
	opt_cmd_history, opt_cmd_report;

#endif
