/* history.c -- one pipeline's stages over commits (see history.h) */
#include "history.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "strindex.h"

static const char *const metric_names[HM_NMETRICS] = { "peak footprint", "kernel peak", "stage time",
							       "device peak", "peak mapped",
							       "resident total" };

const char *history_metric_name(enum history_metric m)
{
	return metric_names[m];
}

bool history_metric_is_time(enum history_metric m)
{
	return m == HM_TIME;
}

bool history_metric_shown(const struct history *h, enum history_metric m)
{
	if (m != HM_DEVICE && m != HM_MAPPED && m != HM_TOTAL)
		return true;
	for (size_t s = 0; s < h->nseries; s++)
		for (size_t c = 0; c < h->ncommits; c++)
			if (history_point(h, s, c, m)->n)
				return true;
	return false;
}

struct loaded {
	struct check ck;     /* the directory's runs, as check's baseline side */
	const char *dir;
	const char *utc;     /* earliest start */
};

static int cmp_loaded(const void *a, const void *b)
{
	const struct loaded *x = a, *y = b;
	if (!x->utc || !y->utc)
		return (x->utc == NULL) - (y->utc == NULL);
	return strcmp(x->utc, y->utc);
}

static int load_dirs(struct loaded *ld, const char *const *dirs, size_t n, enum history_order order)
{
	for (size_t i = 0; i < n; i++) {
		ld[i].ck = (struct check)CHECK_INIT;
		ld[i].dir = dirs[i];
		if (check_add_dir(&ld[i].ck, CHECK_BASELINE, dirs[i]) < 0)
			return -1;
		const struct check_side *sd = &ld[i].ck.side[CHECK_BASELINE];
		for (size_t r = 0; r < sd->n; r++) {
			const char *u = sd->runs[r].a.utc;
			if (u && (!ld[i].utc || strcmp(u, ld[i].utc) < 0))
				ld[i].utc = u;
		}
	}
	if (order == HISTORY_ORDER_RECORDED) /* stable: insertion sort */
		for (size_t i = 1; i < n; i++)
			for (size_t j = i; j > 0 && cmp_loaded(&ld[j - 1], &ld[j]) > 0; j--) {
				struct loaded t = ld[j];
				ld[j] = ld[j - 1];
				ld[j - 1] = t;
			}
	return 0;
}

static void commit_of(const struct loaded *l, struct history_commit *c)
{
	const struct check_side *sd = &l->ck.side[CHECK_BASELINE];
	c->dir = xstrdup(l->dir);
	c->utc = xstrdup(l->utc);
	c->nruns = sd->n;
	for (size_t r = 0; r < sd->n; r++) {
		const struct analysis *a = &sd->runs[r].a;
		if (!c->commit && a->commit)
			c->commit = xstrdup(a->commit);
		c->dirty |= a->dirty;
	}
	if (!c->commit)
		c->commit = xstrdup("?");
	size_t n = strlen(c->commit), hex = strspn(c->commit, "0123456789abcdef");
	c->short_id = hex == n && n > HISTORY_SHORT_ID ? xstrndup(c->commit, HISTORY_SHORT_ID)
						       : xstrdup(c->commit);
}

void history_commit_label(const struct history_commit *k, bool subject, struct strbuf *out)
{
	strbuf_addstr(out, k->short_id ? k->short_id : k->commit);
	if (k->dirty)
		strbuf_addch(out, '*');
	if (subject && k->subject)
		strbuf_addf(out, " %s", k->subject);
}

bool history_regressed(const struct history *h, size_t series, size_t commit)
{
	const struct history_series *s = &h->series[series];
	for (size_t i = 0; i < h->nregressions; i++) {
		const struct history_regression *r = &h->regressions[i];
		if (r->commit == commit && !strcmp(r->mode, s->mode) && !strcmp(r->stage, s->stage))
			return true;
	}
	return false;
}

struct series_ix {
	struct strindex ix;
	char **keys;         /* "LEN:MODESTAGE", LEN the mode's length: one key per
			      * (mode, stage) pair, whatever bytes the names hold;
			      * parallel to h->series */
};

static const char *series_key(const void *ctx, size_t i)
{
	return ((char *const *)ctx)[i];
}

static size_t series_of(struct history *h, struct series_ix *sx, const char *mode, const char *stage,
			bool add)
{
	char *key = xasprintf("%zu:%s%s", strlen(mode), mode, stage);
	size_t i = strindex_find(&sx->ix, series_key, sx->keys, key);
	if (i != STRINDEX_NONE || !add) {
		free(key);
		return i;
	}
	ALLOC_GROW(h->series, h->nseries + 1, h->series_alloc);
	sx->keys = xrealloc(sx->keys, h->series_alloc * sizeof(*sx->keys));
	struct history_series *s = &h->series[h->nseries];
	s->mode = xstrdup(mode);
	s->stage = xstrdup(stage);
	s->points = xcalloc(h->ncommits * HM_NMETRICS + 1, sizeof(*s->points));
	sx->keys[h->nseries] = key;
	strindex_add(&sx->ix, series_key, sx->keys, h->nseries);
	return h->nseries++;
}

static int history_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void fill_point(struct history_point *p, double *v, size_t n)
{
	p->n = n;
	if (!n)
		return;
	qsort(v, n, sizeof(*v), history_cmp_double);
	p->min = v[0];
	p->max = v[n - 1];
	p->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void points_of(struct history *h, size_t ci, const struct check_side *sd, size_t si)
{
	static const enum check_metric cm[HM_NMETRICS] = { CM_PEAK, CM_KPEAK_RSS, CM_TIME, CM_DEVICE,
							       CM_MAPPED, CM_TOTAL };
	struct history_series *s = &h->series[si];
	for (int m = 0; m < HM_NMETRICS; m++) {
		double *v;
		size_t n = check_collect(sd, s->mode, s->stage, cm[m], &v);
		if (!n && m == HM_KPEAK) {
			free(v);
			n = check_collect(sd, s->mode, s->stage, CM_KPEAK_FP, &v);
		}
		fill_point(&s->points[ci * HM_NMETRICS + m], v, n);
		free(v);
	}
	size_t runs = 0, failed = 0;
	for (size_t r = 0; r < sd->n; r++) {
		if (strcmp(sd->runs[r].mode, s->mode))
			continue;
		const struct stage_stats *st = analysis_stage(&sd->runs[r].a, s->stage);
		runs++;
		failed += !st || !st->completed;
	}
	for (int m = 0; m < HM_NMETRICS; m++) {
		s->points[ci * HM_NMETRICS + m].runs = runs;
		s->points[ci * HM_NMETRICS + m].failed = failed;
	}
}

static void add_regression(struct history *h, size_t ci, const struct check_finding *f, int m)
{
	ALLOC_GROW(h->regressions, h->nregressions + 1, h->regressions_alloc);
	struct history_regression *r = &h->regressions[h->nregressions++];
	struct strbuf line = STRBUF_INIT;
	r->commit = ci;
	r->metric = m;
	r->mode = xstrdup(f->mode);
	r->stage = xstrdup(f->stage);
	r->what = f->metric == CM_LATENT ? xasprintf("latent %s", f->latent)
					 : xstrdup(check_metric_name(f->metric));
	check_finding_line(f, &line);
	r->line = strbuf_detach(&line);
}

/* Mark what check of commit ci against ci - 1 flags. */
static int mark_regressions(struct history *h, struct series_ix *sx, const struct loaded *ld, size_t ci)
{
	struct check c = CHECK_INIT;
	int rc = -1;
	if (check_add_dir(&c, CHECK_BASELINE, ld[ci - 1].dir) < 0 ||
	    check_add_dir(&c, CHECK_CANDIDATE, ld[ci].dir) < 0 || check_run(&c) < 0)
		goto out;
	for (size_t i = 0; i < c.nfindings; i++) {
		const struct check_finding *f = &c.findings[i];
		int m = f->metric == CM_PEAK ? HM_PEAK : f->metric == CM_TIME ? HM_TIME :
			f->metric == CM_KPEAK_RSS || f->metric == CM_KPEAK_FP ? HM_KPEAK :
			f->metric == CM_DEVICE ? HM_DEVICE : f->metric == CM_MAPPED ? HM_MAPPED :
			f->metric == CM_TOTAL ? HM_TOTAL : -1;
		if (f->kind != CK_REGRESSION || !f->stage)
			continue;
		add_regression(h, ci, f, m);
		if (m < 0)
			continue;
		size_t si = series_of(h, sx, f->mode, f->stage, false);
		if (si != STRINDEX_NONE)
			h->series[si].points[ci * HM_NMETRICS + m].regression = true;
	}
	rc = 0;
out:
	check_release(&c);
	return rc;
}

int history_build(struct history *h, const char *const *dirs, size_t n, enum history_order order)
{
	memset(h, 0, sizeof(*h));
	struct loaded *ld = xcalloc(n + 1, sizeof(*ld));
	struct series_ix sx = { STRINDEX_INIT, NULL };
	int rc = load_dirs(ld, dirs, n, order);
	if (rc < 0)
		goto out;
	h->ncommits = n;
	h->commits = xcalloc(n + 1, sizeof(*h->commits));
	for (size_t ci = 0; ci < n; ci++) {
		commit_of(&ld[ci], &h->commits[ci]);
		const struct check_side *sd = &ld[ci].ck.side[CHECK_BASELINE];
		for (size_t r = 0; r < sd->n; r++)
			for (size_t k = 0; k < sd->runs[r].a.nstages; k++)
				series_of(h, &sx, sd->runs[r].mode, sd->runs[r].a.stages[k].name, true);
	}
	for (size_t ci = 0; ci < n; ci++)
		for (size_t si = 0; si < h->nseries; si++)
			points_of(h, ci, &ld[ci].ck.side[CHECK_BASELINE], si);
	for (size_t ci = 1; ci < n && !rc; ci++)
		rc = mark_regressions(h, &sx, ld, ci);
out:
	for (size_t i = 0; i < n; i++)
		check_release(&ld[i].ck);
	free(ld);
	for (size_t i = 0; i < h->nseries; i++)
		free(sx.keys[i]);
	free(sx.keys);
	strindex_release(&sx.ix);
	return rc;
}

const struct history_point *history_point(const struct history *h, size_t series, size_t commit,
					  enum history_metric m)
{
	return &h->series[series].points[commit * HM_NMETRICS + m];
}

void history_release(struct history *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->ncommits; i++) {
		free(h->commits[i].dir);
		free(h->commits[i].commit);
		free(h->commits[i].utc);
		free(h->commits[i].short_id);
		free(h->commits[i].subject);
	}
	for (size_t i = 0; i < h->nregressions; i++) {
		free(h->regressions[i].mode);
		free(h->regressions[i].stage);
		free(h->regressions[i].what);
		free(h->regressions[i].line);
	}
	free(h->regressions);
	free(h->commits);
	for (size_t i = 0; i < h->nseries; i++) {
		free(h->series[i].mode);
		free(h->series[i].stage);
		free(h->series[i].points);
	}
	free(h->series);
	memset(h, 0, sizeof(*h));
}
