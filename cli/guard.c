/* guard.c -- `stagebench guard`: options, usage, then the record engine with the guard on */
#include <stdio.h>
#include <stdlib.h>

#include "../common/util.h"
#include "../runner/guard.h"
#include "../runner/record/record.h"
#include "commands.h"
#include "opt.h"

static const char guard_usage[] =
	"usage: stagebench guard [GUARD OPTIONS] [-o TRACE] [-q|-v] -- COMMAND [ARG...]\n\n"
	"Run COMMAND only when the machine has room for it; stop its whole process\n"
	"tree when it runs the machine out of memory.\n\n";

static const struct opt_spec guard_cmd_opts[] = {
	OPT("output", 'o', 'o', "TRACE", OV_FILE, "also record a trace (.jsonl.zst)"),
	OPT_QUIET("only errors"),
	OPT_VERBOSE("log every poll decision"),
	OPT_HELP,
	OPT_GUARD("\nguard options:\n"),
	OPT_END,
};

const struct opt_cmd opt_cmd_guard = {
	.name = "guard", .usage = guard_usage, .opts = guard_cmd_opts, .column = 24,
	.after = "\nexit status: 3 the guard stopped the command, 4 never room to start,\n"
		 "127 the command could not start, 128+N signal N ended it, else the command's own.\n",
	.operands = OV_COMMAND,
};

int cmd_guard(int argc, char **argv)
{
	struct record_opts ro = RECORD_OPTS_INIT;
	struct guard_opts g = GUARD_OPTS_INIT;
	struct opt_parser p;
	int opt, rc;
	opt_begin(&p, &opt_cmd_guard, argc, argv, &g);
	while ((opt = opt_next(&p)) != -1) {
		switch (opt) {
		case 'o':
			ro.trace_path = p.arg;
			break;
		default: /* OPT_EXIT */
			guard_opts_release(&g);
			return p.rc;
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
