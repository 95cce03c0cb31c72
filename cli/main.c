/* main.c -- the stagebench entry point: a table of subcommands */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "../common/util.h"
#include "../common/version.h"
#include "commands.h"
#include "opt.h"


struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	const struct opt_cmd *opts; /* its option table (cli/opt.h) */
};

static const struct command commands[] = {
	{ "record", cmd_record, "record a memory trace of a command", &opt_cmd_record },
	{ "guard", cmd_guard, "run a command only while the machine has room for it", &opt_cmd_guard },
	{ "compare", cmd_compare, "run pipeline variants alternately, guarded and recorded", &opt_cmd_compare },
	{ "learn", cmd_learn, "learn a staging plan from one eager run", &opt_cmd_learn },
	{ "analyze", cmd_analyze, "per-run, per-stage memory figures from traces", &opt_cmd_analyze },
	{ "table", cmd_table, "the per-stage peak table, by mode", &opt_cmd_table },
	{ "latents", cmd_latents, "compare latent copies across runs", &opt_cmd_latents },
	{ "plot", cmd_plot, "draw memory charts with gnuplot", &opt_cmd_plot },
	{ "check", cmd_check, "flag regressions against a baseline run directory", &opt_cmd_check },
	{ "report", cmd_report, "report.html of a comparison, again or from traces", &opt_cmd_report },
	{ "history", cmd_history, "stages over commits: a table and charts", &opt_cmd_history },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: stagebench <command> [options]\n\n"
		   "Measure multi-stage pipelines' memory, eager against staged.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s  %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'stagebench <command> --help' describes a command.\n"
		   "exit codes: 0 ok, 1 finding, 2 usage, 3 failure "
		   "(record and guard: the command's own status).\n");
}

/* `stagebench --complete-spec` (not in --help): every command's options from
 * its table, one per line (cli/opt.h), which `make completions` writes into
 * completions/. A table opt_check() refuses makes it fail. */
static int complete_spec(void)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		char why[256];
		if (opt_check(commands[i].opts, why, sizeof(why))) {
			error("option table %s", why);
			return SB_EXIT_FAILURE;
		}
		printf("cmd %s %s\n", commands[i].name, commands[i].summary);
		opt_complete_spec(commands[i].opts, stdout);
	}
	return finish_stdout() ? SB_EXIT_FAILURE : SB_EXIT_OK;
}

int main(int argc, char **argv)
{
	/* A write to a closed pipe (stdout or stderr read by a `head`, a dead `tee`,
	 * a CI log reader gone) is an error we report and survive, never a death
	 * that would leave a guarded command running: SIGPIPE is ignored, writes
	 * fail with EPIPE. record_run() handles it while a command runs (a
	 * `kill -PIPE` stops the tree), and spawned commands get its default back. */
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2) {
		usage(stderr);
		return SB_EXIT_USAGE;
	}
	const char *name = argv[1];
	if (!strcmp(name, "-h") || !strcmp(name, "--help") || !strcmp(name, "help")) {
		usage(stdout);
		return finish_stdout() ? SB_EXIT_FAILURE : SB_EXIT_OK;
	}
	if (!strcmp(name, "--version") || !strcmp(name, "version")) {
		printf("stagebench %s (commit %s)\n", sb_version, sb_commit);
		return finish_stdout() ? SB_EXIT_FAILURE : SB_EXIT_OK;
	}
	if (!strcmp(name, "--complete-spec"))
		return complete_spec();
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(name, commands[i].name))
			continue;
		int rc = commands[i].fn(argc - 1, argv + 1);
		if (finish_stdout() && rc == SB_EXIT_OK)
			rc = SB_EXIT_FAILURE;
		return rc;
	}
	fprintf(stderr, "stagebench: unknown command '%s'\n\n", name);
	usage(stderr);
	return SB_EXIT_USAGE;
}
