/* check_collect.c -- the check model: runs read into it, a metric's values collected per mode x
 * stage, what was found counted and looked up, and its release (see check.h). The judging is
 * check.c, the noise rule check_noise.c, the renderers check_md.c, check_json.c, check_junit.c
 * and check_github.c. */
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include "../traces/runs.h"
#include "../traces/trace.h"
#include "rundir.h"
#include "table.h"

static const char *const metric_names[] = {
	[CM_PEAK] = "peak footprint",
	[CM_KPEAK_RSS] = "kernel peak (rss)",
	[CM_KPEAK_FP] = "kernel peak (footprint)",
	[CM_SWAP] = "swap rise",
	[CM_DEVICE] = "device peak",
	[CM_MAPPED] = "peak mapped",
	[CM_TOTAL] = "resident total",
	[CM_TIME] = "stage time",
	[CM_LOAD] = "load time",
	[CM_OUTCOME] = "outcome",
	[CM_LATENT] = "latent",
	[CM_MEASURES] = "memory and time",
};

const char *check_metric_name(enum check_metric m)
{
	return metric_names[m];
}

const char *const check_side_names[2] = { "baseline", "candidate" };

/* ---- adding runs ----------------------------------------------------------- */

static size_t mode_index(struct check *c, const char *mode)
{
	for (size_t i = 0; i < c->nmodes; i++)
		if (!strcmp(c->modes[i], mode))
			return i;
	ALLOC_GROW(c->modes, c->nmodes + 1, c->modes_alloc);
	c->latents = xrealloc(c->latents, c->modes_alloc * sizeof(*c->latents));
	c->modes[c->nmodes] = xstrdup(mode);
	memset(&c->latents[c->nmodes], 0, sizeof(c->latents[0]));
	return c->nmodes++;
}

int check_add_trace(struct check *c, enum check_side_id side, const char *id,
		    const struct trace *tr, const struct run_entry *entry)
{
	struct check_side *sd = &c->side[side];
	struct check_run r;
	memset(&r, 0, sizeof(r));
	if (analysis_run(tr, entry, &r.a) < 0) {
		analysis_release(&r.a);
		return -1;
	}
	if (!sd->label)
		sd->label = xstrdup(check_side_names[side]);
	r.id = xstrdup(id);
	if (tr->start.mode)
		r.mode = xstrdup(tr->start.mode);
	else if (entry && entry->mode)
		r.mode = xstrdup(entry->mode);
	else if (!(r.mode = rundir_mode_of_stem(id)))
		r.mode = xstrdup(id);
	size_t ns = r.a.nstages ? r.a.nstages : 1;
	r.load_s = xcalloc(ns, sizeof(*r.load_s));
	for (size_t i = 0; i < r.a.nloads; i++) {
		const struct load_info *l = &r.a.loads[i];
		const char *st = l->stage ? l->stage : l->stage_in_force;
		const struct stage_stats *ss = analysis_stage(&r.a, st);
		if (ss)
			r.load_s[ss - r.a.stages] += l->seconds;
	}

	size_t m = mode_index(c, r.mode);
	char *lid = xasprintf("%s/%s", check_side_names[side], id);
	latent_set_add_trace(&c->latents[m], lid, check_side_names[side], sd->label, tr);
	free(lid);

	ALLOC_GROW(sd->runs, sd->n + 1, sd->alloc);
	sd->runs[sd->n++] = r;
	return 0;
}

int check_add_dir(struct check *c, enum check_side_id side, const char *dir)
{
	struct rundir rd = RUNDIR_INIT;
	int n = rundir_open(dir, &rd);
	if (n < 0) {
		rundir_release(&rd);
		return -1;
	}
	if (n == 0) {
		rundir_release(&rd);
		return error("no traces (*.trace.jsonl.zst, *.trace.jsonl) in '%s'", dir);
	}
	if (!c->side[side].label)
		c->side[side].label = xstrdup(dir);
	int rc = 0;
	for (size_t i = 0; i < rd.n && !rc; i++) {
		struct trace tr = TRACE_INIT;
		if (trace_read_summary(rd.traces[i].path, &tr) < 0 ||
		    check_add_trace(c, side, rd.traces[i].stem, &tr, rd.traces[i].entry) < 0)
			rc = -1;
		trace_release(&tr);
	}
	rundir_release(&rd);
	return rc ? -1 : n;
}

/* ---- values ---------------------------------------------------------------- */

/* A run's value of a numeric metric for a stage; false when it has none. */
static bool run_value(const struct check_run *r, const char *stage, enum check_metric m, double *v)
{
	const struct stage_stats *s = analysis_stage(&r->a, stage);
	if (!s || !s->completed)
		return false;
	size_t k = (size_t)(s - r->a.stages);
	switch (m) {
	case CM_PEAK:
		*v = (double)s->peak_footprint;
		return s->nsamples > 0;
	case CM_KPEAK_RSS:
	case CM_KPEAK_FP: {
		const struct kernel_peak *kp = &s->kpeak[m == CM_KPEAK_RSS ? KPEAK_RSS : KPEAK_FOOTPRINT];
		*v = (double)kp->bytes;
		return kp->present;
	}
	case CM_SWAP:
		*v = (double)r->a.stages[k].swap_rise;
		return r->a.stages[k].has_swap_rise;
	case CM_DEVICE:
		*v = (double)s->device_peak;
		return s->has_device;
	case CM_MAPPED:
		*v = (double)s->mapped_peak;
		return s->has_mapped;
	case CM_TOTAL:
		*v = (double)(s->peak_footprint + s->mapped_peak);
		/* where model files are mapped: elsewhere it is the footprint again */
		return s->has_mapped && s->mapped_peak >= TABLE_MAPPED_FLOOR && s->nsamples > 0;
	case CM_TIME:
		*v = s->seconds;
		return true;
	case CM_LOAD:
		*v = r->load_s[k];
		return r->a.nloads > 0;
	default:
		BUG("not a numeric metric: %d", (int)m);
	}
}

/* Collect one side's values of a metric for mode x stage. */
size_t check_collect(const struct check_side *sd, const char *mode, const char *stage,
		      enum check_metric m, double **out)
{
	size_t n = 0;
	*out = xcalloc(sd->n ? sd->n : 1, sizeof(**out));
	for (size_t i = 0; i < sd->n; i++) {
		double v;
		if (!strcmp(sd->runs[i].mode, mode) && run_value(&sd->runs[i], stage, m, &v))
			(*out)[n++] = v;
	}
	return n;
}

/* ---- what was found --------------------------------------------------------- */

size_t check_candidate_failed(const struct check *c)
{
	size_t n = 0;
	for (size_t i = 0; i < c->side[CHECK_CANDIDATE].n; i++)
		n += c->side[CHECK_CANDIDATE].runs[i].a.outcome != RUN_COMPLETED;
	return n;
}

size_t check_count(const struct check *c, enum check_kind kind)
{
	size_t n = 0;
	for (size_t i = 0; i < c->nfindings; i++)
		n += c->findings[i].kind == kind;
	return n;
}

const struct check_finding *check_find(const struct check *c, enum check_kind kind,
				       const char *mode, const char *stage,
				       enum check_metric metric)
{
	for (size_t i = 0; i < c->nfindings; i++) {
		const struct check_finding *f = &c->findings[i];
		if (f->kind == kind && f->metric == metric && !strcmp(f->mode, mode) &&
		    (stage ? f->stage && !strcmp(f->stage, stage) : !f->stage))
			return f;
	}
	return NULL;
}

void check_release(struct check *c)
{
	if (!c)
		return;
	for (int s = 0; s < 2; s++) {
		struct check_side *sd = &c->side[s];
		for (size_t i = 0; i < sd->n; i++) {
			struct check_run *r = &sd->runs[i];
			free(r->id);
			free(r->mode);
			analysis_release(&r->a);
			free(r->load_s);
		}
		free(sd->runs);
		free(sd->label);
	}
	for (size_t i = 0; i < c->nmodes; i++) {
		latent_set_release(&c->latents[i]);
		free(c->modes[i]);
	}
	free(c->latents);
	free(c->modes);
	versions_diff_release(&c->versions);
	for (size_t i = 0; i < c->nfindings; i++) {
		struct check_finding *f = &c->findings[i];
		free(f->mode);
		free(f->stage);
		free(f->latent);
		free(f->base);
		free(f->cand);
		free(f->base_text);
		free(f->now_text);
		free(f->detail);
	}
	free(c->findings);
	for (size_t i = 0; i < c->ncases; i++) {
		free(c->cases[i].mode);
		free(c->cases[i].stage);
		free(c->cases[i].latent);
		free(c->cases[i].why);
	}
	free(c->cases);
	memset(c, 0, sizeof(*c));
}
