/* record.c -- `stagebench record`: options, usage, then the record engine (runner/record/record.h) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/parse.h"
#include "../common/path.h"
#include "../common/util.h"
#include "../platform/platform.h"
#include "../runner/compare/compare.h"
#include "../runner/guard.h"
#include "../runner/record/record.h"
#include "../runner/pipeline.h"
#include "commands.h"
#include "opt.h"

static const char record_usage[] =
	"usage: stagebench record [-o TRACE] [--mode NAME] [--interval DUR] [--label KEY=VALUE]...\n"
	"                         [--latents DIR] [--no-peak-reset] [GUARD OPTIONS] [-q|-v]\n"
	"                         [--pipeline FILE [--variant NAME] [--set KEY=VALUE]... [--seed N]\n"
	"                          [--cache DIR] | --adapter MODULE|FILE [--staged]]\n"
	"                         -- COMMAND [ARG...]\n\n"
	"Record a memory trace of COMMAND and its whole process tree.\n\n";

static const char record_after[] =
	"\n"
	"The probe: COMMAND runs with STAGEBENCH_FD, STAGEBENCH_MODE, STAGEBENCH_LATENTS,\n"
	"STAGEBENCH_TRACE and PYTHONPATH = PROBE/site:PROBE[:the pipeline's \"pythonpath\" or\n"
	"the adapter's directory]:$PYTHONPATH (PROBE: $STAGEBENCH_HOME/probe or beside the\n"
	"binary), plus STAGEBENCH_ADAPTER and the env of --pipeline/--variant or --adapter/\n"
	"--staged. A staged run whose adapter never engaged exits 3 (probe/README.md).\n\n"
	"Kernel stage peaks: at each stage window's start the kernel high-water mark of\n"
	"every process of COMMAND is reset (Linux clear_refs; one process's mark is\n"
	"exact, a tree's peak their sum, docs/platforms.md). The pipeline's own view of\n"
	"its peak goes with it: getrusage()'s ru_maxrss, its own max-RSS logging and\n"
	"/usr/bin/time -v see only the peak since the last window start. With\n"
	"--no-peak-reset they see the whole run; each stage's peak event is then the\n"
	"largest sampled footprint (a spike between two samples is missed) and the\n"
	"trace's start record says \"peaks\":\"samples\".\n";

enum { OPT_LABEL = 0x5201, OPT_SET };

/* The options that choose how the probe is activated. */
struct probe_args {
	const char *pipeline, *variant, *seed, *cache, *adapter;
	const char **sets;
	size_t nsets, sets_alloc;
	bool staged;
};

/* The command line: the run's options, and the probe's. */
struct record_args {
	struct record_opts ro;
	struct probe_args pa;
};

#define RECORD_STRING(NAME, SHORT, ARG, VALUE, FIELD, HELP) \
	OPT_STRING_TO(NAME, SHORT, ARG, VALUE, struct record_args, FIELD, HELP)

static const struct opt_spec record_rows[] = {
	RECORD_STRING("output", 'o', "TRACE", OV_FILE, ro.trace_path,
		      "trace file (default stagebench-DATE-TIME.trace.jsonl.zst)"),
	RECORD_STRING("mode", 0, "NAME", OV_TEXT, ro.mode,
		      "the run's mode (STAGEBENCH_MODE for the probe)"),
	OPT_INTERVAL("sample interval, 1ms or more (500ms)"),
	OPT("label", 0, OPT_LABEL, "KEY=VALUE", OV_TEXT,
	    "free-form metadata for the start record (repeatable)"),
	RECORD_STRING("latents", 0, "DIR", OV_DIR, ro.latents_dir,
		      "where the probe copies latents (STAGEBENCH_LATENTS)"),
	OPT_BOOL_TO("no-peak-reset", 0, struct record_args, ro.no_peak_reset,
		    "leave the kernel high-water mark alone: stage peaks from samples"),
	RECORD_STRING("pipeline", 0, "FILE", OV_PIPELINE, pa.pipeline,
		      "run as 'compare' runs one variant of this pipeline file: its\n"
		      "adapter, pythonpath and env, the variant's env and args, mode =\n"
		      "the variant; COMMAND defaults to the file's command ({out} is\n"
		      "TRACE's directory/VARIANT-1, not created; no prepare:\n"
		      "pipelines/README.md)"),
	RECORD_STRING("variant", 0, "NAME", OV_VARIANT, pa.variant,
		      "the variant (needed when the file has more than one)"),
	OPT("set", 0, OPT_SET, "KEY=VALUE", OV_TEXT,
	    "a value for one of the file's \"defaults\" (repeatable)"),
	RECORD_STRING("seed", 0, "N", OV_TEXT, pa.seed, "{seed} (7)"),
	RECORD_STRING("cache", 0, "DIR", OV_DIR, pa.cache, "{cache} (~/.cache/stagebench/NAME)"),
	RECORD_STRING("adapter", 0, "A", OV_FILE, pa.adapter,
		      "without a pipeline file: the probe's adapter (a module name\n"
		      "or a .py file, whose directory goes on PYTHONPATH)"),
	OPT_BOOL_TO("staged", 0, struct record_args, pa.staged,
		    "STAGEBENCH_STAGED=1 (staged loading); without --adapter a\n"
		    "plan is learned first from one eager run of COMMAND (TRACE's\n"
		    ".learn.trace.jsonl.zst), written as TRACE's .plan.py"),
	OPT_QUIET("no status line, no summary"),
	OPT_VERBOSE("more progress messages"),
	OPT_HELP,
	OPT_GUARD("\nWith GUARD OPTIONS the run is guarded (see 'stagebench guard --help').\n"
		  "guard options:\n"),
	OPT_END,
};

const struct opt_cmd opt_cmd_record = {
	.name = "record", .usage = record_usage, .opts = record_rows, .column = 24,
	.flags = OPT_INDENT_LONG, .after = record_after, .operands = OV_COMMAND,
};

/* What plan_probe() found; released by probe_plan_release(). */
struct probe_plan {
	char *exe, *probe_dir, *cache, *out, *pipeline_path;
	struct pipeline p;
	bool have_pipeline;
	struct kv_list sets;
	struct compare_run run; /* env (and argv with a pipeline file) */
};

static void probe_plan_release(struct probe_plan *pl)
{
	free(pl->exe);
	free(pl->probe_dir);
	free(pl->cache);
	free(pl->out);
	free(pl->pipeline_path);
	if (pl->have_pipeline)
		pipeline_release(&pl->p);
	kv_release(&pl->sets);
	compare_run_release(&pl->run);
}

static char *dir_of_abs(const char *path)
{
	char *abs = path_absolute(path);
	char *slash = strrchr(abs, '/');
	if (slash)
		*(slash == abs ? slash + 1 : slash) = '\0';
	return abs;
}

/* The pipeline file's variant: named, or its only one. NULL after a usage error. */
static const struct pipeline_variant *pick_variant(const struct pipeline *p, const char *name)
{
	const struct pipeline_variant *v = name ? pipeline_variant(p, name)
					 : p->nvariants == 1 ? &p->variants[0] : NULL;
	if (v)
		return v;
	struct strbuf have = STRBUF_INIT;
	for (size_t j = 0; j < p->nvariants; j++)
		strbuf_addf(&have, "%s%s", j ? ", " : "", p->variants[j].name);
	if (name)
		opt_usage_error("record", "unknown variant '%s': %s has %s", name, p->path,
				have.len ? have.buf : "none");
	else
		opt_usage_error("record", "option '--variant' is needed: %s has %s", p->path,
				have.len ? have.buf : "none");
	strbuf_release(&have);
	return NULL;
}

/* Plan a run of one variant of the pipeline file. Returns -1 to go on, else the exit status. */
static int plan_pipeline(const struct probe_args *pa, const char *trace_path,
			 struct record_opts *ro, struct probe_plan *pl)
{
	if (pa->adapter || pa->staged) {
		opt_usage_error("record", "options '--adapter' and '--staged' go without "
				"'--pipeline' (the pipeline file names its adapter and variants)");
		return SB_EXIT_USAGE;
	}
	pl->pipeline_path = path_absolute(pa->pipeline); /* {pipeline_dir} absolute */
	if (pipeline_read(pl->pipeline_path, &pl->p) < 0)
		return SB_EXIT_FAILURE;
	pl->have_pipeline = true;
	const struct pipeline_variant *v = pick_variant(&pl->p, pa->variant);
	if (!v)
		return SB_EXIT_USAGE;
	for (size_t i = 0; i < pa->nsets; i++) {
		struct strbuf why = STRBUF_INIT;
		int r = compare_set_option(&pl->p, pa->sets[i], &pl->sets, &why);
		if (r < 0)
			opt_usage_error("record", "%s", strbuf_str(&why));
		strbuf_release(&why);
		if (r < 0)
			return SB_EXIT_USAGE;
	}
	pl->cache = pa->cache ? path_absolute(pa->cache) : compare_default_cache(pl->p.name);
	pl->out = dir_of_abs(trace_path);
	struct compare_setup setup = {
		.p = &pl->p, .out = pl->out, .probe_dir = pl->probe_dir, .python = compare_python(),
		.cache = pl->cache, .seed = pa->seed ? pa->seed : "7", .sets = &pl->sets,
		.old_pythonpath = getenv("PYTHONPATH"),
	};
	if (compare_plan_run(&setup, v, 1, &pl->run) < 0)
		return SB_EXIT_FAILURE;
	if (!ro->mode)
		ro->mode = v->name;
	if (!ro->commit_dir)
		ro->commit_dir = pl->p.dir;
	return -1;
}

/* The probe's environment (and, with a pipeline file, the default command).
 * Returns -1 to go on, else the exit status. */
static int plan_probe(const struct probe_args *pa, const char *trace_path,
		      struct record_opts *ro, struct probe_plan *pl)
{
	pl->exe = pl_self_exe();
	pl->probe_dir = compare_find_share(getenv("STAGEBENCH_HOME"), pl->exe, "probe");
	if (!pl->probe_dir || !path_is_dir(pl->probe_dir)) {
		if (!pa->pipeline && !pa->adapter)
			return -1; /* a plain recording: no probe to put on the path */
		error("cannot find the Python probe (probe/) in $STAGEBENCH_HOME or beside the "
		      "binary: set STAGEBENCH_HOME to the stagebench tree");
		return SB_EXIT_FAILURE;
	}
	if (pa->pipeline)
		return plan_pipeline(pa, trace_path, ro, pl);
	if (pa->variant || pa->nsets || pa->seed || pa->cache) {
		opt_usage_error("record", "options '--variant', '--set', '--seed' and '--cache' "
				"need '--pipeline FILE'");
		return SB_EXIT_USAGE;
	}
	compare_plan_adapter(pl->probe_dir, pa->adapter, pa->staged, getenv("PYTHONPATH"),
			     &pl->run);
	return -1;
}

/* TRACE's name with ".trace.jsonl[.zst]" replaced by `ext`. */
static char *beside_trace(const char *trace, const char *ext)
{
	static const char *const sfx[] = { ".trace.jsonl.zst", ".trace.jsonl", ".jsonl.zst" };
	size_t n = strlen(trace);
	for (size_t i = 0; i < sizeof(sfx) / sizeof(*sfx); i++) {
		size_t k = strlen(sfx[i]);
		if (n > k && !strcmp(trace + n - k, sfx[i]))
			return xasprintf("%.*s%s", (int)(n - k), trace, ext);
	}
	return xasprintf("%s%s", trace, ext);
}

/* record --staged -- COMMAND with no adapter: a plan learned first from one eager run of
 * COMMAND, recorded as TRACE's .learn.trace.jsonl.zst, written as TRACE's .plan.py, then the
 * staged run's adapter. Returns -1 to go on, else the exit status. */
static int learn_first(const struct record_opts *ro, char **command, struct probe_plan *pl)
{
	struct record_opts lo = *ro;
	struct record_result res = RECORD_RESULT_INIT;
	char *plan = beside_trace(ro->trace_path, ".plan.py");
	char *trace = beside_trace(ro->trace_path, ".learn.trace.jsonl.zst");
	struct compare_run run;
	int rc = -1;
	compare_plan_adapter(pl->probe_dir, NULL, false, getenv("PYTHONPATH"), &run);
	run.env = xrealloc(run.env, 3 * sizeof(*run.env));
	run.env[1] = xasprintf("STAGEBENCH_LEARN=%s", plan);
	run.env[2] = NULL;
	unlink(plan);
	lo.trace_path = trace;
	lo.mode = "learn";
	lo.env_set = (const char **)run.env;
	if (sb_verbosity >= 1)
		note("record: no adapter: learning a staging plan from one eager run (%s)", trace);
	if (record_run(&lo, command, &res) || res.exit_code || !path_exists(plan)) {
		rc = res.exit_code > 0 && res.exit_code < 128 && path_exists(plan) ? res.exit_code
										  : SB_EXIT_FAILURE;
		error("record: the eager run that learns the plan %s (its trace: %s)",
		      path_exists(plan) ? "failed" : "wrote no plan", trace);
		unlink(plan);
	} else {
		compare_run_release(&pl->run);
		compare_plan_adapter(pl->probe_dir, plan, true, getenv("PYTHONPATH"), &pl->run);
		if (sb_verbosity >= 1)
			note("record: plan in %s, the staged run's adapter", plan);
	}
	record_result_release(&res);
	compare_run_release(&run);
	free(plan);
	free(trace);
	return rc;
}

struct labels {
	struct trace_label *v;
	size_t n, alloc;
};

/* --label KEY=VALUE: 0, or -1 after a usage error. */
static int add_label(struct labels *l, const char *arg)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg) {
		opt_usage_error("record", "option '--label': invalid value '%s' (KEY=VALUE)", arg);
		return -1;
	}
	ALLOC_GROW(l->v, l->n + 1, l->alloc);
	l->v[l->n].key = xstrndup(arg, (size_t)(eq - arg));
	l->v[l->n].value = xstrdup(eq + 1);
	l->n++;
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct record_args a = { .ro = RECORD_OPTS_INIT };
	struct record_opts *ro = &a.ro;
	struct probe_args *pa = &a.pa;
	struct guard_opts g = GUARD_OPTS_INIT;
	struct labels labels = { NULL, 0, 0 };
	char *default_out = NULL;
	struct probe_plan pl = { 0 };
	struct opt_parser p;
	int opt, rc = SB_EXIT_USAGE;
	opt_begin_to(&p, &opt_cmd_record, argc, argv, &g, &a);
	while ((opt = opt_next(&p)) != -1) {
		switch (opt) {
		case OPT_ID_INTERVAL:
			if (opt_interval("record", p.arg, &ro->interval_ns))
				goto out;
			break;
		case OPT_LABEL:
			if (add_label(&labels, p.arg) < 0)
				goto out;
			break;
		case OPT_SET:
			ALLOC_GROW(pa->sets, pa->nsets + 1, pa->sets_alloc);
			pa->sets[pa->nsets++] = p.arg;
			break;
		default: /* OPT_EXIT */
			rc = p.rc;
			goto out;
		}
	}
	if (optind >= argc && !pa->pipeline) {
		opt_usage_error("record", "no command given (stagebench record [OPTIONS] -- COMMAND)");
		goto out;
	}
	if (!ro->trace_path)
		ro->trace_path = default_out = record_default_trace_name();
	ro->commit_dir = getenv("STAGEBENCH_COMMIT_DIR");
	if ((rc = plan_probe(pa, ro->trace_path, ro, &pl)) >= 0)
		goto out;
	char **command = optind < argc ? argv + optind : pl.run.argv;
	ro->guard = &g;
	ro->guarded = g.given;
	ro->name = "record";
	if (pa->staged && !pa->adapter && (rc = learn_first(ro, command, &pl)) >= 0)
		goto out;
	ro->env_set = (const char **)pl.run.env;
	ro->labels = labels.v;
	ro->nlabels = labels.n;
	struct record_result res = RECORD_RESULT_INIT;
	rc = record_run(ro, command, &res) ? SB_EXIT_FAILURE : res.exit_code;
	record_result_release(&res);
out:
	for (size_t i = 0; i < labels.n; i++) {
		free(labels.v[i].key);
		free(labels.v[i].value);
	}
	free(labels.v);
	free(default_out);
	free(pa->sets);
	probe_plan_release(&pl);
	guard_opts_release(&g);
	return rc;
}
