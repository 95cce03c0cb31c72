/* compare.c -- `stagebench compare`: options, usage, then the compare engine (runner/compare/compare.h) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../analyze/analysis.h"
#include "../common/parse.h"
#include "../common/path.h"
#include "../common/util.h"
#include "../platform/platform.h"
#include "../plots/plot.h"
#include "../runner/compare/compare.h"
#include "../runner/git.h"
#include "../runner/guard.h"
#include "../runner/record/record.h"
#include "../runner/pipeline.h"
#include "../traces/runs.h"
#include "../traces/trace.h"
#include "commands.h"
#include "opt.h"

static const char compare_usage[] =
	"usage: stagebench compare [VARIANT...] [--pipeline FILE] [--seed N] [--reps N] [--out DIR]\n"
	"                          [--set KEY=VALUE]... [--size S] [--cache DIR] [--interval DUR]\n"
	"                          [--warmup N] [--cache-state warm|cold|as-is] [--no-prime]\n"
	"                          [--no-peak-reset] [--no-rng-replay] [--by-commit]\n"
	"                          [--plan | --task K | --merge] [GUARD OPTIONS] [-q|-v]\n"
	"                          [--prepare CMD] [--files PATH]... [--adapter FILE]\n"
	"                          [-- COMMAND [ARG...]]\n"
	"\n"
	"Run a pipeline's variants alternately (E S E S ...), each run its own guarded,\n"
	"recorded process with the Python probe on PYTHONPATH (staged loading, stage\n"
	"events, latent copies), then print the per-stage peak table, the latent\n"
	"comparison and the run summary.\n"
	"\n";

static const char compare_after[] =
	"\n"
	"In DIR, per run V-N (variant V, repetition N): V-N.trace.jsonl.zst (the trace;\n"
	"its start record holds mode V, labels seed, pipeline and rep, and the commit\n"
	"of the pipeline's git checkout with whether it was dirty), V-N.latents/ (the\n"
	"latent copies), V-N/ (the pipeline's own outputs, {out}), V-N.log (the\n"
	"command's stdout), V-N.err (its stderr, written as it comes and shown on\n"
	"stderr too); then runs.json (how each run ended; rewritten after every\n"
	"run), table.md, latents.md, the charts memory.png and stages.png (and .svg;\n"
	"skipped with a warning when gnuplot is missing), and report.html, one\n"
	"self-contained page of it all, whose path is printed last (stagebench report\n"
	"writes it again). Progress lines go to stderr. A run\n"
	"whose command failed on its own is listed under \"Failed runs\" before the\n"
	"latents: the stage it died in, the error it printed last, its V-N.err.\n"
	"\n"
	"Placeholders in the pipeline file: {python} ($STAGEBENCH_PYTHON, else\n"
	"/usr/bin/python3, else python3), {pipeline_dir}, {seed}, {out}, {run}, {mode}\n"
	"(the variant), {cache}, and the keys of \"defaults\". The environment of each\n"
	"run: PYTHONPATH = PROBE/site:PROBE:the pipeline's \"pythonpath\":$PYTHONPATH,\n"
	"STAGEBENCH_ADAPTER (\"adapter\"), the pipeline's \"env\" and the variant's \"env\".\n"
	"Each trace's start record names the commit of $STAGEBENCH_COMMIT_DIR, else of\n"
	"the pipeline file's directory. Every key and placeholder of a pipeline file,\n"
	"and where relative paths resolve: pipelines/README.md.\n"
	"\n"
	"SIGINT or SIGTERM at any moment: the current run's whole tree is stopped\n"
	"(TERM, then KILL after --grace), no other run starts, and runs.json, table.md,\n"
	"latents.md and the charts are written for the runs done; exit 128+N.\n"
	"Variant names name files: [A-Za-z0-9._-], up to 64, not starting with '.'.\n"
	"A pipeline file with no \"adapter\" is staged by a plan learned first from one\n"
	"eager run: DIR/plan.py (the run in DIR/learn/), used as every run's adapter\n"
	"('stagebench learn' writes one to keep; --task needs a kept one).\n"
	"Before the runs, the pipeline file's \"prepare\" command (if any) runs once,\n"
	"unrecorded, its stdout in DIR/prepare.log, its stderr in DIR/prepare.err:\n"
	"checkpoints and other files are built there, never inside a measured run;\n"
	"when it fails nothing else runs (exit 3). After the runs, a run much slower\n"
	"than the others of its variant (1.5 times their median and 1 s more) is named\n"
	"with what may be why.\n"
	"\n"
	"With no pipeline file, the command after -- is the pipeline: 'compare eager\n"
	"staged -- python3 app.py ARGS...' runs it as variants eager and staged\n"
	"(STAGEBENCH_STAGED=1 and STAGEBENCH_RNG_REPLAY=1), staged by a plan learned\n"
	"first from one eager run; the arguments may name {seed} (--seed), {out},\n"
	"{cache}, {run}, {mode} and {python}, any other brace is literal; the output and\n"
	"cache directories are named by the script (its file's stem); --prepare CMD (a\n"
	"shell command, run once first), --files PATH (repeatable: what it reads, for\n"
	"--cache-state) and --adapter FILE (a kept plan) say what a pipeline file's\n"
	"\"prepare\", \"files\" and \"adapter\" would. A kept plan matches the script by\n"
	"what it does, not by its path: renamed or moved, it is the same script.\n"
	"A model a staged run could not stage (used before its stage began, or one the\n"
	"plan leaves as the script makes it) and a plan that does not match the script\n"
	"(the run then goes on as written) are said under the table; -v names the call\n"
	"that forced a model to stay resident.\n"
	"\n"
	"exit: 0 every run completed and the latents agree within noise (a run the\n"
	"guard stopped is a result: the table says so), 1 a finding: a latent differs\n"
	"beyond noise (or is missing from a run that got to its end, changed shape or\n"
	"dtype, has a corrupt copy) or a run's command failed on its own (exit status\n"
	"or signal; its log is named),\n"
	"2 usage (an unknown variant lists those available), 3 a failure to run\n"
	"(pipeline file unreadable, recorder failure, a command that could not start,\n"
	"unreadable results), 128+N when interrupted by signal N.\n";

static const char learn_usage[] =
	"usage: stagebench learn [VARIANT] [--pipeline FILE] [-o FILE] [--force] [--seed N]\n"
	"                        [--out DIR] [--set KEY=VALUE]... [--size S] [--cache DIR]\n"
	"                        [--interval DUR] [GUARD OPTIONS] [-q|-v]\n"
	"                        [--prepare CMD] [--files PATH]... [-- COMMAND [ARG...]]\n"
	"\n"
	"Learn a staging plan from one eager run and write it as an adapter file to\n"
	"review, edit and keep: the models the script makes (where, with what call), the\n"
	"stages (the runs of uses of the same models, named by the function that runs\n"
	"them, else by the model) and which models each stage needs. Name the file as\n"
	"the pipeline file's \"adapter\" and every run uses it; 'compare' on a pipeline\n"
	"file with no adapter learns one itself the same way (OUT/plan.py).\n"
	"\n";

static const char learn_after[] =
	"\n"
	"The pipeline's \"prepare\" runs first. With no pipeline file, the command after\n"
	"-- is the pipeline, as for 'stagebench compare' (see its --help). What a plan\n"
	"holds, every key, and how a staged run uses it: probe/README.md (\"Staging\n"
	"without an adapter\").\n"
	"\n"
	"exit: 0 the plan was written, 2 usage (FILE exists without --force), 3 the\n"
	"learning run failed or wrote no plan, 128+N when interrupted by signal N.\n";

/* The command line, parsed. */
struct args {
	struct guard_opts g;
	const char *pipeline, *out, *cache, *seed;
	const char **sets;      /* --set and --size, as KEY=VALUE (owned) */
	size_t nsets, sets_alloc;
	int reps;
	int warmup;
	enum cache_state cache_state;
	bool cache_state_given;
	bool no_peak_reset;
	bool no_prime;
	bool no_rng_replay;     /* --no-rng-replay: STAGEBENCH_RNG_REPLAY=0 in every variant */
	int64_t interval_ns;
	bool by_commit;
	enum compare_part part;
	size_t task;
	int first_variant;      /* argv index of the first VARIANT */
	bool learning;          /* stagebench learn */
	const char *output;     /* learn: the plan file */
	bool force;             /* learn: replace it */
	const char *cmd;        /* "compare" or "learn", for messages */
	char **command;         /* the command after --, as the pipeline; NULL: none */
	int last_arg;           /* argv index of "--" (argc without one) */
	const char *prepare;    /* --prepare */
	const char *adapter;    /* --adapter */
	const char **files;     /* --files, NULL-terminated (owned array) */
	size_t nfiles;
};

enum {
	OPT_SEED = 0x4301,
	OPT_REPS,
	OPT_SET,
	OPT_SIZE,
	OPT_PLAN,
	OPT_TASK,
	OPT_MERGE,
	OPT_WARMUP,
	OPT_CACHE_STATE,
	OPT_PREPARE,
	OPT_FILES,
	OPT_ADAPTER,
};

/* Rows whose value goes straight into a field of struct args. */
#define ARGS_STRING(NAME, SHORT, ARG, VALUE, FIELD, HELP) \
	OPT_STRING_TO(NAME, SHORT, ARG, VALUE, struct args, FIELD, HELP)
#define ARGS_BOOL(NAME, FIELD, HELP) OPT_BOOL_TO(NAME, 0, struct args, FIELD, HELP)

/* The rows compare and learn share. */
#define ROW_SEED OPT("seed", 0, OPT_SEED, "N", OV_TEXT, "the {seed} placeholder (default 7)")
#define ROW_SET                                                          \
	OPT("set", 0, OPT_SET, "KEY=VALUE", OV_TEXT,                     \
	    "override a placeholder of the pipeline's \"defaults\"\n"    \
	    "(repeatable)")
#define ROW_SIZE                                                         \
	OPT_WORDS("size", 0, OPT_SIZE, "S", "tiny small default large",  \
		  "--set size=S (pipelines with a size default: the demo\n" \
		  "has tiny, small, default, large)")
#define ROW_CACHE                                                        \
	ARGS_STRING("cache", 0, "DIR", OV_DIR, cache,                    \
		    "the {cache} placeholder (default\n"                 \
		    "$XDG_CACHE_HOME/stagebench/PIPELINE, else\n"        \
		    "~/.cache/stagebench/PIPELINE)")
#define ROW_INTERVAL OPT_INTERVAL("sample interval (default 100ms)")
#define ROW_PREPARE                                                      \
	OPT("prepare", 0, OPT_PREPARE, "CMD", OV_TEXT,                   \
	    "with -- COMMAND: a shell command run once before the\n"     \
	    "runs, unrecorded (a pipeline file's \"prepare\")")
#define ROW_FILES                                                        \
	OPT("files", 0, OPT_FILES, "PATH", OV_FILE,                      \
	    "with -- COMMAND: a file or directory it reads, for\n"      \
	    "--cache-state (a pipeline file's \"files\"; repeatable)")

static const struct opt_spec compare_rows[] = {
	OPT_OPERAND("VARIANT...", "variants of the pipeline file, in this order (default:\n"
				  "eager staged when the file has both, else all of them)"),
	ARGS_STRING("pipeline", 0, "FILE", OV_PIPELINE, pipeline,
		    "pipeline file (JSON; default: the bundled demo,\n"
		    "$STAGEBENCH_HOME/demo/pipeline.json or demo/ beside the\n"
		    "installed binary)"),
	ROW_SEED,
	OPT("reps", 0, OPT_REPS, "N", OV_TEXT, "runs per variant (default 2)"),
	ARGS_STRING("out", 0, "DIR", OV_DIR, out,
		    "output directory (default runs/DATE-PIPELINE/, with -2,\n"
		    "-3 ... added when it exists)"),
	ARGS_BOOL("by-commit", by_commit,
		  "default output directory runs/DATE-PIPELINE-COMMIT[-dirty]/,\n"
		  "COMMIT being the short commit of the git checkout that\n"
		  "holds the pipeline file (-dirty: uncommitted changes)"),
	ROW_SET,
	ROW_SIZE,
	ROW_CACHE,
	ROW_INTERVAL,
	ROW_PREPARE,
	ROW_FILES,
	OPT("adapter", 0, OPT_ADAPTER, "FILE", OV_FILE,
	    "with -- COMMAND: the adapter every run uses, a plan\n"
	    "kept from 'stagebench learn' (default: learn one first)"),
	OPT("warmup", 0, OPT_WARMUP, "N", OV_TEXT,
	    "N runs of each variant first, recorded apart in\n"
	    "DIR/warmup/ and left out of runs.json, the tables and the\n"
	    "checks (default 0)"),
	OPT_WORDS("cache-state", 0, OPT_CACHE_STATE, "S", "warm cold as-is",
		  "the page cache of the files the pipeline file declares\n"
		  "(\"files\") before each run: warm (read once), cold\n"
		  "(evicted with posix_fadvise; no root needed) or as-is;\n"
		  "default warm when the pipeline declares files, else\n"
		  "as-is; each trace's start record says which"),
	ARGS_BOOL("no-prime", no_prime,
		  "no memory primed before each run (by default as much\n"
		  "fresh memory as the variant's runs used at most, the\n"
		  "declared files' size for its first, is written and\n"
		  "freed just before it starts: a virtual machine that took\n"
		  "freed memory back would make the first run alone pay\n"
		  "for touching it again)"),
	ARGS_BOOL("no-rng-replay", no_rng_replay,
		  "no RNG replay in any variant (STAGEBENCH_RNG_REPLAY=0):\n"
		  "a deferred model is made once, in its stage, even where\n"
		  "making it draws random numbers (the draws after it then\n"
		  "differ from eager's, and so may the latents)"),
	ARGS_BOOL("no-peak-reset", no_peak_reset,
		  "no kernel high-water-mark resets (see 'record --help')"),
	OPT_FLAG("plan", 0, OPT_PLAN,
		 "print the runs (K, V-N, V, N; tab-separated, K 0-based in\n"
		 "run order) and run nothing: one task per line for a job\n"
		 "array (scripts/slurm-compare, docs/slurm.md); with --out\n"
		 "DIR it starts the campaign: DIR/plan.json, a fresh id\n"
		 "(refused when DIR holds a campaign or results already)"),
	OPT("task", 0, OPT_TASK, "K", OV_TEXT,
	    "run only run K of the plan into --out (shared by every\n"
	    "task, holding the campaign's plan.json); its entry goes\n"
	    "to DIR/runs.d/V-N.json; --warmup warms up its own variant\n"
	    "in DIR/warmup/task-K/; no report"),
	OPT_FLAG("merge", 0, OPT_MERGE,
		 "run nothing: gather every planned run of --out into\n"
		 "runs.json and report as a whole compare does; a run with\n"
		 "a trace but no runs.d entry is \"running\" (its task still\n"
		 "records) or \"lost\" (killed by its engine), one without\n"
		 "a trace is missing; a runs.d entry of another campaign,\n"
		 "malformed or not what its name says is left out: all are\n"
		 "named, and make the exit 1"),
	OPT_QUIET("no progress lines"),
	OPT_VERBOSE("more progress messages"),
	OPT_HELP,
	OPT_GUARD("\n"
		  "GUARD OPTIONS apply to every run; each run is guarded (admission and stop\n"
		  "checks) with the defaults below when none is given:\n"
		  "guard options:\n"),
	OPT_END,
};

static const struct opt_spec learn_rows[] = {
	OPT_OPERAND("VARIANT", "the variant to learn from (default: the first that does\n"
			       "not set STAGEBENCH_STAGED)"),
	ARGS_STRING("pipeline", 0, "FILE", OV_PIPELINE, pipeline,
		    "pipeline file (default: the bundled demo)"),
	ARGS_STRING("output", 'o', "FILE", OV_FILE, output, "the plan file to write (default plan.py)"),
	ARGS_BOOL("force", force, "replace FILE when it exists (it may hold your edits)"),
	ARGS_STRING("out", 0, "DIR", OV_DIR, out,
		    "the learning run's trace and logs (default\n"
		    "runs/DATE-PIPELINE-learn/)"),
	ROW_SEED,
	ROW_SET,
	ROW_SIZE,
	ROW_CACHE,
	ROW_INTERVAL,
	ROW_PREPARE,
	ROW_FILES,
	OPT_QUIET("no progress lines"),
	OPT_VERBOSE("more progress messages"),
	OPT_HELP,
	OPT_GUARD("\n"
		  "GUARD OPTIONS guard the run as in 'stagebench compare':\n"
		  "guard options:\n"),
	OPT_END,
};

const struct opt_cmd opt_cmd_compare = {
	.name = "compare", .usage = compare_usage, .opts = compare_rows, .column = 22,
	.flags = OPT_PERMUTE, .after = compare_after, .operands = OV_VARIANT,
	.near = &opt_cmd_learn,
};

const struct opt_cmd opt_cmd_learn = {
	.name = "learn", .usage = learn_usage, .opts = learn_rows, .column = 22,
	.flags = OPT_PERMUTE, .after = learn_after, .operands = OV_VARIANT,
	.near = &opt_cmd_compare,
};


static void args_release(struct args *a)
{
	for (size_t i = 0; i < a->nsets; i++)
		free((char *)a->sets[i]);
	free(a->sets);
	free(a->files);
	guard_opts_release(&a->g);
}

/* One option that is not a guard option. Returns -1 to go on, else the exit status. */
static int parse_one(struct args *a, int opt, const char *arg)
{
	int64_t seed_num;
	switch (opt) {
	case OPT_SEED:
		if (parse_i64(arg, &seed_num))
			return opt_bad_value(a->cmd, "seed", arg, "integer");
		a->seed = arg;
		break;
	case OPT_REPS:
		if (parse_int(arg, &a->reps) || a->reps < 1)
			return opt_usage_error(a->cmd, "option '--reps': invalid count '%s' (1 or more)",
					       arg);
		break;
	case OPT_WARMUP:
		if (parse_int(arg, &a->warmup) || a->warmup < 0)
			return opt_usage_error(a->cmd, "option '--warmup': invalid count '%s' (0 or more)",
					       arg);
		break;
	case OPT_CACHE_STATE:
		a->cache_state_given = true;
		if (cache_state_parse(arg, &a->cache_state))
			return opt_usage_error(a->cmd, "option '--cache-state': '%s' is not warm, "
					       "cold or as-is", arg);
		break;
	case OPT_SET:
	case OPT_SIZE:
		ALLOC_GROW(a->sets, a->nsets + 1, a->sets_alloc);
		a->sets[a->nsets++] = opt == OPT_SIZE ? xasprintf("size=%s", arg) : xstrdup(arg);
		break;
	case OPT_ID_INTERVAL:
		if (opt_interval(a->cmd, arg, &a->interval_ns))
			return SB_EXIT_USAGE;
		break;
	case OPT_PLAN:
	case OPT_TASK:
	case OPT_MERGE: {
		enum compare_part part = opt == OPT_PLAN ? COMPARE_PLAN
					 : opt == OPT_TASK ? COMPARE_TASK : COMPARE_MERGE;
		if (a->part != COMPARE_ALL && a->part != part)
			return opt_usage_error(a->cmd, "--plan, --task and --merge exclude each other");
		a->part = part;
		int64_t k;
		if (opt == OPT_TASK) {
			if (parse_i64(arg, &k) || k < 0)
				return opt_bad_value(a->cmd, "task", arg, "task number (0 or more)");
			a->task = (size_t)k;
		}
		break;
	}
	case OPT_PREPARE:
		a->prepare = arg;
		break;
	case OPT_ADAPTER:
		a->adapter = arg;
		break;
	case OPT_FILES:
		a->files = xrealloc(a->files, (a->nfiles + 2) * sizeof(*a->files));
		a->files[a->nfiles++] = arg;
		a->files[a->nfiles] = NULL;
		break;
	default: /* OPT_EXIT */
		return SB_EXIT_USAGE;
	}
	return -1;
}

/* Returns -1 to go on, else the exit status. The command after "--" (argv[argc] on,
 * when argv[argc - 1] was "--") is the pipeline. */
static int parse_args(int argc, char **argv, struct args *a)
{
	struct opt_parser p;
	int opt;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--"))
			continue;
		if (i + 1 == argc)
			return opt_usage_error(a->cmd, "no COMMAND after --");
		a->command = argv + i + 1;
		argc = i;
		break;
	}
	opt_begin_to(&p, a->learning ? &opt_cmd_learn : &opt_cmd_compare, argc, argv, &a->g, a);
	while ((opt = opt_next(&p)) != -1) {
		if (opt == OPT_EXIT)
			return p.rc;
		int rc = parse_one(a, opt, p.arg);
		if (rc >= 0)
			return rc;
	}
	a->first_variant = optind;
	a->last_arg = argc;
	if ((a->prepare || a->files || a->adapter) && !a->command)
		return opt_usage_error(a->cmd, "--prepare, --files and --adapter go with -- COMMAND (a "
				       "pipeline file says them as \"prepare\", \"files\" and "
				       "\"adapter\")");
	if (a->adapter && access(a->adapter, R_OK))
		return opt_usage_error(a->cmd, "--adapter '%s': %s", a->adapter, strerror(errno));
	if (a->command && a->pipeline)
		return opt_usage_error(a->cmd, "--pipeline FILE and -- COMMAND exclude each other: "
				       "the command is the pipeline");
	if (a->learning && argc - optind > 1)
		return opt_usage_error("learn", "one VARIANT at most (got %d)", argc - optind);
	return -1;
}

/* What the command found: the pipeline, the probe, the variants, the directories. */
struct found {
	char *exe, *pipeline_path, *probe_dir, *out, *cache, *commit_dir;
	struct pipeline p;
	bool have_pipeline;
	const struct pipeline_variant **variants;
	size_t nvariants;
	struct kv_list sets;
};

static void found_release(struct found *f)
{
	free(f->exe);
	free(f->pipeline_path);
	free(f->probe_dir);
	free(f->out);
	free(f->cache);
	free(f->commit_dir);
	free(f->variants);
	kv_release(&f->sets);
	if (f->have_pipeline)
		pipeline_release(&f->p);
}

/* The pipeline file (given, or the bundled demo), the probe and the
 * pipeline read. Returns -1 to go on, else the exit status. */
static int find_pipeline(const struct args *a, struct found *f)
{
	f->exe = pl_self_exe();
	const char *home = getenv("STAGEBENCH_HOME");
	const char *exe = f->exe ? f->exe : "(binary)";
	if (a->command) {
		f->pipeline_path = xstrdup("the command after --");
	} else if (a->pipeline) {
		f->pipeline_path = xstrdup(a->pipeline);
	} else if (!(f->pipeline_path = compare_find_share(home, f->exe, "demo/pipeline.json"))) {
		error("cannot find the bundled demo pipeline (demo/pipeline.json) in "
		      "$STAGEBENCH_HOME, %s/../demo or %s/../share/stagebench/demo: set "
		      "STAGEBENCH_HOME to the stagebench tree or give --pipeline FILE", exe, exe);
		return SB_EXIT_FAILURE;
	}
	f->probe_dir = compare_find_share(home, f->exe, "probe");
	if (!f->probe_dir || !path_is_dir(f->probe_dir)) {
		error("cannot find the Python probe (probe/) in $STAGEBENCH_HOME, %s/../probe or "
		      "%s/../share/stagebench/probe: set STAGEBENCH_HOME to the stagebench tree",
		      exe, exe);
		return SB_EXIT_FAILURE;
	}
	if (a->command) {
		pipeline_from_command(a->command, a->prepare, (char *const *)a->files, &f->p);
		if (a->adapter) /* absolute: the runs' directory is not this one */
			f->p.adapter = path_absolute(a->adapter);
	}
	else if (pipeline_read(f->pipeline_path, &f->p) < 0)
		return SB_EXIT_FAILURE;
	for (size_t i = 0; a->no_rng_replay && i < f->p.nvariants; i++)
		kv_set(&f->p.variants[i].env, "STAGEBENCH_RNG_REPLAY", "0");
	f->have_pipeline = true;
	return -1;
}

/* The variants named (each once), else eager and staged, else all. Returns
 * -1 to go on, else the exit status. */
static int pick_variants(const char *cmd, int argc, char **argv, int first, struct found *f)
{
	const struct pipeline *p = &f->p;
	f->variants = xcalloc((size_t)(argc - first) + p->nvariants + 1, sizeof(*f->variants));
	for (int i = first; i < argc; i++) {
		const struct pipeline_variant *v = pipeline_variant(p, argv[i]);
		bool dup = false;
		for (size_t j = 0; v && j < f->nvariants; j++)
			dup |= f->variants[j] == v;
		if (dup)
			return opt_usage_error(cmd, "variant '%s' given twice", argv[i]);
		if (!v) {
			struct strbuf have = STRBUF_INIT;
			for (size_t j = 0; j < p->nvariants; j++)
				strbuf_addf(&have, "%s%s", j ? ", " : "", p->variants[j].name);
			opt_usage_error(cmd, "unknown variant '%s': %s has %s", argv[i], p->path,
					have.buf ? have.buf : "none");
			strbuf_release(&have);
			return SB_EXIT_USAGE;
		}
		f->variants[f->nvariants++] = v;
	}
	if (first < argc) {
		/* as given */
	} else if (pipeline_variant(p, "eager") && pipeline_variant(p, "staged")) {
		f->variants[f->nvariants++] = pipeline_variant(p, "eager");
		f->variants[f->nvariants++] = pipeline_variant(p, "staged");
	} else {
		for (size_t j = 0; j < p->nvariants; j++)
			f->variants[f->nvariants++] = &p->variants[j];
	}
	if (!f->nvariants) {
		error("%s: no variants", p->path);
		return SB_EXIT_FAILURE;
	}
	for (size_t i = 0; i < f->nvariants; i++)
		if (compare_variant_name_check(p, f->variants[i]->name) < 0)
			return SB_EXIT_FAILURE;
	return -1;
}

/* Whether one of the variants picked is staged (STAGEBENCH_STAGED). */
static bool any_staged(const struct found *f)
{
	for (size_t i = 0; i < f->nvariants; i++)
		if (pipeline_variant_staged(&f->p, f->variants[i]))
			return true;
	return false;
}

/* --set values, the commit directory, the output and cache directories.
 * Returns -1 to go on, else the exit status. */
static int directories(const struct args *a, struct found *f)
{
	for (size_t i = 0; i < a->nsets; i++) {
		struct strbuf why = STRBUF_INIT;
		int r = compare_set_option(&f->p, a->sets[i], &f->sets, &why);
		if (r < 0)
			opt_usage_error(a->cmd, "%s", strbuf_str(&why));
		strbuf_release(&why);
		if (r < 0)
			return SB_EXIT_USAGE;
	}
	if (a->part == COMPARE_PLAN && !a->out)
		return -1; /* nothing is written */
	if (a->part == COMPARE_PLAN) { /* the campaign starts: OUT/plan.json */
		f->out = path_absolute(a->out);
		return mkdir_p(f->out) ? SB_EXIT_FAILURE : -1;
	}
	if ((a->part == COMPARE_TASK || a->part == COMPARE_MERGE) && !a->out)
		return opt_usage_error(a->cmd, "%s needs --out DIR, the directory every task shares",
				       a->part == COMPARE_TASK ? "--task" : "--merge");
	const char *cd = getenv("STAGEBENCH_COMMIT_DIR");
	f->commit_dir = xstrdup(cd && *cd ? cd : f->p.dir);
	if (a->out) {
		f->out = path_absolute(a->out);
	} else {
		char date[16];
		time_t now = time(NULL);
		struct tm tm;
		localtime_r(&now, &tm);
		strftime(date, sizeof(date), "%Y-%m-%d", &tm);
		int dirty = 0;
		char *commit = a->by_commit ? git_head(f->commit_dir, true, &dirty) : NULL;
		if (a->by_commit && !commit)
			warning("--by-commit: '%s' is not in a git checkout; no commit in the directory "
				"name", f->commit_dir);
		char *name = xasprintf("%s%s", f->p.name, a->learning ? "-learn" : "");
		char *base = compare_default_out(date, name, commit, dirty > 0);
		free(name);
		char *fresh = compare_fresh_dir(base);
		f->out = path_absolute(fresh);
		free(base);
		free(fresh);
		free(commit);
	}
	if (mkdir_p(f->out))
		return SB_EXIT_FAILURE;
	f->cache = a->cache ? path_absolute(a->cache) : compare_default_cache(f->p.name);
	return -1;
}

/* The engine's options from the parsed command line and what it found (borrowed). */
static struct compare_opts compare_opts_of(const struct args *a, struct found *f)
{
	return (struct compare_opts){
		.setup = { .p = &f->p, .out = f->out, .probe_dir = f->probe_dir,
			   .python = compare_python(), .cache = f->cache, .seed = a->seed,
			   .sets = &f->sets, .old_pythonpath = getenv("PYTHONPATH") },
		.variants = f->variants, .nvariants = f->nvariants, .reps = a->reps,
		.interval_ns = a->interval_ns, .guard = &a->g, .commit_dir = f->commit_dir,
		.part = a->part, .task = a->task, .warmup = a->warmup,
		.cache_state = a->cache_state, .cache_state_given = a->cache_state_given,
		.no_peak_reset = a->no_peak_reset, .no_prime = a->no_prime,
	};
}

int cmd_compare(int argc, char **argv)
{
	struct args a = { .g = GUARD_OPTS_INIT, .seed = "7", .reps = 2,
			  .interval_ns = 100LL * 1000000LL, .cmd = "compare" };
	struct found f;
	memset(&f, 0, sizeof(f));
	int rc = parse_args(argc, argv, &a);
	if (rc < 0)
		rc = find_pipeline(&a, &f);
	if (rc < 0)
		rc = pick_variants("compare", a.last_arg, argv, a.first_variant, &f);
	if (rc < 0 && a.part == COMPARE_TASK && !f.p.adapter && any_staged(&f))
		rc = opt_usage_error("compare", "%s names no adapter, so a staging plan would be "
				     "learned by every task: learn it once ('stagebench learn') and "
				     "name it as the pipeline file's \"adapter\"", f.p.path);
	if (rc < 0)
		rc = directories(&a, &f);
	if (rc < 0) {
		bool charts = a.part != COMPARE_PLAN && a.part != COMPARE_TASK &&
			      plot_have_gnuplot(NULL);
		if (!charts && a.part != COMPARE_PLAN && a.part != COMPARE_TASK)
			warning("%s; the runs go on without charts", PLOT_GNUPLOT_MISSING);
		struct compare_opts o = compare_opts_of(&a, &f);
		o.charts = charts;
		rc = compare_execute(&o);
		if (finish_stdout() < 0 && rc == SB_EXIT_OK)
			rc = SB_EXIT_FAILURE;
	}
	found_release(&f);
	args_release(&a);
	return rc;
}

/* stagebench learn: the compare engine's prepare and learning run only. */
int cmd_learn(int argc, char **argv)
{
	struct args a = { .g = GUARD_OPTS_INIT, .seed = "7", .reps = 1,
			  .interval_ns = 100LL * 1000000LL, .cmd = "learn", .learning = true,
			  .output = "plan.py" };
	struct found f;
	memset(&f, 0, sizeof(f));
	int rc = parse_args(argc, argv, &a);
	if (rc < 0)
		rc = find_pipeline(&a, &f);
	if (rc < 0)
		rc = pick_variants("learn", a.last_arg, argv, a.first_variant, &f);
	if (rc < 0 && a.first_variant < a.last_arg && pipeline_variant_staged(&f.p, f.variants[0]))
		rc = opt_usage_error("learn", "variant '%s' is staged (STAGEBENCH_STAGED): a plan "
				     "is learned from an eager run", f.variants[0]->name);
	if (rc < 0 && !a.force && access(a.output, F_OK) == 0)
		rc = opt_usage_error("learn", "'%s' exists (it may hold your edits): give "
				     "-o FILE or --force", a.output);
	if (rc < 0)
		rc = directories(&a, &f);
	if (rc < 0) {
		char *output = path_absolute(a.output);
		struct compare_opts o = compare_opts_of(&a, &f);
		o.part = COMPARE_LEARN;
		o.learn_to = output;
		rc = compare_execute(&o);
		free(output);
		if (finish_stdout() < 0 && rc == SB_EXIT_OK)
			rc = SB_EXIT_FAILURE;
	}
	found_release(&f);
	args_release(&a);
	return rc;
}
