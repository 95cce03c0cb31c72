/* plan.h -- plan.c's interface: each run of a compare planned (its command,
 * environment and files), --set, where bundled files live, default directories
 *
 * cmd_compare (cli/compare.c) reads a pipeline file (runner/pipeline.h) and
 * hands it to compare_execute() (compare.h), which runs its variants
 * alternately (E S E S ...). This header holds the pure parts, which cli/
 * and the unit tests call directly:
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
#ifndef SB_COMPARE_PLAN_H
#define SB_COMPARE_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "../pipeline.h"

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


/* A fresh default directory: BASE, else BASE-2, BASE-3 ... Caller frees. */
char *compare_fresh_dir(const char *base);

#endif
