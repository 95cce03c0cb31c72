/* check.h -- did a new run set get heavier, slower or different? regressions against a baseline
 *
 * The model behind `stagebench check --baseline DIR RUN_DIR`. Two sets of
 * runs of the same pipeline (the baseline, and the candidate: a new commit, a
 * new torch, ...) are compared per mode and per stage, with the baseline's
 * own run-to-run spread as the noise.
 *
 * What is compared, per mode x stage
 * ----------------------------------
 *   peak footprint      the stage's peak under the window rule (analysis.h)
 *   kernel peak (rss),  the largest `peak` event of that metric for the stage
 *   kernel peak (footprint)
 *   swap rise           system swap: the largest swap_used in the stage's
 *                       windows minus the first swap_used in that window
 *                       (the largest over its windows), >= 0
 *   device peak         the stage's device memory as the probe read it (MPS
 *                       driver memory, sampled; CUDA reserved, its exact
 *                       max_memory_reserved): stage_stats.device_peak
 *   peak mapped         the stage's peak of mapped data files (model weights
 *                       mapped, not copied; not in the footprint):
 *                       stage_stats.mapped_peak
 *   resident total      what the machine holds for the stage: peak footprint
 *                       + peak mapped (table.h), where the stage's mapped
 *                       peak reaches TABLE_MAPPED_FLOOR (elsewhere it is the
 *                       footprint again)
 *   stage time          window duration: stage event to the next stage
 *                       event (stage_stats.seconds)
 *   load time           the seconds of the load and reload events of the
 *                       stage (their "stage", else the stage in force);
 *                       0 for a stage without loads in a run that has some
 *   outcome             how far the runs got (below)
 *   latent NAME         the sampler outputs (latents.h)
 * Larger is worse for every number. A run's value of a metric counts only
 * when the run completed the stage (an interrupted stage's peak and time are
 * cut short) and the trace has the metric (samples with a footprint, `peak`
 * events, swap_used, load events).
 *
 * The noise rule (numbers)
 * ------------------------
 * For each mode x stage x metric, b_1..b_n are the baseline runs' values and
 * c_1..c_m the candidate's. With n >= 2 and m >= 1:
 *   fixed   = max(threshold, floor)
 *   noise   = max(max(b) - min(b),             the baseline's own spread
 *                 max(c) - min(c),             the candidate's own spread
 *                 K * pooled * max(b))         the mode's pooled noise
 *   allowed = max(fixed, noise)
 *   threshold: memory metrics --max-growth: a percentage of max(b) (default
 *              5%) or a size ("512M"); times --max-time-growth: a percentage
 *              of max(b) (default 10%) or a duration ("2s").
 *   floor:     64 MiB for memory, 0.5 s for times. A change smaller than the
 *              floor is never judged: the meter, the allocator and the
 *              scheduler move a process by that much between identical runs.
 *   pooled:    the pooled relative standard deviation of the metric over every
 *              stage and both sides of the mode: for each stage and side with
 *              at least 2 values whose mean is at least CHECK_NOISE_MIN_FLOORS
 *              floors, the values' squared relative deviations from their mean,
 *              summed and divided by the summed degrees of freedom (n - 1). Two
 *              values of one stage say little about its noise; every stage of
 *              every run together says more, on the assumption that noise is
 *              roughly proportional to the value. K = CHECK_NOISE_K (3).
 *   shift:     times only: the median over stages (baseline median at least
 *              CHECK_SHIFT_MIN_FLOORS floors, 0.1 s; at least
 *              CHECK_SHIFT_MIN_STAGES of them) of
 *              median(c) / median(b). A machine busier (or idler) for the whole
 *              candidate moves every stage; a regression moves one. A shift
 *              above 1 raises the baseline's max(b) for regressions, one below
 *              1 lowers its min(b) for improvements; 1 otherwise.
 *   wander:    times only, with CHECK_WANDER_MIN_STAGES or more such stages:
 *              how far single stages' ratios stray from the shift between
 *              the two sessions (1.4826 x their median absolute deviation,
 *              relative to the shift). A busy machine does not slow every
 *              stage alike; noise is then at least K * wander * max(b) * shift.
 *   regression  when min(c) > max(b) * shift + allowed: every candidate run is
 *               worse than every baseline run by more than the allowed growth;
 *               change = min(c) - max(b) (at least this much worse).
 *   improvement when max(c) < min(b) * shift - allowed (the symmetric rule);
 *               change = max(c) - min(b) (negative).
 *   not judged "too noisy (spread X%)" when the change passes the fixed part
 *               but not the noise (X = noise / max(b)): the data cannot tell
 *               that change from the runs' own noise.
 * With n = 1 the spread is unknown and the metric is not judged: the report
 * lists it under "not judged" ("1 baseline run with a value, 2 needed for
 * the run-to-run spread") rather than guessing; so does a metric the
 * candidate lacks in a stage it completed. With m = 0 (no candidate run completed the
 * stage) the outcome rule speaks instead. A metric no baseline run has (a
 * stageload baseline without `peak` events, a window without samples) is
 * skipped: there is nothing to hold the candidate against.
 *
 * Outcomes
 * --------
 * A stage every baseline run of the mode completed (analysis.h: a later stage
 * was entered, or the run completed) is a regression when a candidate run of
 * that mode did not complete it: it stopped there ("ended in" it, with how the
 * run ended), or never reached it. This needs no spread: one baseline run is
 * enough. Symmetrically, a stage some baseline run did not complete and every
 * candidate run completed is an improvement. One row per stage.
 *
 * Latents
 * -------
 * Per mode, the baseline's runs and the candidate's runs of that mode are put
 * in one latent_set (latents.h) with the baseline as its noise mode. For each
 * latent, over the (baseline run, candidate run) pairs:
 *   - every baseline pair identical and some pair not identical: regression
 *     "identical before, different now";
 *   - the baseline differs run to run and some pair is beyond that spread
 *     (NOISE_BEYOND), or a pair's shape or dtype differs, the latent is
 *     missing on one side, or a copy is unmeasured: regression;
 *   - a corrupt copy (its .npy disagrees with its event): regression, always;
 *   - fewer than two baseline copies (spread unknown) and some pair differs:
 *     not judged.
 * --allow-latent-change turns every latent regression but a corrupt copy
 * into a note ("allowed"). A .npy that cannot be read fails check_run().
 *
 * Modes present on one side only, and stages only the candidate entered, are
 * notes.
 *
 * What could not be compared
 * --------------------------
 * A stage with no completed run of the mode on one side or both has no
 * memory or time to compare: a not-judged row "memory and time" says why ("no
 * completed run in the candidate", "... in the baseline", "... on either
 * side"), one JUnit case skipped with that reason. A stage the candidate's
 * runs did not all complete, where the baseline's did not either (so the
 * outcome rule finds nothing worse), is a not-judged outcome naming the runs
 * and how they ended: a candidate whose runs failed never passes silently.
 * `stagebench check` exits 1 when a candidate run failed, even where the
 * baseline's failed too ("both sides failed"): see check_candidate_failed().
 *
 * Versions: when the baseline's and the candidate's runs imported different
 * versions of Python or a library (versions.h: a new torch is a usual reason
 * for a candidate), markdown says so under its first line ("Versions differ:
 * torch 2.6.0 (baseline) / 2.15.0 (candidate)."), JSON lists them
 * ("versions_differ") and gives each run's "versions", GitHub gets a notice.
 * It judges nothing: the same rules apply. Modes, stages and rows keep the order of first appearance (baseline
 * runs first).
 *
 * Call order and ownership
 * ------------------------
 *   struct check c = CHECK_INIT;          c.opt may be changed before adding runs
 *   check_add_dir(&c, CHECK_BASELINE, dir)     reads every trace of a run directory
 *   check_add_dir(&c, CHECK_CANDIDATE, dir)
 *     or check_add_trace(&c, side, id, &tr, entry) for a trace in memory
 *   check_run(&c)                         fills c.findings
 *   check_regressions(&c), check_render_md / check_render_json
 *   check_release(&c)                     always; NULL ok
 * The check owns everything in it; traces are not kept after they are added.
 *
 * Files, each with one job, none calling back into one that calls it:
 *   check_collect.c  the model: runs read in, values collected, findings counted
 *   check_noise.c    the noise rule's numbers (check_noise.h); reads no runs
 *   check.c          the judging: check_run()
 *   check_text.c     values and findings in words (renderers, history)
 *   check_md.c, check_json.c, check_junit.c, check_github.c   the renderers
 */
#ifndef SB_CHECK_H
#define SB_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/util.h"
#include "analysis.h"
#include "latents.h"
#include "versions.h"

struct trace;
struct run_entry;

#define CHECK_MEM_FLOOR_BYTES (64ull << 20)
#define CHECK_TIME_FLOOR_S 0.5
#define CHECK_NOISE_K 3.0          /* pooled relative SDs a change must pass */
#define CHECK_NOISE_MIN_FLOORS 4.0 /* a stage joins the pool from 4 floors up */
#define CHECK_SHIFT_MIN_STAGES 3   /* stages needed to call a time shift machine-wide */
#define CHECK_SHIFT_MIN_FLOORS 0.2 /* ... each lasting this many floors (0.1 s) or more */
#define CHECK_WANDER_MIN_STAGES 5  /* stages needed to say how far single stages wander */

struct check_options {
	bool growth_is_pct;   /* --max-growth as a percentage of max(b) */
	double growth_pct;
	uint64_t growth_bytes;
	bool time_is_pct;     /* --max-time-growth as a percentage of max(b) */
	double time_pct;
	double time_s;
	bool allow_latent_change;
};
#define CHECK_OPTIONS_INIT                                                     \
	{ .growth_is_pct = true, .growth_pct = 5.0, .time_is_pct = true, .time_pct = 10.0 }

enum check_side_id { CHECK_BASELINE = 0, CHECK_CANDIDATE = 1 };

enum check_metric {
	CM_PEAK = 0,    /* bytes */
	CM_KPEAK_RSS,   /* bytes */
	CM_KPEAK_FP,    /* bytes */
	CM_SWAP,        /* bytes */
	CM_DEVICE,      /* bytes: the probe's device memory (MPS driver, CUDA reserved) */
	CM_MAPPED,      /* bytes: the stage's peak of mapped data files */
	CM_TOTAL,       /* bytes: the resident total, peak footprint + peak mapped (table.h),
			 * where the stage's mapped peak reaches TABLE_MAPPED_FLOOR */
	CM_TIME,        /* seconds */
	CM_LOAD,        /* seconds */
	CM_NNUMERIC,
	CM_OUTCOME = CM_NNUMERIC,
	CM_LATENT,
	CM_MEASURES,    /* "memory and time": a stage with no completed run on a side */
};

enum check_kind { CK_REGRESSION = 0, CK_IMPROVEMENT, CK_NOT_JUDGED, CK_NOTE,
		  CK_PASS /* cases only: judged, nothing found */ };

/* One run, as check sees it. */
struct check_run {
	char *id;            /* the trace's stem ("staged-1") */
	char *mode;
	struct analysis a;
	double *load_s;      /* [a.nstages] */
};

struct check_side {
	char *label;         /* the directory as given ("baseline" for add_trace) */
	struct check_run *runs;
	size_t n, alloc;
};

struct check_finding {
	enum check_kind kind;
	enum check_metric metric;
	char *mode;
	char *stage;         /* NULL for a mode-wide note; not-judged rows of a
			      * mode that differ only by stage are one row whose
			      * stage is "setup, load, work" */
	char *latent;        /* CM_LATENT: "structure" or "structure#2" */
	/* numeric metrics (metric < CM_NNUMERIC): values in bytes or seconds */
	double *base, *cand; /* the runs' values, in run order */
	size_t nbase, ncand;
	double base_min, base_max, cand_min, cand_max;
	double spread, allowed, change; /* change: see the noise rule */
	double shift;        /* the machine-wide time shift applied (1: none) */
	/* words: outcome and latent rows, reasons, notes */
	char *base_text;     /* "completed 2 of 2" */
	char *now_text;      /* "staged-2 stopped by the guard here" */
	char *detail;        /* change or reason in words; NULL for numeric rows */
};

/* One thing check judged: a mode x stage x metric (or latent), and its verdict.
 * CI reports (JUnit) list every case; the findings list only what was found. */
struct check_case {
	char *mode, *stage;
	enum check_metric metric;
	char *latent;        /* CM_LATENT: its label */
	enum check_kind result; /* CK_PASS, CK_REGRESSION, CK_IMPROVEMENT, CK_NOT_JUDGED */
	char *why;           /* not judged: the reason; NULL otherwise */
};

struct check {
	struct check_options opt;
	struct check_side side[2];
	struct latent_set *latents; /* per mode, [nmodes] */
	char **modes;
	size_t nmodes, modes_alloc;
	struct check_finding *findings;
	size_t nfindings, findings_alloc;
	size_t stage_first;  /* check_run: the first finding of the stage being judged */
	struct check_case *cases; /* every judgement, in order */
	size_t ncases, cases_alloc;
	struct versions_diff versions; /* check_run: versions that differ between
					* the baseline's runs and the candidate's
					* (labels "baseline", "candidate") */
};
#define CHECK_INIT { .opt = CHECK_OPTIONS_INIT, .versions = VERSIONS_DIFF_INIT }

/*
 * Add every trace of the run directory DIR (rundir.h order) to a side.
 * Returns the number of runs added; -1 after error() when DIR cannot be
 * listed, holds no traces, or a trace or runs.json cannot be read (the
 * reader names file and line). The first call for a side sets its label.
 */
int check_add_dir(struct check *c, enum check_side_id side, const char *dir);

/* Add one run from a trace in memory. ID names it; its mode is the start
 * record's mode, else ENTRY's, else ID without "-N". ENTRY (runs.json) may be
 * NULL. tr->path locates its latent files. Returns 0, or -1 after error()
 * for a trace with no start record. */
int check_add_trace(struct check *c, enum check_side_id side, const char *id,
		    const struct trace *tr, const struct run_entry *entry);

/* Apply the rules above; fills c->findings. Returns 0, or -1 after error()
 * when a latent copy cannot be read. Call once. */
int check_run(struct check *c);

/* One side's values of a metric for mode x stage (runs that completed it), in
 * run order, into a new array *out. */
size_t check_collect(const struct check_side *sd, const char *mode, const char *stage,
		     enum check_metric m, double **out);

size_t check_count(const struct check *c, enum check_kind kind);
/* Candidate runs that did not complete (a crash, the guard, a signal). */
size_t check_candidate_failed(const struct check *c);
static inline size_t check_regressions(const struct check *c)
{
	return check_count(c, CK_REGRESSION);
}
/* The first finding of this kind for mode, stage and metric, or NULL (tests). */
const struct check_finding *check_find(const struct check *c, enum check_kind kind,
				       const char *mode, const char *stage,
				       enum check_metric metric);

/* "peak footprint", "kernel peak (rss)", ..., "outcome", "latent" */
const char *check_metric_name(enum check_metric m);
/* stage and load time: seconds */
static inline bool check_metric_is_time(enum check_metric m)
{
	return m == CM_TIME || m == CM_LOAD;
}
extern const char *const check_side_names[2];   /* "baseline", "candidate" */

/*
 * Markdown: the line "check: N regressions, M improvements (baseline DIR: X
 * runs; candidate DIR: Y runs)", the versions that differ (above), then the sections Regressions,
 * Improvements, Not judged and Notes (each only when not empty), each a
 * table "| mode | stage | metric | baseline | now | change | noise |" with GB
 * = 2^30 bytes (two decimals under 10 GB, one above) and seconds.
 * JSON: the same facts, numbers in bytes and seconds, every run's value.
 */
void check_render_md(const struct check *c, struct strbuf *out);
void check_render_json(const struct check *c, struct strbuf *out);
/*
 * JUnit XML (check_junit.c): one <testsuite> per mode, one <testcase> per
 * case (classname "MODE.STAGE", name the metric), a <failure> for each
 * regression, <skipped> for each "not judged". No timestamps: the same check
 * gives the same bytes.
 * GitHub Actions (check_github.c): one "::error" line per regression, one
 * "::warning" per not-judged row and one "::notice" per improvement, then
 * the summary line of the markdown.
 */
void check_render_junit(const struct check *c, struct strbuf *out);
void check_render_github(const struct check *c, struct strbuf *out);
/* Words shared by the renderers and history (check_text.c). A regression or
 * improvement row in one line, no markdown: "staged work peak footprint: 400
 * MB to 410 MB (2 runs) -> 700 MB (1 run): +290 MB (+71%); spread 10 MB,
 * allowed 64 MB". A value of metric M (a size or a duration, units.h's fine
 * form; SIGN: "+" before a positive one); a range of N runs' values ("400 MB
 * to 410 MB (2 runs)"). */
void check_finding_line(const struct check_finding *f, struct strbuf *out);
void check_text_value(struct strbuf *sb, enum check_metric m, double v, bool sign);
void check_text_range(struct strbuf *sb, enum check_metric m, double lo, double hi, size_t n);

void check_release(struct check *c);

#endif
