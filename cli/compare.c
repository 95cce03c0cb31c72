/* compare.c -- `stagebench compare`: options, usage, then the compare engine (runner/compare.h) */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../analyze/analysis.h"
#include "../common/parse.h"
#include "../common/util.h"
#include "../plots/plot.h"
#include "../runner/compare.h"
#include "../runner/git.h"
#include "../runner/guard.h"
#include "../runner/record.h"
#include "../traces/pipeline.h"
#include "../traces/runs.h"
#include "../traces/trace.h"
#include "commands.h"
#include "opt.h"

static const char compare_usage[] =
	"usage: stagebench compare [VARIANT...] [--pipeline FILE] [--seed N] [--reps N] [--out DIR]\n"
	"                          [--set KEY=VALUE]... [--size S] [--cache DIR] [--interval DUR]\n"
	"                          [--by-commit] [GUARD OPTIONS] [-q|-v]\n"
	"\n"
	"Run a pipeline's variants alternately (E S E S ...), each run its own guarded,\n"
	"recorded process with the Python probe on PYTHONPATH (staged loading, stage\n"
	"events, latent copies), then print the per-stage peak table, the latent\n"
	"comparison and the run summary.\n"
	"\n"
	"  VARIANT...          variants of the pipeline file, in this order (default:\n"
	"                      eager staged when the file has both, else all of them)\n"
	"  --pipeline FILE     pipeline file (JSON; default: the bundled demo,\n"
	"                      $STAGEBENCH_HOME/demo/pipeline.json or demo/ beside the\n"
	"                      installed binary)\n"
	"  --seed N            the {seed} placeholder (default 7)\n"
	"  --reps N            runs per variant (default 2)\n"
	"  --out DIR           output directory (default runs/DATE-PIPELINE/, with -2,\n"
	"                      -3 ... added when it exists)\n"
	"  --by-commit         default output directory runs/DATE-PIPELINE-COMMIT[-dirty]/,\n"
	"                      COMMIT being the short commit of the git checkout that\n"
	"                      holds the pipeline file (-dirty: uncommitted changes)\n"
	"  --set KEY=VALUE     override a placeholder of the pipeline's \"defaults\"\n"
	"                      (repeatable)\n"
	"  --size S            --set size=S (pipelines with a size default: the demo\n"
	"                      has tiny, small, default, large)\n"
	"  --cache DIR         the {cache} placeholder (default\n"
	"                      $XDG_CACHE_HOME/stagebench/PIPELINE, else\n"
	"                      ~/.cache/stagebench/PIPELINE)\n"
	"  --interval DUR      sample interval (default 100ms)\n"
	"  -q, --quiet         no progress lines\n"
	"  -v, --verbose       more progress messages\n"
	"  -h, --help          this text\n"
	"\n"
	"GUARD OPTIONS apply to every run; each run is guarded (admission and stop\n"
	"checks) with the defaults below when none is given:\n"
	"%s"
	"\n"
	"In DIR, per run V-N (variant V, repetition N): V-N.trace.jsonl.zst (the trace;\n"
	"its start record holds mode V, labels seed, pipeline and rep, and the commit\n"
	"of the pipeline's git checkout with whether it was dirty), V-N.latents/ (the\n"
	"latent copies), V-N/ (the pipeline's own outputs, {out}), V-N.log (the\n"
	"command's stdout); then runs.json (how each run ended; rewritten after every\n"
	"run), table.md, latents.md, and the charts memory.png and stages.png (skipped\n"
	"with a warning when gnuplot is missing). Progress lines go to stderr.\n"
	"\n"
	"Placeholders in the pipeline file: {python} ($STAGEBENCH_PYTHON, else\n"
	"/usr/bin/python3, else python3), {pipeline_dir}, {seed}, {out}, {run}, {mode}\n"
	"(the variant), {cache}, and the keys of \"defaults\". The environment of each\n"
	"run: PYTHONPATH = PROBE/site:PROBE:the pipeline's \"pythonpath\":$PYTHONPATH,\n"
	"STAGEBENCH_ADAPTER (\"adapter\"), the pipeline's \"env\" and the variant's \"env\",\n"
	"STAGEBENCH_COMMIT_DIR (the pipeline file's directory unless already set).\n"
	"\n"
	"exit: 0 every run ran (a run the guard stopped is a result: the table says\n"
	"so), 2 usage (an unknown variant lists those available), 3 a failure to run\n"
	"(pipeline file unreadable, recorder failure, a command that could not start or\n"
	"failed on its own, unreadable results), 128+N when interrupted by signal N.\n";

enum {
	OPT_PIPELINE = 0x4301,
	OPT_SEED,
	OPT_REPS,
	OPT_OUT,
	OPT_SET,
	OPT_SIZE,
	OPT_CACHE,
	OPT_INTERVAL,
	OPT_BY_COMMIT,
};

int cmd_compare(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pipeline", required_argument, NULL, OPT_PIPELINE },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "reps", required_argument, NULL, OPT_REPS },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "set", required_argument, NULL, OPT_SET },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "cache", required_argument, NULL, OPT_CACHE },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "by-commit", no_argument, NULL, OPT_BY_COMMIT },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		GUARD_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct guard_opts g = GUARD_OPTS_INIT;
	const char *pipeline_arg = NULL, *out_arg = NULL, *cache_arg = NULL, *seed = "7";
	const char **set_args = NULL;
	size_t nset = 0, set_alloc = 0;
	int reps = 2, opt, rc = SB_EXIT_USAGE;
	int64_t interval_ns = 100LL * 1000000LL, seed_num;
	bool by_commit = false;
	struct pipeline p;
	bool have_pipeline = false;
	struct kv_list sets = { 0 };
	const struct pipeline_variant **variants = NULL;
	size_t nvariants = 0;
	char *exe = NULL, *pipeline_path = NULL, *probe_dir = NULL, *out = NULL, *cache = NULL;
	char *commit = NULL;
	struct run_list runs = RUN_LIST_INIT;
	struct compare_done *done = NULL;
	size_t ndone = 0;

	memset(&p, 0, sizeof(p));
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "qvh", longopts, NULL)) != -1) {
		int gr = guard_parse_option(&g, opt, optarg);
		if (gr < 0)
			goto out;
		if (gr > 0)
			continue;
		switch (opt) {
		case OPT_PIPELINE:
			pipeline_arg = optarg;
			break;
		case OPT_SEED:
			if (parse_i64(optarg, &seed_num)) {
				rc = opt_usage_error("compare", "option '--seed': not an integer: '%s'", optarg);
				goto out;
			}
			seed = optarg;
			break;
		case OPT_REPS:
			if (parse_int(optarg, &reps) || reps < 1) {
				rc = opt_usage_error("compare", "option '--reps': expected a count of 1 or more, got '%s'",
						 optarg);
				goto out;
			}
			break;
		case OPT_OUT:
			out_arg = optarg;
			break;
		case OPT_SET:
		case OPT_SIZE:
			ALLOC_GROW(set_args, nset + 1, set_alloc);
			set_args[nset++] = opt == OPT_SIZE ? xasprintf("size=%s", optarg)
							   : xstrdup(optarg);
			break;
		case OPT_CACHE:
			cache_arg = optarg;
			break;
		case OPT_INTERVAL:
			if (parse_duration(optarg, &interval_ns) || interval_ns < 1000000LL) {
				rc = opt_usage_error("compare", "option '--interval': invalid duration '%s' (1ms or more)",
						 optarg);
				goto out;
			}
			break;
		case OPT_BY_COMMIT:
			by_commit = true;
			break;
		case 'q':
			sb_verbosity = 0;
			break;
		case 'v':
			sb_verbosity = 2;
			break;
		case 'h':
			printf(compare_usage, guard_options_help);
			rc = SB_EXIT_OK;
			goto out;
		default:
			rc = opt_refused("compare", opt, "qvh", optopt, argv[optind - 1]);
			goto out;
		}
	}

	/* the pipeline and the probe */
	exe = compare_self_exe();
	const char *home = getenv("STAGEBENCH_HOME");
	if (pipeline_arg) {
		pipeline_path = xstrdup(pipeline_arg);
	} else if (!(pipeline_path = compare_find_share(home, exe, "demo/pipeline.json"))) {
		error("cannot find the bundled demo pipeline (demo/pipeline.json) in "
		      "$STAGEBENCH_HOME, %s/../demo or %s/../share/stagebench/demo: set "
		      "STAGEBENCH_HOME to the stagebench tree or give --pipeline FILE",
		      exe ? exe : "(binary)", exe ? exe : "(binary)");
		rc = SB_EXIT_FAILURE;
		goto out;
	}
	if (!(probe_dir = compare_find_share(home, exe, "probe")) || !compare_is_dir(probe_dir)) {
		error("cannot find the Python probe (probe/) in $STAGEBENCH_HOME, %s/../probe or "
		      "%s/../share/stagebench/probe: set STAGEBENCH_HOME to the stagebench tree",
		      exe ? exe : "(binary)", exe ? exe : "(binary)");
		rc = SB_EXIT_FAILURE;
		goto out;
	}
	if (pipeline_read(pipeline_path, &p) < 0) {
		rc = SB_EXIT_FAILURE;
		goto out;
	}
	have_pipeline = true;

	/* variants */
	if (optind < argc) {
		for (int i = optind; i < argc; i++) {
			const struct pipeline_variant *v = pipeline_variant(&p, argv[i]);
			bool dup = false;
			for (size_t j = 0; v && j < nvariants; j++)
				dup |= variants[j] == v;
			if (!v || dup) {
				struct strbuf have = STRBUF_INIT;
				for (size_t j = 0; j < p.nvariants; j++)
					strbuf_addf(&have, "%s%s", j ? ", " : "", p.variants[j].name);
				if (dup)
					rc = opt_usage_error("compare", "variant '%s' given twice", argv[i]);
				else
					rc = opt_usage_error("compare", "unknown variant '%s': %s has %s", argv[i], p.path,
							 have.buf ? have.buf : "none");
				strbuf_release(&have);
				goto out;
			}
			variants = xrealloc(variants, (nvariants + 1) * sizeof(*variants));
			variants[nvariants++] = v;
		}
	} else if (pipeline_variant(&p, "eager") && pipeline_variant(&p, "staged")) {
		variants = xcalloc(2, sizeof(*variants));
		variants[nvariants++] = pipeline_variant(&p, "eager");
		variants[nvariants++] = pipeline_variant(&p, "staged");
	} else {
		variants = xcalloc(p.nvariants ? p.nvariants : 1, sizeof(*variants));
		for (size_t j = 0; j < p.nvariants; j++)
			variants[nvariants++] = &p.variants[j];
	}
	if (!nvariants) {
		error("%s: no variants", p.path);
		rc = SB_EXIT_FAILURE;
		goto out;
	}
	for (size_t i = 0; i < nset; i++) {
		if (compare_set_option(&p, set_args[i], &sets) < 0) {
			rc = SB_EXIT_USAGE;
			goto out;
		}
	}

	/* directories */
	if (!getenv("STAGEBENCH_COMMIT_DIR") || !*getenv("STAGEBENCH_COMMIT_DIR"))
		setenv("STAGEBENCH_COMMIT_DIR", p.dir, 1);
	if (out_arg) {
		out = compare_absolute(out_arg);
	} else {
		char date[16];
		time_t now = time(NULL);
		struct tm tm;
		localtime_r(&now, &tm);
		strftime(date, sizeof(date), "%Y-%m-%d", &tm);
		int dirty = 0;
		if (by_commit && !(commit = git_head(getenv("STAGEBENCH_COMMIT_DIR"), true, &dirty)))
			warning("--by-commit: '%s' is not in a git checkout; no commit in the directory "
				"name", getenv("STAGEBENCH_COMMIT_DIR"));
		char *base = compare_default_out(date, p.name, commit, dirty > 0);
		char *fresh = compare_fresh_dir(base);
		out = compare_absolute(fresh);
		free(base);
		free(fresh);
	}
	if (mkdir_p(out)) {
		rc = SB_EXIT_FAILURE;
		goto out;
	}
	cache = cache_arg ? compare_absolute(cache_arg) : compare_default_cache(p.name);
	bool charts = plot_have_gnuplot(NULL);
	if (!charts)
		warning("%s; the runs go on without charts", PLOT_GNUPLOT_MISSING);

	struct compare_setup setup = {
		.p = &p, .out = out, .probe_dir = probe_dir, .python = compare_python(),
		.cache = cache, .seed = seed, .sets = &sets,
		.old_pythonpath = getenv("PYTHONPATH"),
	};
	struct record_opts ro = RECORD_OPTS_INIT;
	ro.interval_ns = interval_ns;
	ro.guarded = true;
	ro.guard = &g;
	ro.name = "compare";
	ro.summary = false;

	size_t total = nvariants * (size_t)reps;
	done = xcalloc(total, sizeof(*done));
	if (sb_verbosity >= 1)
		note("compare: %s, variants %zu x %d runs, seed %s, into %s", p.path, nvariants, reps,
		     seed, out);
	rc = SB_EXIT_OK;
	int interrupted = 0;
	for (size_t k = 0; k < total; k++) {
		size_t vi;
		int rep;
		compare_schedule(nvariants, k, &vi, &rep);
		const struct pipeline_variant *v = variants[vi];
		struct compare_run cr = COMPARE_RUN_INIT;
		if (compare_plan_run(&setup, v, rep, &cr) < 0) {
			rc = SB_EXIT_FAILURE;
			break;
		}
		char repbuf[16];
		snprintf(repbuf, sizeof(repbuf), "%d", rep);
		struct trace_label labels[3] = {
			{ xstrdup("seed"), xstrdup(seed) },
			{ xstrdup("pipeline"), xstrdup(p.name) },
			{ xstrdup("rep"), xstrdup(repbuf) },
		};
		ro.mode = v->name;
		if (sb_verbosity >= 1)
			note("[%zu/%zu] %s run %d: running", k + 1, total, v->name, rep);
		struct record_result res = RECORD_RESULT_INIT;
		int r = compare_run_one(&ro, &cr, labels, 3, &res);
		compare_labels_free(labels, 3);
		if (r < 0) {
			error("[%zu/%zu] %s run %d: the recorder failed (see above)", k + 1, total,
			      v->name, rep);
			record_result_release(&res);
			compare_run_release(&cr);
			rc = SB_EXIT_FAILURE;
			break;
		}
		struct strbuf words = STRBUF_INIT;
		compare_outcome_words(&res, &words);
		if (sb_verbosity >= 1 || (res.stopped_by != STOPPED_GUARD && res.exit_code))
			fprintf(stderr, "stagebench: [%zu/%zu] %s run %d: %s, wall %.1f s\n", k + 1,
				total, v->name, rep, words.buf, res.wall_s);
		strbuf_release(&words);

		/* runs.json after every run */
		ALLOC_GROW(runs.items, runs.n + 1, runs.alloc);
		struct run_entry *e = &runs.items[runs.n++];
		memset(e, 0, sizeof(*e));
		e->mode = xstrdup(v->name);
		e->run = rep;
		e->has_exit = true;
		e->exit = res.exit_code;
		const char *slash = strrchr(cr.trace_path, '/');
		e->trace = xstrdup(slash ? slash + 1 : cr.trace_path);
		e->stopped_by = res.stopped_by == STOPPED_GUARD    ? xstrdup("guard")
				: res.stopped_by == STOPPED_SIGNAL ? xstrdup("signal")
								   : NULL;
		e->signal = res.signal;
		char *runs_path = xasprintf("%s/runs.json", out);
		if (runs_write(runs_path, &runs) < 0)
			rc = SB_EXIT_FAILURE;
		free(runs_path);

		done[ndone].id = xstrdup(cr.id);
		done[ndone].mode = xstrdup(v->name);
		done[ndone].trace_path = xstrdup(cr.trace_path);
		ndone++;
		if (res.stopped_by == STOPPED_SIGNAL) {
			interrupted = res.exit_code;
		} else if (res.stopped_by != STOPPED_GUARD && res.exit_code) {
			if (sb_verbosity >= 1)
				fprintf(stderr, "stagebench: [%zu/%zu] %s run %d: its output is in %s\n",
					k + 1, total, v->name, rep, cr.log_path);
			rc = SB_EXIT_FAILURE;
		}
		record_result_release(&res);
		compare_run_release(&cr);
		if (interrupted)
			break;
	}

	if (ndone) {
		if (compare_report(out, NULL, done, ndone, &runs, charts && !interrupted) < 0)
			rc = SB_EXIT_FAILURE;
		if (sb_verbosity >= 1)
			note("results in %s (table.md, latents.md, runs.json)", out);
	}
	if (interrupted)
		rc = interrupted;
	if (finish_stdout() < 0 && rc == SB_EXIT_OK)
		rc = SB_EXIT_FAILURE;

out:
	for (size_t i = 0; i < ndone; i++) {
		free(done[i].id);
		free(done[i].mode);
		free(done[i].trace_path);
		trace_release(&done[i].tr);
		analysis_release(&done[i].a);
	}
	free(done);
	runs_release(&runs);
	for (size_t i = 0; i < nset; i++)
		free((char *)set_args[i]);
	free(set_args);
	kv_release(&sets);
	free(variants);
	if (have_pipeline)
		pipeline_release(&p);
	free(exe);
	free(pipeline_path);
	free(probe_dir);
	free(out);
	free(cache);
	free(commit);
	guard_opts_release(&g);
	return rc;
}
