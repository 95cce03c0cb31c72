/* render.h -- one table of output formats for the analyze models
 *
 * The models are data: the table (table.h), a check (check.h), a latent set
 * (latents.h), the runs `analyze` prints (struct analysis_runs, analysis.h)
 * and a history (history.h). Each format of each model is its own file, a leaf
 * (table_md.c, table_csv.c, check_json.c, ...) whose one entry point is
 * MODEL_render_FORMAT(const struct MODEL *, struct strbuf *out); the table in
 * render.c says which format renders which model, the way hyperfine's export/
 * does it. Commands look a --format up here, so adding a format is one file
 * plus one row, and a bad --format names exactly the formats the model has
 * ("md, csv or json").
 *
 * This file calls the renderers; no renderer calls it. What the renderers share
 * (escaping for markdown, CSV, XML, terminal text and GitHub commands, the
 * outcome keys) is text.h, which calls none of them.
 */
#ifndef SB_RENDER_H
#define SB_RENDER_H

#include "../common/util.h"
#include "analysis.h"

enum render_model { RM_TABLE = 0, RM_CHECK, RM_LATENTS, RM_RUNS, RM_HISTORY, RM_NMODELS };

typedef void (*render_fn)(const void *model, struct strbuf *out);

struct renderer {
	const char *format;        /* "md", "csv", "json", "text", "junit", "github" */
	render_fn fn[RM_NMODELS];  /* NULL: this format does not render that model */
};

/* The renderer of MODEL in FORMAT, or NULL when there is none. */
render_fn render_find(enum render_model model, const char *format);
/* The formats of MODEL in words, table order: "md, csv or json" (a static string). */
const char *render_format_list(enum render_model model);

#endif
