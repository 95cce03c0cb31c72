/* table_md.c -- the per-stage peak table as markdown: sizes and times by units.h */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/units.h"
#include "../common/util.h"
#include "text.h"
#include "table.h"

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
	case RUN_RECORDING: strbuf_addstr(out, "still recording"); break;
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
		text_md(&one, a->stages[a->ran_to].name);
		strbuf_addf(&one, " (%s)", analysis_outcome_str(a, how, sizeof(how)));
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

/* "; staged used 0.2 GB more than eager in decode" for each stage the second
 * mode did not use less in every pair; `first` says whether one came before. */
static void more_clauses(const struct table *t, const struct table_comparison *c, bool first,
			 struct strbuf *out)
{
	const char *m2 = t->modes[c->mode].name, *m1 = t->modes[c->against].name;
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
}

/* The range of the differences over the stages the second mode used less in every pair
 * (all of them when `all`, else those not marked swap_worse). Returns how many. */
static size_t less_range(const struct table_comparison *c, int64_t *lo, int64_t *hi)
{
	size_t n = 0;
	for (size_t i = 0; i < c->nstages; i++) {
		const struct table_stage_diff *d = &c->stages[i];
		if (d->min_less < 0)
			continue;
		if (!n || d->min_less < *lo) *lo = d->min_less;
		if (!n || d->max_less > *hi) *hi = d->max_less;
		n++;
	}
	return n;
}

static void stage_list(const struct table *t, const struct table_comparison *c, bool less,
		       struct strbuf *out)
{
	for (size_t i = 0, n = 0; i < c->nstages; i++)
		if ((c->stages[i].min_less >= 0) == less)
			strbuf_addf(out, "%s %s", n++ ? "," : "", t->stages[c->stages[i].stage]);
}

/* How the second mode's runs ended, for the swap sentence. */
static void swap_ending(const struct table *t, const struct table_mode *m, struct strbuf *out)
{
	size_t nguard = 0;
	const char *where = NULL;
	bool one_place = true;
	for (size_t k = 0; k < m->nruns; k++) {
		const struct analysis *a = &t->runs[m->runs[k]].a;
		if (a->outcome != RUN_GUARD)
			continue;
		const char *st = a->stages[a->ran_to].name; /* escaped below */
		one_place &= !where || !strcmp(where, st);
		where = st;
		nguard++;
	}
	if (!nguard) {
		strbuf_addstr(out, ": it fit only by swapping");
		return;
	}
	if (nguard == m->nruns && m->nruns == 1)
		strbuf_addstr(out, ", and the guard stopped it");
	else if (nguard == m->nruns)
		strbuf_addf(out, ", and the guard stopped all %zu runs", nguard);
	else
		strbuf_addf(out, ", and the guard stopped %zu of %zu runs", nguard, m->nruns);
	if (one_place) {
		strbuf_addstr(out, " in ");
		text_md(out, where);
	}
	strbuf_addstr(out, nguard == m->nruns ? ": it did not fit" : "");
}

/* The second mode's swap rose more: never "used less"; say what happened. */
static void swap_sentence(const struct table *t, const struct table_comparison *c, struct strbuf *out)
{
	const struct table_mode *tm2 = &t->modes[c->mode], *tm1 = &t->modes[c->against];
	const char *m2 = tm2->name, *m1 = tm1->name;
	int64_t lo = 0, hi = 0;
	size_t nless = less_range(c, &lo, &hi);
	strbuf_addf(out, "%s: footprint ", m2);
	if (nless) {
		table_gb_range((uint64_t)lo, (uint64_t)hi, out);
		strbuf_addf(out, " below %s", m1);
		if (nless < c->nstages) {
			strbuf_addstr(out, " in");
			stage_list(t, c, true, out);
		}
	} else {
		strbuf_addf(out, "nowhere below %s", m1);
	}
	strbuf_addstr(out, ", but swap grew");
	if (c->swap_worse) {
		strbuf_addch(out, ' ');
		table_gb_range(tm2->swap_rise_min, tm2->swap_rise_max, out);
		strbuf_addf(out, " (%s ", m1);
		table_gb_range(tm1->swap_rise_min, tm1->swap_rise_max, out);
		strbuf_addch(out, ')');
	}
	for (size_t i = 0, n = 0; i < c->nstages; i++) {
		const struct table_stage_diff *d = &c->stages[i];
		if (!d->swap_worse)
			continue;
		const struct table_cell *c1 = table_cell(t, d->stage, c->against);
		const struct table_cell *c2 = table_cell(t, d->stage, c->mode);
		if (!n++)
			strbuf_addf(out, "%s more than %s's in ", c->swap_worse ? "," : "", m1);
		else
			strbuf_addstr(out, ", ");
		strbuf_addf(out, "%s (", t->stages[d->stage]);
		table_gb_range(c2->swap_min, c2->swap_max, out);
		strbuf_addstr(out, " against ");
		table_gb_range(c1->swap_min, c1->swap_max, out);
		strbuf_addch(out, ')');
	}
	swap_ending(t, tm2, out);
	strbuf_addstr(out, ".\n");
	if (nless < c->nstages) {
		strbuf_addstr(out, "In the stages both modes ran, ");
		more_clauses(t, c, true, out);
		strbuf_addstr(out, ".\n");
	}
}

static void comparison_md(const struct table *t, const struct table_comparison *c, struct strbuf *out)
{
	const char *m2 = t->modes[c->mode].name, *m1 = t->modes[c->against].name;
	if (!c->nstages) {
		strbuf_addf(out, "No stage was completed by both %s and %s.\n", m1, m2);
		return;
	}
	bool swap_worse = c->swap_worse;
	for (size_t i = 0; i < c->nstages; i++)
		swap_worse |= c->stages[i].swap_worse;
	if (swap_worse) {
		swap_sentence(t, c, out);
		return;
	}
	int64_t lo = 0, hi = 0;
	size_t nless = less_range(c, &lo, &hi);
	if (nless == c->nstages) {
		strbuf_addf(out, "In every stage both modes ran, %s used ", m2);
		table_gb_range((uint64_t)lo, (uint64_t)hi, out);
		strbuf_addf(out, " less than %s.\n", m1);
		return;
	}
	strbuf_addstr(out, "In the stages both modes ran, ");
	if (nless) {
		strbuf_addf(out, "%s used ", m2);
		table_gb_range((uint64_t)lo, (uint64_t)hi, out);
		strbuf_addf(out, " less than %s in", m1);
		stage_list(t, c, true, out);
	}
	more_clauses(t, c, !nless, out);
	strbuf_addstr(out, ".\n");
}

/* "in a, b and c" for the mapped differences that `pick` chooses. */
static void mapped_stages(const struct table *t, const struct table_comparison *c, int pick,
			  size_t n, struct strbuf *out)
{
	strbuf_addstr(out, " in ");
	for (size_t i = 0, k = 0; i < c->nmapped; i++) {
		const struct table_stage_diff *d = &c->mapped[i];
		int kind = d->min_less > (int64_t)TABLE_MAPPED_FLOOR ? 1 :
			   d->max_less < -(int64_t)TABLE_MAPPED_FLOOR ? -1 : 0;
		if (kind != pick)
			continue;
		strbuf_addstr(out, !k ? "" : k + 1 == n ? " and " : ", ");
		strbuf_addstr(out, t->stages[d->stage]);
		k++;
	}
}

/* The verdict's second figure: "mapped model files: staged 250 MB less in
 * denoise and decode" (stages where every pair of runs differs by more than
 * TABLE_MAPPED_FLOOR), or "mapped model files within 2 MB". */
static void mapped_clause(const struct table *t, const struct table_comparison *c, struct strbuf *out)
{
	const char *m2 = t->modes[c->mode].name;
	int64_t lo = 0, hi = 0, mlo = 0, mhi = 0;
	uint64_t within = 0;
	size_t nless = 0, nmore = 0;
	for (size_t i = 0; i < c->nmapped; i++) {
		const struct table_stage_diff *d = &c->mapped[i];
		if (d->min_less > (int64_t)TABLE_MAPPED_FLOOR) {
			if (!nless || d->min_less < lo) lo = d->min_less;
			if (!nless++ || d->max_less > hi) hi = d->max_less;
		} else if (d->max_less < -(int64_t)TABLE_MAPPED_FLOOR) {
			if (!nmore || -d->max_less < mlo) mlo = -d->max_less;
			if (!nmore++ || -d->min_less > mhi) mhi = -d->min_less;
		} else {
			uint64_t w = (uint64_t)(d->max_less > -d->min_less ? d->max_less : -d->min_less);
			within = w > within ? w : within;
		}
	}
	if (!nless && !nmore) {
		strbuf_addstr(out, "; mapped model files within ");
		table_gb_range(within, within, out);
		return;
	}
	strbuf_addstr(out, "; mapped model files: ");
	if (nless) {
		strbuf_addf(out, "%s ", m2);
		table_gb_range((uint64_t)lo, (uint64_t)hi, out);
		strbuf_addstr(out, " less");
		mapped_stages(t, c, 1, nless, out);
	}
	if (nmore) {
		strbuf_addf(out, "%s%s ", nless ? ", " : "", m2);
		table_gb_range((uint64_t)mlo, (uint64_t)mhi, out);
		strbuf_addstr(out, " more");
		mapped_stages(t, c, -1, nmore, out);
	}
}

/* The verdict, its first sentence naming the mapped files' figure too when
 * the runs read them. */
static void verdict_md(const struct table *t, const struct table_comparison *c, struct strbuf *out)
{
	if (t->mapped_shown && c->ntotals)
		table_total_sentence(t, c, out);
	struct strbuf v = STRBUF_INIT;
	comparison_md(t, c, &v);
	const char *end = t->mapped_shown && c->nmapped ? strstr(strbuf_str(&v), ".\n") : NULL;
	if (!end) {
		strbuf_addstr(out, strbuf_str(&v));
	} else {
		strbuf_add(out, v.buf, (size_t)(end - v.buf));
		mapped_clause(t, c, out);
		strbuf_addstr(out, end);
	}
	strbuf_release(&v);
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

/* Columns whose runs imported different versions: say so before the table. */
static void versions_md(const struct table *t, struct strbuf *out)
{
	if (!t->versions.ndiffs)
		return;
	strbuf_addstr(out, "Versions differ: ");
	versions_diff_text(&t->versions, out, true);
	strbuf_addstr(out, ".\n\n");
}

/* The swap table's cell: the stage's swap rise over the runs behind the cell. */
static void swap_cell_md(const struct table_cell *c, struct strbuf *out)
{
	if (!c->nentered)
		strbuf_addstr(out, "not reached");
	else if (!c->has_swap)
		strbuf_addstr(out, "n/a");
	else
		table_gb_range(c->swap_min, c->swap_max, out);
}

/* The device table's cell: the stage's device peak over the runs behind the cell. */
static void device_cell_md(const struct table_cell *c, struct strbuf *out)
{
	if (!c->nentered)
		strbuf_addstr(out, "not reached");
	else if (!c->has_device)
		strbuf_addstr(out, "n/a");
	else
		table_gb_range(c->device_min, c->device_max, out);
}

/* The second table, in runs that read device memory: what it counts and how. */
static void device_table_md(const struct table *t, struct strbuf *out)
{
	bool sampled = false;
	for (size_t i = 0; i < t->nstages * t->nmodes; i++)
		sampled |= t->cells[i].device_sampled;
	strbuf_addf(out, "\n%s memory per stage (the probe's reading from inside the process; ",
		    t->device_label);
	if (!sampled)
		strbuf_addstr(out, "exact: the device's peak counter, reset at each window's start");
	else if (t->device_interval > 0)
		strbuf_addf(out, "sampled every %g s: a spike shorter than that can be missed, record "
			    "with a shorter --interval", t->device_interval);
	else
		strbuf_addstr(out, "sampled: a spike between two readings can be missed, record with "
			      "a shorter --interval");
	strbuf_addstr(out, "):\n\n");
	table_stage_md(t, out, "device peak", device_cell_md);
}

static void mapped_cell_md(const struct table_cell *c, struct strbuf *out)
{
	if (!c->nentered)
		strbuf_addstr(out, "not reached");
	else if (!c->has_mapped)
		strbuf_addstr(out, "n/a");
	else
		table_gb_range(c->mapped_min, c->mapped_max, out);
}

static void majflt_cell_md(const struct table_cell *c, struct strbuf *out)
{
	if (!c->nentered)
		strbuf_addstr(out, "not reached");
	else if (!c->has_majflt)
		strbuf_addstr(out, "n/a");
	else if (c->majflt_min == c->majflt_max)
		strbuf_addf(out, "%llu", (unsigned long long)c->majflt_max);
	else
		strbuf_addf(out, "%llu to %llu", (unsigned long long)c->majflt_min,
			    (unsigned long long)c->majflt_max);
}

/* The mapped files' table (and the major faults', when a stage had any). */
static void mapped_tables_md(const struct table *t, struct strbuf *out)
{
	strbuf_addstr(out, "\nMapped model files per stage (resident pages of the data files the "
			   "pipeline maps rather than copies, such as weights loaded in their file's "
			   "dtype; not in the footprint: the kernel can drop them and read them back):"
			   "\n\n");
	table_stage_md(t, out, "peak mapped", mapped_cell_md);
	if (!t->any_majflt)
		return;
	strbuf_addstr(out, "\nMajor page faults per stage (pages read back from disk: mapped files "
			   "dropped under memory pressure and read again):\n\n");
	table_stage_md(t, out, "major faults", majflt_cell_md);
}

static void loads_lines(const struct table *t, struct strbuf *out)
{
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
}

/* What a mode's runs could not stage ("not staged: ...", a plan that did not match), once
 * each: the model, why, its size; the call that forced it with -v. */
static void staging_notes_md(const struct table *t, struct strbuf *out)
{
	for (size_t m = 0; m < t->nmodes; m++) {
		const char *said[64];
		size_t nsaid = 0;
		for (size_t i = 0; i < t->nruns; i++) {
			const struct analysis *a = &t->runs[i].a;
			if (t->runs[i].supplement || !a->mode || strcmp(a->mode, t->modes[m].name))
				continue;
			for (size_t k = 0; k < a->nstaging_notes && nsaid < 64; k++) {
				const char *note = a->staging_notes[k], *cut = strstr(note, "; forced by ");
				size_t len = cut && sb_verbosity < 1 ? (size_t)(cut - note) : strlen(note);
				bool dup = false;
				for (size_t j = 0; j < nsaid; j++)
					dup |= !strncmp(said[j], note, len);
				if (dup)
					continue;
				said[nsaid++] = note;
				bool plan = !strncmp(note, "plan ", 5);
				size_t skip = strchr(note, ':') ? (size_t)(strchr(note, ':') - note) + 2 : 0;
				char *shown = xstrndup(note + skip, len > skip ? len - skip : 0);
				strbuf_addf(out, "%s in %s: ", plan ? "The plan does not match" : "Not staged",
					    t->modes[m].name);
				text_md(out, shown);
				free(shown);
				strbuf_addstr(out, ".\n");
			}
		}
	}
}

/* "No sample in camera, structure (eager): ..." for the stages that completed in every run
 * with no sample in their windows: each ended before the recorder read its start (a sample
 * follows every stage event, at the time the recorder reads it), which happens to stages of a
 * few milliseconds, or longer on a busy machine. */
static void unsampled_lines(const struct table *t, struct strbuf *out)
{
	for (size_t m = 0; m < t->nmodes; m++) {
		size_t n = 0;
		double longest = 0;
		for (size_t s = 0; s < t->nstages; s++) {
			const struct table_cell *c = table_cell(t, s, m);
			if (!c->nentered || c->ncompleted || c->nendings)
				continue;
			strbuf_addf(out, "%s%s", n++ ? ", " : "\nNo sample in ", t->stages[s]);
			if (c->max_seconds > longest)
				longest = c->max_seconds;
		}
		if (!n)
			continue;
		char d[32];
		format_duration((int64_t)(fmin(longest, 1e9) * 1e9), d); /* a damaged trace's t: bounded */
		strbuf_addf(out, " (%s): %s ended, after at most %s, before a sample was taken in it (the "
			    "recorder samples as soon as it reads that a stage started; that sample is in "
			    "a later stage's row).\n",
			    t->modes[m].name, n == 1 ? "it" : "each", d);
	}
}

/* "eager run 1 was an outlier: ..." for each mode whose first run is one
 * (table.h: TABLE_FIRST_*), with what to do about it. */
static void first_run_lines(const struct table *t, struct strbuf *out)
{
	for (size_t m = 0; m < t->nmodes; m++) {
		const struct table_mode *tm = &t->modes[m];
		if (!tm->first_slow_wall && !tm->first_slow_load)
			continue;
		char a[UNITS_BUF], b[UNITS_BUF];
		strbuf_addf(out, "\nFirst run an outlier: %s run 1 ", tm->name);
		if (tm->first_slow_load)
			strbuf_addf(out, "loaded in %s against %s", units_seconds(tm->first_load, UNITS_COARSE, false, a),
				    units_seconds(tm->others_load, UNITS_COARSE, false, b));
		if (tm->first_slow_load && tm->first_slow_wall)
			strbuf_addstr(out, ", and ");
		if (tm->first_slow_wall)
			strbuf_addf(out, "took %s against %s", units_seconds(tm->first_wall, UNITS_COARSE, false, a),
				    units_seconds(tm->others_wall, UNITS_COARSE, false, b));
		strbuf_addf(out, " (the median of its other run%s). A first run often pays for a cold "
			    "page cache, files built or fetched, caches warmed; --warmup 1 runs each "
			    "variant once first, apart. The figures include it.\n",
			    tm->nruns > 2 ? "s" : "");
	}
}

static void summary_table(const struct table *t, struct strbuf *out)
{
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

static char *md_name(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	text_md(&sb, s);
	strbuf_addstr(&sb, ""); /* never NULL */
	return strbuf_detach(&sb);
}

static void render_md(const struct table *t, struct strbuf *out)
{
	table_readers_md(t, out);
	strbuf_addch(out, '\n');
	hosts_md(t, out);
	versions_md(t, out);
	table_stage_md(t, out, "peak footprint", cell_md);
	if (t->mapped_shown) {
		strbuf_addstr(out, "\nWhat the machine holds per stage (footprint + mapped model files, "
				   "each the stage's peak; the two may peak apart, so at most what was "
				   "held at once):\n\n");
		table_total_table_md(t, out);
	}
	if (t->ncomparisons)
		strbuf_addch(out, '\n');
	for (size_t i = 0; i < t->ncomparisons; i++)
		verdict_md(t, &t->comparisons[i], out);
	staging_notes_md(t, out);
	unsampled_lines(t, out);
	loads_lines(t, out);
	first_run_lines(t, out);
	if (t->swap_rose) {
		strbuf_addstr(out, "\nSystem swap rise per stage (the largest within one of its windows; "
				   "footprint does not count swapped pages):\n\n");
		table_stage_md(t, out, "swap rise", swap_cell_md);
	}
	if (t->has_device)
		device_table_md(t, out);
	if (t->mapped_shown)
		mapped_tables_md(t, out);
	summary_table(t, out);
}

static void render_verdict(const struct table *t, struct strbuf *out)
{
	table_readers_md(t, out);
	strbuf_addch(out, '\n'); /* a paragraph of its own on the page */
	for (size_t i = 0; i < t->ncomparisons; i++) {
		if (t->mapped_shown && t->comparisons[i].ntotals)
			table_total_sentence(t, &t->comparisons[i], out);
		comparison_md(t, &t->comparisons[i], out);
	}
	first_run_lines(t, out);
}

/* fn on a view of the table whose names are escaped ('|', line breaks). */
static void on_md_view(const struct table *t, struct strbuf *out,
		       void (*fn)(const struct table *, struct strbuf *))
{
	struct table view = *t;
	view.stages = xcalloc(t->nstages + 1, sizeof(*view.stages));
	view.modes = xcalloc(t->nmodes + 1, sizeof(*view.modes));
	for (size_t s = 0; s < t->nstages; s++)
		view.stages[s] = md_name(t->stages[s]);
	for (size_t m = 0; m < t->nmodes; m++) {
		view.modes[m] = t->modes[m];
		view.modes[m].name = md_name(t->modes[m].name);
	}
	fn(&view, out);
	for (size_t s = 0; s < t->nstages; s++)
		free((char *)view.stages[s]);
	for (size_t m = 0; m < t->nmodes; m++)
		free((char *)view.modes[m].name);
	free(view.stages);
	free(view.modes);
}

void table_render_md(const struct table *t, struct strbuf *out)
{
	on_md_view(t, out, render_md);
}

void table_render_verdict(const struct table *t, struct strbuf *out)
{
	on_md_view(t, out, render_verdict);
}
