/* history_json.c -- the history as JSON: commits, then per mode x stage each metric's points */
#include "../common/jsonw.h"
#include "history.h"

static void json_points(struct jsonw *w, const struct history *h, size_t s, enum history_metric m)
{
	jw_key(w, history_metric_name(m));
	jw_array_begin(w);
	for (size_t c = 0; c < h->ncommits; c++) {
		const struct history_point *p = history_point(h, s, c, m);
		if (!p->n && !p->failed) {
			jw_null(w);
			continue;
		}
		jw_object_begin(w);
		jw_key(w, "runs"); jw_u64(w, p->n);
		if (p->n) {
			jw_key(w, "min"); jw_double(w, p->min);
			jw_key(w, "median"); jw_double(w, p->median);
			jw_key(w, "max"); jw_double(w, p->max);
		}
		jw_key(w, "failed"); jw_u64(w, p->failed);
		jw_key(w, "regression"); jw_bool(w, p->regression);
		jw_object_end(w);
	}
	jw_array_end(w);
}

void history_render_json(const struct history *h, struct strbuf *out)
{
	struct jsonw w = JSONW_INIT(out);
	jw_object_begin(&w);
	jw_key(&w, "units");
	jw_object_begin(&w);
	for (int m = 0; m < HM_NMETRICS; m++) {
		if (!history_metric_shown(h, (enum history_metric)m))
			continue;
		jw_key(&w, history_metric_name((enum history_metric)m));
		jw_string(&w, history_metric_is_time((enum history_metric)m) ? "seconds" : "bytes");
	}
	jw_object_end(&w);
	jw_key(&w, "commits");
	jw_array_begin(&w);
	for (size_t c = 0; c < h->ncommits; c++) {
		const struct history_commit *k = &h->commits[c];
		jw_object_begin(&w);
		jw_key(&w, "commit"); jw_string(&w, k->commit);
		jw_key(&w, "short"); jw_string(&w, k->short_id);
		jw_key(&w, "subject");
		if (k->subject)
			jw_string(&w, k->subject);
		else
			jw_null(&w);
		jw_key(&w, "dirty"); jw_bool(&w, k->dirty);
		jw_key(&w, "dir"); jw_string(&w, k->dir);
		jw_key(&w, "utc"); jw_string(&w, k->utc);
		jw_key(&w, "runs"); jw_u64(&w, k->nruns);
		jw_object_end(&w);
	}
	jw_array_end(&w);
	jw_key(&w, "series");
	jw_array_begin(&w);
	for (size_t s = 0; s < h->nseries; s++) {
		jw_object_begin(&w);
		jw_key(&w, "mode"); jw_string(&w, h->series[s].mode);
		jw_key(&w, "stage"); jw_string(&w, h->series[s].stage);
		for (int m = 0; m < HM_NMETRICS; m++)
			if (history_metric_shown(h, (enum history_metric)m))
				json_points(&w, h, s, (enum history_metric)m);
		jw_object_end(&w);
	}
	jw_array_end(&w);
	jw_key(&w, "regressions");
	jw_array_begin(&w);
	for (size_t i = 0; i < h->nregressions; i++) {
		const struct history_regression *r = &h->regressions[i];
		jw_object_begin(&w);
		jw_key(&w, "from"); jw_string(&w, h->commits[r->commit - 1].commit);
		jw_key(&w, "to"); jw_string(&w, h->commits[r->commit].commit);
		jw_key(&w, "mode"); jw_string(&w, r->mode);
		jw_key(&w, "stage"); jw_string(&w, r->stage);
		jw_key(&w, "what"); jw_string(&w, r->what);
		jw_key(&w, "check"); jw_string(&w, r->line);
		jw_object_end(&w);
	}
	jw_array_end(&w);
	jw_object_end(&w);
	strbuf_addch(out, '\n');
}
