/* guard.c -- `stagebench guard`: options, usage, then the record engine with the guard on */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "../common/util.h"
#include "../runner/guard.h"
#include "../runner/record.h"
#include "commands.h"
#include "opt.h"

static const char guard_usage[] =
	"usage: stagebench guard [GUARD OPTIONS] [-o TRACE] [-q|-v] -- COMMAND [ARG...]\n\n"
	"Run COMMAND only when the machine has room for it; stop its whole process\n"
	"tree when it runs the machine out of memory.\n\n"
	"  -o, --output TRACE    also record a trace (.jsonl.zst)\n"
	"  -q, --quiet           only errors\n"
	"  -v, --verbose         log every poll decision\n"
	"  -h, --help            this text\n\n";

static const char guard_exit_help[] =
	"\nexit status: 3 the guard stopped the command, 4 never room to start,\n"
	"127 the command could not start, 128+N signal N ended it, else the command's own.\n";

int cmd_guard(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		GUARD_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct record_opts ro = RECORD_OPTS_INIT;
	struct guard_opts g = GUARD_OPTS_INIT;
	int opt, rc;
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+o:qvh", longopts, NULL)) != -1) {
		switch (opt_guard("guard", &g, opt, optarg)) {
		case 1:
			continue;
		case -1:
			guard_opts_release(&g);
			return SB_EXIT_USAGE;
		}
		switch (opt) {
		case 'o':
			ro.trace_path = optarg;
			break;
		case 'q':
			sb_verbosity = 0;
			break;
		case 'v':
			sb_verbosity = 2;
			break;
		case 'h':
			fputs(guard_usage, stdout);
			fputs(opt_guard_help, stdout);
			fputs(guard_exit_help, stdout);
			guard_opts_release(&g);
			return SB_EXIT_OK;
		default:
			guard_opts_release(&g);
			return opt_refused("guard", opt, "+o:qvh", optopt, argv[optind - 1]);
		}
	}
	if (optind >= argc) {
		opt_usage_error("guard", "no command given (stagebench guard [OPTIONS] -- COMMAND)");
		guard_opts_release(&g);
		return SB_EXIT_USAGE;
	}
	ro.commit_dir = getenv("STAGEBENCH_COMMIT_DIR");
	ro.name = "guard";
	ro.guard = &g;
	ro.guarded = true;
	ro.status_line = false;
	struct record_result res = RECORD_RESULT_INIT;
	if (record_run(&ro, argv + optind, &res))
		rc = SB_EXIT_FAILURE;
	else
		rc = res.exit_code;
	record_result_release(&res);
	guard_opts_release(&g);
	return rc;
}
