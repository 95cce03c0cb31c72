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
 * A row may say where its value goes (git's OPT_STRING, OPT_BOOL): OPT_STRING_TO,
 * OPT_WORDS_TO and OPT_BOOL_TO name a field of the command's own struct, which the
 * command hands to opt_begin_to(); opt_next() stores the value there (the option's
 * text, or true) and goes on, so the row needs no id and the command no `case`. Such
 * a field is a `const char *` or a `bool`; another type does not compile. Options
 * whose value is checked or converted (a size, a count, a repeatable option) keep
 * their id and their case.
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
 *   struct table_args a = { .format = "md" };    (rows bound to its fields)
 *   opt_begin_to(&p, &opt_cmd_table, argc, argv, NULL, &a);
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
 *     getopt never sees (history's 'O' for --order); a long-only row bound to
 *     a field has none (opt_begin_to() gives getopt OPT_ID_BOUND + its
 *     place, so that a missing value is still named). opt_check()
 *     refuses two rows with one name, letter or id, and opt_begin() calls it,
 *     so a broken table fails on the first run of its command.
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
 * Adding an option: one row in the command's table, bound to a field of the
 * command's struct or with its case in the command's switch; then `make
 * completions` (the checked-in completions name it), and the man pages
 * follow --help.
 */
#ifndef SB_CLI_OPT_H
#define SB_CLI_OPT_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
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
	OA_STRING,  /* the value into the const char * at .offset of the bound struct */
	OA_TRUE,    /* true into the bool at .offset of the bound struct */
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
	size_t offset;         /* OA_STRING, OA_TRUE: the field's offset in the bound struct */
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
	{ .name = NAME, .short_name = SHORT, .id = ID, .arg = ARG, .help = HELP, .value = VALUE }
/* ... whose value is one of WORDS ("md csv json"). */
#define OPT_WORDS(NAME, SHORT, ID, ARG, WORDS, HELP) \
	{ .name = NAME, .short_name = SHORT, .id = ID, .arg = ARG, .help = HELP, \
	  .value = OV_WORDS, .words = WORDS }
/* ... that takes no value. */
#define OPT_FLAG(NAME, SHORT, ID, HELP) { .name = NAME, .short_name = SHORT, .id = ID, .help = HELP }
#define OPT_END { .name = NULL }
/* An operand described in the option list: "  VARIANT...  help". */
#define OPT_OPERAND(ARG, HELP) { .arg = ARG, .help = HELP }
#define OPT_QUIET(HELP) { .name = "quiet", .short_name = 'q', .id = 'q', .help = HELP, .act = OA_QUIET }
#define OPT_VERBOSE(HELP) \
	{ .name = "verbose", .short_name = 'v', .id = 'v', .help = HELP, .act = OA_VERBOSE }
#define OPT_HELP { .name = "help", .short_name = 'h', .id = 'h', .help = "this text", .act = OA_HELP }
/* --interval DUR: returned as OPT_ID_INTERVAL; opt_interval() reads the value. */
#define OPT_INTERVAL(HELP) \
	{ .name = "interval", .id = OPT_ID_INTERVAL, .arg = "DUR", .help = HELP }
/* The guard options (runner/guard.h) after a HEADING paragraph ("\n...:\n"). */
#define OPT_GUARD(HEADING) { .help = HEADING, .group = &opt_guard_group }

/* Rows bound to FIELD of the struct TYPE given to opt_begin_to() (above): a value
 * (OPT_STRING_TO; OPT_WORDS_TO when it is one of WORDS) stored as given into a
 * `const char *` field, a flag (OPT_BOOL_TO) setting a `bool` field. A field of
 * another type fails to compile: OPT_OFFSET has no case for it. */
#define OPT_OFFSET(TYPE, FIELD, CTYPE) _Generic(((TYPE *)0)->FIELD, CTYPE: offsetof(TYPE, FIELD))
#define OPT_STRING_TO(NAME, SHORT, ARG, VALUE, TYPE, FIELD, HELP) \
	{ .name = NAME, .short_name = SHORT, .id = SHORT, .arg = ARG, .help = HELP, .value = VALUE, \
	  .act = OA_STRING, .offset = OPT_OFFSET(TYPE, FIELD, const char *) }
#define OPT_WORDS_TO(NAME, SHORT, ARG, WORDS, TYPE, FIELD, HELP) \
	{ .name = NAME, .short_name = SHORT, .id = SHORT, .arg = ARG, .help = HELP, \
	  .value = OV_WORDS, .words = WORDS, .act = OA_STRING, \
	  .offset = OPT_OFFSET(TYPE, FIELD, const char *) }
#define OPT_BOOL_TO(NAME, SHORT, TYPE, FIELD, HELP) \
	{ .name = NAME, .short_name = SHORT, .id = SHORT, .help = HELP, .act = OA_TRUE, \
	  .offset = OPT_OFFSET(TYPE, FIELD, bool) }

enum {
	OPT_EXIT = -2,           /* opt_next(): --help printed or a usage error; exit p.rc */
	OPT_ID_INTERVAL = 0x4901,
	OPT_ID_BOUND = 0x10000,  /* + i: what getopt returns for the i-th option, bound and
				  * without an id; the commands' own ids stay below */
	OPT_MAX = 48,            /* options of one command, groups included */
};

extern const struct opt_group opt_guard_group;

struct opt_parser {
	const struct opt_cmd *cmd;
	struct guard_opts *guard; /* where OPT_GUARD's options go */
	void *bound;              /* the struct the bound rows' fields are in */
	int argc;
	char **argv;
	const char *arg; /* the value of the option opt_next() returned */
	int rc;          /* after OPT_EXIT: the exit status */
	struct option longopts[OPT_MAX + 1];
	const struct opt_spec *rows[OPT_MAX]; /* longopts[i]'s row */
	char shorts[2 * OPT_MAX + 2];
};

/* Start parsing argv (argv[0] the command's name) by cmd's table: a fresh
 * getopt scan. guard receives the guard options (needed when the table has
 * OPT_GUARD). A table opt_check() refuses is a BUG(). */
void opt_begin(struct opt_parser *p, const struct opt_cmd *cmd, int argc, char **argv,
	       struct guard_opts *guard);
/* ... and the struct that the table's bound rows (OPT_STRING_TO, OPT_BOOL_TO, ...)
 * store into: the TYPE their rows name. A table with such rows needs it (BUG()). */
void opt_begin_to(struct opt_parser *p, const struct opt_cmd *cmd, int argc, char **argv,
		  struct guard_opts *guard, void *bound);

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
