/* check.c -- the judging: regressions and improvements of a run set against a baseline,
 * noise-aware (see check.h). The model and its runs are check_collect.c, the noise rule's
 * numbers check_noise.c; check_md.c, check_json.c, check_junit.c and check_github.c render it. */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/units.h"
#include "check_noise.h"
#include "strindex.h"

/* ---- findings -------------------------------------------------------------- */

static struct check_finding *add_finding(struct check *c, enum check_kind kind,
					 enum check_metric metric, const char *mode,
					 const char *stage)
{
	ALLOC_GROW(c->findings, c->nfindings + 1, c->findings_alloc);
	struct check_finding *f = &c->findings[c->nfindings++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->metric = metric;
	f->mode = xstrdup(mode);
	f->stage = xstrdup(stage);
	return f;
}

static void add_case(struct check *c, const char *mode, const char *stage, enum check_metric m,
		     const char *latent, enum check_kind result, const char *why)
{
	ALLOC_GROW(c->cases, c->ncases + 1, c->cases_alloc);
	struct check_case *k = &c->cases[c->ncases++];
	k->mode = xstrdup(mode);
	k->stage = xstrdup(stage);
	k->metric = m;
	k->latent = xstrdup(latent);
	k->result = result;
	k->why = xstrdup(why);
}

static size_t mode_runs(const struct check_side *sd, const char *mode)
{
	size_t n = 0;
	for (size_t i = 0; i < sd->n; i++)
		n += !strcmp(sd->runs[i].mode, mode);
	return n;
}

static void range(const double *v, size_t n, double *lo, double *hi)
{
	*lo = *hi = n ? v[0] : 0;
	for (size_t i = 1; i < n; i++) {
		if (v[i] < *lo)
			*lo = v[i];
		if (v[i] > *hi)
			*hi = v[i];
	}
}

/* Not-judged rows are grouped: one per mode x stage x reason, metrics listed. */
static void not_judged(struct check *c, const char *mode, const char *stage,
		       enum check_metric m, const char *why)
{
	for (size_t i = c->stage_first; i < c->nfindings; i++) { /* this stage's rows only */
		struct check_finding *f = &c->findings[i];
		if (f->kind == CK_NOT_JUDGED && !strcmp(f->mode, mode) && f->stage &&
		    !strcmp(f->stage, stage) && !strcmp(f->detail, why)) {
			char *t = xasprintf("%s, %s", f->now_text, check_metric_name(m));
			free(f->now_text);
			f->now_text = t;
			return;
		}
	}
	struct check_finding *f = add_finding(c, CK_NOT_JUDGED, m, mode, stage);
	f->now_text = xstrdup(check_metric_name(m));
	f->detail = xstrdup(why);
}

static void judge_metric(struct check *c, const char *mode, const char *stage, enum check_metric m,
			 const struct check_noise *nz)
{
	double *b, *cv;
	size_t nb = check_collect(&c->side[CHECK_BASELINE], mode, stage, m, &b);
	size_t nc = check_collect(&c->side[CHECK_CANDIDATE], mode, stage, m, &cv);
	if (!nb)
		goto out; /* nothing to hold the candidate against */
	if (nb < 2 || !nc) {
		char *why;
		if (nb < 2)
			why = xasprintf("%zu baseline run%s with a value, 2 needed for the "
					"run-to-run spread", nb, nb == 1 ? "" : "s");
		else
			why = xstrdup("no candidate run with a value");
		/* a stage no candidate completed is the outcome rule's business */
		bool entered_by_cand = false;
		for (size_t i = 0; i < c->side[CHECK_CANDIDATE].n; i++) {
			const struct check_run *r = &c->side[CHECK_CANDIDATE].runs[i];
			const struct stage_stats *s = analysis_stage(&r->a, stage);
			entered_by_cand |= !strcmp(r->mode, mode) && s && s->completed;
		}
		if (nc || entered_by_cand) {
			not_judged(c, mode, stage, m, why);
			add_case(c, mode, stage, m, NULL, CK_NOT_JUDGED, why);
		}
		free(why);
		goto out;
	}
	double blo, bhi, clo, chi;
	range(b, nb, &blo, &bhi);
	range(cv, nc, &clo, &chi);
	double spread = bhi - blo;
	struct check_allowance al;
	check_noise_allowance(&c->opt, m, nz, bhi, spread, chi - clo, &al);
	enum check_kind kind;
	double change;
	if (clo > bhi * al.up + al.allowed) {
		kind = CK_REGRESSION;
		change = clo - bhi;
	} else if (chi < blo * al.down - al.allowed) {
		kind = CK_IMPROVEMENT;
		change = chi - blo;
	} else if (clo > bhi * al.up + al.fixed || chi < blo * al.down - al.fixed) {
		char *why = xasprintf("too noisy (spread %.0f%%)", bhi > 0 ? 100.0 * al.noise / bhi : 0.0);
		not_judged(c, mode, stage, m, why);
		add_case(c, mode, stage, m, NULL, CK_NOT_JUDGED, why);
		free(why);
		goto out;
	} else {
		add_case(c, mode, stage, m, NULL, CK_PASS, NULL);
		goto out;
	}
	add_case(c, mode, stage, m, NULL, kind, NULL);
	struct check_finding *f = add_finding(c, kind, m, mode, stage);
	f->base = b;
	f->cand = cv;
	b = cv = NULL;
	f->nbase = nb;
	f->ncand = nc;
	f->base_min = blo;
	f->base_max = bhi;
	f->cand_min = clo;
	f->cand_max = chi;
	f->spread = spread;
	f->allowed = al.allowed;
	f->change = change;
	f->shift = al.up > 1 ? al.up : al.down;
out:
	free(b);
	free(cv);
}

/* How a run treated a stage: 'c' completed, 's' stopped in it, 'n' not reached. */
static char stage_fate(const struct check_run *r, const char *stage)
{
	const struct stage_stats *s = analysis_stage(&r->a, stage);
	if (!s)
		return 'n';
	return s->completed ? 'c' : 's';
}

static void judge_outcome(struct check *c, const char *mode, const char *stage)
{
	const struct check_side *bs = &c->side[CHECK_BASELINE], *cs = &c->side[CHECK_CANDIDATE];
	size_t nb = 0, bdone = 0, nc = 0, cdone = 0;
	for (size_t i = 0; i < bs->n; i++)
		if (!strcmp(bs->runs[i].mode, mode)) {
			nb++;
			bdone += stage_fate(&bs->runs[i], stage) == 'c';
		}
	for (size_t i = 0; i < cs->n; i++)
		if (!strcmp(cs->runs[i].mode, mode)) {
			nc++;
			cdone += stage_fate(&cs->runs[i], stage) == 'c';
		}
	if (!nb || !nc)
		return;
	enum check_kind kind;
	if (bdone == nb && cdone < nc)
		kind = CK_REGRESSION;
	else if (bdone < nb && cdone == nc)
		kind = CK_IMPROVEMENT;
	else if (cdone < nc) /* failed on both sides: nothing worse, but no pass */
		kind = CK_NOT_JUDGED;
	else
		kind = CK_PASS;
	char *nj = kind == CK_NOT_JUDGED ? xasprintf("the candidate completed it %zu of %zu times, "
						     "the baseline %zu of %zu", cdone, nc, bdone, nb)
					 : NULL;
	add_case(c, mode, stage, CM_OUTCOME, NULL, kind, nj);
	free(nj);
	if (kind == CK_PASS)
		return;
	struct check_finding *f = add_finding(c, kind, CM_OUTCOME, mode, stage);
	f->base_text = xasprintf("completed %zu of %zu", bdone, nb);
	struct strbuf now = STRBUF_INIT, why = STRBUF_INIT;
	if (kind == CK_NOT_JUDGED)
		strbuf_addf(&why, "failed on both sides (baseline completed %zu of %zu): ", bdone, nb);
	if (kind == CK_NOT_JUDGED)
		strbuf_addstr(&now, "outcome");
	else
		strbuf_addf(&now, "completed %zu of %zu", cdone, nc);
	size_t lead = why.len;
	const struct check_side *explain = kind == CK_IMPROVEMENT ? bs : cs;
	for (size_t i = 0; i < explain->n; i++) {
		const struct check_run *r = &explain->runs[i];
		char fate = strcmp(r->mode, mode) ? 'c' : stage_fate(r, stage);
		if (fate == 'c')
			continue;
		char buf[64];
		analysis_outcome_str(&r->a, buf, sizeof(buf));
		strbuf_addf(&why, "%s%s ", why.len > lead ? "; " : "", r->id);
		if (fate == 's')
			strbuf_addf(&why, "stopped here (%s)", buf);
		else
			strbuf_addf(&why, "never reached it (ended in %s: %s)",
				    r->a.stages[r->a.ran_to].name, buf);
	}
	f->now_text = strbuf_detach(&now);
	f->detail = strbuf_detach(&why);
}

/* A stage with no completed run of the mode on a side: no memory or time to
 * compare. One not-judged row (merged across stages) and one skipped case. */
static void judge_uncompared(struct check *c, const char *mode, const char *stage)
{
	size_t done[2] = { 0, 0 }, runs[2] = { 0, 0 };
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < c->side[s].n; i++)
			if (!strcmp(c->side[s].runs[i].mode, mode)) {
				runs[s]++;
				done[s] += stage_fate(&c->side[s].runs[i], stage) == 'c';
			}
	if (!runs[0] || !runs[1] || (done[0] && done[1]))
		return;
	const char *why = !done[0] && !done[1] ? "no completed run on either side" :
			  !done[0] ? "no completed run in the baseline" : "no completed run in the candidate";
	struct check_finding *f = add_finding(c, CK_NOT_JUDGED, CM_MEASURES, mode, stage);
	f->now_text = xstrdup(check_metric_name(CM_MEASURES));
	f->detail = xstrdup(why);
	add_case(c, mode, stage, CM_MEASURES, NULL, CK_NOT_JUDGED, why);
}

/* A swap rise that grew is a regression even where the footprint fell: the
 * footprint does not count swapped pages. Its row says both. */
static void swap_says_footprint(struct check *c, const char *mode, const char *stage)
{
	struct check_finding *f = NULL;
	for (size_t i = 0; i < c->nfindings && !f; i++)
		if (c->findings[i].kind == CK_REGRESSION && c->findings[i].metric == CM_SWAP &&
		    !strcmp(c->findings[i].mode, mode) && !strcmp(c->findings[i].stage, stage))
			f = &c->findings[i];
	if (!f)
		return;
	double *b, *cv, blo, bhi, clo, chi;
	size_t nb = check_collect(&c->side[CHECK_BASELINE], mode, stage, CM_PEAK, &b);
	size_t nc = check_collect(&c->side[CHECK_CANDIDATE], mode, stage, CM_PEAK, &cv);
	range(b, nb, &blo, &bhi);
	range(cv, nc, &clo, &chi);
	if (nb && nc && chi < blo) {
		char buf[UNITS_BUF];
		units_size(blo - chi, UNITS_FINE, false, buf);
		f->detail = xasprintf("while the peak footprint fell by %s or more: the footprint "
				      "does not count swapped pages", buf);
	}
	free(b);
	free(cv);
}

static void stages_of(const struct check *c, const char *mode, char ***names, size_t *n,
		      size_t *nbase_stages)
{
	size_t alloc = 0;
	struct strindex ix = STRINDEX_INIT;
	*n = 0;
	for (int s = 0; s < 2; s++) {
		const struct check_side *sd = &c->side[s];
		for (size_t i = 0; i < sd->n; i++) {
			const struct check_run *r = &sd->runs[i];
			if (mode && strcmp(r->mode, mode))
				continue;
			for (size_t k = 0; k < r->a.nstages; k++) {
				const char *name = r->a.stages[k].name;
				if (strindex_find(&ix, strindex_names_key, *names, name) != STRINDEX_NONE)
					continue;
				ALLOC_GROW(*names, *n + 1, alloc);
				(*names)[*n] = (char *)name;
				strindex_add(&ix, strindex_names_key, *names, (*n)++);
			}
		}
		if (s == 0)
			*nbase_stages = *n;
	}
	strindex_release(&ix);
}

/* Stages other modes entered that no run of MODE did, on either side: the
 * pipeline has them, this mode never got there. */
static void uncompared_elsewhere(struct check *c, const char *mode, char **mine, size_t nmine)
{
	char **all = NULL;
	size_t nall = 0, nbase = 0;
	stages_of(c, NULL, &all, &nall, &nbase);
	for (size_t i = 0; i < nall; i++) {
		bool seen = false;
		for (size_t k = 0; k < nmine && !seen; k++)
			seen = !strcmp(mine[k], all[i]);
		if (seen)
			continue;
		const char *why = "no run of the mode reached it on either side (other modes did)";
		struct check_finding *f = add_finding(c, CK_NOT_JUDGED, CM_MEASURES, mode, all[i]);
		f->now_text = xstrdup(check_metric_name(CM_MEASURES));
		f->detail = xstrdup(why);
		add_case(c, mode, all[i], CM_MEASURES, NULL, CK_NOT_JUDGED, why);
	}
	free(all);
}

static void judge_latents(struct check *c, size_t mi)
{
	struct latent_set *s = &c->latents[mi];
	const char *mode = c->modes[mi];
	for (size_t li = 0; li < s->nlatents; li++) {
		const struct latent *l = &s->latents[li];
		bool base_identical = l->spread_pairs > 0, corrupt = false, changed = false;
		bool beyond = false, unknown = false, other = false;
		double worst = 0;
		const char *worst_id = NULL, *other_what = NULL;
		for (size_t k = 0; k < l->npairs; k++) {
			const struct latent_pair *p = &l->pairs[k];
			bool ab = !strcmp(s->runs[p->a].mode, "baseline");
			bool bb = !strcmp(s->runs[p->b].mode, "baseline");
			if (ab && bb) {
				if (p->diff.result != LR_IDENTICAL)
					base_identical = false;
				if (p->diff.result == LR_CORRUPT)
					corrupt = true;
				continue;
			}
			if (!ab && !bb) {
				corrupt |= p->diff.result == LR_CORRUPT;
				continue;
			}
			const char *cand_id = ab ? s->runs[p->b].id : s->runs[p->a].id;
			switch (p->diff.result) {
			case LR_IDENTICAL:
			case LR_BOTH_ABSENT:
				break;
			case LR_DIFFERS:
				changed = true;
				if (p->noise == NOISE_BEYOND)
					beyond = true;
				if (p->noise == NOISE_UNKNOWN)
					unknown = true;
				if (!worst_id || p->diff.max_abs_diff > worst || isnan(p->diff.max_abs_diff)) {
					worst = p->diff.max_abs_diff;
					worst_id = cand_id;
				}
				break;
			case LR_CORRUPT:
				corrupt = true;
				break;
			default:
				other = true;
				other_what = latent_result_name(p->diff.result);
				if (!worst_id)
					worst_id = cand_id;
				break;
			}
		}
		char *label = latent_label(l);
		enum check_kind kind = CK_REGRESSION;
		struct strbuf now = STRBUF_INIT, base = STRBUF_INIT;
		const char *why = NULL;
		if (corrupt) {
			why = "a copy does not match its event (corrupt)";
		} else if (other) {
			why = other_what;
		} else if (changed && base_identical) {
			why = "identical before, different now";
		} else if (beyond) {
			why = "outside the baseline's spread";
		} else if (unknown && !l->spread_pairs) {
			kind = CK_NOT_JUDGED;
			why = "fewer than 2 baseline copies: spread unknown";
		}
		if (!why) {
			add_case(c, mode, l->stage, CM_LATENT, label, CK_PASS, NULL);
			free(label);
			continue;
		}
		if (kind == CK_REGRESSION && !corrupt && c->opt.allow_latent_change)
			kind = CK_NOTE;
		add_case(c, mode, l->stage, CM_LATENT, label, kind == CK_NOTE ? CK_PASS : kind,
			 kind == CK_NOT_JUDGED ? why : NULL);
		struct check_finding *f = add_finding(c, kind, CM_LATENT, mode, l->stage);
		f->latent = label;
		if (!l->spread_pairs)
			strbuf_addf(&base, "%zu cop%s", l->baseline_copies,
				    l->baseline_copies == 1 ? "y" : "ies");
		else if (base_identical)
			strbuf_addf(&base, "identical (%zu copies)", l->baseline_copies);
		else
			strbuf_addf(&base, "spread %.3g", l->spread);
		if (changed && worst_id)
			strbuf_addf(&now, "max diff %.3g (%s)", worst, worst_id);
		else if (worst_id)
			strbuf_addf(&now, "%s (%s)", other_what, worst_id);
		else
			strbuf_addstr(&now, "-");
		f->base_text = strbuf_detach(&base);
		f->now_text = strbuf_detach(&now);
		f->detail = kind == CK_NOTE ? xasprintf("%s (allowed)", why) : xstrdup(why);
	}
}

/* Not-judged rows of one mode that differ only by stage become one row
 * naming the stages (a mode run once has every stage in that state). */
static bool mergeable(const struct check_finding *f)
{
	return f->kind == CK_NOT_JUDGED && f->metric != CM_LATENT;
}

static const char *group_key(const void *ctx, size_t i)
{
	return ((char *const *)ctx)[i];
}

static void merge_not_judged(struct check *c, size_t from)
{
	char **keys = NULL;            /* per group: "detail\x01metrics" */
	size_t *leader = NULL, ngroups = 0, alloc = 0, out = from;
	struct strbuf *stages = NULL;  /* per group: its stages so far */
	struct strindex ix = STRINDEX_INIT;
	for (size_t i = from; i < c->nfindings; i++) {
		struct check_finding *f = &c->findings[i];
		if (!mergeable(f)) {
			c->findings[out++] = *f;
			continue;
		}
		char *key = xasprintf("%s\x01%s", f->detail, f->now_text);
		size_t g = strindex_find(&ix, group_key, keys, key);
		if (g == STRINDEX_NONE) {
			if (ngroups + 1 > alloc) {
				alloc = alloc ? 2 * alloc : 8;
				keys = xrealloc(keys, alloc * sizeof(*keys));
				leader = xrealloc(leader, alloc * sizeof(*leader));
				stages = xrealloc(stages, alloc * sizeof(*stages));
			}
			keys[ngroups] = key;
			leader[ngroups] = out;
			strbuf_init(&stages[ngroups]);
			strbuf_addstr(&stages[ngroups], f->stage);
			strindex_add(&ix, group_key, keys, ngroups++);
			c->findings[out++] = *f;
			continue;
		}
		free(key);
		strbuf_addf(&stages[g], ", %s", f->stage);
		free(f->mode);
		free(f->stage);
		free(f->now_text);
		free(f->detail);
	}
	c->nfindings = out;
	for (size_t g = 0; g < ngroups; g++) {
		free(c->findings[leader[g]].stage);
		c->findings[leader[g]].stage = strbuf_detach(&stages[g]);
		free(keys[g]);
	}
	strindex_release(&ix);
	free(keys);
	free(leader);
	free(stages);
}

/* The hosts a side's runs of MODE ran on, "a, b" in order of first appearance
 * ("unknown" for a trace that names none). */
static void side_hosts(const struct check_side *sd, const char *mode, struct strbuf *out)
{
	for (size_t i = 0; i < sd->n; i++) {
		if (strcmp(sd->runs[i].mode, mode))
			continue;
		const char *h = sd->runs[i].a.host && *sd->runs[i].a.host ? sd->runs[i].a.host
									  : "unknown";
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(sd->runs[j].mode, mode) &&
			       !strcmp(sd->runs[j].a.host && *sd->runs[j].a.host ? sd->runs[j].a.host
										  : "unknown", h);
		if (!seen)
			strbuf_addf(out, "%s%s", out->len ? ", " : "", h);
	}
}

/* A mode whose runs came from different machines: say so (a peak on a 48 GB
 * machine is no baseline for one on a 128 GB machine). */
static void note_hosts(struct check *c, const char *mode)
{
	struct strbuf b = STRBUF_INIT, k = STRBUF_INIT;
	side_hosts(&c->side[CHECK_BASELINE], mode, &b);
	side_hosts(&c->side[CHECK_CANDIDATE], mode, &k);
	if (strcmp(strbuf_str(&b), strbuf_str(&k)) || strchr(strbuf_str(&b), ',')) {
		struct check_finding *f = add_finding(c, CK_NOTE, CM_OUTCOME, mode, NULL);
		f->detail = xasprintf("runs from different hosts: baseline on %s, candidate on %s; "
				      "memory and time are machine figures, so judge runs of one host "
				      "(compare --task on one node, or one host's traces)",
				      strbuf_str(&b), strbuf_str(&k));
	}
	strbuf_release(&b);
	strbuf_release(&k);
}

/* The versions that differ between the two sides, over every mode. */
static void check_versions(struct check *c)
{
	struct versions_group g[2];
	const struct analysis **runs = xcalloc(c->side[0].n + c->side[1].n + 1, sizeof(*runs));
	size_t n = 0;
	for (int s = 0; s < 2; s++) {
		g[s].label = check_side_names[s];
		g[s].runs = runs + n;
		g[s].nruns = c->side[s].n;
		for (size_t i = 0; i < c->side[s].n; i++)
			runs[n++] = &c->side[s].runs[i].a;
	}
	versions_diff_release(&c->versions);
	versions_compare(&c->versions, g, 2);
	free(runs);
}

/* The noise of metric M of MODE over the baseline's stages (check_noise.h). */
static void noise_of(const struct check *c, const char *mode, char *const *stages, size_t nstages,
		     enum check_metric m, struct check_noise *out)
{
	struct check_noise_pool p;
	check_noise_pool_init(&p, m, nstages);
	for (size_t s = 0; s < nstages; s++) {
		double *b, *cv;
		size_t nb = check_collect(&c->side[CHECK_BASELINE], mode, stages[s], m, &b);
		size_t nc = check_collect(&c->side[CHECK_CANDIDATE], mode, stages[s], m, &cv);
		check_noise_pool_add(&p, b, nb, cv, nc);
		free(b);
		free(cv);
	}
	check_noise_pool_end(&p, out);
}

int check_run(struct check *c)
{
	check_versions(c);
	for (size_t mi = 0; mi < c->nmodes; mi++) {
		const char *mode = c->modes[mi];
		note_hosts(c, mode);
		size_t nb = mode_runs(&c->side[CHECK_BASELINE], mode);
		size_t nc = mode_runs(&c->side[CHECK_CANDIDATE], mode);
		if (!nb || !nc) {
			struct check_finding *f = add_finding(c, CK_NOTE, CM_OUTCOME, mode, NULL);
			f->detail = xasprintf("mode only in the %s (%zu run%s): not compared",
					      nb ? "baseline" : "candidate", nb ? nb : nc,
					      (nb ? nb : nc) == 1 ? "" : "s");
			continue;
		}
		char **stages = NULL;
		size_t ns = 0, nbase_stages = 0, first = c->nfindings;
		stages_of(c, mode, &stages, &ns, &nbase_stages);
		struct check_noise noise[CM_NNUMERIC];
		for (int m = 0; m < CM_NNUMERIC; m++)
			noise_of(c, mode, stages, nbase_stages, (enum check_metric)m, &noise[m]);
		for (size_t si = 0; si < ns; si++) {
			c->stage_first = c->nfindings;
			if (si >= nbase_stages) {
				struct check_finding *f =
					add_finding(c, CK_NOTE, CM_OUTCOME, mode, stages[si]);
				f->detail = xstrdup("stage only the candidate entered: not compared");
				continue;
			}
			judge_outcome(c, mode, stages[si]);
			judge_uncompared(c, mode, stages[si]);
			for (int m = 0; m < CM_NNUMERIC; m++)
				judge_metric(c, mode, stages[si], (enum check_metric)m, &noise[m]);
			swap_says_footprint(c, mode, stages[si]);
		}
		uncompared_elsewhere(c, mode, stages, ns);
		free(stages);
		merge_not_judged(c, first);
		struct latent_set *ls = &c->latents[mi];
		bool any_latent = false;
		for (size_t r = 0; r < ls->nruns && !any_latent; r++)
			any_latent = ls->runs[r].nevents > 0;
		if (!any_latent)
			continue;
		if (latent_compare(ls, "baseline") < 0)
			return -1;
		judge_latents(c, mi);
	}
	return 0;
}
