/* loadplan_md.c -- the plan as it ran, as markdown (loadplan.h): one table, a model a row,
 * two columns a variant (loaded, released), then what each variant kept resident and why */
#include <stdlib.h>
#include <string.h>

#include "../common/units.h"
#include "../common/util.h"
#include "loadplan.h"
#include "text.h"

static void plan_span_loaded(const struct loadplan_span *s, struct strbuf *out)
{
	if (s->loaded)
		text_md(out, s->loaded);
	else
		strbuf_addstr(out, "no load event");
	if (s->reload)
		strbuf_addstr(out, " (reload)");
	if (s->nbuilds > 1)
		strbuf_addf(out, " (%zu builds)", s->nbuilds);
}

static void plan_span_released(const struct loadplan_span *s, struct strbuf *out)
{
	if (s->released)
		text_md(out, s->released);
	else
		strbuf_addstr(out, "held to the end");
}

/* One group's spans, their loads or their releases, joined by ", ". */
static void plan_group_md(const struct loadplan_group *g, bool released, struct strbuf *out)
{
	if (!g->nspans)
		strbuf_addstr(out, released ? "-" : "not loaded");
	for (size_t i = 0; i < g->nspans; i++) {
		if (i)
			strbuf_addstr(out, ", ");
		(released ? plan_span_released : plan_span_loaded)(&g->spans[i], out);
	}
}

static void plan_cell_md(const struct loadplan_cell *c, bool released, struct strbuf *out)
{
	if (c->note_only) {
		strbuf_addstr(out, released ? "-" : "not staged");
		return;
	}
	if (!c->ngroups || (c->ngroups == 1 && !c->groups[0].nspans)) {
		strbuf_addch(out, '-');
		return;
	}
	/* the groups differ in the other column only: this one said once */
	struct strbuf first = STRBUF_INIT, other = STRBUF_INIT;
	plan_group_md(&c->groups[0], released, &first);
	bool same = true;
	for (size_t g = 1; g < c->ngroups && same; g++) {
		strbuf_reset(&other);
		plan_group_md(&c->groups[g], released, &other);
		same = !strcmp(strbuf_str(&first), strbuf_str(&other));
	}
	strbuf_release(&other);
	if (same) {
		strbuf_addstr(out, strbuf_str(&first));
		strbuf_release(&first);
		return;
	}
	strbuf_release(&first);
	for (size_t g = 0; g < c->ngroups; g++) {
		if (g)
			strbuf_addstr(out, "; ");
		plan_group_md(&c->groups[g], released, out);
		strbuf_addstr(out, " (");
		for (size_t r = 0; r < c->groups[g].nruns; r++) {
			if (r)
				strbuf_addstr(out, ", ");
			text_md(out, c->groups[g].runs[r]);
		}
		strbuf_addch(out, ')');
	}
}

static void plan_size_md(const struct loadplan_model *m, struct strbuf *out)
{
	if (m->size_from == LOADPLAN_SIZE_NONE)
		strbuf_addch(out, '-');
	else
		units_add_size_range(out, (double)m->min_bytes, (double)m->max_bytes, UNITS_COARSE);
}

/* Whether model x has something to show in a reporting variant. */
static bool plan_row_shown(const struct loadplan *p, size_t x)
{
	for (size_t m = 0; m < p->nmodes; m++) {
		const struct loadplan_cell *c = loadplan_cell(p, x, m);
		if (p->modes[m].reported && (c->why || c->ngroups > 1 ||
					     (c->ngroups == 1 && c->groups[0].nspans)))
			return true;
	}
	return false;
}

static void plan_table_md(const struct loadplan *p, struct strbuf *out)
{
	strbuf_addstr(out, "| model | size |");
	size_t ncols = 0;
	for (size_t m = 0; m < p->nmodes; m++) {
		if (!p->modes[m].reported)
			continue;
		for (int k = 0; k < 2; k++) {
			strbuf_addch(out, ' ');
			text_md(out, p->modes[m].name);
			strbuf_addstr(out, k ? ", released |" : ", loaded |");
		}
		ncols += 2;
	}
	strbuf_addstr(out, "\n|---|---|");
	for (size_t i = 0; i < ncols; i++)
		strbuf_addstr(out, "---|");
	strbuf_addch(out, '\n');
	for (size_t x = 0; x < p->nmodels; x++) {
		if (!plan_row_shown(p, x))
			continue;
		strbuf_addstr(out, "| ");
		text_md(out, p->models[x].name);
		strbuf_addstr(out, " | ");
		plan_size_md(&p->models[x], out);
		for (size_t m = 0; m < p->nmodes; m++) {
			for (int k = 0; p->modes[m].reported && k < 2; k++) {
				strbuf_addstr(out, " | ");
				plan_cell_md(loadplan_cell(p, x, m), k, out);
			}
		}
		strbuf_addstr(out, " |\n");
	}
}

/* The reason a model stayed resident: the probe's mark (up to "; forced by" but with -v),
 * else what the events show. */
static void plan_why_md(const struct loadplan_cell *c, struct strbuf *out)
{
	if (c->why && *c->why) {
		const char *cut = strstr(c->why, "; forced by ");
		size_t len = cut && sb_verbosity < 1 ? (size_t)(cut - c->why) : strlen(c->why);
		char *shown = xstrndup(c->why, len);
		text_md(out, shown);
		free(shown);
	} else if (c->note_only) {
		strbuf_addstr(out, "no reason in the trace");
	} else {
		strbuf_addstr(out, c->held_in_last ? "loaded in the run's last stage"
						   : "no reason in the trace");
	}
}

/* "Left resident in staged (held to the end): vae (40.2 MB): used while ...; ...", or the
 * variant's plan in one sentence when it released nothing. */
static void plan_resident_md(const struct loadplan *p, size_t m, struct strbuf *out)
{
	const struct loadplan_mode *pm = &p->modes[m];
	text_md(out, pm->name);
	if (!pm->released_any) {
		if (pm->one_stage) {
			strbuf_addstr(out, ": every model loaded in ");
			text_md(out, pm->one_stage);
			strbuf_addstr(out, " and held to the end.\n");
		} else {
			strbuf_addstr(out, ": no model released: each held to the end from the stage it "
					   "was loaded in.\n");
		}
		return;
	}
	size_t n = 0;
	for (size_t x = 0; x < p->nmodels; x++) {
		const struct loadplan_cell *c = loadplan_cell(p, x, m);
		if (!c->held && !c->note_only)
			continue;
		strbuf_addstr(out, n++ ? "; " : ": left resident (held to the end): ");
		text_md(out, p->models[x].name);
		strbuf_addstr(out, " (");
		plan_size_md(&p->models[x], out);
		strbuf_addstr(out, c->note_only ? ", not staged, left as the script makes it): " : "): ");
		plan_why_md(c, out);
	}
	strbuf_addstr(out, n ? ".\n" : ": every model it loaded was released before the end.\n");
}

/* "The 2 staged runs do not agree on the plan of: a, b (...)." */
static void plan_disagree_md(const struct loadplan *p, size_t m, struct strbuf *out)
{
	size_t n = 0;
	for (size_t x = 0; x < p->nmodels; x++) {
		if (loadplan_cell(p, x, m)->ngroups < 2)
			continue;
		if (!n++) {
			strbuf_addf(out, "The %zu ", p->modes[m].nruns);
			text_md(out, p->modes[m].name);
			strbuf_addstr(out, " runs do not agree on the plan of: ");
		} else {
			strbuf_addstr(out, ", ");
		}
		text_md(out, p->models[x].name);
	}
	if (n)
		strbuf_addstr(out, " (each run's stages are in the table).\n");
}

void loadplan_render_md(const struct loadplan *p, struct strbuf *out)
{
	bool any = false;
	for (size_t m = 0; m < p->nmodes; m++)
		any |= p->modes[m].reported;
	if (!any || !p->nmodels)
		return;
	strbuf_addstr(out, "From the traces' load and release events: the stage each model was loaded "
			   "in, and the stage whose start released it (or held to the run's end).\n\n");
	plan_table_md(p, out);
	strbuf_addch(out, '\n');
	for (size_t m = 0; m < p->nmodes; m++) {
		if (p->modes[m].reported) {
			plan_resident_md(p, m, out);
			plan_disagree_md(p, m, out);
		} else if (p->modes[m].nruns) {
			text_md(out, p->modes[m].name);
			strbuf_addstr(out, ": no load or release event in its traces: where it loaded its "
					   "models is not known.\n");
		}
	}
}

void loadplan_section_md(const struct table *t, struct strbuf *section, struct strbuf *body)
{
	struct loadplan p;
	struct strbuf md = STRBUF_INIT;
	loadplan_build(&p, t);
	loadplan_render_md(&p, &md);
	loadplan_release(&p);
	if (md.len) {
		strbuf_addf(section, "\n## %s\n\n%s", LOADPLAN_HEADING, md.buf);
		if (body)
			strbuf_addstr(body, md.buf);
	}
	strbuf_release(&md);
}
