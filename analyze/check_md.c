/* check_md.c -- a check's findings as markdown: sizes and times by check_text.c (units.h) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "text.h"

/* One markdown cell: '|' and line breaks escaped (text.h). */
static void add_cell(struct strbuf *sb, const char *s)
{
	strbuf_addstr(sb, " ");
	text_md(sb, s);
	strbuf_addstr(sb, " |");
}

static void md_row(const struct check_finding *f, struct strbuf *out)
{
	struct strbuf cell = STRBUF_INIT;
	strbuf_addstr(out, "|");
	add_cell(out, f->mode);
	add_cell(out, f->stage ? f->stage : "-");
	if (f->metric == CM_LATENT) {
		strbuf_addf(&cell, "latent %s", f->latent);
		add_cell(out, cell.buf);
		strbuf_reset(&cell);
	} else {
		add_cell(out, check_metric_name(f->metric));
	}
	if (f->metric < CM_NNUMERIC) {
		check_text_range(&cell, f->metric, f->base_min, f->base_max, f->nbase);
		add_cell(out, cell.buf);
		strbuf_reset(&cell);
		check_text_range(&cell, f->metric, f->cand_min, f->cand_max, f->ncand);
		add_cell(out, cell.buf);
		strbuf_reset(&cell);
		check_text_value(&cell, f->metric, f->change, true);
		double ref = f->kind == CK_REGRESSION ? f->base_max : f->base_min;
		if (ref > 0)
			strbuf_addf(&cell, " (%+.0f%%)", 100.0 * f->change / ref);
		if (f->detail) /* swap rise: what the footprint did meanwhile */
			strbuf_addf(&cell, ", %s", f->detail);
		add_cell(out, cell.buf);
		strbuf_reset(&cell);
		strbuf_addstr(&cell, "spread ");
		check_text_value(&cell, f->metric, f->spread, false);
		strbuf_addstr(&cell, ", allowed ");
		check_text_value(&cell, f->metric, f->allowed, false);
		if (f->shift > 1.005 || (f->shift > 0 && f->shift < 0.995))
			strbuf_addf(&cell, ", every stage %.0f%% %s", 100.0 * fabs(f->shift - 1),
				    f->shift > 1 ? "slower" : "faster");
		add_cell(out, cell.buf);
	} else {
		add_cell(out, f->base_text);
		add_cell(out, f->now_text);
		add_cell(out, f->detail);
		add_cell(out, "-");
	}
	strbuf_addch(out, '\n');
	strbuf_release(&cell);
}

static void md_section(const struct check *c, enum check_kind kind, const char *title,
		       struct strbuf *out)
{
	if (!check_count(c, kind))
		return;
	strbuf_addf(out, "\n## %s\n\n", title);
	if (kind == CK_NOT_JUDGED) {
		strbuf_addstr(out, "| mode | stage | metrics | why |\n|---|---|---|---|\n");
	} else if (kind == CK_NOTE) {
		strbuf_addstr(out, "| mode | stage | note |\n|---|---|---|\n");
	} else {
		strbuf_addstr(out, "| mode | stage | metric | baseline | now | change | noise |\n"
				   "|---|---|---|---|---|---|---|\n");
	}
	for (size_t i = 0; i < c->nfindings; i++) {
		const struct check_finding *f = &c->findings[i];
		if (f->kind != kind)
			continue;
		if (kind == CK_REGRESSION || kind == CK_IMPROVEMENT) {
			md_row(f, out);
			continue;
		}
		strbuf_addstr(out, "|");
		add_cell(out, f->mode);
		add_cell(out, f->stage ? f->stage : "-");
		if (kind == CK_NOT_JUDGED) {
			if (f->metric == CM_LATENT) {
				char *t = xasprintf("latent %s", f->latent);
				add_cell(out, t);
				free(t);
			} else {
				add_cell(out, f->now_text);
			}
			add_cell(out, f->detail);
		} else if (f->metric == CM_LATENT) {
			char *t = xasprintf("latent %s: %s; baseline %s, now %s", f->latent,
					    f->detail, f->base_text, f->now_text);
			add_cell(out, t);
			free(t);
		} else {
			add_cell(out, f->detail);
		}
		strbuf_addch(out, '\n');
	}
}

static const char *plural(size_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

void check_render_md(const struct check *c, struct strbuf *out)
{
	size_t nr = check_count(c, CK_REGRESSION), ni = check_count(c, CK_IMPROVEMENT);
	strbuf_addf(out, "check: %zu %s, %zu %s (baseline %s: %zu %s; candidate %s: %zu %s)\n", nr,
		    plural(nr, "regression", "regressions"), ni,
		    plural(ni, "improvement", "improvements"),
		    c->side[0].label ? c->side[0].label : "-", c->side[0].n,
		    plural(c->side[0].n, "run", "runs"), c->side[1].label ? c->side[1].label : "-",
		    c->side[1].n, plural(c->side[1].n, "run", "runs"));
	if (check_candidate_failed(c)) {
		strbuf_addf(out, "\nCandidate runs failed (check exits 1 for them, even where the "
				 "baseline's failed too):");
		const struct check_side *cs = &c->side[CHECK_CANDIDATE];
		size_t k = 0;
		for (size_t i = 0; i < cs->n; i++) {
			const struct analysis *a = &cs->runs[i].a;
			if (a->outcome == RUN_COMPLETED)
				continue;
			char buf[64];
			strbuf_addf(out, "%s ", k++ ? ";" : "");
			text_md(out, cs->runs[i].id);
			strbuf_addf(out, " %s", analysis_outcome_str(a, buf, sizeof(buf)));
			if (a->nstages) {
				strbuf_addstr(out, " in ");
				text_md(out, a->stages[a->ran_to].name);
			}
		}
		strbuf_addstr(out, ".\n");
	}
	if (c->versions.ndiffs) {
		strbuf_addstr(out, "\nVersions differ: ");
		versions_diff_text(&c->versions, out, true);
		strbuf_addstr(out, ".\n");
	}
	md_section(c, CK_REGRESSION, "Regressions", out);
	md_section(c, CK_IMPROVEMENT, "Improvements", out);
	md_section(c, CK_NOT_JUDGED, "Not judged", out);
	md_section(c, CK_NOTE, "Notes", out);
	strbuf_addf(out, "\nrule: worse than every baseline run by more than max(threshold, floor, "
			 "noise), noise = max(either side's spread, %g x the pooled relative SD of "
			 "the mode's stages), times after the machine-wide shift; memory threshold ",
		    CHECK_NOISE_K);
	if (c->opt.growth_is_pct)
		strbuf_addf(out, "%g%%", c->opt.growth_pct);
	else
		check_text_value(out, CM_PEAK, (double)c->opt.growth_bytes, false);
	strbuf_addstr(out, ", floor ");
	check_text_value(out, CM_PEAK, (double)CHECK_MEM_FLOOR_BYTES, false);
	strbuf_addstr(out, "; time threshold ");
	if (c->opt.time_is_pct)
		strbuf_addf(out, "%g%%", c->opt.time_pct);
	else
		check_text_value(out, CM_TIME, c->opt.time_s, false);
	strbuf_addstr(out, ", floor ");
	check_text_value(out, CM_TIME, CHECK_TIME_FLOOR_S, false);
	strbuf_addstr(out, "\n");
}
