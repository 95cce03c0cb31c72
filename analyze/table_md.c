/* table_md.c -- the per-stage peak table as markdown: sizes and times by units.h */
#include <stdio.h>
#include <string.h>

#include "../common/units.h"
#include "render.h"
#include "table.h"

void table_gb_range(uint64_t lo, uint64_t hi, struct strbuf *out)
{
	units_add_size_range(out, (double)lo, (double)hi, UNITS_COARSE);
}

static void s_range(double lo, double hi, struct strbuf *out)
{
	units_add_seconds_range(out, lo, hi, UNITS_COARSE);
}

static void ending_phrase(const struct table_ending *e, struct strbuf *out)
{
	switch (e->outcome) {
	case RUN_GUARD: strbuf_addstr(out, "stopped by the guard"); break;
	case RUN_SIGNAL: strbuf_addf(out, "killed by signal %d", e->code); break;
	case RUN_EXIT: strbuf_addf(out, "exited with code %d", e->code); break;
	case RUN_RECORDER_DIED: strbuf_addstr(out, "recorder died"); break;
	case RUN_COMPLETED: strbuf_addstr(out, "completed"); break;
	}
	if (e->nsampled) {
		strbuf_addstr(out, " at ");
		table_gb_range(e->min_bytes, e->max_bytes, out);
	} else {
		strbuf_addstr(out, " with no sample");
	}
}

static void cell_md(const struct table_cell *c, struct strbuf *out)
{
	if (!c->nentered) {
		strbuf_addstr(out, "not reached");
		return;
	}
	bool any = false;
	if (c->ncompleted) {
		table_gb_range(c->min_bytes, c->max_bytes, out);
		any = true;
	}
	for (size_t k = 0; k < c->nendings; k++) {
		const struct table_ending *e = &c->endings[k];
		if (any)
			strbuf_addf(out, "; %zu run%s ", e->nruns, e->nruns == 1 ? "" : "s");
		ending_phrase(e, out);
		any = true;
	}
	if (!any)
		strbuf_addstr(out, "no sample");
	if (c->from_supplement)
		strbuf_addstr(out, " (supplement)");
}

static void ran_to_md(const struct table *t, const struct table_mode *m, struct strbuf *out)
{
	struct strbuf seen = STRBUF_INIT;
	size_t n = 0;
	for (size_t k = 0; k < m->nruns; k++) {
		const struct analysis *a = &t->runs[m->runs[k]].a;
		struct strbuf one = STRBUF_INIT;
		char how[64];
		strbuf_addf(&one, "%s (%s)", a->stages[a->ran_to].name, analysis_outcome_str(a, how, sizeof(how)));
		/* distinct values, in run order */
		bool dup = false;
		for (const char *p = strbuf_str(&seen); *p; p += strlen(p) + 1)
			if (!strcmp(p, one.buf))
				dup = true;
		if (!dup) {
			if (n++)
				strbuf_addstr(out, " / ");
			strbuf_addstr(out, one.buf);
			strbuf_add(&seen, one.buf, one.len + 1);
		}
		strbuf_release(&one);
	}
	strbuf_release(&seen);
}

static void comparison_md(const struct table *t, const struct table_comparison *c, struct strbuf *out)
{
	const char *m2 = t->modes[c->mode].name, *m1 = t->modes[c->against].name;
	if (!c->nstages) {
		strbuf_addf(out, "No stage was completed by both %s and %s.\n", m1, m2);
		return;
	}
	bool less_any = false, other = false;
	int64_t lo = 0, hi = 0;
	for (size_t i = 0; i < c->nstages; i++) {
		const struct table_stage_diff *d = &c->stages[i];
		if (d->min_less >= 0) {
			if (!less_any || d->min_less < lo) lo = d->min_less;
			if (!less_any || d->max_less > hi) hi = d->max_less;
			less_any = true;
		} else {
			other = true;
		}
	}
	if (!other) {
		strbuf_addf(out, "In every stage both modes ran, %s used ", m2);
		table_gb_range((uint64_t)lo, (uint64_t)hi, out);
		strbuf_addf(out, " less than %s.\n", m1);
		return;
	}
	strbuf_addstr(out, "In the stages both modes ran, ");
	bool first = true;
	if (less_any) {
		strbuf_addf(out, "%s used ", m2);
		table_gb_range((uint64_t)lo, (uint64_t)hi, out);
		strbuf_addf(out, " less than %s in", m1);
		for (size_t i = 0, n = 0; i < c->nstages; i++)
			if (c->stages[i].min_less >= 0)
				strbuf_addf(out, "%s %s", n++ ? "," : "", t->stages[c->stages[i].stage]);
		first = false;
	}
	for (size_t i = 0; i < c->nstages; i++) {
		const struct table_stage_diff *d = &c->stages[i];
		if (d->min_less >= 0)
			continue;
		strbuf_addf(out, "%s%s used ", first ? "" : "; ", m2);
		first = false;
		if (d->max_less <= 0) {
			table_gb_range((uint64_t)-d->max_less, (uint64_t)-d->min_less, out);
			strbuf_addf(out, " more than %s in %s", m1, t->stages[d->stage]);
		} else {
			strbuf_addstr(out, "between ");
			table_gb_range((uint64_t)-d->min_less, (uint64_t)-d->min_less, out);
			strbuf_addstr(out, " more and ");
			table_gb_range((uint64_t)d->max_less, (uint64_t)d->max_less, out);
			strbuf_addf(out, " less than %s in %s", m1, t->stages[d->stage]);
		}
	}
	strbuf_addstr(out, ".\n");
}

/* Runs from several hosts: say how they were grouped, before the table. */
static void hosts_md(const struct table *t, struct strbuf *out)
{
	if (!t->nhosts)
		return;
	strbuf_addf(out, "Runs from %zu hosts kept apart (a peak on one machine is no figure for "
		    "another): each column is MODE@HOST; hosts ", t->nhosts);
	for (size_t h = 0; h < t->nhosts; h++) {
		size_t n = 0;
		for (size_t i = 0; i < t->nruns; i++) {
			const char *host = t->runs[i].a.host && *t->runs[i].a.host ? t->runs[i].a.host
										    : "unknown";
			n += !strcmp(host, t->hosts[h]);
		}
		strbuf_addf(out, "%s%s (%zu run%s)", h ? ", " : "", t->hosts[h], n, n == 1 ? "" : "s");
	}
	strbuf_addstr(out, ".\n\n");
}

void table_render_md(const struct table *t, struct strbuf *out)
{
	hosts_md(t, out);
	strbuf_addstr(out, "| stage |");
	for (size_t m = 0; m < t->nmodes; m++)
		strbuf_addf(out, " %s, peak footprint |", t->modes[m].name);
	strbuf_addstr(out, "\n|---|");
	for (size_t m = 0; m < t->nmodes; m++)
		strbuf_addstr(out, "---|");
	strbuf_addch(out, '\n');
	for (size_t s = 0; s < t->nstages; s++) {
		strbuf_addf(out, "| %s |", t->stages[s]);
		for (size_t m = 0; m < t->nmodes; m++) {
			strbuf_addch(out, ' ');
			cell_md(table_cell(t, s, m), out);
			strbuf_addstr(out, " |");
		}
		strbuf_addch(out, '\n');
	}

	if (t->ncomparisons)
		strbuf_addch(out, '\n');
	for (size_t i = 0; i < t->ncomparisons; i++)
		comparison_md(t, &t->comparisons[i], out);

	bool loads_line = false;
	for (size_t m = 0; m < t->nmodes; m++) {
		const struct table_mode *tm = &t->modes[m];
		if (!tm->nruns || !tm->loads_max)
			continue;
		if (!loads_line)
			strbuf_addch(out, '\n');
		loads_line = true;
		strbuf_addf(out, "%s: ", tm->name);
		if (tm->loads_min == tm->loads_max)
			strbuf_addf(out, "%zu load%s", tm->loads_max, tm->loads_max == 1 ? "" : "s");
		else
			strbuf_addf(out, "%zu to %zu loads", tm->loads_min, tm->loads_max);
		strbuf_addstr(out, " read ");
		table_gb_range(tm->load_bytes_min, tm->load_bytes_max, out);
		strbuf_addstr(out, " in ");
		s_range(tm->load_s_min, tm->load_s_max, out);
		strbuf_addstr(out, ".\n");
	}

	strbuf_addstr(out, "\n| mode | runs | ran to | peak footprint | swap rise | time | of which loading |\n"
			   "|---|---|---|---|---|---|---|\n");
	for (size_t m = 0; m < t->nmodes; m++) {
		const struct table_mode *tm = &t->modes[m];
		strbuf_addf(out, "| %s | %zu | ", tm->name, tm->nruns);
		ran_to_md(t, tm, out);
		strbuf_addstr(out, " | ");
		if (tm->has_peak)
			table_gb_range(tm->peak_min, tm->peak_max, out);
		else
			strbuf_addstr(out, "no sample");
		strbuf_addstr(out, " | ");
		if (tm->has_swap)
			table_gb_range(tm->swap_rise_min, tm->swap_rise_max, out);
		else
			strbuf_addstr(out, "n/a");
		strbuf_addstr(out, " | ");
		s_range(tm->wall_min, tm->wall_max, out);
		strbuf_addstr(out, " | ");
		if (tm->loads_max) /* no load event in any run: the adapter does not report loads */
			s_range(tm->load_s_min, tm->load_s_max, out);
		else
			strbuf_addstr(out, "not reported");
		strbuf_addstr(out, " |\n");
	}
}
