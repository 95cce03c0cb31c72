/* plot.h -- memory charts drawn by gnuplot: memory over time and per-stage peaks
 *
 * gnuplot is an external program found on PATH, never linked. Each chart is a
 * gnuplot script written in full by this module (data inline as datablocks,
 * fixed sizes, fonts and number formats, no timestamps), piped to gnuplot's
 * stdin; the same traces give the same script and therefore the same SVG bytes.
 *
 * The charts (plot_charts[], one row each), written to opts->out_dir:
 *   memory.{png,svg}  memory over time, one panel per run (per mode, runs
 *                     overlaid, when there are many runs): footprint, GPU
 *                     memory where sampled, system swap growth since the run's
 *                     start, the machine's RAM as a dashed labelled line when
 *                     known, stage bands with their names in rows above the
 *                     panel (never overlapping: a name that fits nowhere is
 *                     left out, the last stage always named), a marker where a
 *                     run ended early; each panel's title says how its run
 *                     ended ("completed", "stopped by the guard in decode",
 *                     "... where texture begins");
 *   stages.{png,svg}  per-stage peak footprint, drawn from the table model
 *                     (analyze/table.h): grouped bars per stage, one per mode,
 *                     bar = the highest run, whiskers = the range across runs;
 *                     --supplement cells hatched with a legend entry naming the
 *                     file; a stage whose swap rose (table_cell.swap_rose, by
 *                     TABLE_SWAP_FLOOR or more) outlined in red with "swap +X"; "stopped" and "not reached" (two lines) written on
 *                     the chart; the RAM line as in memory.
 * Both: y ranges that hold the data and the RAM line with a small margin; the
 * --title and --note text when given; sizes in GB = 2^30 bytes.
 *
 * Call order, from the command or from compare:
 *   struct plot_opts o = PLOT_OPTS_INIT;  (set out_dir, format, ram_bytes, title, ...)
 *   plot_runs(&o, traces, runs, n)        (prints each path written on stdout)
 *
 * The lower layer (struct plot_model, plot_charts[]) is public for tests: a
 * model of what is drawn, built from traces by plot_model_build(), turned into
 * a gnuplot script by each chart's script generator.
 */
#ifndef SB_PLOT_H
#define SB_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../analyze/table.h"
#include "../common/util.h"

struct trace;
struct trace_sample;
struct run_entry;
struct plot_samples;

enum plot_format { PLOT_PNG = 0, PLOT_SVG };

struct plot_opts {
	const char *out_dir;     /* default "." (created when missing) */
	enum plot_format format; /* default PLOT_PNG */
	uint64_t ram_bytes;      /* the machine's RAM for the line; 0 = the start
				  * records' host.memory, none when absent */
	const char *gnuplot;     /* program, looked up on PATH; default "gnuplot" */
	bool quiet_paths;        /* do not print the paths written */
	const char *title;       /* a title over every chart (a post's); NULL for none */
	const char *note;        /* a line of small print under every chart; NULL for none */
	/* --supplement runs: they fill stages of the stages chart that no main run
	 * of their mode entered (as in `table`), drawn hatched with a legend entry
	 * naming their file; they get no panel of their own. */
	const struct trace *supplements;
	const struct run_entry *const *supplement_runs; /* NULL, or one entry (or NULL) each */
	size_t nsupplements;
	/* NULL, or one per trace: its samples as read by plot_read_trace(), the
	 * traces then being summaries (trace_read_summary); NULL: taken from
	 * the traces' samples (trace_read) */
	const struct plot_samples *samples;
	/* NULL, or the rows of the stages chart, as `table --stages` picks them
	 * (compare's report, for very many stages, the ones with the highest
	 * peaks); the memory chart's bands are every stage either way */
	const char *const *stages;
	size_t nstages;
};
#define PLOT_OPTS_INIT { .out_dir = ".", .format = PLOT_PNG }

#define PLOT_GNUPLOT_MISSING "gnuplot not found: install the Debian package gnuplot-nox"

/*
 * Draw every chart of plot_charts[] for n runs. traces[i] must have been read
 * (trace_read); runs is NULL or holds n pointers, each the run's runs.json
 * entry or NULL (stageload's "exit 3 = stopped by the guard" comes from there).
 * Writes OUT_DIR/NAME.EXT for each chart and prints each path on stdout.
 * Returns 0, or -1 after error(): no gnuplot (PLOT_GNUPLOT_MISSING), gnuplot
 * failed (its own message quoted), no run with samples, an unwritable
 * directory.
 */
int plot_runs(const struct plot_opts *opts, const struct trace *traces,
	      const struct run_entry *const *runs, size_t n);

/* ---- the model: what is drawn ------------------------------------------- */

struct plot_series {
	size_t n;
	double *t;  /* seconds since the run started, ascending */
	double *gb; /* value in GB (2^30 bytes) */
};

/*
 * A trace's samples as the memory chart draws them. Up to 65,536 points a
 * series they are all there, in time order; past that, reduced while read:
 * on a grid of 4,096 time buckets over the run, each bucket's lowest and
 * highest point at their own times, then the last point, so every peak (a
 * spike of one sample) is drawn and the memory does not grow with the trace.
 */
struct plot_samples {
	struct plot_series footprint, gpu, dev;
	struct plot_series swap; /* growth since the first sample that has swap_used */
	struct plot_series mapped; /* mapped data files (not in the footprint) */
	bool any;                /* the trace has a sample */
	double t_first, t_last;  /* the first and last sample's t */
};

/*
 * Read PATH for the charts in one pass (plots/reduce.c): *tr as
 * trace_read_summary() gives it (enough for the analysis and the stages
 * chart), *ps its samples reduced as they are read. Returns and prints as
 * trace_read_summary() does; release *tr with trace_release() and *ps with
 * plot_samples_release() either way.
 */
int plot_read_trace(const char *path, struct trace *tr, struct plot_samples *ps);
/* The same reduction of samples in memory (sorted by t or not). */
int plot_samples_of(const struct trace_sample *samples, size_t n, struct plot_samples *ps);
void plot_samples_release(struct plot_samples *ps); /* NULL ok */

struct plot_band {
	double t0, t1; /* seconds */
	char *name;    /* stage name */
};

enum plot_outcome {
	PLOT_COMPLETED = 0, /* ran to its end */
	PLOT_STOPPED,       /* stopped by the guard */
	PLOT_KILLED,        /* ended by a signal, or the recorder died */
	PLOT_FAILED,        /* exited non-zero on its own */
};

struct plot_run {
	char *mode;      /* "eager", "staged"; "run" when the trace names none */
	int run;         /* 1-based within its mode */
	struct plot_series footprint, gpu, swap; /* n = 0 when the trace lacks it;
						   * swap = growth since the first sample */
	struct plot_series dev; /* the probe's device memory (devmem samples) */
	struct plot_series mapped; /* mapped data files (mapped samples) */
	const char *dev_label;  /* "MPS driver", "CUDA reserved", "device" (static) */
	struct plot_band *bands; /* one per stage window, in time order */
	size_t nbands;
	double t_last;   /* the last sample's t */
	double peak_gb;  /* the run's peak footprint */
	uint64_t ram_bytes; /* 0 = unknown */
	enum plot_outcome outcome;
	char *outcome_text; /* "stopped by the guard", ...; NULL when completed */
	char *ended_in;  /* the stage it ended in when not completed */
	char *ending;    /* how it ended, for the panel title: "completed",
			  * "stopped by the guard in decode", "stopped by the
			  * guard where texture begins" (the stop came within
			  * max(2 intervals, 1 s) of the stage's event, or before
			  * any sample of the stage) */
	double stop_t;   /* when it ended: the guard's stop event, else t_last */
};

/* What is drawn: the runs over time, and the per-stage table of their peaks. */
struct plot_model {
	struct plot_run *runs;     /* one per trace, in the order given */
	size_t nruns;
	struct table_run *analyses; /* the same runs analysed, then the supplements
				     * (the table points into them) */
	size_t nanalyses;           /* nruns + the supplements */
	struct table table;        /* per-stage peaks by mode (analyze/table.h) */
};
#define PLOT_MODEL_INIT { 0 }

/*
 * Build the model of n traces (runs as for plot_runs; opts->ram_bytes
 * overrides the traces' host memory). Returns 0 and *out (release with
 * plot_model_release), or -1 after error() when no trace has a sample.
 */
int plot_model_build(const struct plot_opts *opts, const struct trace *traces,
		     const struct run_entry *const *runs, size_t n, struct plot_model *out);
void plot_model_release(struct plot_model *m); /* NULL ok; leaves PLOT_MODEL_INIT */

/* ---- the history chart: one metric over commits ---------------------------
 *
 * What `stagebench history` hands the chart (the history model of analyze/
 * turned into plain numbers): per mode and stage, one point per commit, in
 * commit order. Drawn as one panel per mode (eager and staged apart), one
 * line per stage, each point's spread across its runs as an error bar,
 * points where `check` between neighbouring commits found a regression ringed
 * in red, dirty checkouts marked with "*" and a grey band.
 */
struct plot_history_point {
	bool has_value;   /* false: the stage has no value at this commit (a gap) */
	double value;     /* the point: the highest run, in `unit` */
	double lo, hi;    /* the spread across the commit's runs */
	bool regression;  /* check against the previous commit flagged it */
	bool failed;      /* no run completed the stage here: a cross, "failed" */
};

struct plot_history_series {
	const char *mode;
	const char *stage;
	struct plot_history_point *points; /* ncommits of them */
};

struct plot_history {
	const char *metric;   /* "peak footprint", "kernel peak", "stage time" */
	const char *unit;     /* "GB", "s": the axis label and the values' unit */
	const char *const *commits; /* tick labels (short hashes), in order */
	const char *const *subjects; /* per commit: a second tick line where it fits; NULL */
	const bool *dirty;    /* per commit: the checkout had local changes; NULL for none */
	size_t ncommits;
	const struct plot_history_series *series;
	size_t nseries;
};

/* The history chart's script (plots/history.c), writing `out_path`. */
void plot_history_script(struct strbuf *sb, const struct plot_history *h,
			 const struct plot_opts *opts, const char *out_path);
/* Draw it to OUT_DIR/NAME.EXT (NAME e.g. "history-peak"), printing the path
 * like plot_runs. Returns 0, or -1 after error(). */
int plot_history(const struct plot_opts *opts, const struct plot_history *h, const char *name);

/* GB (2^30 bytes) as a double. */
double plot_gb(uint64_t bytes);

/*
 * The charts: a table with one row per chart kind. Each row's script
 * generator appends a whole gnuplot script to *sb that writes `out_path` (its
 * format from opts->format); the script depends only on its arguments.
 * Adding a chart is one row here and one file in plots/.
 */
struct plot_chart {
	const char *name; /* file name without the extension: "memory", "stages" */
	void (*script)(struct strbuf *sb, const struct plot_model *m, const struct plot_opts *opts,
		       const char *out_path);
};
extern const struct plot_chart plot_charts[];
extern const size_t plot_ncharts;

/* The terminal block of a script: svg, or pngcairo with libgd's png as a fallback. */
void plot_terminal(struct strbuf *sb, enum plot_format fmt, int width, int height);
/* memory over time, one panel per run (plots/memory.c) */
void plot_memory_script(struct strbuf *sb, const struct plot_model *m, const struct plot_opts *opts,
			const char *out_path);
/* per-stage peaks by mode, from m->table (plots/stages.c) */
void plot_stages_script(struct strbuf *sb, const struct plot_model *m, const struct plot_opts *opts,
			const char *out_path);

/*
 * Run gnuplot (looked up on PATH; `program` NULL = "gnuplot") with `script`
 * on its stdin, no shell. Returns 0, or -1 after error(): PLOT_GNUPLOT_MISSING
 * when it is not on PATH, or "gnuplot failed: <its stderr>" when it exits
 * non-zero or prints an error.
 */
int plot_run_gnuplot(const char *program, const char *script, size_t len);

/* plot_run_gnuplot() for n scripts at once, each its own gnuplot running
 * beside the others. rcs[i] is script i's result; the first failure is the
 * one reported (after error()), the scripts after it -1 with nothing said,
 * as if they had not run. Returns 0 when every script drew, else -1. */
int plot_run_gnuplots(const char *program, const char *const *scripts, const size_t *lens,
		      size_t n, int *rcs);

/* True when `program` (NULL = "gnuplot") is an executable on PATH; compare
 * checks this before its runs so a missing gnuplot is reported up front. */
bool plot_have_gnuplot(const char *program);

#endif
