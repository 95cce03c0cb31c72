/* loadplan.h -- the plan as it ran: per variant, each model, the stage it was loaded in and
 * the stage it was released in (or held to the run's end), from the traces' events
 *
 * Call order (table_build() does it for the table, table_release() undoes it):
 *   struct loadplan p = LOADPLAN_INIT;
 *   loadplan_build(&p, t);          from a built table's modes and their main runs
 *   loadplan_render_md(&p, &sb);    the markdown table and its sentences (loadplan_md.c)
 *   loadplan_write_json(&p, &w);    the "plan" key of table_render_json (loadplan_json.c)
 *   (loadplan_section_md(t, ...) does the four for the markdown: table.md's section)
 *   loadplan_release(&p);
 *
 * One run's plan for one model is a list of spans, in the order of its events: a `load`
 * opens a span in the stage in force at its t (the window that holds it, analysis.h), a
 * `reload` opens one marked as a reload, a `release` closes the open span in the stage in
 * force at its t (the probe releases a model when a stage that does not list it starts, so
 * that is the stage whose start released it); a span still open when the trace ends was held
 * to the run's end. A load of a model whose span is open counts one more build in it (a
 * script that builds the same model several times, as the demo's eager sharers). A release
 * with no load before it is a span whose load was not reported (loaded NULL).
 *
 * Per variant (a table mode) and model, the runs whose span lists are equal form a group;
 * more than one group is a disagreement (a run that loaded it in another stage, or never),
 * which the markdown says under its table. A run that did not load a model at all is a group
 * of no spans.
 *
 * The probe's "not staged: NAME (X MB): WHY" marks (analysis.h: staging_notes; X in the
 * tables' MB, 2^20 bytes, as the probe writes it) give the model's reason for staying
 * resident; a model they name that no event names is a row of its own (its size from the
 * mark).
 *
 * A variant whose main runs hold no load or release event reports none (as stageload's
 * eager runs): it has no column, and the markdown says so in a line.
 * No variant reporting any: the plan is empty (nmodels 0, nothing rendered).
 *
 * Names (models, stages, run ids) point into the table's runs: they must outlive it.
 */
#ifndef SB_LOADPLAN_H
#define SB_LOADPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct table;
struct strbuf;
struct jsonw;

struct loadplan_span {
	const char *loaded;   /* the stage in force at its load; NULL: no load event before */
	const char *released; /* the stage in force at its release; NULL: held to the run's end */
	bool reload;          /* opened by a `reload` event */
	size_t nbuilds;       /* load events in it (1, or more for a model built again) */
};

/* The runs of one variant that agree on one model's spans. */
struct loadplan_group {
	struct loadplan_span *spans;
	size_t nspans;        /* 0: those runs never loaded or released it */
	const char **runs;    /* their run ids ("staged-2": the trace's file name, less
			       * ".trace.jsonl" and ".zst") */
	size_t nruns;
};

struct loadplan_cell {
	struct loadplan_group *groups; /* in order of their first run */
	size_t ngroups;       /* 0: the variant reports no events; > 1: its runs disagree */
	bool held;            /* some run held it to its end (a span with released NULL) */
	bool held_in_last;    /* ... each such span loaded in its run's last stage */
	const char *why;      /* the probe's reason it was not staged (into the run's mark,
			       * "; forced by ..." and all), or NULL */
	bool note_only;       /* named by a "not staged" mark only, no event of its in this
			       * variant */
};

struct loadplan_mode {
	const char *name;     /* the table mode's */
	size_t nruns;         /* its main runs */
	bool reported;        /* one of them has a load or release event */
	bool released_any;    /* one of them has a release event */
	const char *one_stage; /* every load of every run in this one stage, or NULL */
	size_t nmodels;       /* models it loaded, released or named */
};

/* Where a model's size comes from: the first of these that has one. */
enum loadplan_size {
	LOADPLAN_SIZE_NONE = 0,
	LOADPLAN_SIZE_LOADS,    /* its load events' nbytes */
	LOADPLAN_SIZE_RELEASES, /* its release events' nbytes */
	LOADPLAN_SIZE_MARK,     /* its "not staged" marks' X MB (2^20 bytes each) */
};

struct loadplan_model {
	char *name;           /* owned */
	enum loadplan_size size_from;
	uint64_t min_bytes, max_bytes; /* over the events (or marks) of size_from */
};

struct loadplan {
	struct loadplan_mode *modes;   /* one per table mode, in its order */
	size_t nmodes;
	struct loadplan_model *models; /* in order of first appearance: modes, runs, events */
	size_t nmodels;
	struct loadplan_cell *cells;   /* nmodels * nmodes: cells[model * nmodes + mode] */
	char **ids;                    /* the run ids (owned), per table run */
	size_t nids;
};
#define LOADPLAN_INIT { 0 }

void loadplan_build(struct loadplan *p, const struct table *t);
const struct loadplan_cell *loadplan_cell(const struct loadplan *p, size_t model, size_t mode);
void loadplan_release(struct loadplan *p); /* NULL ok */

/* loadplan_md.c: "| model | size | MODE, loaded | MODE, released | ..." for the variants
 * that report, then a line per variant: what it kept resident and why, its runs'
 * disagreements, that it reports nothing. Nothing when the plan is empty. */
void loadplan_render_md(const struct loadplan *p, struct strbuf *out);

/* loadplan_md.c: table.md's section of the plan of table T (its runs' plan built and
 * released here): "\n## LOADPLAN_HEADING\n\n" and loadplan_render_md()'s text into SECTION,
 * that text alone into BODY (NULL: not wanted); nothing when the plan is empty. What
 * `stagebench table` prints after the table, and compare's table.md and terminal. */
#define LOADPLAN_HEADING "Models: where each was loaded and released"
void loadplan_section_md(const struct table *t, struct strbuf *section, struct strbuf *body);

/* loadplan_json.c: "plan": {"modes": [...], "models": [...]} (an empty plan: empty arrays). */
void loadplan_write_json(const struct loadplan *p, struct jsonw *w);

#endif
