/* table.c -- the per-stage peak table by mode: the model and its md, csv and json renderers */
#include "table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/jsonw.h"

static const char *mode_name(const struct analysis *a)
{
	return a->mode ? a->mode : "(none)";
}

static size_t find_str(const char **v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return i;
	return n;
}

static void add_range_u64(bool *has, uint64_t *lo, uint64_t *hi, uint64_t v)
{
	if (!*has || v < *lo)
		*lo = v;
	if (!*has || v > *hi)
		*hi = v;
	*has = true;
}

/* Fill one cell from the runs of mode m (main or supplement) that entered the stage. */
static void fill_cell(struct table_cell *c, const struct table *t, const char *mode, const char *stage,
		      bool supplement)
{
	bool has_completed = false;
	for (size_t i = 0; i < t->nruns; i++) {
		const struct table_run *r = &t->runs[i];
		if (r->supplement != supplement || strcmp(mode_name(&r->a), mode))
			continue;
		const struct stage_stats *s = analysis_stage(&r->a, stage);
		if (!s)
			continue;
		c->nentered++;
		c->from_supplement = supplement;
		if (s->completed) {
			if (s->nsamples) {
				add_range_u64(&has_completed, &c->min_bytes, &c->max_bytes, s->peak_footprint);
				c->ncompleted++;
			}
			continue;
		}
		int code = r->a.outcome == RUN_SIGNAL ? r->a.signal :
			   r->a.outcome == RUN_EXIT ? r->a.exit_code : 0;
		size_t k;
		for (k = 0; k < c->nendings; k++)
			if (c->endings[k].outcome == r->a.outcome && c->endings[k].code == code)
				break;
		if (k == c->nendings) {
			if (c->nendings == sizeof(c->endings) / sizeof(c->endings[0]))
				k = c->nendings - 1; /* more distinct signals than slots: share the last */
			else
				memset(&c->endings[c->nendings++], 0, sizeof(c->endings[0]));
			c->endings[k].outcome = r->a.outcome;
			c->endings[k].code = code;
		}
		struct table_ending *e = &c->endings[k];
		e->nruns++;
		if (s->nsamples) {
			bool has = e->nsampled > 0;
			add_range_u64(&has, &e->min_bytes, &e->max_bytes, s->peak_footprint);
			e->nsampled++;
		}
	}
}

static void mode_summary(struct table_mode *m, const struct table_run *runs)
{
	for (size_t k = 0; k < m->nruns; k++) {
		const struct analysis *a = &runs[m->runs[k]].a;
		if (a->has_footprint)
			add_range_u64(&m->has_peak, &m->peak_min, &m->peak_max, a->peak_footprint);
		if (a->has_swap)
			add_range_u64(&m->has_swap, &m->swap_rise_min, &m->swap_rise_max, a->swap_rise);
		if (!k || a->wall_s < m->wall_min) m->wall_min = a->wall_s;
		if (!k || a->wall_s > m->wall_max) m->wall_max = a->wall_s;
		if (!k || a->load_seconds < m->load_s_min) m->load_s_min = a->load_seconds;
		if (!k || a->load_seconds > m->load_s_max) m->load_s_max = a->load_seconds;
		if (!k || a->nloads < m->loads_min) m->loads_min = a->nloads;
		if (!k || a->nloads > m->loads_max) m->loads_max = a->nloads;
		if (!k || a->load_bytes < m->load_bytes_min) m->load_bytes_min = a->load_bytes;
		if (!k || a->load_bytes > m->load_bytes_max) m->load_bytes_max = a->load_bytes;
	}
}

/* Peaks of the runs behind a cell that completed the stage with samples. */
static void compare_stage(const struct table *t, size_t row, size_t first, size_t second,
			  struct table_comparison *cmp)
{
	const struct table_cell *c1 = table_cell(t, row, first), *c2 = table_cell(t, row, second);
	if (!c1->ncompleted || !c2->ncompleted)
		return;
	const char *stage = t->stages[row];
	bool any = false;
	int64_t lo = 0, hi = 0;
	for (size_t i = 0; i < t->nruns; i++) {
		const struct table_run *r1 = &t->runs[i];
		if (r1->supplement != c1->from_supplement || strcmp(mode_name(&r1->a), t->modes[first].name))
			continue;
		const struct stage_stats *s1 = analysis_stage(&r1->a, stage);
		if (!s1 || !s1->completed || !s1->nsamples)
			continue;
		for (size_t j = 0; j < t->nruns; j++) {
			const struct table_run *r2 = &t->runs[j];
			if (r2->supplement != c2->from_supplement ||
			    strcmp(mode_name(&r2->a), t->modes[second].name))
				continue;
			const struct stage_stats *s2 = analysis_stage(&r2->a, stage);
			if (!s2 || !s2->completed || !s2->nsamples)
				continue;
			int64_t d = (int64_t)s1->peak_footprint - (int64_t)s2->peak_footprint;
			if (!any || d < lo) lo = d;
			if (!any || d > hi) hi = d;
			any = true;
		}
	}
	if (!any)
		return;
	cmp->stages = xrealloc(cmp->stages, (cmp->nstages + 1) * sizeof(*cmp->stages));
	cmp->stages[cmp->nstages++] = (struct table_stage_diff){ row, lo, hi };
}

int table_build(struct table *t, const struct table_run *runs, size_t nruns,
		const char *const *stages, size_t nstages)
{
	memset(t, 0, sizeof(*t));
	t->runs = runs;
	t->nruns = nruns;
	const char **names = xcalloc(nruns + 1, sizeof(*names));
	size_t nnames = 0;
	for (size_t i = 0; i < nruns; i++)
		if (!runs[i].supplement && find_str(names, nnames, mode_name(&runs[i].a)) == nnames)
			names[nnames++] = mode_name(&runs[i].a);
	if (!nnames) {
		free(names);
		return error("no trace to tabulate (supplements only fill in)");
	}
	t->nmodes = nnames;
	t->modes = xcalloc(nnames, sizeof(*t->modes));
	for (size_t m = 0; m < nnames; m++) {
		struct table_mode *tm = &t->modes[m];
		tm->name = names[m];
		tm->runs = xcalloc(nruns, sizeof(*tm->runs));
		for (size_t i = 0; i < nruns; i++)
			if (!runs[i].supplement && !strcmp(mode_name(&runs[i].a), tm->name))
				tm->runs[tm->nruns++] = i;
		mode_summary(tm, runs);
	}
	free(names);

	if (stages) {
		t->stages = xcalloc(nstages + 1, sizeof(*t->stages));
		for (size_t i = 0; i < nstages; i++)
			t->stages[i] = stages[i];
		t->nstages = nstages;
	} else {
		size_t alloc = 0;
		for (int pass = 0; pass < 2; pass++)
			for (size_t i = 0; i < nruns; i++) {
				if (runs[i].supplement != (pass == 1))
					continue;
				for (size_t k = 0; k < runs[i].a.nstages; k++) {
					const char *s = runs[i].a.stages[k].name;
					if (find_str(t->stages, t->nstages, s) < t->nstages)
						continue;
					ALLOC_GROW(t->stages, t->nstages + 1, alloc);
					t->stages[t->nstages++] = s;
				}
			}
	}

	t->cells = xcalloc(t->nstages * t->nmodes + 1, sizeof(*t->cells));
	for (size_t s = 0; s < t->nstages; s++)
		for (size_t m = 0; m < t->nmodes; m++) {
			struct table_cell *c = &t->cells[s * t->nmodes + m];
			fill_cell(c, t, t->modes[m].name, t->stages[s], false);
			if (!c->nentered)
				fill_cell(c, t, t->modes[m].name, t->stages[s], true);
		}

	t->ncomparisons = t->nmodes - 1;
	t->comparisons = xcalloc(t->ncomparisons + 1, sizeof(*t->comparisons));
	for (size_t m = 1; m < t->nmodes; m++) {
		struct table_comparison *cmp = &t->comparisons[m - 1];
		cmp->mode = m;
		cmp->against = 0;
		for (size_t s = 0; s < t->nstages; s++)
			compare_stage(t, s, 0, m, cmp);
	}
	return 0;
}

const struct table_cell *table_cell(const struct table *t, size_t stage, size_t mode)
{
	return &t->cells[stage * t->nmodes + mode];
}

void table_release(struct table *t)
{
	if (!t)
		return;
	for (size_t m = 0; m < t->nmodes; m++)
		free(t->modes[m].runs);
	free(t->modes);
	free(t->stages);
	free(t->cells);
	for (size_t i = 0; i < t->ncomparisons; i++)
		free(t->comparisons[i].stages);
	free(t->comparisons);
	memset(t, 0, sizeof(*t));
}

/* ---- markdown ------------------------------------------------------------ */

static void gb1(double bytes, char out[32])
{
	snprintf(out, 32, "%.1f", bytes / 1073741824.0);
}

void table_gb_range(uint64_t lo, uint64_t hi, struct strbuf *out)
{
	char a[32], b[32];
	gb1((double)lo, a);
	gb1((double)hi, b);
	if (!strcmp(a, b))
		strbuf_addf(out, "%s GB", a);
	else
		strbuf_addf(out, "%s to %s GB", a, b);
}

static void s_range(double lo, double hi, struct strbuf *out)
{
	char a[32], b[32];
	snprintf(a, sizeof(a), "%.1f", lo);
	snprintf(b, sizeof(b), "%.1f", hi);
	if (!strcmp(a, b))
		strbuf_addf(out, "%s s", a);
	else
		strbuf_addf(out, "%s to %s s", a, b);
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

void table_render_md(const struct table *t, struct strbuf *out)
{
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
		s_range(tm->load_s_min, tm->load_s_max, out);
		strbuf_addstr(out, " |\n");
	}
}

/* ---- csv ----------------------------------------------------------------- */

static void csv_str(struct strbuf *out, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		strbuf_addstr(out, s);
		return;
	}
	strbuf_addch(out, '"');
	for (; *s; s++) {
		if (*s == '"')
			strbuf_addch(out, '"');
		strbuf_addch(out, *s);
	}
	strbuf_addch(out, '"');
}

static void csv_double(struct strbuf *out, double v)
{
	char buf[64];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	strbuf_addstr(out, buf);
}

static const char *const outcome_keys[] = { "completed", "guard", "signal", "exit", "recorder_died" };

void table_render_csv(const struct table *t, struct strbuf *out)
{
	strbuf_addstr(out, "stage,mode,how,code,runs,sampled_runs,from_supplement,peak_min_bytes,peak_max_bytes\n");
	for (size_t s = 0; s < t->nstages; s++)
		for (size_t m = 0; m < t->nmodes; m++) {
			const struct table_cell *c = table_cell(t, s, m);
			const char *sup = c->from_supplement ? "true" : "false";
			if (!c->nentered || c->ncompleted || !c->nendings) {
				csv_str(out, t->stages[s]);
				strbuf_addch(out, ',');
				csv_str(out, t->modes[m].name);
				if (!c->nentered)
					strbuf_addf(out, ",not_reached,,0,0,%s,,\n", sup);
				else if (!c->ncompleted)
					strbuf_addf(out, ",no_sample,,%zu,0,%s,,\n", c->nentered, sup);
				else
					strbuf_addf(out, ",completed,,%zu,%zu,%s,%llu,%llu\n", c->ncompleted,
						    c->ncompleted, sup, (unsigned long long)c->min_bytes,
						    (unsigned long long)c->max_bytes);
			}
			for (size_t k = 0; k < c->nendings; k++) {
				const struct table_ending *e = &c->endings[k];
				csv_str(out, t->stages[s]);
				strbuf_addch(out, ',');
				csv_str(out, t->modes[m].name);
				strbuf_addf(out, ",%s,", outcome_keys[e->outcome]);
				if (e->outcome == RUN_SIGNAL || e->outcome == RUN_EXIT)
					strbuf_addf(out, "%d", e->code);
				strbuf_addf(out, ",%zu,%zu,%s,", e->nruns, e->nsampled, sup);
				if (e->nsampled)
					strbuf_addf(out, "%llu,%llu", (unsigned long long)e->min_bytes,
						    (unsigned long long)e->max_bytes);
				else
					strbuf_addch(out, ',');
				strbuf_addch(out, '\n');
			}
		}

	strbuf_addstr(out, "\nmode,against,stage,min_less_bytes,max_less_bytes\n");
	for (size_t i = 0; i < t->ncomparisons; i++) {
		const struct table_comparison *c = &t->comparisons[i];
		for (size_t k = 0; k < c->nstages; k++) {
			csv_str(out, t->modes[c->mode].name);
			strbuf_addch(out, ',');
			csv_str(out, t->modes[c->against].name);
			strbuf_addch(out, ',');
			csv_str(out, t->stages[c->stages[k].stage]);
			strbuf_addf(out, ",%lld,%lld\n", (long long)c->stages[k].min_less,
				    (long long)c->stages[k].max_less);
		}
	}

	strbuf_addstr(out, "\nmode,run,path,ran_to,how,code,peak_bytes,swap_rise_bytes,wall_s,"
			   "loads,load_bytes,load_s\n");
	for (size_t m = 0; m < t->nmodes; m++) {
		const struct table_mode *tm = &t->modes[m];
		for (size_t k = 0; k < tm->nruns; k++) {
			const struct analysis *a = &t->runs[tm->runs[k]].a;
			csv_str(out, tm->name);
			strbuf_addf(out, ",%zu,", k + 1);
			csv_str(out, a->path);
			strbuf_addch(out, ',');
			csv_str(out, a->stages[a->ran_to].name);
			strbuf_addf(out, ",%s,", outcome_keys[a->outcome]);
			if (a->outcome == RUN_SIGNAL)
				strbuf_addf(out, "%d", a->signal);
			else if (a->outcome == RUN_EXIT)
				strbuf_addf(out, "%d", a->exit_code);
			strbuf_addch(out, ',');
			if (a->has_footprint)
				strbuf_addf(out, "%llu", (unsigned long long)a->peak_footprint);
			strbuf_addch(out, ',');
			if (a->has_swap)
				strbuf_addf(out, "%llu", (unsigned long long)a->swap_rise);
			strbuf_addch(out, ',');
			csv_double(out, a->wall_s);
			strbuf_addf(out, ",%zu,%llu,", a->nloads, (unsigned long long)a->load_bytes);
			csv_double(out, a->load_seconds);
			strbuf_addch(out, '\n');
		}
	}
}

/* ---- json ---------------------------------------------------------------- */

static void json_range(struct jsonw *w, const char *lo_key, const char *hi_key, bool has, uint64_t lo, uint64_t hi)
{
	jw_key(w, lo_key);
	if (has) jw_u64(w, lo); else jw_null(w);
	jw_key(w, hi_key);
	if (has) jw_u64(w, hi); else jw_null(w);
}

void table_render_json(const struct table *t, struct strbuf *out)
{
	struct jsonw w = JSONW_INIT(out);
	jw_object_begin(&w);
	jw_key(&w, "modes");
	jw_array_begin(&w);
	for (size_t m = 0; m < t->nmodes; m++) {
		const struct table_mode *tm = &t->modes[m];
		jw_object_begin(&w);
		jw_key(&w, "mode"); jw_string(&w, tm->name);
		jw_key(&w, "runs");
		jw_array_begin(&w);
		for (size_t k = 0; k < tm->nruns; k++) {
			const struct analysis *a = &t->runs[tm->runs[k]].a;
			jw_object_begin(&w);
			jw_key(&w, "path"); jw_string(&w, a->path);
			jw_key(&w, "ran_to"); jw_string(&w, a->stages[a->ran_to].name);
			jw_key(&w, "outcome"); jw_string(&w, outcome_keys[a->outcome]);
			jw_key(&w, "code");
			if (a->outcome == RUN_SIGNAL) jw_i64(&w, a->signal);
			else if (a->outcome == RUN_EXIT) jw_i64(&w, a->exit_code);
			else jw_null(&w);
			jw_key(&w, "peak_footprint_bytes");
			if (a->has_footprint) jw_u64(&w, a->peak_footprint); else jw_null(&w);
			jw_key(&w, "swap_rise_bytes");
			if (a->has_swap) jw_u64(&w, a->swap_rise); else jw_null(&w);
			jw_key(&w, "wall_s"); jw_double(&w, a->wall_s);
			jw_key(&w, "loads"); jw_u64(&w, a->nloads);
			jw_key(&w, "load_bytes"); jw_u64(&w, a->load_bytes);
			jw_key(&w, "load_s"); jw_double(&w, a->load_seconds);
			jw_object_end(&w);
		}
		jw_array_end(&w);
		jw_object_end(&w);
	}
	jw_array_end(&w);

	jw_key(&w, "stages");
	jw_array_begin(&w);
	for (size_t s = 0; s < t->nstages; s++) {
		jw_object_begin(&w);
		jw_key(&w, "stage"); jw_string(&w, t->stages[s]);
		jw_key(&w, "cells");
		jw_array_begin(&w);
		for (size_t m = 0; m < t->nmodes; m++) {
			const struct table_cell *c = table_cell(t, s, m);
			jw_object_begin(&w);
			jw_key(&w, "mode"); jw_string(&w, t->modes[m].name);
			jw_key(&w, "runs_entered"); jw_u64(&w, c->nentered);
			jw_key(&w, "from_supplement"); jw_bool(&w, c->from_supplement);
			jw_key(&w, "runs_completed"); jw_u64(&w, c->ncompleted);
			json_range(&w, "peak_min_bytes", "peak_max_bytes", c->ncompleted > 0, c->min_bytes, c->max_bytes);
			jw_key(&w, "ended");
			jw_array_begin(&w);
			for (size_t k = 0; k < c->nendings; k++) {
				const struct table_ending *e = &c->endings[k];
				jw_object_begin(&w);
				jw_key(&w, "how"); jw_string(&w, outcome_keys[e->outcome]);
				jw_key(&w, "code");
				if (e->outcome == RUN_SIGNAL || e->outcome == RUN_EXIT) jw_i64(&w, e->code);
				else jw_null(&w);
				jw_key(&w, "runs"); jw_u64(&w, e->nruns);
				jw_key(&w, "sampled_runs"); jw_u64(&w, e->nsampled);
				json_range(&w, "peak_min_bytes", "peak_max_bytes", e->nsampled > 0, e->min_bytes, e->max_bytes);
				jw_object_end(&w);
			}
			jw_array_end(&w);
			jw_object_end(&w);
		}
		jw_array_end(&w);
		jw_object_end(&w);
	}
	jw_array_end(&w);

	jw_key(&w, "comparisons");
	jw_array_begin(&w);
	for (size_t i = 0; i < t->ncomparisons; i++) {
		const struct table_comparison *c = &t->comparisons[i];
		jw_object_begin(&w);
		jw_key(&w, "mode"); jw_string(&w, t->modes[c->mode].name);
		jw_key(&w, "against"); jw_string(&w, t->modes[c->against].name);
		jw_key(&w, "stages");
		jw_array_begin(&w);
		for (size_t k = 0; k < c->nstages; k++) {
			jw_object_begin(&w);
			jw_key(&w, "stage"); jw_string(&w, t->stages[c->stages[k].stage]);
			jw_key(&w, "min_less_bytes"); jw_i64(&w, c->stages[k].min_less);
			jw_key(&w, "max_less_bytes"); jw_i64(&w, c->stages[k].max_less);
			jw_object_end(&w);
		}
		jw_array_end(&w);
		jw_object_end(&w);
	}
	jw_array_end(&w);
	jw_object_end(&w);
	strbuf_addch(out, '\n');
}
