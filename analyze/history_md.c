/* history_md.c -- the history as markdown: one table per metric, a column per commit */
#include <stdio.h>

#include "../common/units.h"
#include "history.h"
#include "render.h"

static void point_md(const struct history_point *p, enum history_metric m, struct strbuf *out)
{
	if (!p->n) {
		strbuf_addstr(out, "-");
		return;
	}
	if (history_metric_is_time(m))
		units_add_seconds_range(out, p->min, p->max, UNITS_COARSE);
	else
		units_add_size_range(out, p->min, p->max, UNITS_COARSE);
	if (p->regression)
		strbuf_addstr(out, " (regression)");
}

static void metric_table(const struct history *h, enum history_metric m, struct strbuf *out)
{
	bool any = false;
	for (size_t s = 0; s < h->nseries && !any; s++)
		for (size_t c = 0; c < h->ncommits && !any; c++)
			any = history_point(h, s, c, m)->n > 0;
	if (!any)
		return;
	strbuf_addf(out, "\n## %s\n\n| mode | stage |", history_metric_name(m));
	for (size_t c = 0; c < h->ncommits; c++) {
		strbuf_addch(out, ' ');
		render_md_text(out, h->commits[c].commit);
		strbuf_addstr(out, h->commits[c].dirty ? "* |" : " |");
	}
	strbuf_addstr(out, "\n|---|---|");
	for (size_t c = 0; c < h->ncommits; c++)
		strbuf_addstr(out, "---|");
	strbuf_addch(out, '\n');
	for (size_t s = 0; s < h->nseries; s++) {
		strbuf_addstr(out, "| ");
		render_md_text(out, h->series[s].mode);
		strbuf_addstr(out, " | ");
		render_md_text(out, h->series[s].stage);
		strbuf_addstr(out, " |");
		for (size_t c = 0; c < h->ncommits; c++) {
			strbuf_addch(out, ' ');
			point_md(history_point(h, s, c, m), m, out);
			strbuf_addstr(out, " |");
		}
		strbuf_addch(out, '\n');
	}
}

void history_render_md(const struct history *h, struct strbuf *out)
{
	strbuf_addstr(out, "Commits, in order:");
	for (size_t c = 0; c < h->ncommits; c++) {
		const struct history_commit *k = &h->commits[c];
		strbuf_addstr(out, c ? "; " : " ");
		render_md_text(out, k->commit);
		strbuf_addf(out, "%s (", k->dirty ? " (dirty)" : "");
		render_md_text(out, k->dir);
		strbuf_addf(out, ", %zu run%s)", k->nruns, k->nruns == 1 ? "" : "s");
	}
	strbuf_addstr(out, ".\n");
	for (int m = 0; m < HM_NMETRICS; m++)
		metric_table(h, (enum history_metric)m, out);
	strbuf_addstr(out, "\nEach cell: the range over the commit's runs that completed the stage. "
			   "\"*\": a dirty checkout. \"(regression)\": `stagebench check` of that commit "
			   "against the one before flags it.\n");
}
