/* render.h -- one table of output formats for the analyze models
 *
 * The models are data: the table (table.h), a check (check.h), a latent set
 * (latents.h) and a list of analysed runs (struct render_runs below). Each
 * format of each model is its own file (table_md.c, table_csv.c, check_json.c,
 * ...), and the table in render.c says which format renders which model, the
 * way hyperfine's export/ does it. Commands look a --format up here, so adding
 * a format is one file plus one row, and a bad --format names exactly the
 * formats the model has ("md, csv or json").
 *
 * Shared by the renderers: escaping for markdown, CSV and terminal text (a
 * name from a trace may hold '|', a newline or an escape sequence), and the
 * outcome keys of the machine-readable formats.
 */
#ifndef SB_RENDER_H
#define SB_RENDER_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/util.h"
#include "analysis.h"

enum render_model { RM_TABLE = 0, RM_CHECK, RM_LATENTS, RM_RUNS, RM_HISTORY, RM_NMODELS };

/* RM_RUNS: the runs `analyze` prints. */
struct render_runs {
	const struct analysis *runs;
	size_t n;
};

/* `analyze`: text blocks (no blank line around each), or {"runs": [...]}. */
void analysis_render_runs_text(const struct render_runs *r, struct strbuf *out);
void analysis_render_runs_json(const struct render_runs *r, struct strbuf *out);

typedef void (*render_fn)(const void *model, struct strbuf *out);

struct renderer {
	const char *format;        /* "md", "csv", "json", "text", "junit", "github" */
	render_fn fn[RM_NMODELS];  /* NULL: this format does not render that model */
};

/* The renderer of MODEL in FORMAT, or NULL when there is none. */
render_fn render_find(enum render_model model, const char *format);
/* The formats of MODEL in words, table order: "md, csv or json" (a static string). */
const char *render_format_list(enum render_model model);

/* Markdown table cell text: '|' escaped, newlines and other control characters as
 * a visible "\n", "\xNN". */
void render_md_text(struct strbuf *out, const char *s);
/* Terminal text: control characters (escape sequences, newlines) as "\n", "\xNN". */
void render_term_text(struct strbuf *out, const char *s);
/* A CSV field, quoted when it holds a comma, a quote or a line break. */
void render_csv_str(struct strbuf *out, const char *s);
/* The shortest %g that reads back as v. */
void render_csv_double(struct strbuf *out, double v);
/* "completed", "guard", "signal", "exit", "recorder_died" */
const char *render_outcome_key(enum run_outcome o);

#endif
