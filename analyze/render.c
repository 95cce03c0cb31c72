/* render.c -- the format table: which file renders which model in which format (see render.h) */
#include "render.h"

#include <stdio.h>
#include <string.h>

#include "check.h"
#include "history.h"
#include "latents.h"
#include "loadplan.h"
#include "table.h"

/* Adapters: each renderer keeps its model's type; the table holds one signature. */
static void table_md(const void *m, struct strbuf *o)
{
	table_render_md(m, o);
	loadplan_section_md(m, o, NULL); /* table.md's section of the plan, as compare's */
}
static void table_csv(const void *m, struct strbuf *o) { table_render_csv(m, o); }
static void table_json(const void *m, struct strbuf *o) { table_render_json(m, o); }
static void check_md(const void *m, struct strbuf *o) { check_render_md(m, o); }
static void check_json(const void *m, struct strbuf *o) { check_render_json(m, o); }
static void check_junit(const void *m, struct strbuf *o) { check_render_junit(m, o); }
static void check_github(const void *m, struct strbuf *o) { check_render_github(m, o); }
static void latents_md(const void *m, struct strbuf *o) { latents_render_md(m, o); }
static void latents_json(const void *m, struct strbuf *o) { latents_render_json(m, o); }
static void history_md(const void *m, struct strbuf *o) { history_render_md(m, o); }
static void history_csv(const void *m, struct strbuf *o) { history_render_csv(m, o); }
static void history_json(const void *m, struct strbuf *o) { history_render_json(m, o); }
static void runs_text(const void *m, struct strbuf *o) { analysis_render_text(m, o); }
static void runs_json(const void *m, struct strbuf *o) { analysis_render_json(m, o); }

static const struct renderer renderers[] = {
	{ "md", { [RM_TABLE] = table_md, [RM_CHECK] = check_md, [RM_LATENTS] = latents_md,
		  [RM_HISTORY] = history_md } },
	{ "csv", { [RM_TABLE] = table_csv, [RM_HISTORY] = history_csv } },
	{ "json", { [RM_TABLE] = table_json, [RM_CHECK] = check_json, [RM_LATENTS] = latents_json,
		    [RM_RUNS] = runs_json, [RM_HISTORY] = history_json } },
	{ "text", { [RM_RUNS] = runs_text } },
	{ "junit", { [RM_CHECK] = check_junit } },
	{ "github", { [RM_CHECK] = check_github } },
};
#define NRENDERERS (sizeof(renderers) / sizeof(renderers[0]))

render_fn render_find(enum render_model model, const char *format)
{
	for (size_t i = 0; i < NRENDERERS; i++)
		if (!strcmp(renderers[i].format, format))
			return renderers[i].fn[model];
	return NULL;
}

const char *render_format_list(enum render_model model)
{
	static char lists[RM_NMODELS][96];
	char *out = lists[model];
	if (*out)
		return out;
	size_t n = 0, total = 0, len = 0;
	for (size_t i = 0; i < NRENDERERS; i++)
		total += renderers[i].fn[model] != NULL;
	for (size_t i = 0; i < NRENDERERS; i++) {
		if (!renderers[i].fn[model])
			continue;
		len += (size_t)snprintf(out + len, sizeof(lists[0]) - len, "%s%s",
					!n ? "" : n + 1 == total ? " or " : ", ", renderers[i].format);
		n++;
	}
	return out;
}
