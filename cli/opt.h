/* opt.h -- every command's options, declared once in a table; one usage-error format
 *
 * THE TABLE (after git's parse-options). Each command declares its options once,
 * in a `struct opt_spec` array ending with OPT_END, held by its `struct opt_cmd`
 * (cli/NAME.c, declared in cli/commands.h). A row is an option (long name,
 * short letter, the name of its value or NULL for a flag, help text, how a
 * completion offers its value), an operand described in the option list
 * (name NULL, arg "VARIANT..."), or a group of rows shared by several
 * commands (OPT_GUARD: a heading paragraph, then the guard options). From the
 * table come
 *   - getopt_long's `struct option` array and short-option string (opt_begin),
 *   - the option list of --help: the hand-written text before it
 *     (opt_cmd.usage: synopsis and description), the rows laid out at the
 *     command's column, then opt_cmd.after (more text, exit status) -- the
 *     layout scripts/help2man.sh reads to make the man pages,
 *   - `stagebench --complete-spec` (cli/main.c), one line per command, option
 *     and operand kind, which `make completions` (scripts/completions.sh)
 *     writes into completions/stagebench.bash and completions/_stagebench.
 * tests/e2e/completion.sh checks that --help, the man page and both completions
 * name exactly the table's options, command by command.
 *
 * Rows every command shares are declared here once: OPT_QUIET, OPT_VERBOSE
 * (sb_verbosity), OPT_HELP (prints the --help text), OPT_INTERVAL (the value
 * checked by opt_interval()), OPT_GUARD (the guard options of runner/guard.h,
 * stored into the parser's guard_opts). opt_next() handles the quiet, verbose,
 * help and guard rows itself and returns the others' ids to the command's
 * switch.
 *
 * Parsing:
 *   struct opt_parser p;
 *   opt_begin(&p, &opt_cmd_table, argc, argv, NULL);   (or &guard_opts)
 *   while ((opt = opt_next(&p)) != -1) {
 *       switch (opt) {
 *       case OPT_EXIT: return p.rc;       (--help printed, or a usage error)
 *       case 'f': format = p.arg; break;
 *       }
 *   }
 *   operands: argv[optind] ... argv[argc - 1]
 *
 * Layout of a row in --help: two spaces, "-x, --name ARG" (or "--name ARG",
 * under the long names when the table sets OPT_INDENT_LONG), then the help
 * text from the command's column on (at least two spaces after the name: a
 * longer name pushes the first line right), its further lines ('\n' in the
 * help) at the column.
 *
 * Decisions:
 *   - The synopsis ("usage: ...") and the paragraphs around the option list
 *     stay hand-written: what goes together on a synopsis line, and what a
 *     command says about its operands, is prose. Only the option list (what
 *     must agree with the parser) is generated.
 *   - The layout keeps each command's column (--help texts came out byte for
 *     byte as before where the rows allowed it), so the man page generator,
 *     which reads --help, needs no change.
 *   - The completions hold the spec (checked in, rewritten by `make
 *     completions`) rather than asking the binary at each Tab: no process per
 *     key press, and the installed scripts work as files of their own. A test
 *     fails when they are out of step with the binary.
 *   - Ids: a row with a short letter returns the letter; other rows return a
 *     value from the command's own enum (0x4301..., 0x5201...) or a letter
 *     getopt never sees (table's 's' for --stages). opt_check() refuses two
 *     rows with one name, letter or id, and opt_begin() calls it, so a broken
 *     table fails on the first run of its command.
 *   - compare and learn share their code and refuse each other's options by
 *     name ("option '--force' is one of 'stagebench learn'") through .near.
 *
 * USAGE ERRORS. Every usage error of every command is one line on stderr,
 *   stagebench: error: MESSAGE (see 'stagebench CMD --help')
 * and exit status 2 (SB_EXIT_USAGE). MESSAGE is one of
 *   unknown option '--frob'            unknown option '-z'
 *   option '--baseline' needs a value
 *   option '--format': invalid value 'xml' (md or json)
 *   option '--force' is one of 'stagebench learn'
 *   (or what a command says about its operands: "no trace given")
 *
 * Adding an option: one row in the command's table and its case in the
 * command's switch; then `make completions` (the checked-in completions
 * name it), and the man pages follow --help.
 */
#ifndef SB_CLI_OPT_H
#define SB_CLI_OPT_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "../common/util.h"
#include "../runner/guard.h"

/* How a completion offers an option's value, or a command's operands. */
enum opt_value {
	OV_TEXT,     /* free text (a number, a size, a name): nothing offered */
	OV_FILE,     /* a file */
	OV_DIR,      /* a directory */
	OV_PIPELINE, /* a pipeline file (*.json) */
	OV_TRACE,    /* trace files (*.jsonl*) */
	OV_VARIANT,  /* a variant (mode) of the pipeline file on the line, else the demo's */
	OV_COMMAND,  /* a command and its files (record, guard) */
	OV_WORDS,    /* one of the words of opt_spec.words */
	OV_NONE,     /* nothing at all (a command without operands) */
};

/* What opt_next() does with a row itself. */
enum opt_act {
	OA_RETURN,  /* returns its id to the caller */
	OA_QUIET,   /* sb_verbosity = 0 */
	OA_VERBOSE, /* sb_verbosity = 2 */
	OA_HELP,    /* prints --help on stdout, OPT_EXIT with SB_EXIT_OK */
	OA_GUARD,   /* guard_parse_option() into the parser's guard_opts */
};

struct opt_group;

struct opt_spec {
	const char *name;      /* long name, without "--"; NULL: an operand or a group */
	int short_name;        /* 'o' for -o, or 0 */
	int id;                /* what opt_next() returns (the short letter when there is one) */
	const char *arg;       /* the value's name in --help ("DIR"); NULL: a flag */
	const char *help;      /* its lines, '\n' between them; a group's: its heading */
	enum opt_value value;  /* how a completion offers the value */
	const char *words;     /* OV_WORDS: the values, space-separated ("md csv json") */
	enum opt_act act;
	const struct opt_group *group; /* a group row: these rows, after the heading */
};

/* Rows several commands share, with their own help column. */
struct opt_group {
	const struct opt_spec *opts; /* ends with OPT_END */
	int column;
};

enum {
	OPT_PERMUTE = 1,     /* options may follow operands (else the first operand ends them) */
	OPT_INDENT_LONG = 2, /* "--name" of a long-only row under the "--name" of "-x, --name" */
};

struct opt_cmd {
	const char *name;           /* "table", for messages */
	const char *usage;          /* --help before the option list */
	const struct opt_spec *opts;
	int column;                 /* where the rows' help texts start */
	unsigned flags;             /* OPT_PERMUTE, OPT_INDENT_LONG */
	const char *after;          /* --help after the option list */
	enum opt_value operands;    /* how a completion offers the operands */
	const struct opt_cmd *near; /* a command sharing this one's code (compare, learn):
				       its options are refused by name */
};

/* An option --NAME (and -SHORT unless 0) that opt_next() returns as ID, with a
 * value named ARG, offered by a completion as VALUE (enum opt_value). */
#define OPT(NAME, SHORT, ID, ARG, VALUE, HELP) \
	{ NAME, SHORT, ID, ARG, HELP, VALUE, NULL, OA_RETURN, NULL }
/* ... whose value is one of WORDS ("md csv json"). */
#define OPT_WORDS(NAME, SHORT, ID, ARG, WORDS, HELP) \
	{ NAME, SHORT, ID, ARG, HELP, OV_WORDS, WORDS, OA_RETURN, NULL }
/* ... that takes no value. */
#define OPT_FLAG(NAME, SHORT, ID, HELP) { NAME, SHORT, ID, NULL, HELP, OV_TEXT, NULL, OA_RETURN, NULL }
#define OPT_END { NULL, 0, 0, NULL, NULL, OV_TEXT, NULL, OA_RETURN, NULL }
/* An operand described in the option list: "  VARIANT...  help". */
#define OPT_OPERAND(ARG, HELP) { NULL, 0, 0, ARG, HELP, OV_TEXT, NULL, OA_RETURN, NULL }
#define OPT_QUIET(HELP) { "quiet", 'q', 'q', NULL, HELP, OV_TEXT, NULL, OA_QUIET, NULL }
#define OPT_VERBOSE(HELP) { "verbose", 'v', 'v', NULL, HELP, OV_TEXT, NULL, OA_VERBOSE, NULL }
#define OPT_HELP { "help", 'h', 'h', NULL, "this text", OV_TEXT, NULL, OA_HELP, NULL }
/* --interval DUR: returned as OPT_ID_INTERVAL; opt_interval() reads the value. */
#define OPT_INTERVAL(HELP) { "interval", 0, OPT_ID_INTERVAL, "DUR", HELP, OV_TEXT, NULL, OA_RETURN, NULL }
/* The guard options (runner/guard.h) after a HEADING paragraph ("\n...:\n"). */
#define OPT_GUARD(HEADING) { NULL, 0, 0, NULL, HEADING, OV_TEXT, NULL, OA_RETURN, &opt_guard_group }

enum {
	OPT_EXIT = -2,           /* opt_next(): --help printed or a usage error; exit p.rc */
	OPT_ID_INTERVAL = 0x4901,
	OPT_MAX = 48,            /* options of one command, groups included */
};

extern const struct opt_group opt_guard_group;

struct opt_parser {
	const struct opt_cmd *cmd;
	struct guard_opts *guard; /* where OPT_GUARD's options go */
	int argc;
	char **argv;
	const char *arg; /* the value of the option opt_next() returned */
	int rc;          /* after OPT_EXIT: the exit status */
	struct option longopts[OPT_MAX + 1];
	char shorts[2 * OPT_MAX + 2];
};

/* Start parsing argv (argv[0] the command's name) by cmd's table: a fresh
 * getopt scan. guard receives the guard options (needed when the table has
 * OPT_GUARD). A table opt_check() refuses is a BUG(). */
void opt_begin(struct opt_parser *p, const struct opt_cmd *cmd, int argc, char **argv,
	       struct guard_opts *guard);

/* The next option's id (its value in p->arg), -1 after the last one (the
 * operands start at optind), or OPT_EXIT after --help or a usage error, the
 * exit status in p->rc. */
int opt_next(struct opt_parser *p);

/* --interval's value ARG of `stagebench CMD`: 1ms or more into *ns. 0, or
 * SB_EXIT_USAGE after the error. */
int opt_interval(const char *cmd, const char *arg, int64_t *ns);

/* The whole --help text of cmd. */
void opt_help(const struct opt_cmd *cmd, FILE *f);

/* What is wrong with cmd's table (a long name, short letter or id twice, an
 * id getopt cannot return, more than OPT_MAX options, an OV_WORDS row
 * without words), or NULL. */
const char *opt_check(const struct opt_cmd *cmd, char *buf, size_t size);

/* cmd's lines of `stagebench --complete-spec` (cli/main.c adds "cmd NAME SUMMARY"):
 *   opt NAME SHORT|- --LONG KIND [WORD...]    KIND: flag, text, file, dir,
 *                                             pipeline, trace, variant, words
 *   arg NAME KIND                             the operands */
void opt_complete_spec(const struct opt_cmd *cmd, FILE *f);

/* The message for an option getopt_long refused in `stagebench CMD`, with
 * getopt's return value, its optstring, optopt and the argument at
 * optind - 1: an unknown short or long option, or one missing its value.
 * Returns SB_EXIT_USAGE. */
int opt_refused(const char *cmd, int opt, const char *shortopts, int optopt_, const char *arg);

/* "stagebench: error: MESSAGE (see 'stagebench CMD --help')". Returns SB_EXIT_USAGE. */
int opt_usage_error(const char *cmd, const char *fmt, ...) SB_GNUC_PRINTF(2, 3);

/* option '--NAME': invalid WHAT 'ARG' -- a value the option does not take. */
int opt_bad_value(const char *cmd, const char *name, const char *arg, const char *what);

#endif
