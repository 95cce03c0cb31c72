/* table.h -- the per-stage peak table by mode: one model, three renderers
 *
 * Call order:
 *   struct table t = TABLE_INIT;
 *   table_build(&t, runs, nruns, stages, nstages);  the model, from analysed runs
 *   table_render_md(&t, &sb) | table_render_csv(&t, &sb) | table_render_json(&t, &sb)
 *   table_release(&t);
 *
 * The model (struct table) keeps every figure unrounded, in bytes and seconds;
 * markdown rounds (GB = 2^30 bytes, one decimal), CSV and JSON do not.
 *
 * Grouping: runs are grouped by their mode ("(none)" when the trace has no
 * mode), columns in order of first appearance among the main runs. When the
 * runs name more than one host (start.host.name; a run without one counts as
 * host "unknown"), a peak on one machine is not a figure for another: runs
 * are grouped by mode and host, "MODE@HOST", and `hosts` lists the hosts. Rows are
 * the stages in order of first appearance (main runs first, then
 * supplements), or exactly `stages` when given.
 *
 * A cell (mode M, stage S) is computed from the main runs of M that entered
 * S; when none did, from M's supplement runs that entered S (a supplement only
 * fills stages no main run of its mode entered). Of those runs:
 *   - runs that completed S (and had samples in its window) give the range
 *     of their peaks, "X to Y GB" or "X GB" when both round equal;
 *   - runs that ended in S (stopped by the guard, killed by a signal, ...)
 *     are grouped by how they ended: "stopped by the guard at X GB" alone,
 *     or after the range: "; 1 run stopped by the guard at X GB";
 *   - entered but no sample in any window: "no sample";
 *   - no run entered S: "not reached".
 *
 * Comparisons: each mode after the first against the first. For each stage
 * that both completed (with samples), the differences first - second over
 * every pair of their runs (positive: the second mode used less).
 *
 * Swap: a footprint does not count pages already swapped out, so on a machine
 * whose memory is shared (Apple silicon: CPU and GPU in one pool) a variant
 * that offloads can show a low footprint while the machine swaps. Each cell
 * carries the stage's swap rise (the largest rise of system swap within one of
 * its windows, analysis.h) over the runs behind it, and `swap_rose` marks a
 * cell whose swap rose by TABLE_SWAP_FLOOR or more (the stages chart marks
 * those). A comparison says "swap_worse" for a stage where the second mode's
 * swap rose more than the first's by more than TABLE_SWAP_FLOOR, and for the
 * whole run when the second mode's largest run swap rise exceeds the first's
 * by that much: the markdown then never says the second mode used less memory;
 * it says the footprint was lower but swap grew, and how the runs ended.
 *
 * Versions: when the columns' runs imported different versions of Python or a
 * library (versions.h), markdown says so before the table ("Versions differ:
 * torch 2.6.0 (eager) / 2.15.0 (staged).") and JSON lists them
 * ("versions_differ"); JSON gives each run's "versions" when its trace names
 * any. Nothing is said when they agree or are unknown.
 *
 * Readers: which reader read each main run's footprint (analysis.h, common/reader.h),
 * per mode and over the table; `readers_differ` when two known readers are among them.
 * The markdown opens with one line naming them (table_readers.c), which the verdict
 * opens with too: "Footprint reader: cgroup v1 (every run).", the reader's caveat
 * after it where it has one (per-process, unknown), and, when the readers differ,
 * that the figures are not comparable as they are. JSON gives each run's "reader"
 * and "readers_differ".
 *
 * Device memory: each cell carries the stage's device peak (the probe's MPS
 * driver or CUDA reserved figure, analysis.h) over the runs behind it; the
 * markdown adds a second table, saying whether the figures are sampled (MPS:
 * a spike shorter than the interval can be missed) or exact (CUDA's
 * max_memory_reserved). Runs without device readings change nothing.
 *
 * Mapped files: each cell carries the stage's peak of mapped data files
 * (analysis.h: model weights mapped rather than copied, not in the footprint)
 * and its major page faults over the runs behind it; each comparison the
 * differences of the mapped peaks per stage (`mapped`, as `stages` for the
 * footprint). When a stage's mapped peak reaches TABLE_MAPPED_FLOOR the
 * markdown adds a mapped table, names both figures in its verdict, and a
 * major-faults table when a stage had any.
 *
 * Resident total: what the machine holds for a stage, its footprint peak plus
 * its mapped peak (both the stage's, from one run; the two may peak at
 * different moments, so it is at most what was held at once, never less:
 * the figure a machine must hold for the stage to run without reading its
 * model files back from disk). Each cell carries it over the runs behind
 * it (completed, with samples), each comparison its differences (`totals`).
 * When the mapped table is shown (mapped_shown), the verdict leads with it
 * (table_total.c): the stage where the second mode held least against the
 * first, each mode's largest total with its two parts, and the stages where
 * the second mode held more beyond the noise (TABLE_TOTAL_FLOOR, or more
 * when its own runs spread more) with the reason when the trace gives one.
 *
 * The model does not own the runs: `runs` must outlive it (mode and stage
 * names point into them).
 */
#ifndef SB_TABLE_H
#define SB_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/util.h"
#include "analysis.h"
#include "versions.h"

struct table_run {
	struct analysis a;
	bool supplement;
};

/* Runs of one mode that ended in a stage the same way. */
struct table_ending {
	enum run_outcome outcome;
	int code;             /* signal or exit code */
	size_t nruns;
	size_t nsampled;      /* of which with samples in the window */
	uint64_t min_bytes, max_bytes; /* over the sampled ones */
};

#define TABLE_SWAP_FLOOR (256ull << 20) /* swap moves by less between identical runs */

struct table_cell {
	size_t nentered;      /* runs (of the source below) that entered the stage */
	bool from_supplement; /* figures come from --supplement runs */
	size_t ncompleted;    /* completed it with samples */
	double max_seconds;   /* the longest it lasted in those runs */
	uint64_t min_bytes, max_bytes;
	size_t nendings;
	struct table_ending endings[5]; /* one per outcome at most */
	bool has_swap;        /* some run behind the cell had swap_used samples in it */
	uint64_t swap_min, swap_max; /* the stage's swap rise over those runs */
	bool swap_rose;       /* swap_max >= TABLE_SWAP_FLOOR */
	bool has_device;      /* some run behind the cell read device memory in it */
	uint64_t device_min, device_max; /* the stage's device peak over those runs */
	bool device_sampled;  /* one of them is sampled (MPS), not a peak counter's */
	bool has_mapped;      /* some run behind the cell had mapped samples in it */
	uint64_t mapped_min, mapped_max; /* the stage's mapped peak over those runs */
	bool has_majflt;
	uint64_t majflt_min, majflt_max; /* the stage's major faults over those runs */
	bool has_total;       /* some run completed it with samples: its resident total */
	uint64_t total_min, total_max; /* footprint peak + mapped peak over those runs */
};

struct table_mode {
	const char *name;
	size_t nruns;         /* main runs */
	size_t *runs;         /* indices into the runs array, main runs only */
	/* per-run ranges over the main runs */
	bool has_peak;
	uint64_t peak_min, peak_max;
	bool has_swap;
	uint64_t swap_rise_min, swap_rise_max;
	double wall_min, wall_max;
	double load_s_min, load_s_max;
	size_t loads_min, loads_max;
	uint64_t load_bytes_min, load_bytes_max;
	/* The first main run (compare's run 1) is an outlier against the mode's
	 * other completed runs (TABLE_FIRST_* below): its wall time, its loading
	 * time or both; the figures are its own and the median of the others. */
	bool first_slow_wall, first_slow_load;
	double first_wall, others_wall, first_load, others_load;
	unsigned readers;     /* 1u << enum sb_reader for each reader of its main runs that
			       * have a footprint sample (unknown when none has) */
};

/* A mode's first run is an outlier when it and at least one other run of the
 * mode completed, and its wall time is more than TABLE_FIRST_RATIO times the
 * median of the others' and TABLE_FIRST_WALL_S seconds above it, or its
 * loading time (the load events' seconds) more than TABLE_FIRST_RATIO times
 * theirs and TABLE_FIRST_LOAD_S above it. A first run often pays for a cold
 * page cache, files built or fetched, caches warmed: --warmup 1 runs each
 * variant once, apart, first. Nothing is left out of the figures for it. */
#define TABLE_FIRST_RATIO 1.5
#define TABLE_FIRST_WALL_S 1.0
#define TABLE_FIRST_LOAD_S 0.5

struct table_stage_diff {
	size_t stage;         /* row index */
	int64_t min_less, max_less; /* bytes the second mode used less (negative: more) */
	bool swap_worse;      /* the second mode's swap rose more here (see above) */
};

struct table_comparison {
	size_t mode, against; /* mode indices: `mode` is compared against `against` */
	struct table_stage_diff *stages;
	size_t nstages;
	bool swap_worse;      /* over whole runs: the second mode's swap rose more */
	struct table_stage_diff *mapped; /* the same for the mapped peaks (swap_worse unused) */
	size_t nmapped;
	struct table_stage_diff *totals; /* the same for the resident totals (swap_worse unused) */
	size_t ntotals;
};

/* Resident totals that differ by less are the same (TABLE_MAPPED_FLOOR for
 * each of its two parts). */
#define TABLE_TOTAL_FLOOR (16ull << 20)

/* Mapped peaks that differ by less are the same (page-granular readings of
 * the same files; a different page or two resident at a stage's end). */
#define TABLE_MAPPED_FLOOR (8ull << 20)

struct table {
	const struct table_run *runs;
	size_t nruns;
	struct table_mode *modes;
	size_t nmodes;
	const char **stages;  /* row names */
	size_t nstages;
	struct table_cell *cells; /* nstages * nmodes, row-major: cells[s * nmodes + m] */
	struct table_comparison *comparisons; /* nmodes - 1 of them */
	size_t ncomparisons;
	char **groups;        /* per run "MODE@HOST" when hosts > 1; NULL otherwise */
	const char **hosts;   /* the hosts, in order of first appearance, when more than one */
	size_t nhosts;
	bool swap_rose;       /* some cell's swap_rose: markdown adds the swap table */
	bool has_device;      /* some cell's has_device: markdown adds the device table */
	bool has_mapped;      /* some cell's has_mapped (JSON and CSV give the figures) */
	bool mapped_shown;    /* some cell's mapped_max >= TABLE_MAPPED_FLOOR: markdown adds
			       * the mapped table and names it in the verdict (a run that
			       * maps no model file reads as before) */
	bool any_majflt;      /* some cell's majflt_max > 0: ... and the major-faults table */
	const char *device_label; /* "MPS driver", "CUDA reserved", "device" (the first run's) */
	double device_interval; /* the largest sampling interval of those runs, 0 unknown */
	struct versions_diff versions; /* versions that differ between the columns'
					* main runs (versions.h); labels are the
					* column names */
	unsigned readers;     /* the modes' readers together (table_mode.readers) */
	bool readers_differ;  /* the main runs name two readers or more (unknown aside):
			       * their figures are not comparable as they are */
};
#define TABLE_INIT { 0 }

/* Build the model. `stages` (NULL for all) lists the rows. Returns 0, or -1
 * after error() when there are no main runs. */
int table_build(struct table *t, const struct table_run *runs, size_t nruns,
		const char *const *stages, size_t nstages);
const struct table_cell *table_cell(const struct table *t, size_t stage, size_t mode);
void table_render_md(const struct table *t, struct strbuf *out);
/* The verdict alone, as table_render_md words it: the comparison sentences and
 * the first-run outliers (markdown text, names escaped). */
void table_render_verdict(const struct table *t, struct strbuf *out);
void table_render_csv(const struct table *t, struct strbuf *out);
void table_render_json(const struct table *t, struct strbuf *out);
void table_release(struct table *t); /* NULL ok */

/* table_readers.c: the modes' readers, from their main runs (table_build calls it);
 * the markdown line that names them (names escaped by the caller's view). */
void table_readers(struct table *t);
void table_readers_md(const struct table *t, struct strbuf *out);

/* table_total.c: the verdict's sentence on what the machine holds (the
 * comparison c: markdown, names escaped by the caller's view); the resident
 * total's table (its cells "X GB (F + M)"). */
void table_total_sentence(const struct table *t, const struct table_comparison *c,
			  struct strbuf *out);
void table_total_table_md(const struct table *t, struct strbuf *out);

/* A markdown table of one cell kind: a row per stage, a column "MODE, WHAT" per mode. */
void table_stage_md(const struct table *t, struct strbuf *out, const char *what,
		    void (*cell)(const struct table_cell *, struct strbuf *));

/* "20.4 GB" or "11.4 to 11.5 GB" (one value when both round equal). */
void table_gb_range(uint64_t lo, uint64_t hi, struct strbuf *out);

#endif
