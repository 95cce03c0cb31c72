/* compare_int.h -- what compare.c, session.c, plan.c, learn.c, report.c and compare_parts.c
 * (plan, task, merge) share */
#ifndef SB_COMPARE_INT_H
#define SB_COMPARE_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "../../analyze/analysis.h"
#include "../../common/util.h"
#include "../../traces/runs.h"
#include "../../traces/trace.h"
#include "compare.h"
#include "../record/record.h"

/* A run that finished, for the report. */
struct done_run {
	char *id;
	char *mode;
	char *trace_path;
	struct trace tr;
	struct analysis a;
	bool read;
	int rep;
	bool completed;          /* ran to its end by itself, exit 0 */
	bool failed;             /* its command failed on its own (exit status, signal) */
	bool entryless;          /* stagebench report: no runs.json entry, the trace says */
	char *err_path;          /* OUT/V-N.err, its stderr */
	double wall_s;
};

/* What every run of one compare shares while it goes on. */
struct session {
	const struct compare_opts *o;
	struct compare_setup setup; /* o->setup, with the learned plan as adapter */
	char *plan_path;         /* OUT/plan.py once learned */
	struct record_opts ro;   /* the record engine's options for every run */
	size_t total;            /* runs planned */
	struct run_list runs;    /* runs.json */
	struct done_run *done;
	size_t ndone;
	int rc;                  /* SB_EXIT_OK, or SB_EXIT_FAILURE once something could not run */
	size_t failed;           /* runs whose command failed on its own (a finding) */
	int interrupted;         /* 128+N once signal N stopped a run */
	char *runs_path;         /* OUT/runs.json, or OUT/runs.d/V-N.json for one task */
	size_t lost;             /* COMPARE_MERGE: planned runs without a result */
	struct strbuf missing;   /* COMPARE_MERGE: summary rows of runs without a trace */
	char *campaign;          /* the campaign id (OUT/plan.json); NULL for --plan alone */
	struct run_list planned; /* COMPARE_MERGE: runs.json, every planned run in plan order */
	enum cache_state cache;  /* o->cache_state, or its default (compare.h) */
	bool page_only;          /* the report writes its files and prints only report.html's
				  * path (stagebench report) */
	struct strbuf problems;  /* markdown list for the page: what could not be read */
	uint64_t *largest_peak;  /* per variant, the largest peak footprint of its
				  * runs so far: primed before its next run
				  * (runner/conditions.h) */
};

/* session.c: run k of the schedule, the prepare command, the warm-ups (each
 * 0, or -1 when the recorder failed); a signal that came between runs. */
int run_k(struct session *s, size_t k);
int run_prepare(struct session *s);
int run_warmups(struct session *s);
bool take_signal(struct session *s, const struct record_signals *sigs);
/* session.c: one plan run under record_run (0, or -1 after error()); a
 * run's outcome in words. */
int run_one(const struct record_opts *base, const struct compare_run *cr,
	    const enum cache_state *state, struct trace_label *labels, size_t nlabels,
	    struct record_result *res);
void outcome_words(const struct record_result *res, struct strbuf *sb);

/* learn.c: the plan learned first when a variant run is staged and the
 * pipeline names no adapter (0, or -1 after error()); stagebench learn
 * (its exit status). */
int needs_plan(struct session *s);
int learn_only(struct session *s);

/* report.c: a warning for each run much slower than its variant's others;
 * the report (0, or -1 when something could not be read or written;
 * *findings the latent findings). */
void compare_warn_slow_runs(const struct session *s);
int compare_report(struct session *s, bool charts, size_t *findings);

/* What report.html is made of (report.c gathers it, report_html.c writes it). */
struct report_page {
	const char *out;             /* the output directory: report.html, the SVG charts */
	const struct done_run *d;
	size_t n;
	struct strbuf verdict;       /* markdown: the table's comparison sentences, first runs */
	struct strbuf latents_result;/* the latents' "Result: ..." line (text) */
	struct strbuf problems;      /* markdown list: what could not be read, and why */
	struct strbuf failed;        /* markdown list: "Failed runs" as printed */
	struct strbuf table;         /* table.md */
	struct strbuf latents;       /* latents.md */
	struct strbuf runs;          /* the run summary (markdown) */
	struct strbuf chart_desc;    /* the charts' text alternative: runs and stages */
	bool svg_drawn;              /* OUT/memory.svg and OUT/stages.svg were drawn */
	const char *charts_why;      /* why not, when not */
	char **bar_stages;           /* the stages chart's rows when there are more than
				      * REPORT_MAX_BARS stages (the highest peaks); NULL: all */
	size_t nbar_stages;
	struct strbuf chart_note;    /* said under the charts (text): rows left out */
	struct strbuf plan;          /* markdown: the plan as it ran (analyze/loadplan.h),
				      * table.md's section LOADPLAN_HEADING; empty: no run
				      * reports a load or a release */
};
#define REPORT_PAGE_INIT { .verdict = STRBUF_INIT, .latents_result = STRBUF_INIT, \
	.problems = STRBUF_INIT, .failed = STRBUF_INIT, .table = STRBUF_INIT, \
	.latents = STRBUF_INIT, .runs = STRBUF_INIT, .chart_desc = STRBUF_INIT, \
	.chart_note = STRBUF_INIT, .plan = STRBUF_INIT }

/* Past this many stages the stages chart draws the REPORT_MAX_BARS with the
 * highest peaks (bars for every one of 100,000 stages take gnuplot minutes
 * and are no chart), and the page's tables their first REPORT_MAX_ROWS rows
 * (table.md has every row). */
#define REPORT_MAX_BARS 60
#define REPORT_MAX_ROWS 400

/* report_html.c: OUT/report.html written and its path printed; 0, or -1
 * after error(). */
int report_html_write(const struct report_page *rp);

/* compare_parts.c: --plan's lines; the campaign of OUT started or joined
 * (0 or the exit status); task K run alone (its exit status); every planned
 * run gathered into runs.json for the merge (0 or -1). */
int print_plan(const struct compare_opts *o, size_t total);
int parts_campaign(struct session *s);
int run_task(struct session *s);
int parts_gather(struct session *s);

#endif
