/* analysis.h -- the per-run model: stage windows, peaks, swap, loads, releases
 *
 * One `struct analysis` describes one run (one trace): how it ended, which
 * stages it entered, each stage's peak under the window rule, swap, loads and
 * releases. `analyze`, `table`, `plot` and `check` all read runs through it.
 *
 * Call order:
 *   struct analysis a = ANALYSIS_INIT;
 *   analysis_open(path, &a)               reads the trace and a runs.json beside it
 *     or analysis_run(&tr, entry, &a)     on a trace already in memory
 *   ... read the fields ...
 *   analysis_release(&a);                 always, even after a failure; NULL ok
 *
 * The window rule
 * ---------------
 * Stage windows follow the trace's rule, traces/FORMAT.md "Stage windows",
 * implemented once in traces/window.c (the recorder applies the same code).
 * Here: records are sorted by t (the reader does it); the implicit period
 * before the first stage event is the window "setup"; the last window ends
 * at the last sample; a stage entered several times has one window per stage
 * event, and its row (struct stage_stats) aggregates them (maximum of the
 * peaks).
 *
 * How a run ended (enum run_outcome), in order of precedence:
 *   - a runs.json entry (stagebench's or stageload's, beside the trace):
 *     stopped_by "guard" or exit 3 -> RUN_GUARD; stopped_by "signal" or a
 *     signal -> RUN_SIGNAL; exit 128+N from a stageload guard -> RUN_SIGNAL N;
 *     exit 0 -> RUN_COMPLETED (RUN_GUARD when a stageload trace lacks `end`);
 *     other -> RUN_EXIT;
 *   - a stagebench trace (start.format set): its `end` record (stopped_by,
 *     signal, exit code); no `end` at all -> RUN_RECORDER_DIED;
 *   - a stageload trace: `end` -> RUN_COMPLETED, no `end` -> RUN_GUARD
 *     (stageload's guard killed it).
 *
 * A stage is "completed" by a run when the run entered a later stage after
 * it, or when the run completed. The last stage of a run that did not
 * complete is the stage it "ended in".
 *
 * Ownership: struct analysis owns copies of every string it holds; it does
 * not keep a pointer to the trace, which the caller may release at once.
 * Cost: O(samples + events + windows * log samples), no allocation per sample.
 * analysis_open() reads through trace_read_summary(): memory in proportion to
 * the events, not the samples, with the same result as a whole read.
 */
#ifndef SB_ANALYSIS_H
#define SB_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/reader.h"
#include "strindex.h"

struct trace;
struct run_entry;

enum run_outcome {
	RUN_COMPLETED = 0,
	RUN_GUARD,          /* stopped by the guard */
	RUN_SIGNAL,         /* killed by signal `signal` */
	RUN_EXIT,           /* exited with non-zero code `exit_code` */
	RUN_RECORDER_DIED,  /* stagebench trace without `end` */
	RUN_RECORDING,      /* without `end` yet: runs.json says its task still records */
};

/* A kernel high-water mark (`peak` event) set against the samples. */
struct kernel_peak {
	bool present;
	uint64_t bytes;          /* the largest `peak` event of this metric for the stage */
	double t;                /* that event's t */
	bool has_sampled;        /* samples of the same metric exist in its interval */
	uint64_t sampled_bytes;  /* sampled peak of the same metric over [from, t]
				  * (the event's own interval; the stage's window
				  * when the event has no `from`) */
	bool missed_spike;       /* bytes > sampled_bytes * 1.1 */
};

enum { KPEAK_RSS = 0, KPEAK_FOOTPRINT = 1, KPEAK_NMETRICS = 2 };
extern const char *const kernel_peak_metric_names[KPEAK_NMETRICS]; /* "rss", "footprint" */

/* One window: one stage event (or the implicit setup period). */
struct stage_window {
	/* (the flags last: no padding; a run of many stage events has one each) */
	size_t stage;         /* index into analysis.stages */
	double stage_t;       /* the stage event's t; 0 for setup (the run's start) */
	double start_t;       /* window start (after releases); -INFINITY for setup */
	double end_t;         /* next stage event, or the last sample (+INFINITY when none) */
	size_t nsamples;      /* samples with a footprint inside the window */
	uint64_t peak_footprint; /* valid when nsamples > 0 */
	double peak_t;
	/* releases that entering this stage triggered */
	size_t nreleases;
	uint64_t release_bytes;
	double releases_done_t;      /* the last of those releases (valid when nreleases) */
	uint64_t footprint_before;   /* has_before: the last sample strictly before the stage event */
	uint64_t lowest_after;       /* has_low_after: lowest footprint in [releases_done_t, +2 s] */
	uint64_t swap_first, swap_top; /* has_swap: its first and highest swap_used */
	uint64_t devmem_top;         /* when has_devmem */
	uint64_t gpu_top;            /* when has_gpu */
	uint64_t mapped_top;         /* when has_mapped: its largest mapped */
	uint64_t majflt;             /* when has_majflt: the tree's count's rise from the
				      * last sample before it (0: none) to its last */
	bool last;            /* the run's last window (includes the last sample) */
	bool has_before;
	bool has_low_after;
	bool has_swap;               /* a sample in the window had swap_used */
	bool has_devmem;             /* a sample in the window had devmem (the probe's device reading) */
	bool has_gpu;                /* ... had gpu (NVML, from outside) */
	bool has_mapped;             /* ... had mapped */
	bool has_majflt;             /* ... had majflt */
};

/* One row per distinct stage name, in order of first appearance. */
struct stage_stats {
	char *name;
	size_t nwindows;
	size_t nsamples;         /* over all its windows */
	uint64_t peak_footprint; /* max over its windows; valid when nsamples > 0 */
	double seconds;          /* time from its stage events to the next (or the last record) */
	bool completed;          /* see above */
	bool ended_here;         /* the run's last stage and the run did not complete */
	bool has_swap_rise;
	uint64_t swap_rise;      /* largest rise of system swap within one of its windows */
	struct kernel_peak kpeak[KPEAK_NMETRICS];
	/* Device memory (the probe's: MPS driver or CUDA reserved, summed over
	 * CUDA devices): the largest devmem sample in its windows, or figure of
	 * its `gpu` events (bytes, and max_bytes where the device counts a peak:
	 * CUDA's max_memory_reserved, reset when the window starts), summed over
	 * devices. exact: a max_bytes counted (CUDA); else sampled (MPS). */
	bool has_device;
	uint64_t device_peak;
	bool device_exact;
	bool has_gpu;            /* NVML's gpu samples in its windows */
	uint64_t gpu_peak;
	/* Mapped data files (samples' mapped): the largest in its windows; its
	 * major page faults, summed over its windows (pages read back from disk). */
	bool has_mapped;
	uint64_t mapped_peak;
	bool has_majflt;
	uint64_t majflt;
};

/* A load or reload event. */
struct load_info {
	char *name;
	char *stage;           /* the event's "stage"; NULL when absent */
	char *stage_in_force;  /* the stage whose window (or release gap) holds t */
	double t;
	bool reload;
	uint64_t nbytes;
	double seconds;
	size_t seq;            /* its position among the trace's events (a release's too) */
	bool outside;          /* stage set and != stage_in_force */
};

/* A release event (the probe frees a model's storage, at the start of a stage
 * that does not list it, or when asked). */
struct release_info {
	char *name;
	char *stage_in_force;  /* the stage whose window (or release gap) holds t */
	double t;
	size_t seq;            /* its position among the trace's events (a load's too) */
	uint64_t nbytes;       /* 0 when absent */
};

/* A library (or Python) version the run imported: trace.h, trace.versions. */
struct run_version {
	char *name;   /* "python", "implementation", "torch", "diffusers", ... */
	char *value;  /* "3.11.2", "CPython", "2.6.0", ... */
};

struct analysis {
	char *path;
	char *mode;             /* start.mode; NULL when absent */
	char *host;             /* start.host.name; NULL when absent (stageload traces) */
	char *commit;           /* start.commit (the pipeline's); NULL when absent */
	bool dirty;             /* start.dirty */
	char *utc;              /* start.utc; NULL when absent */
	bool stagebench;        /* start.format was set (a stagebench trace) */
	enum sb_reader reader;  /* which reader read its footprint: the "meter: TOKEN" mark,
				 * else its backend's only one (common/reader.h) */
	enum run_outcome outcome;
	int exit_code;          /* RUN_EXIT (and 0 for completed) */
	int signal;             /* RUN_SIGNAL */
	char *reason;           /* end.reason when given; NULL otherwise */
	char *stopped_as_asked; /* a completed run that was asked to stop at this
				 * stage (start.stop_at, or a mark "stopped at NAME");
				 * NULL otherwise */
	bool damaged;           /* the reader stopped early (analysis of what it read) */
	bool cut;               /* damaged so: the file ends inside its last frame or line */
	char **staging_notes;   /* marks "not staged: ..." and "plan does not match: ..."
				 * (the probe's: a model a staged run could not stage, a
				 * plan that ran the script as written), in order, once each */
	size_t nstaging_notes;
	struct run_version *versions; /* in the trace's order; none when it names none */
	size_t nversions;

	struct stage_stats *stages;
	size_t nstages, stages_alloc;
	struct strindex stage_ix; /* stage name -> index into stages */
	struct stage_window *windows;
	size_t nwindows, windows_alloc;
	size_t ran_to;          /* index of the last stage entered ("setup" when none) */

	size_t nsamples;
	bool has_footprint;
	uint64_t peak_footprint; /* over all samples */
	double peak_t;
	bool has_swap;
	uint64_t swap_start, swap_peak, swap_rise; /* rise = peak - start, >= 0 */
	bool has_level;
	double lowest_level;    /* percent of memory available, lowest sample */
	double wall_s;          /* end.wall when known, else the last record's t */
	bool has_device;        /* the probe read device memory (devmem samples or gpu events) */
	const char *device_metric; /* "mps_driver", "cuda_reserved" (static), or "device" */
	uint64_t device_peak;   /* over the run */
	double device_peak_t;
	bool device_sampled;    /* devmem samples exist (read on the interval) */
	double interval;        /* start.interval, 0 when absent */
	bool has_gpu;           /* NVML: samples' gpu key */
	uint64_t gpu_peak;
	bool has_mapped;        /* samples' mapped key */
	uint64_t mapped_peak;   /* over the run */
	bool has_majflt;        /* samples' majflt key */
	uint64_t majflt;        /* the run's last count */
	bool any_majflt;        /* some stage has major faults */

	struct load_info *loads;
	size_t nloads, loads_alloc;
	size_t nreloads, loads_outside;
	uint64_t load_bytes;
	double load_seconds;
	size_t nreleases;
	uint64_t release_bytes;
	struct release_info *released; /* the release events, in the trace's order */
	size_t nreleased, released_alloc;
};
#define ANALYSIS_INIT { 0 }

/*
 * Analyse a trace already read. `entry` is the run's runs.json entry or NULL.
 * Returns 0; -1 after error() only for a trace that cannot describe a run
 * (no start record). *out must be ANALYSIS_INIT (or released).
 */
int analysis_run(const struct trace *tr, const struct run_entry *entry, struct analysis *out);

/*
 * Read PATH with trace_read_summary() and a runs.json in the same directory (when
 * there is one), then analysis_run(). Returns 0, or -1 when the trace or
 * runs.json could not be read (the reader printed "FILE:LINE: ...").
 */
int analysis_open(const char *path, struct analysis *out);

void analysis_release(struct analysis *a);

/* The row for a stage name, or NULL when the run never entered it. */
const struct stage_stats *analysis_stage(const struct analysis *a, const char *name);

/* "completed", "stopped by the guard", "killed by signal 9", "exit code 1",
 * "recorder died (no end record)". Writes into buf (64 bytes is enough). */
const char *analysis_outcome_str(const struct analysis *a, char *buf, size_t len);

/* True when the kernel peak of this stage warns of a missed spike. */
bool stage_missed_spike(const struct stage_stats *s);

/* analysis_run's part for device memory (analysis_device.c): each stage's peak from
 * its gpu events, beside its devmem samples; which metric the figures count. */
void analysis_device_peaks(const struct trace *tr, struct analysis *a);

/* "MPS driver", "CUDA reserved", "device": what device_peak counts, in words. */
const char *analysis_device_label(const struct analysis *a);

/* What `stagebench analyze` prints (analysis_text.c, analysis_json.c): the
 * runs' model, its two renderers (render.h's table finds them: text blocks
 * with one blank line between, or {"runs": [...]}), and what each writes for
 * one run: a text block (no blank line around it), one JSON object. And a
 * warning on stderr for each stage whose kernel peak says the sampler missed a
 * spike (analysis.c). */
struct jsonw;
struct strbuf;
struct analysis_runs {
	const struct analysis *runs;
	size_t n;
};
void analysis_render_text(const struct analysis_runs *r, struct strbuf *out);
void analysis_render_json(const struct analysis_runs *r, struct strbuf *out);
void analysis_write_text(struct strbuf *o, const struct analysis *a);
void analysis_write_json(struct jsonw *w, const struct analysis *a);
void analysis_warn_spikes(const struct analysis *a);

#endif
