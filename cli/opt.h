/* opt.h -- what every command shares on its command line: one usage-error format
 *
 * Every usage error of every command is one line on stderr,
 *   stagebench: error: MESSAGE (see 'stagebench CMD --help')
 * and exit status 2 (SB_EXIT_USAGE). MESSAGE is one of
 *   unknown option '--frob'            unknown option '-z'
 *   option '--baseline' needs a value
 *   option '--format': invalid value 'xml' (md or json)
 *   (or what a command says about its operands: "no trace given")
 *
 * Parsing with getopt_long: opterr = 0 and optind = 0 (a fresh scan), then in
 * the `default:` case
 *   return opt_refused("table", opt, SHORTOPTS, optopt, argv[optind - 1]);
 */
#ifndef SB_CLI_OPT_H
#define SB_CLI_OPT_H

#include "../common/util.h"
#include "../runner/guard.h"

/* The message for an option getopt_long refused in `stagebench CMD`: call it
 * from the `default:` case with getopt's return value, its optstring, optopt
 * and the argument at optind - 1. An unknown short or long option, or one
 * missing its value. Returns SB_EXIT_USAGE. */
int opt_refused(const char *cmd, int opt, const char *shortopts, int optopt_, const char *arg);

/* "stagebench: error: MESSAGE (see 'stagebench CMD --help')". Returns SB_EXIT_USAGE. */
int opt_usage_error(const char *cmd, const char *fmt, ...) SB_GNUC_PRINTF(2, 3);

/* option '--NAME': invalid WHAT 'ARG' -- a value the option does not take. */
int opt_bad_value(const char *cmd, const char *name, const char *arg, const char *what);

/* GUARD OPTIONS (runner/guard.h) for record, guard and compare: 1 when opt
 * was one (value stored), 0 when it is not, -1 after a usage error for a bad
 * value. */
int opt_guard(const char *cmd, struct guard_opts *g, int opt, const char *arg);

/* The GUARD OPTIONS lines of the --help texts. */
extern const char opt_guard_help[];

#endif
