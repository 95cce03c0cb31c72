/* table_total.c -- the resident total (footprint + mapped model files): the verdict's
 * sentence on what the machine holds and the per-stage table (table.h) */
#include <string.h>

#include "table.h"
#include "text.h"

/* The noise of a stage's totals: TABLE_TOTAL_FLOOR, or the spread of either
 * mode's own runs when larger. */
static uint64_t noise(const struct table *t, const struct table_comparison *c, size_t row)
{
	uint64_t n = TABLE_TOTAL_FLOOR;
	const struct table_cell *cells[2] = { table_cell(t, row, c->against), table_cell(t, row, c->mode) };
	for (int k = 0; k < 2; k++)
		if (cells[k]->has_total && cells[k]->total_max - cells[k]->total_min > n)
			n = cells[k]->total_max - cells[k]->total_min;
	return n;
}

/* The cell of mode m with the largest total, or NULL when none has one. */
static size_t largest(const struct table *t, size_t m, const struct table_cell **out)
{
	size_t best = 0;
	*out = NULL;
	for (size_t s = 0; s < t->nstages; s++) {
		const struct table_cell *c = table_cell(t, s, m);
		if (c->has_total && (!*out || c->total_max > (*out)->total_max)) {
			*out = c;
			best = s;
		}
	}
	return best;
}

/* "eager 12.9 GB in unet (0.7 GB + 12.2 GB model files)" */
static void largest_phrase(const struct table *t, size_t m, struct strbuf *out)
{
	const struct table_cell *c;
	size_t s = largest(t, m, &c);
	strbuf_addf(out, "%s ", t->modes[m].name);
	if (!c) {
		strbuf_addstr(out, "none");
		return;
	}
	table_gb_range(c->total_min, c->total_max, out);
	strbuf_addf(out, " in %s (", t->stages[s]);
	table_gb_range(c->min_bytes, c->max_bytes, out);
	strbuf_addstr(out, " + ");
	table_gb_range(c->has_mapped ? c->mapped_min : 0, c->has_mapped ? c->mapped_max : 0, out);
	strbuf_addstr(out, " model files)");
}

/* Whether a main run of mode m loaded model `name` in the stage (the window in
 * force at its load event); any model when name is NULL (the first found in
 * *first). */
static bool loaded_in(const struct table *t, size_t m, const char *stage, const char *name,
		      const char *const *skip, size_t nskip, const char **first)
{
	const struct table_mode *tm = &t->modes[m];
	for (size_t k = 0; k < tm->nruns; k++) {
		const struct analysis *a = &t->runs[tm->runs[k]].a;
		for (size_t i = 0; i < a->nloads; i++) {
			const struct load_info *l = &a->loads[i];
			const char *in = l->stage_in_force ? l->stage_in_force : l->stage;
			if (!in || !l->name || strcmp(in, stage) || (name && strcmp(name, l->name)))
				continue;
			bool dup = false;
			for (size_t j = 0; j < nskip; j++)
				dup |= !strcmp(skip[j], l->name);
			if (dup)
				continue;
			if (first)
				*first = l->name;
			return true;
		}
	}
	return false;
}

/* " (it loads a, b there)": the models the second mode's main runs loaded in
 * that stage's window and the first mode's did not, when there are any. */
static void reason(const struct table *t, const struct table_comparison *c, size_t row,
		   struct strbuf *out)
{
	const char *said[8], *seen[8];
	size_t n = 0, nseen = 0;
	const char *name;
	while (nseen < 8 && loaded_in(t, c->mode, t->stages[row], NULL, seen, nseen, &name)) {
		seen[nseen++] = name;
		if (!loaded_in(t, c->against, t->stages[row], name, NULL, 0, NULL))
			said[n++] = name;
	}
	if (!n)
		return;
	strbuf_addstr(out, " (it loads ");
	for (size_t j = 0; j < n; j++) {
		strbuf_addstr(out, j ? ", " : "");
		text_md(out, said[j]);
	}
	strbuf_addstr(out, " there)");
}

void table_total_sentence(const struct table *t, const struct table_comparison *c,
			  struct strbuf *out)
{
	const char *m2 = t->modes[c->mode].name, *m1 = t->modes[c->against].name;
	const struct table_stage_diff *best = NULL;
	size_t nmore = 0;
	for (size_t i = 0; i < c->ntotals; i++) {
		const struct table_stage_diff *d = &c->totals[i];
		uint64_t n = noise(t, c, d->stage);
		if (d->min_less > (int64_t)n && (!best || d->min_less > best->min_less))
			best = d;
		nmore += d->max_less < -(int64_t)n;
	}
	strbuf_addstr(out, "Counting what the machine holds (footprint + mapped model files), ");
	if (best) {
		strbuf_addf(out, "%s held ", m2);
		table_gb_range((uint64_t)best->min_less, (uint64_t)best->max_less, out);
		strbuf_addf(out, " less than %s in %s, its largest saving", m1, t->stages[best->stage]);
	} else {
		strbuf_addf(out, "%s held no less than %s in any stage beyond the noise", m2, m1);
	}
	for (size_t i = 0, k = 0; nmore && i < c->ntotals; i++) {
		const struct table_stage_diff *d = &c->totals[i];
		if (d->max_less >= -(int64_t)noise(t, c, d->stage))
			continue;
		strbuf_addstr(out, k++ ? ", " : best ? "; it held " : ", and ");
		table_gb_range((uint64_t)-d->max_less, (uint64_t)-d->min_less, out);
		strbuf_addf(out, " more in %s", t->stages[d->stage]);
		reason(t, c, d->stage, out);
	}
	strbuf_addstr(out, "; largest stage: ");
	largest_phrase(t, c->against, out);
	strbuf_addstr(out, ", ");
	largest_phrase(t, c->mode, out);
	strbuf_addstr(out, ".\n");
}

static void total_cell_md(const struct table_cell *c, struct strbuf *out)
{
	if (!c->nentered) {
		strbuf_addstr(out, "not reached");
		return;
	}
	if (!c->has_total) {
		strbuf_addstr(out, "no sample");
		return;
	}
	table_gb_range(c->total_min, c->total_max, out);
	strbuf_addstr(out, " (");
	table_gb_range(c->min_bytes, c->max_bytes, out);
	strbuf_addstr(out, " + ");
	table_gb_range(c->has_mapped ? c->mapped_min : 0, c->has_mapped ? c->mapped_max : 0, out);
	strbuf_addch(out, ')');
}

void table_total_table_md(const struct table *t, struct strbuf *out)
{
	table_stage_md(t, out, "resident total (footprint + model files)", total_cell_md);
}
