/* compare.h -- the compare engine: plan and run a pipeline's variants, then report
 *
 * The compare wing's one public header: compare_execute() and its options, and
 * (through plan.h) the plan of each run, which cli/ and the unit tests call
 * directly. session.c, report.c, compare_parts.c, learn.c and campaign.c share
 * compare_int.h and campaign.h inside the wing.
 */
#ifndef SB_COMPARE_H
#define SB_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../conditions.h"
#include "plan.h"

struct guard_opts;
struct strbuf;

/* Run k (0-based) of an alternating schedule of nvariants variants: the
 * variant index and the repetition (1-based). E S E S for 2 variants. */
void compare_schedule(size_t nvariants, size_t k, size_t *variant, int *rep);

/*
 * What a failed command said last on its stderr (TEXT, LEN bytes, its tail),
 * one line, into OUT: the exception line of its last Python traceback
 * ("RuntimeError: ..."), else the probe's last "stagebench_probe: ..." line
 * that says what failed, else the last non-empty line; at most
 * COMPARE_ERROR_LINE_MAX bytes. Returns false (OUT untouched) when there is none.
 */
#define COMPARE_ERROR_LINE_MAX 300
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
