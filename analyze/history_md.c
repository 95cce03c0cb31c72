/* history_md.c -- the history as markdown: one table per metric, a column per commit */
#include <stdio.h>

#include "../common/units.h"
#include "history.h"
#include "text.h"

static void point_md(const struct history_point *p, enum history_metric m, struct strbuf *out)
{
	if (!p->n)
		strbuf_addstr(out, p->failed ? "failed" : "-");
	else if (history_metric_is_time(m))
		units_add_seconds_range(out, p->min, p->max, UNITS_FINE);
	else
		units_add_size_range(out, p->min, p->max, UNITS_FINE);
	if (p->n && p->failed)
		strbuf_addf(out, " (%zu of %zu failed)", p->failed, p->runs);
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
		struct strbuf l = STRBUF_INIT;
		history_commit_label(&h->commits[c], false, &l);
		strbuf_addch(out, ' ');
		text_md(out, l.buf);
		strbuf_addstr(out, " |");
		strbuf_release(&l);
	}
	strbuf_addstr(out, "\n|---|---|");
	for (size_t c = 0; c < h->ncommits; c++)
		strbuf_addstr(out, "---|");
	strbuf_addch(out, '\n');
	for (size_t s = 0; s < h->nseries; s++) {
		strbuf_addstr(out, "| ");
		text_md(out, h->series[s].mode);
		strbuf_addstr(out, " | ");
		text_md(out, h->series[s].stage);
		strbuf_addstr(out, " |");
		for (size_t c = 0; c < h->ncommits; c++) {
			strbuf_addch(out, ' ');
			point_md(history_point(h, s, c, m), m, out);
			strbuf_addstr(out, " |");
		}
		strbuf_addch(out, '\n');
	}
}

/* Every regression check reports between neighbouring commits, of any kind. */
static void regressions_md(const struct history *h, struct strbuf *out)
{
	if (!h->nregressions)
		return;
	strbuf_addstr(out, "\n## Regressions\n\n| from | to | mode | stage | what | check says |\n"
			   "|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < h->nregressions; i++) {
		const struct history_regression *r = &h->regressions[i];
		struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
		history_commit_label(&h->commits[r->commit - 1], false, &a);
		history_commit_label(&h->commits[r->commit], false, &b);
		const char *cells[] = { a.buf, b.buf, r->mode, r->stage, r->what, r->line };
		strbuf_addstr(out, "|");
		for (size_t k = 0; k < sizeof(cells) / sizeof(cells[0]); k++) {
			strbuf_addch(out, ' ');
			text_md(out, cells[k]);
			strbuf_addstr(out, " |");
		}
		strbuf_addch(out, '\n');
		strbuf_release(&a);
		strbuf_release(&b);
	}
}

void history_render_md(const struct history *h, struct strbuf *out)
{
	strbuf_addstr(out, "Commits, in order:");
	for (size_t c = 0; c < h->ncommits; c++) {
		const struct history_commit *k = &h->commits[c];
		strbuf_addstr(out, c ? "; " : " ");
		text_md(out, k->short_id);
		if (k->subject) {
			strbuf_addstr(out, " \"");
			text_md(out, k->subject);
			strbuf_addch(out, '"');
		}
		strbuf_addf(out, "%s (", k->dirty ? " (dirty)" : "");
		text_md(out, k->dir);
		strbuf_addf(out, ", %zu run%s)", k->nruns, k->nruns == 1 ? "" : "s");
	}
	strbuf_addstr(out, ".\n");
	for (int m = 0; m < HM_NMETRICS; m++)
		metric_table(h, (enum history_metric)m, out);
	regressions_md(h, out);
	strbuf_addf(out, "\nEach cell: the range over the commit's runs that completed the stage. "
			 "Commits: the first %d characters of the id. "
			 "\"-\": no value (no run of the mode at that commit, or none with a sample). "
			 "\"failed\": no run completed the stage there (a crash, the guard, a signal: "
			 "stopped in it or never reached it); \"(N of M failed)\": N of the M runs did not "
			 "complete it. \"*\": a dirty checkout. \"(regression)\": `stagebench check` "
			 "of that commit against the one before flags that metric; Regressions lists "
			 "every regression it reports (outcome, latents, swap, load time, memory, time).\n",
		    HISTORY_SHORT_ID);
}
