/* compare.h -- the compare engine: plan and run a pipeline's variants, then report
 *
 * cmd_compare (cli/compare.c) reads a pipeline file (runner/pipeline.h),
 * runs its variants alternately (E S E S ...), each one record_run() with
 * the guard on, and then prints and writes the per-stage table, the latent
 * comparison and the run summary. This header holds the pure parts, which
 * the unit tests call directly:
 *
 *   compare_find_share()   where the bundled demo/ and probe/ live;
 *   compare_python()       the {python} placeholder;
 *   compare_default_cache()/compare_default_out()   default directories;
 *   compare_set_option()   one --set KEY=VALUE against the pipeline's defaults;
 *   compare_plan_run()     one run: its files, argv and environment.
 *
 * Call order for a run's plan:
 *   struct compare_setup s = { pipeline, out, probe_dir, python, cache, seed, sets, pythonpath };
 *   struct compare_run r = COMPARE_RUN_INIT;
 *   compare_plan_run(&s, variant, rep, &r);   0, or -1 after error()
 *   ... r.argv, r.env, r.trace_path ...
 *   compare_run_release(&r);
 * Every string in a compare_run is owned by it.
 */
#ifndef SB_COMPARE_H
#define SB_COMPARE_H

#include <stdbool.h>

#include <stdint.h>

#include "conditions.h"
#include "pipeline.h"

struct guard_opts;

/* What every run of one compare shares. All strings are borrowed. */
struct compare_setup {
	const struct pipeline *p;
	const char *out;             /* the output directory (absolute is best) */
	const char *probe_dir;       /* .../probe (holds site/ and stagebench_probe/) */
	const char *python;          /* {python} */
	const char *cache;           /* {cache} */
	const char *seed;            /* {seed}, as text */
	const struct kv_list *sets;  /* --set overrides of "defaults"; NULL for none */
	const char *old_pythonpath;  /* the caller's PYTHONPATH, appended; NULL/"" none */
	const char *adapter;         /* replaces the pipeline's "adapter" (a learned plan,
				      * absolute); NULL: the pipeline's */
};

/* One planned run: variant V, repetition N (1-based). */
struct compare_run {
	char *id;          /* "V-N": the trace's base name and the run's mode-run */
	char *out_dir;     /* OUT/V-N         the pipeline's own outputs ({out}) */
	char *trace_path;  /* OUT/V-N.trace.jsonl.zst */
	char *latents_dir; /* OUT/V-N.latents (STAGEBENCH_LATENTS) */
	char *log_path;    /* OUT/V-N.log     the command's stdout */
	char *err_path;    /* OUT/V-N.err     its stderr, as it came (also shown on ours) */
	char **argv;       /* NULL-terminated: command + variant args, expanded */
	char **env;        /* NULL-terminated "KEY=VALUE": PYTHONPATH, STAGEBENCH_ADAPTER
			    * (when the pipeline names one), then "env", then the
			    * variant's "env" (a later key replaces an earlier one) */
	char **files;      /* NULL-terminated: the pipeline's "files", expanded */
};
#define COMPARE_RUN_INIT { NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL }

/*
 * The placeholder values of one run: python, pipeline_dir, seed, cache,
 * every key of the pipeline's "defaults" (replaced by --set), then out
 * (OUT/V-N; OUT/V when rep is 0, as for "prepare"), run (N) and mode (the
 * variant's name). *vars is filled (kv_set); the caller
 * releases it with kv_release().
 */
void compare_vars(const struct compare_setup *s, const char *variant, int rep,
		  struct kv_list *vars);

/*
 * Variant names become file names in the output directory (V-N.trace.jsonl.zst,
 * V-N/, ...): 1 to COMPARE_VARIANT_NAME_MAX of [A-Za-z0-9._-], not starting
 * with '.'. compare_variant_name_check() says so after error() naming the
 * pipeline file and the name (quoted and escaped); 0 when the name is fine.
 */
#define COMPARE_VARIANT_NAME_MAX 64
bool compare_variant_name_ok(const char *name);
int compare_variant_name_check(const struct pipeline *p, const char *name);

/*
 * Plan run N of variant v (-1 after error() for a variant name that is not
 * compare_variant_name_ok()). PYTHONPATH = PROBE/site:PROBE:the pipeline's
 * "pythonpath" entries (expanded):old PYTHONPATH. Returns 0, or -1 after
 * error() naming the pipeline file and the placeholder that has no value.
 */
int compare_plan_run(const struct compare_setup *s, const struct pipeline_variant *v, int rep,
		     struct compare_run *out);
/* The same for the pipeline's "prepare" command (mode "prepare", rep 0: its
 * files are OUT/prepare.log and OUT/prepare/; no trace is written). Its env has
 * no STAGEBENCH_ADAPTER: it is not a measured run, and the probe fails a run
 * whose adapter's hooks never fire. */
int compare_plan_prepare(const struct compare_setup *s, struct compare_run *out);
void compare_run_release(struct compare_run *r);

/* Remove KEY=... from r->env. */
void compare_run_drop_env(struct compare_run *r, const char *key); /* NULL ok */

/*
 * The probe's environment for a command recorded without a pipeline file
 * (`stagebench record [--adapter A] [--staged] -- COMMAND`): r->env gets
 * PYTHONPATH = PROBE/site:PROBE[:the adapter file's directory]:old PYTHONPATH,
 * STAGEBENCH_ADAPTER (adapter: a module name or a .py path made absolute; NULL
 * for none) and STAGEBENCH_STAGED=1 when staged. Other fields stay NULL.
 */
void compare_plan_adapter(const char *probe_dir, const char *adapter, bool staged,
			  const char *old_pythonpath, struct compare_run *r);

/*
 * Apply "KEY=VALUE" to *sets: KEY must be a key of the pipeline's "defaults".
 * Returns 0, or -1 for a bad value: *why (NULL ok) gets what is wrong (no
 * '=', empty key, a key the pipeline has no default for: the keys it has);
 * nothing is printed.
 */
int compare_set_option(const struct pipeline *p, const char *arg, struct kv_list *sets,
		       struct strbuf *why);

/*
 * Find WHAT (e.g. "demo/pipeline.json", "probe") among, in order:
 * HOME/WHAT (when home is non-empty: $STAGEBENCH_HOME), EXE_DIR/../WHAT,
 * EXE_DIR/../share/stagebench/WHAT, EXE_DIR being the directory of exe (the
 * real path of the running binary; NULL to skip). Returns a malloc'd real
 * path, or NULL (no message) when none exists.
 */
char *compare_find_share(const char *home, const char *exe, const char *what);

/* $STAGEBENCH_PYTHON when set and non-empty, else /usr/bin/python3 when it
 * exists, else "python3" (looked up on PATH). Returns a static string or
 * the environment's. */
const char *compare_python(void);

/* XDG_CACHE_HOME/stagebench/NAME, else HOME/.cache/stagebench/NAME, else
 * .cache/stagebench/NAME. Caller frees. */
char *compare_default_cache(const char *name);

/* "runs/DATE-NAME", "runs/DATE-NAME-COMMIT" or "runs/DATE-NAME-COMMIT-dirty"
 * (commit NULL: none). A '/' in NAME becomes '_'. Caller frees. */
char *compare_default_out(const char *date, const char *name, const char *commit, bool dirty);

/* Run k (0-based) of an alternating schedule of nvariants variants: the
 * variant index and the repetition (1-based). E S E S for 2 variants. */
void compare_schedule(size_t nvariants, size_t k, size_t *variant, int *rep);

/* A fresh default directory: BASE, else BASE-2, BASE-3 ... Caller frees. */
char *compare_fresh_dir(const char *base);

/*
 * What a failed command said last on its stderr (TEXT, LEN bytes, its tail),
 * one line, into OUT: the exception line of its last Python traceback
 * ("RuntimeError: ..."), else the probe's last "stagebench_probe: ..." line
 * that says what failed, else the last non-empty line; at most
 * COMPARE_ERROR_LINE_MAX bytes. Returns false (OUT untouched) when there is none.
 */
#define COMPARE_ERROR_LINE_MAX 300
struct strbuf;
bool compare_error_line(const char *text, size_t len, struct strbuf *out);

/*
 * Which part of a compare to do. A compare spread over machines (a Slurm job
 * array, docs/slurm.md) is its plan, one task per run, then a merge:
 *   COMPARE_ALL    run every run, then report (one machine);
 *   COMPARE_PLAN   print the runs, one line each: "K<TAB>V-N<TAB>V<TAB>N", K the
 *                  0-based task number in schedule order; run nothing;
 *   COMPARE_TASK   run task K only; its runs.json entry goes to
 *                  OUT/runs.d/V-N.json (written atomically), no report;
 *   COMPARE_MERGE  run nothing: gather runs.d/ and the traces of every planned
 *                  run into runs.json, then report as COMPARE_ALL does. A run
 *                  whose trace exists without a runs.d entry is "lost" (its task
 *                  was killed by the engine); a run without a trace is missing;
 *                  both are named, and the exit status is 1.
 */
enum compare_part { COMPARE_ALL = 0, COMPARE_PLAN, COMPARE_TASK, COMPARE_MERGE, COMPARE_LEARN };

/* Everything one compare needs; all borrowed. */
struct compare_opts {
	enum compare_part part;
	size_t task;                  /* COMPARE_TASK: the run, 0-based in schedule order */
	struct compare_setup setup;   /* pipeline, out (absolute), probe, python, cache, seed, sets */
	const struct pipeline_variant *const *variants; /* in the order given */
	size_t nvariants;
	int reps;                     /* runs per variant, >= 1 */
	int64_t interval_ns;          /* sample interval */
	const struct guard_opts *guard; /* every run is guarded with these */
	const char *commit_dir;       /* whose commit each trace's start names */
	bool charts;                  /* draw memory.png and stages.png */
	int warmup;                   /* runs per variant before the timed ones: traces in
				       * OUT/warmup/, left out of runs.json, tables and checks */
	enum cache_state cache_state; /* of the pipeline's "files" before each run */
	bool cache_state_given;       /* cache_state was asked for; else warm when the
				       * pipeline declares files, as-is when not */
	bool no_peak_reset;           /* record_opts.no_peak_reset for every run */
	bool no_prime;                /* no memory primed before the runs (compare
				       * primes by default: runner/conditions.h) */
	const char *learn_to;         /* COMPARE_LEARN: where the learned plan goes */
};

/*
 * A pipeline file without an "adapter" is staged by a plan learned from one
 * eager run: when one of the variants compared is staged, COMPARE_ALL learns it after "prepare" into OUT/plan.py (the run
 * in OUT/learn/, STAGEBENCH_LEARN set, probe/stagebench_probe/learn.py) and every
 * run then uses it as its adapter; COMPARE_LEARN (stagebench learn) runs
 * prepare and the learning run only and writes the plan to o->learn_to.
 * The learning run is the first of o->variants that does not set
 * STAGEBENCH_STAGED (the pipeline's first such variant when all do).
 */

/*
 * Run the pipeline's "prepare" command once (a guarded record_run() without
 * a trace, its stdout in OUT/prepare.log; when it fails, nothing else runs:
 * exit 3), then o->warmup rounds of the variants (OUT/warmup/), then the
 * schedule (E S E S ...): each run a guarded record_run() with the command's
 * stdout in OUT/V-N.log, the page cache of the pipeline's "files" brought to
 * o->cache_state first (said in the trace's start record); runs.json after
 * every run; then a warning for each run much slower than the rest of its
 * variant (run_much_slower()), and print and write table.md, latents.md, the
 * run summary, the charts and report.html (its path printed). Returns the
 * exit status, the first that applies: 128+N when signal N interrupted it
 * (SIGINT/SIGTERM/SIGHUP at any moment while it runs: the current run is
 * stopped, no other starts, the results of the runs done are written);
 * 3 (SB_EXIT_FAILURE) when a command could not start, the recorder failed
 * or the results could not be read or written; 1 (SB_EXIT_FINDING) when a
 * latent differs beyond noise (or is missing from a run that got to its end,
 * changed shape or dtype, or a copy is corrupt) or a run's command failed on its own (non-zero exit,
 * killed); else 0. A run the guard stopped is a result, not a finding.
 */
int compare_execute(const struct compare_opts *o);

/* stagebench report: a compare's report written again, report.html first. */
struct report_opts {
	const char *dir;            /* a compare's output directory (runs.json and its
				     * traces), or NULL */
	const char *const *traces;  /* traces given instead of (or beside) dir */
	size_t ntraces;
	const char *out;            /* where the files go: dir, or the traces' directory */
	bool charts;                /* draw the charts (gnuplot) */
};

/*
 * Read the runs (runs.json's entries and their traces; when runs.json is
 * missing or malformed, the traces of dir in name order, each ending as its
 * trace says; the traces given, likewise) and write what compare writes at its
 * end (table.md, latents.md, the charts, report.html) into o->out, printing
 * only report.html's path. What could not be read (runs.json, a trace missing,
 * cut short or without a start record) is said on the page. Returns 0; 1 when
 * a run failed or a latent differs (as compare); 3 when no run could be read
 * or a file could not be written (the page is still written when it can be).
 */
int report_execute(const struct report_opts *o);

#endif
