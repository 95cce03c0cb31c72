/* table.c -- the per-stage peak table by mode: the model (renderers: table_md.c, table_csv.c, table_json.c) */
#include "table.h"

#include <stdlib.h>
#include <string.h>

#include "strindex.h"

static const char *mode_name(const struct analysis *a)
{
	return a->mode ? a->mode : "(none)";
}

/* The column a run belongs to: its mode, or "MODE@HOST" when hosts differ. */
static const char *group_of(const struct table *t, size_t i)
{
	return t->groups ? t->groups[i] : mode_name(&t->runs[i].a);
}

static const char *host_of(const struct analysis *a)
{
	return a->host && *a->host ? a->host : "unknown";
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
		if (r->supplement != supplement || strcmp(group_of(t, i), mode))
			continue;
		const struct stage_stats *s = analysis_stage(&r->a, stage);
		if (!s)
			continue;
		c->nentered++;
		c->from_supplement = supplement;
		if (s->seconds > c->max_seconds)
			c->max_seconds = s->seconds;
		if (s->has_swap_rise) {
			add_range_u64(&c->has_swap, &c->swap_min, &c->swap_max, s->swap_rise);
			c->swap_rose = c->swap_max >= TABLE_SWAP_FLOOR;
		}
		if (s->has_device) {
			add_range_u64(&c->has_device, &c->device_min, &c->device_max, s->device_peak);
			c->device_sampled |= !s->device_exact;
		}
		if (s->has_mapped)
			add_range_u64(&c->has_mapped, &c->mapped_min, &c->mapped_max, s->mapped_peak);
		if (s->has_majflt)
			add_range_u64(&c->has_majflt, &c->majflt_min, &c->majflt_max, s->majflt);
		if (s->completed) {
			if (s->nsamples) {
				add_range_u64(&has_completed, &c->min_bytes, &c->max_bytes, s->peak_footprint);
				add_range_u64(&c->has_total, &c->total_min, &c->total_max,
					      s->peak_footprint + (s->has_mapped ? s->mapped_peak : 0));
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double table_median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The TABLE_FIRST_* rule (table.h) on the mode's first run. */
static void first_outlier(struct table_mode *m, const struct table_run *runs)
{
	if (m->nruns < 2 || runs[m->runs[0]].a.outcome != RUN_COMPLETED)
		return;
	double *wall = xcalloc(m->nruns, sizeof(*wall)), *load = xcalloc(m->nruns, sizeof(*load));
	size_t n = 0;
	for (size_t k = 1; k < m->nruns; k++) {
		const struct analysis *a = &runs[m->runs[k]].a;
		if (a->outcome != RUN_COMPLETED)
			continue;
		wall[n] = a->wall_s;
		load[n++] = a->load_seconds;
	}
	if (n) {
		const struct analysis *a = &runs[m->runs[0]].a;
		m->first_wall = a->wall_s;
		m->first_load = a->load_seconds;
		m->others_wall = table_median(wall, n);
		m->others_load = table_median(load, n);
		m->first_slow_wall = m->first_wall > TABLE_FIRST_RATIO * m->others_wall &&
				     m->first_wall - m->others_wall > TABLE_FIRST_WALL_S;
		m->first_slow_load = a->nloads && m->first_load > TABLE_FIRST_RATIO * m->others_load &&
				     m->first_load - m->others_load > TABLE_FIRST_LOAD_S;
	}
	free(wall);
	free(load);
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
	first_outlier(m, runs);
}

enum figure { FIG_FOOTPRINT, FIG_MAPPED, FIG_TOTAL };

/* A completed stage's peak: its footprint (with samples), its mapped peak, or
 * their sum (with samples; no mapped key: the footprint alone). */
static bool stage_peak(const struct stage_stats *s, enum figure fig, uint64_t *v)
{
	if (!s || !s->completed || !(fig == FIG_MAPPED ? s->has_mapped : s->nsamples > 0))
		return false;
	*v = fig == FIG_MAPPED ? s->mapped_peak : s->peak_footprint;
	if (fig == FIG_TOTAL && s->has_mapped)
		*v += s->mapped_peak;
	return true;
}

static void add_diff(struct table_stage_diff **v, size_t *n, struct table_stage_diff d)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = d;
}

/* Peaks of the runs behind a cell that completed the stage with samples: the
 * footprint's, the mapped files' or the resident total's. */
static void compare_stage(const struct table *t, size_t row, size_t first, size_t second,
			  struct table_comparison *cmp, enum figure fig)
{
	const struct table_cell *c1 = table_cell(t, row, first), *c2 = table_cell(t, row, second);
	if (!c1->ncompleted || !c2->ncompleted)
		return;
	const char *stage = t->stages[row];
	bool any = false;
	int64_t lo = 0, hi = 0;
	for (size_t i = 0; i < t->nruns; i++) {
		const struct table_run *r1 = &t->runs[i];
		if (r1->supplement != c1->from_supplement || strcmp(group_of(t, i), t->modes[first].name))
			continue;
		uint64_t v1, v2;
		if (!stage_peak(analysis_stage(&r1->a, stage), fig, &v1))
			continue;
		for (size_t j = 0; j < t->nruns; j++) {
			const struct table_run *r2 = &t->runs[j];
			if (r2->supplement != c2->from_supplement ||
			    strcmp(group_of(t, j), t->modes[second].name))
				continue;
			if (!stage_peak(analysis_stage(&r2->a, stage), fig, &v2))
				continue;
			int64_t d = (int64_t)v1 - (int64_t)v2;
			if (!any || d < lo) lo = d;
			if (!any || d > hi) hi = d;
			any = true;
		}
	}
	if (!any)
		return;
	if (fig == FIG_MAPPED) {
		add_diff(&cmp->mapped, &cmp->nmapped, (struct table_stage_diff){ row, lo, hi, false });
		return;
	}
	bool swap_worse = c1->has_swap && c2->has_swap &&
			  c2->swap_max > c1->swap_max + TABLE_SWAP_FLOOR;
	if (fig == FIG_TOTAL)
		add_diff(&cmp->totals, &cmp->ntotals, (struct table_stage_diff){ row, lo, hi, false });
	else
		add_diff(&cmp->stages, &cmp->nstages, (struct table_stage_diff){ row, lo, hi, swap_worse });
}

/* More than one host among the runs: t->hosts and t->groups ("MODE@HOST"). */
static void group_by_host(struct table *t)
{
	const char **hosts = xcalloc(t->nruns + 1, sizeof(*hosts));
	size_t n = 0;
	for (size_t i = 0; i < t->nruns; i++)
		if (find_str(hosts, n, host_of(&t->runs[i].a)) == n)
			hosts[n++] = host_of(&t->runs[i].a);
	if (n < 2) {
		free(hosts);
		return;
	}
	t->hosts = hosts;
	t->nhosts = n;
	t->groups = xcalloc(t->nruns, sizeof(*t->groups));
	for (size_t i = 0; i < t->nruns; i++)
		t->groups[i] = xasprintf("%s@%s", mode_name(&t->runs[i].a), host_of(&t->runs[i].a));
}

/* The versions that differ between the columns (their main runs). */
static void table_versions(struct table *t)
{
	struct versions_group *g = xcalloc(t->nmodes + 1, sizeof(*g));
	const struct analysis **runs = xcalloc(t->nruns + 1, sizeof(*runs));
	size_t n = 0;
	for (size_t m = 0; m < t->nmodes; m++) {
		g[m].label = t->modes[m].name;
		g[m].runs = runs + n;
		for (size_t k = 0; k < t->modes[m].nruns; k++)
			runs[n++] = &t->runs[t->modes[m].runs[k]].a;
		g[m].nruns = t->modes[m].nruns;
	}
	versions_compare(&t->versions, g, t->nmodes);
	free(runs);
	free(g);
}

/* What the device table counts (the first run with readings says) and how
 * often the runs sampled it. */
static void table_device(struct table *t)
{
	for (size_t i = 0; i < t->nruns; i++) {
		const struct analysis *a = &t->runs[i].a;
		if (!a->has_device)
			continue;
		if (!t->device_label)
			t->device_label = analysis_device_label(a);
		if (a->interval > t->device_interval)
			t->device_interval = a->interval;
	}
}

int table_build(struct table *t, const struct table_run *runs, size_t nruns,
		const char *const *stages, size_t nstages)
{
	memset(t, 0, sizeof(*t));
	t->runs = runs;
	t->nruns = nruns;
	group_by_host(t);
	const char **names = xcalloc(nruns + 1, sizeof(*names));
	size_t nnames = 0;
	for (size_t i = 0; i < nruns; i++)
		if (!runs[i].supplement && find_str(names, nnames, group_of(t, i)) == nnames)
			names[nnames++] = group_of(t, i);
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
			if (!runs[i].supplement && !strcmp(group_of(t, i), tm->name))
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
		struct strindex ix = STRINDEX_INIT;
		for (int pass = 0; pass < 2; pass++)
			for (size_t i = 0; i < nruns; i++) {
				if (runs[i].supplement != (pass == 1))
					continue;
				for (size_t k = 0; k < runs[i].a.nstages; k++) {
					const char *s = runs[i].a.stages[k].name;
					if (strindex_find(&ix, strindex_names_key, t->stages, s) != STRINDEX_NONE)
						continue;
					ALLOC_GROW(t->stages, t->nstages + 1, alloc);
					t->stages[t->nstages] = s;
					strindex_add(&ix, strindex_names_key, t->stages, t->nstages++);
				}
			}
		strindex_release(&ix);
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
		for (size_t s = 0; s < t->nstages; s++) {
			compare_stage(t, s, 0, m, cmp, FIG_FOOTPRINT);
			compare_stage(t, s, 0, m, cmp, FIG_MAPPED);
			compare_stage(t, s, 0, m, cmp, FIG_TOTAL);
		}
		const struct table_mode *a = &t->modes[0], *b = &t->modes[m];
		cmp->swap_worse = a->has_swap && b->has_swap &&
				  b->swap_rise_max > a->swap_rise_max + TABLE_SWAP_FLOOR;
	}
	for (size_t i = 0; i < t->nstages * t->nmodes; i++) {
		t->swap_rose |= t->cells[i].swap_rose;
		t->has_device |= t->cells[i].has_device;
		t->has_mapped |= t->cells[i].has_mapped;
		t->mapped_shown |= t->cells[i].has_mapped &&
				   t->cells[i].mapped_max >= TABLE_MAPPED_FLOOR;
		t->any_majflt |= t->cells[i].has_majflt && t->cells[i].majflt_max > 0;
	}
	table_device(t);
	table_versions(t);
	table_readers(t);
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
	for (size_t i = 0; i < t->ncomparisons; i++) {
		free(t->comparisons[i].stages);
		free(t->comparisons[i].mapped);
		free(t->comparisons[i].totals);
	}
	free(t->comparisons);
	if (t->groups)
		for (size_t i = 0; i < t->nruns; i++)
			free(t->groups[i]);
	free(t->groups);
	free(t->hosts);
	versions_diff_release(&t->versions);
	memset(t, 0, sizeof(*t));
}
