/* test_opt.c -- the option tables of cli/opt.c: getopt's arrays, parsing with
 * the shared rows, the --help layout, the table checks and the completion spec */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../cli/opt.h"
#include "testutil.h"

enum { ID_FORCE = 0x7001, ID_SIZE };

/* The struct of the tables with bound rows (below). */
struct bound_args {
	const char *out, *format;
	bool force, dry;
	int other; /* not bound */
};

static const struct opt_spec rows[] = {
	OPT_OPERAND("THING...", "things to do"),
	OPT("output", 'o', 'o', "FILE", OV_FILE, "where it goes"),
	OPT_WORDS("format", 'f', 'f', "FMT", "md csv", "md (default)\nor csv"),
	OPT_FLAG("force", 0, ID_FORCE, "replace it"),
	OPT("a-rather-long-name", 0, ID_SIZE, "SIZE", OV_TEXT, "pushed right"),
	OPT_INTERVAL("sample interval"),
	OPT_QUIET("quiet"),
	OPT_VERBOSE("loud"),
	OPT_HELP,
	OPT_GUARD("\nguard options:\n"),
	OPT_END,
};

static const struct opt_cmd cmd = {
	.name = "demo", .usage = "usage: stagebench demo [OPTIONS] THING...\n\n", .opts = rows,
	.column = 22, .after = "\nexit: 0 ok\n", .operands = OV_DIR,
};

/* What f (a function writing to a FILE) writes, as a string the caller frees. */
static char *written(void (*f)(const struct opt_cmd *, FILE *), const struct opt_cmd *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	cr_assert_not_null(m);
	f(c, m);
	fclose(m);
	return buf;
}

Test(opt, getopt_arrays_come_from_the_table)
{
	struct opt_parser p;
	struct guard_opts g = GUARD_OPTS_INIT;
	char *argv[] = { "demo", NULL };
	opt_begin(&p, &cmd, 1, argv, &g);
	cr_assert_str_eq(p.shorts, "+o:f:qvh");
	cr_assert_str_eq(p.longopts[0].name, "output");
	cr_assert_eq(p.longopts[0].has_arg, required_argument);
	cr_assert_eq(p.longopts[0].val, 'o');
	cr_assert_str_eq(p.longopts[2].name, "force");
	cr_assert_eq(p.longopts[2].has_arg, no_argument);
	cr_assert_eq(p.longopts[2].val, ID_FORCE);
	cr_assert_str_eq(p.longopts[8].name, "wait-free"); /* the guard group's first row */
	cr_assert_str_eq(p.longopts[18].name, "grace");
	cr_assert_null(p.longopts[19].name);
	guard_opts_release(&g);
}

Test(opt, parse_returns_the_commands_ids_and_handles_the_shared_rows)
{
	struct opt_parser p;
	struct guard_opts g = GUARD_OPTS_INIT;
	char *argv[] = { "demo", "-q", "--format", "csv", "-ox", "--force", "--wait-free", "55",
			 "--interval", "2ms", "thing", "--force", NULL };
	int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;
	int64_t ns = 0;
	sb_verbosity = 1;
	opt_begin(&p, &cmd, argc, argv, &g);
	cr_assert_eq(opt_next(&p), 'f');
	cr_assert_str_eq(p.arg, "csv");
	cr_assert_eq(sb_verbosity, 0, "-q is handled by the parser");
	cr_assert_eq(opt_next(&p), 'o');
	cr_assert_str_eq(p.arg, "x");
	cr_assert_eq(opt_next(&p), ID_FORCE);
	cr_assert_eq(opt_next(&p), OPT_ID_INTERVAL, "--wait-free went to the guard options");
	cr_assert_eq(opt_interval(cmd.name, p.arg, &ns), 0);
	cr_assert_eq(ns, 2000000);
	cr_assert_eq(opt_next(&p), -1, "the first operand ends the options");
	cr_assert_str_eq(argv[optind], "thing");
	cr_assert(g.given);
	cr_assert_float_eq(g.wait_free_pct, 55.0, 1e-9);
	guard_opts_release(&g);
	sb_verbosity = 1;
}

Test(opt, permuting_tables_take_options_after_operands)
{
	struct opt_cmd c = cmd;
	c.flags = OPT_PERMUTE;
	struct opt_parser p;
	struct guard_opts g = GUARD_OPTS_INIT;
	char *argv[] = { "demo", "thing", "--force", "-v", NULL };
	sb_verbosity = 1;
	opt_begin(&p, &c, 4, argv, &g);
	cr_assert_str_eq(p.shorts, "o:f:qvh");
	cr_assert_eq(opt_next(&p), ID_FORCE);
	cr_assert_eq(opt_next(&p), -1);
	cr_assert_eq(sb_verbosity, 2);
	cr_assert_str_eq(argv[optind], "thing");
	guard_opts_release(&g);
	sb_verbosity = 1;
}

/* argv's options end in OPT_EXIT with this status and this message on stderr. */
static void refused(const struct opt_cmd *c, char **argv, int argc, int rc, const char *msg)
{
	struct opt_parser p;
	struct guard_opts g = GUARD_OPTS_INIT;
	struct stderr_capture cap;
	int r;
	struct bound_args bound = { 0 };
	stderr_capture_begin(&cap);
	opt_begin_to(&p, c, argc, argv, &g, &bound);
	while ((r = opt_next(&p)) != -1 && r != OPT_EXIT)
		;
	char *err = stderr_capture_end(&cap);
	cr_assert_eq(r, OPT_EXIT, "%s: went on", argv[1]);
	cr_assert_eq(p.rc, rc);
	cr_assert(strstr(err, msg), "%s: '%s' lacks '%s'", argv[1], err, msg);
	free(err);
	guard_opts_release(&g);
}

Test(opt, usage_errors_and_help_end_the_parse)
{
	static const struct opt_spec near_rows[] = { OPT_FLAG("reps", 0, 1, "runs"), OPT_END };
	static const struct opt_cmd near = { .name = "other", .usage = "", .opts = near_rows };
	struct opt_cmd c = cmd;
	c.near = &near;
	refused(&c, (char *[]){ "demo", "--frob", NULL }, 2, 2, "unknown option '--frob'");
	refused(&c, (char *[]){ "demo", "-z", NULL }, 2, 2, "unknown option '-z'");
	refused(&c, (char *[]){ "demo", "--format", NULL }, 2, 2, "option '--format' needs a value");
	refused(&c, (char *[]){ "demo", "-o", NULL }, 2, 2, "option '-o' needs a value");
	refused(&c, (char *[]){ "demo", "--force=yes", NULL }, 2, 2, "option '--force' takes no value");
	refused(&c, (char *[]){ "demo", "--poll", "0", NULL }, 3, 2, "option '--poll': invalid");
	refused(&c, (char *[]){ "demo", "--reps=3", NULL }, 2, 2,
		"option '--reps' is one of 'stagebench other' (see 'stagebench demo --help')");
	struct stderr_capture cap;
	stderr_capture_begin(&cap);
	int bad = opt_interval("demo", "0.5ms", &(int64_t){ 0 });
	free(stderr_capture_end(&cap));
	cr_assert_eq(bad, SB_EXIT_USAGE);

	struct opt_parser p;
	struct guard_opts g = GUARD_OPTS_INIT;
	char *argv[] = { "demo", "--help", NULL };
	fflush(stdout);
	FILE *saved = stdout, *devnull = fopen("/dev/null", "w");
	stdout = devnull;
	opt_begin(&p, &cmd, 2, argv, &g);
	int r = opt_next(&p);
	stdout = saved;
	fclose(devnull);
	cr_assert_eq(r, OPT_EXIT);
	cr_assert_eq(p.rc, SB_EXIT_OK);
	guard_opts_release(&g);
}

Test(opt, help_lays_the_rows_out_at_the_column)
{
	char *help = written(opt_help, &cmd);
	const char *want =
		"usage: stagebench demo [OPTIONS] THING...\n"
		"\n"
		"  THING...            things to do\n"
		"  -o, --output FILE   where it goes\n"
		"  -f, --format FMT    md (default)\n"
		"                      or csv\n"
		"  --force             replace it\n"
		"  --a-rather-long-name SIZE  pushed right\n"
		"  --interval DUR      sample interval\n"
		"  -q, --quiet         quiet\n"
		"  -v, --verbose       loud\n"
		"  -h, --help          this text\n"
		"\n"
		"guard options:\n"
		"  --wait-free PCT       start only when this much memory is available (40)\n";
	cr_assert(!strncmp(help, want, strlen(want)), "got:\n%s", help);
	cr_assert(strstr(help, "  --max-device SIZE|PCT%  stop when the probe's device memory (MPS driver,\n"
			       "                        CUDA reserved) passes this"), "got:\n%s", help);
	size_t len = strlen(help);
	cr_assert(len > 12 && !strcmp(help + len - 12, "\nexit: 0 ok\n"));
	free(help);

	struct opt_cmd c = cmd;
	c.flags = OPT_INDENT_LONG;
	help = written(opt_help, &c);
	cr_assert(strstr(help, "\n      --force         replace it\n"), "got:\n%s", help);
	cr_assert(strstr(help, "\n  -o, --output FILE   where it goes\n"), "got:\n%s", help);
	free(help);
}

Test(opt, the_completion_spec_names_every_option_and_its_value)
{
	char *spec = written(opt_complete_spec, &cmd);
	const char *want = "opt demo -o --output file\n"
			   "opt demo -f --format words md csv\n"
			   "opt demo - --force flag\n"
			   "opt demo - --a-rather-long-name text\n"
			   "opt demo - --interval text\n"
			   "opt demo -q --quiet flag\n"
			   "opt demo -v --verbose flag\n"
			   "opt demo -h --help flag\n"
			   "opt demo - --wait-free text\n";
	cr_assert(!strncmp(spec, want, strlen(want)), "got:\n%s", spec);
	cr_assert(strstr(spec, "opt demo - --grace text\narg demo dir\n"), "got:\n%s", spec);
	free(spec);
}

/* opt_check() on rows (plus OPT_HELP and OPT_END): NULL, or the message containing want. */
static void check(const struct opt_spec *r, const char *want)
{
	struct opt_cmd c = { .name = "t", .usage = "", .opts = r };
	char buf[256];
	const char *why = opt_check(&c, buf, sizeof(buf));
	if (!want)
		cr_assert_null(why, "refused: %s", why);
	else
		cr_assert(why && strstr(why, want), "'%s' lacks '%s'", why ? why : "(accepted)", want);
}

Test(opt, check_refuses_tables_getopt_cannot_parse)
{
	check((const struct opt_spec[]){ OPT_FLAG("a", 0, 1, "x"), OPT_HELP, OPT_END }, NULL);
	check((const struct opt_spec[]){ OPT_FLAG("a", 0, 1, "x"), OPT_FLAG("a", 0, 2, "y"), OPT_END },
	      "--a and --a share");
	check((const struct opt_spec[]){ OPT_FLAG("a", 0, 1, "x"), OPT_FLAG("b", 0, 1, "y"), OPT_END },
	      "--a and --b share");
	check((const struct opt_spec[]){ OPT_FLAG("help", 0, 1, "x"), OPT_HELP, OPT_END },
	      "--help and --help share");
	check((const struct opt_spec[]){ OPT_FLAG("x", 'h', 'h', "x"), OPT_HELP, OPT_END },
	      "--x and --help share");
	check((const struct opt_spec[]){ OPT_FLAG("a", 'a', 'b', "x"), OPT_END }, "is not one getopt");
	check((const struct opt_spec[]){ OPT_FLAG("a", 0, '?', "x"), OPT_END }, "is not one getopt");
	check((const struct opt_spec[]){ OPT_FLAG("a", 0, 0, "x"), OPT_END }, "is not one getopt");
	check((const struct opt_spec[]){ OPT_WORDS("a", 0, 1, "W", "", "x"), OPT_END }, "no words");
	check((const struct opt_spec[]){ OPT_FLAG("a", 0, 1, NULL), OPT_END }, "no help text");
	check((const struct opt_spec[]){ OPT_FLAG("wait-free", 0, 1, "x"), OPT_GUARD(""), OPT_END },
	      "--wait-free and --wait-free share");
	struct opt_spec many[OPT_MAX + 2];
	char names[OPT_MAX + 1][8];
	for (int i = 0; i <= OPT_MAX; i++) {
		snprintf(names[i], sizeof(names[i]), "o%d", i);
		many[i] = (struct opt_spec)OPT_FLAG(names[i], 0, i + 1, "x");
	}
	many[OPT_MAX + 1] = (struct opt_spec)OPT_END;
	check(many, "more than");
}

/* Rows bound to a field: opt_next() stores the value and goes on, with no id for
 * a long-only row; the command's own rows still come back. */
static const struct opt_spec bound_rows[] = {
	OPT_STRING_TO("out", 'o', "DIR", OV_DIR, struct bound_args, out, "where"),
	OPT_WORDS_TO("format", 0, "FMT", "md csv", struct bound_args, format, "md or csv"),
	OPT_BOOL_TO("force", 0, struct bound_args, force, "replace"),
	OPT_BOOL_TO("dry-run", 'n', struct bound_args, dry, "nothing"),
	OPT("reps", 0, ID_SIZE, "N", OV_TEXT, "a value the command converts"),
	OPT_HELP,
	OPT_END,
};

static const struct opt_cmd bound_cmd = {
	.name = "bound", .usage = "usage: stagebench bound\n", .opts = bound_rows, .column = 16,
	.flags = OPT_PERMUTE,
};

Test(opt, bound_rows_store_their_value_and_need_no_case)
{
	struct opt_parser p;
	struct bound_args a = { .format = "md" };
	char *argv[] = { "bound", "--force", "x", "--format", "csv", "--reps", "3", "-o", "d1",
			 "-n", "--out=d2", NULL };
	int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;
	char why[128];
	cr_assert_null(opt_check(&bound_cmd, why, sizeof(why)), "%s", why);
	opt_begin_to(&p, &bound_cmd, argc, argv, NULL, &a);
	cr_assert_eq(opt_next(&p), ID_SIZE, "only the unbound row comes back");
	cr_assert_str_eq(p.arg, "3");
	cr_assert_str_eq(a.format, "csv");
	cr_assert(a.force);
	cr_assert_eq(opt_next(&p), -1);
	cr_assert_str_eq(a.out, "d2", "the last --out wins, as a case would");
	cr_assert(a.dry, "-n, a short letter, sets its field too");
	cr_assert_eq(a.other, 0);
	cr_assert_eq(optind, argc - 1);
	cr_assert_str_eq(argv[optind], "x");

	/* a default stays when the option is not given */
	struct bound_args b = { .format = "md" };
	opt_begin_to(&p, &bound_cmd, 1, (char *[]){ "bound", NULL }, NULL, &b);
	cr_assert_eq(opt_next(&p), -1);
	cr_assert_str_eq(b.format, "md");
	cr_assert(!b.force && !b.out);

	/* a bound long-only row missing its value is named, as any other */
	refused(&bound_cmd, (char *[]){ "bound", "--format", NULL }, 2, 2,
		"option '--format' needs a value");
	refused(&bound_cmd, (char *[]){ "bound", "--force=1", NULL }, 2, 2,
		"option '--force' takes no value");
}

Test(opt, bound_rows_in_the_help_and_the_completion_spec_as_any_row)
{
	char *help = written(opt_help, &bound_cmd);
	cr_assert(strstr(help, "  --format FMT  md or csv\n"), "%s", help);
	cr_assert(strstr(help, "  -n, --dry-run nothing\n") || strstr(help, "  -n, --dry-run  nothing\n"),
		  "%s", help);
	free(help);
	char *spec = written(opt_complete_spec, &bound_cmd);
	cr_assert(strstr(spec, "opt bound - --format words md csv\n"), "%s", spec);
	cr_assert(strstr(spec, "opt bound -n --dry-run flag\n"), "%s", spec);
	free(spec);
}

Test(opt, check_takes_a_bound_row_without_an_id_and_no_other)
{
	check((const struct opt_spec[]){ OPT_BOOL_TO("a", 0, struct bound_args, force, "x"),
					 OPT_BOOL_TO("b", 0, struct bound_args, dry, "y"), OPT_END },
	      NULL);
	check((const struct opt_spec[]){ OPT_FLAG("a", 0, OPT_ID_BOUND, "x"), OPT_END },
	      "is not one getopt");
}

Test(opt, a_table_with_bound_rows_and_no_struct_is_a_bug, .signal = SIGABRT)
{
	struct opt_parser p;
	struct stderr_capture cap;
	stderr_capture_begin(&cap);
	opt_begin(&p, &bound_cmd, 1, (char *[]){ "bound", NULL }, NULL);
}
