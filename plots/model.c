/* model.c -- what the charts draw, taken from traces and their per-run analysis */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../analyze/analysis.h"
#include "../common/parse.h"
#include "../traces/runs.h"
#include "../traces/trace.h"
#include "plot.h"

static void series_release(struct plot_series *s)
{
	free(s->t);
	free(s->gb);
	s->t = s->gb = NULL;
	s->n = 0;
}

static struct plot_series series_copy(const struct plot_series *s)
{
	struct plot_series c = { s->n, NULL, NULL };
	if (s->n) {
		c.t = xmalloc(s->n * sizeof(*c.t));
		c.gb = xmalloc(s->n * sizeof(*c.gb));
		memcpy(c.t, s->t, s->n * sizeof(*c.t));
		memcpy(c.gb, s->gb, s->n * sizeof(*c.gb));
	}
	return c;
}

/* N from ".../MODE-N.trace.jsonl[.zst]", or 0. */
static int run_number_from_name(const char *path, const char *mode)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t ml = strlen(mode);
	if (strncmp(base, mode, ml) || base[ml] != '-')
		return 0;
	const char *dot = strchr(base + ml + 1, '.');
	if (!dot || !str_starts_with(dot, ".trace"))
		return 0;
	char *num = xstrndup(base + ml + 1, (size_t)(dot - base - ml - 1));
	int n = 0;
	if (parse_int(num, &n) || n < 1)
		n = 0;
	free(num);
	return n;
}

/* The series drawn: ps's, taken over (their arrays now the run's). */
static void take_series(const struct plot_samples *ps, struct plot_run *r)
{
	r->footprint = ps->footprint;
	r->gpu = ps->gpu;
	r->dev = ps->dev;
	r->swap = ps->swap;
	r->mapped = ps->mapped;
	r->t_last = ps->any ? ps->t_last : 0;
}

static enum plot_outcome outcome_of(const struct analysis *a)
{
	switch (a->outcome) {
	case RUN_COMPLETED: return PLOT_COMPLETED;
	case RUN_GUARD: return PLOT_STOPPED;
	case RUN_SIGNAL: return PLOT_KILLED;
	case RUN_RECORDER_DIED: return PLOT_KILLED;
	case RUN_RECORDING: return PLOT_STOPPED;
	case RUN_EXIT: return PLOT_FAILED;
	}
	return PLOT_FAILED;
}

/* At most about this many bands are drawn per panel (its plot area is about
 * 760 px wide): beyond, stage windows narrower than 1/PLOT_MAX_BANDS of the
 * run are drawn together (coalesce_bands), so that 100,000 stages cost what
 * a few hundred do in gnuplot and in the label layout. */
#define PLOT_MAX_BANDS 256

/* Merge runs of short bands into bands at least span/PLOT_MAX_BANDS wide; a
 * band that wide alone stays as it is. A merged band takes the name of its
 * longest member when that covers half of it, else none (no label). */
static void coalesce_bands(struct plot_run *r)
{
	if (r->nbands <= PLOT_MAX_BANDS)
		return;
	double span = r->bands[r->nbands - 1].t1 - r->bands[0].t0;
	double w = span / PLOT_MAX_BANDS;
	size_t out = 0;
	for (size_t i = 0; i < r->nbands;) {
		struct plot_band m = r->bands[i];
		size_t longest = i, j = i + 1;
		if (m.t1 - m.t0 < w)
			while (j < r->nbands && m.t1 - m.t0 < w &&
			       r->bands[j].t1 - r->bands[j].t0 < w) {
				if (r->bands[j].t1 - r->bands[j].t0 >
				    r->bands[longest].t1 - r->bands[longest].t0)
					longest = j;
				m.t1 = r->bands[j].t1;
				j++;
			}
		const struct plot_band *lb = &r->bands[longest];
		char *name = j == i + 1 || 2 * (lb->t1 - lb->t0) >= m.t1 - m.t0
				     ? xstrdup(lb->name) : xstrdup("");
		for (size_t k = i; k < j; k++)
			free(r->bands[k].name);
		m.name = name;
		r->bands[out++] = m;
		i = j;
	}
	r->nbands = out;
}

/* Bands: from each stage event to the next, the last one to the last sample. */
static void bands_of(const struct plot_samples *ps, const struct analysis *a, struct plot_run *r)
{
	r->bands = xcalloc(a->nwindows ? a->nwindows : 1, sizeof(*r->bands));
	for (size_t i = 0; i < a->nwindows; i++) {
		const struct stage_window *w = &a->windows[i];
		double t0 = isfinite(w->stage_t) ? w->stage_t : 0;
		double t1 = i + 1 < a->nwindows ? a->windows[i + 1].stage_t : r->t_last;
		if (i == 0 && t0 > 0 && ps->any && ps->t_first <= t0)
			t0 = ps->t_first;
		if (t1 < t0)
			t1 = t0;
		r->bands[r->nbands].t0 = t0;
		r->bands[r->nbands].t1 = t1;
		r->bands[r->nbands].name = xstrdup(a->stages[w->stage].name);
		r->nbands++;
	}
	coalesce_bands(r);
}

/* When the run ended: the guard's last stop event, else its last sample. */
static double stop_time(const struct trace *tr, double t_last)
{
	double t = t_last;
	/* guard events with an action: never plain, all in tr->events (trace.h) */
	for (size_t i = 0; i < tr->nevents; i++) {
		const struct trace_event *ev = &tr->events[i];
		if (ev->kind == EV_GUARD && ev->action && !strcmp(ev->action, "stop"))
			t = ev->t;
	}
	return t;
}

/* "completed", "stopped by the guard in decode", "... where texture begins". */
static char *ending_of(const struct trace *tr, const struct analysis *a, const struct plot_run *r)
{
	if (r->outcome == PLOT_COMPLETED)
		return a->stopped_as_asked ? xasprintf("stopped at %s as asked", a->stopped_as_asked)
					   : xstrdup("completed");
	const char *how = r->outcome_text ? r->outcome_text : "did not complete";
	if (!r->ended_in || !a->nwindows)
		return xstrdup(how);
	const struct stage_window *w = &a->windows[a->nwindows - 1];
	bool implicit_setup = a->nwindows == 1 && !(w->stage_t > 0);
	double interval = tr->has_start && tr->start.interval > 0 ? tr->start.interval : 0.5;
	double slack = 2 * interval > 1.0 ? 2 * interval : 1.0;
	if (!implicit_setup && (!w->nsamples || r->stop_t - w->stage_t <= slack))
		return xasprintf("%s where %s begins", how, r->ended_in);
	return xasprintf("%s in %s", how, r->ended_in);
}

/* Analyse one trace into *a and describe it in *r, its samples from ps (or
 * the trace's own when NULL). The analysis takes the plotted mode name, so
 * that the table groups runs as the panels name them. */
static int fill_run(const struct trace *tr, const struct plot_samples *given,
		    const struct run_entry *entry, int ordinal, uint64_t ram_override,
		    struct plot_run *r, struct analysis *a)
{
	if (analysis_run(tr, entry, a))
		return -1;
	r->mode = xstrdup(a->mode ? a->mode : entry && entry->mode ? entry->mode : "run");
	if (!a->mode)
		a->mode = xstrdup(r->mode);
	r->run = entry && entry->run > 0 ? entry->run : 0;
	if (!r->run && tr->path)
		r->run = run_number_from_name(tr->path, r->mode);
	if (!r->run)
		r->run = ordinal;
	struct plot_samples ps;
	if (given) {
		ps = *given;
		ps.footprint = series_copy(&given->footprint);
		ps.gpu = series_copy(&given->gpu);
		ps.dev = series_copy(&given->dev);
		ps.swap = series_copy(&given->swap);
		ps.mapped = series_copy(&given->mapped);
	} else {
		plot_samples_of(tr->samples, tr->nsamples, &ps);
	}
	take_series(&ps, r);
	r->dev_label = analysis_device_label(a);
	r->peak_gb = a->has_footprint ? plot_gb(a->peak_footprint) : 0;
	r->ram_bytes = ram_override ? ram_override : tr->has_start ? tr->start.host_memory : 0;
	r->outcome = outcome_of(a);
	if (r->outcome != PLOT_COMPLETED) {
		char buf[96];
		r->outcome_text = xstrdup(analysis_outcome_str(a, buf, sizeof(buf)));
		if (a->nstages && a->ran_to < a->nstages)
			r->ended_in = xstrdup(a->stages[a->ran_to].name);
	}
	r->stop_t = stop_time(tr, r->t_last);
	r->ending = ending_of(tr, a, r);
	bands_of(&ps, a, r);
	return 0;
}

/* The supplements' analyses after the main runs', marked as supplements; a
 * supplement without a mode takes the first main run's (it fills that mode). */
static int add_supplements(const struct plot_opts *o, struct plot_model *m)
{
	for (size_t i = 0; i < o->nsupplements; i++) {
		struct table_run *tr = &m->analyses[m->nanalyses++];
		const struct run_entry *e = o->supplement_runs ? o->supplement_runs[i] : NULL;
		tr->supplement = true;
		if (analysis_run(&o->supplements[i], e, &tr->a))
			return -1;
		if (!tr->a.mode)
			tr->a.mode = xstrdup(e && e->mode ? e->mode : m->runs[0].mode);
	}
	return 0;
}

/* Two traces claiming the same run of a mode (a retry in another directory):
 * number that mode's runs in the order given instead. */
static void renumber_duplicates(struct plot_run *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(r[i].mode, r[j].mode) && r[i].run == r[j].run) {
				int k = 0;
				for (size_t q = 0; q < n; q++)
					if (!strcmp(r[q].mode, r[i].mode))
						r[q].run = ++k;
			}
}

int plot_model_build(const struct plot_opts *opts, const struct trace *traces,
		     const struct run_entry *const *runs, size_t n, struct plot_model *out)
{
	memset(out, 0, sizeof(*out));
	if (!n)
		return error("no trace to plot");
	out->runs = xcalloc(n, sizeof(*out->runs));
	out->analyses = xcalloc(n + opts->nsupplements, sizeof(*out->analyses));
	struct plot_run *r = out->runs;
	bool any = false;
	for (size_t i = 0; i < n; i++) {
		/* ordinal within the mode, for traces that carry no run number */
		int ordinal = 1;
		const char *mode = traces[i].has_start && traces[i].start.mode ?
					   traces[i].start.mode : "run";
		for (size_t j = 0; j < i; j++)
			if (!strcmp(r[j].mode, mode))
				ordinal++;
		out->nruns = out->nanalyses = i + 1;
		if (fill_run(&traces[i], opts->samples ? &opts->samples[i] : NULL,
			     runs ? runs[i] : NULL, ordinal, opts->ram_bytes, &r[i],
			     &out->analyses[i].a))
			goto fail;
		if (r[i].footprint.n)
			any = true;
	}
	renumber_duplicates(r, n);
	if (!any) {
		error("no footprint sample in %s%s", traces[0].path ? traces[0].path : "the traces",
		      n > 1 ? " or the other traces" : "");
		goto fail;
	}
	if (add_supplements(opts, out) ||
	    table_build(&out->table, out->analyses, out->nanalyses, opts->stages,
			opts->nstages))
		goto fail;
	return 0;
fail:
	plot_model_release(out);
	return -1;
}

void plot_model_release(struct plot_model *m)
{
	if (!m)
		return;
	table_release(&m->table);
	for (size_t i = 0; i < m->nruns; i++) {
		struct plot_run *r = &m->runs[i];
		free(r->mode);
		series_release(&r->footprint);
		series_release(&r->gpu);
		series_release(&r->dev);
		series_release(&r->swap);
		series_release(&r->mapped);
		for (size_t j = 0; j < r->nbands; j++)
			free(r->bands[j].name);
		free(r->bands);
		free(r->outcome_text);
		free(r->ended_in);
		free(r->ending);
	}
	free(m->runs);
	for (size_t i = 0; i < m->nanalyses; i++)
		analysis_release(&m->analyses[i].a);
	free(m->analyses);
	memset(m, 0, sizeof(*m));
}
