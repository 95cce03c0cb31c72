/* check_json.c -- a check's findings as JSON: bytes and seconds, every run's value */
#include <math.h>
#include <stdint.h>

#include "../common/jsonw.h"
#include "check.h"

static const char *const kind_keys[] = { "regressions", "improvements", "not_judged", "notes" };

static void json_value(struct jsonw *w, enum check_metric m, double v)
{
	if (check_metric_is_time(m))
		jw_double(w, v);
	else if (v < 0)
		jw_i64(w, -(int64_t)llround(-v));
	else
		jw_u64(w, (uint64_t)llround(v));
}

static void json_values(struct jsonw *w, enum check_metric m, const double *v, size_t n)
{
	jw_array_begin(w);
	for (size_t i = 0; i < n; i++)
		json_value(w, m, v[i]);
	jw_array_end(w);
}

static void json_finding(struct jsonw *w, const struct check_finding *f)
{
	jw_object_begin(w);
	jw_key(w, "mode");
	jw_string(w, f->mode);
	jw_key(w, "stage");
	jw_string(w, f->stage);
	if (f->kind != CK_NOT_JUDGED || f->metric == CM_LATENT) {
		jw_key(w, "metric");
		jw_string(w, check_metric_name(f->metric));
	}
	if (f->metric == CM_LATENT) {
		jw_key(w, "latent");
		jw_string(w, f->latent);
	}
	if (f->metric < CM_NNUMERIC && (f->kind == CK_REGRESSION ||
					f->kind == CK_IMPROVEMENT)) {
		jw_key(w, "unit");
		jw_string(w, check_metric_is_time(f->metric) ? "seconds" : "bytes");
		jw_key(w, "baseline");
		json_values(w, f->metric, f->base, f->nbase);
		jw_key(w, "now");
		json_values(w, f->metric, f->cand, f->ncand);
		jw_key(w, "change");
		json_value(w, f->metric, f->change);
		jw_key(w, "spread");
		json_value(w, f->metric, f->spread);
		jw_key(w, "allowed");
		json_value(w, f->metric, f->allowed);
		jw_key(w, "shift");
		jw_double(w, f->shift);
		if (f->detail) {
			jw_key(w, "note");
			jw_string(w, f->detail);
		}
	} else {
		if (f->base_text) {
			jw_key(w, "baseline");
			jw_string(w, f->base_text);
		}
		if (f->now_text) {
			jw_key(w, f->kind == CK_NOT_JUDGED && f->metric != CM_LATENT
					   ? "metrics" : "now");
			jw_string(w, f->now_text);
		}
		jw_key(w, f->kind == CK_REGRESSION || f->kind == CK_IMPROVEMENT
				   ? "change" : "why");
		jw_string(w, f->detail);
	}
	jw_object_end(w);
}

void check_render_json(const struct check *c, struct strbuf *out)
{
	struct jsonw w = JSONW_INIT(out);
	jw_object_begin(&w);
	for (int s = 0; s < 2; s++) {
		jw_key(&w, check_side_names[s]);
		jw_object_begin(&w);
		jw_key(&w, "dir");
		jw_string(&w, c->side[s].label);
		jw_key(&w, "runs");
		jw_array_begin(&w);
		for (size_t i = 0; i < c->side[s].n; i++) {
			const struct check_run *r = &c->side[s].runs[i];
			char buf[64];
			jw_object_begin(&w);
			jw_key(&w, "id");
			jw_string(&w, r->id);
			jw_key(&w, "mode");
			jw_string(&w, r->mode);
			jw_key(&w, "ended");
			jw_string(&w, analysis_outcome_str(&r->a, buf, sizeof(buf)));
			versions_run_json(&r->a, &w);
			jw_object_end(&w);
		}
		jw_array_end(&w);
		jw_object_end(&w);
	}
	jw_key(&w, "thresholds");
	jw_object_begin(&w);
	jw_key(&w, "max_growth");
	if (c->opt.growth_is_pct) {
		jw_object_begin(&w);
		jw_key(&w, "percent");
		jw_double(&w, c->opt.growth_pct);
		jw_object_end(&w);
	} else {
		jw_object_begin(&w);
		jw_key(&w, "bytes");
		jw_u64(&w, c->opt.growth_bytes);
		jw_object_end(&w);
	}
	jw_key(&w, "max_time_growth");
	jw_object_begin(&w);
	jw_key(&w, c->opt.time_is_pct ? "percent" : "seconds");
	jw_double(&w, c->opt.time_is_pct ? c->opt.time_pct : c->opt.time_s);
	jw_object_end(&w);
	jw_key(&w, "memory_floor_bytes");
	jw_u64(&w, CHECK_MEM_FLOOR_BYTES);
	jw_key(&w, "time_floor_seconds");
	jw_double(&w, CHECK_TIME_FLOOR_S);
	jw_key(&w, "noise_k");
	jw_double(&w, CHECK_NOISE_K);
	jw_key(&w, "allow_latent_change");
	jw_bool(&w, c->opt.allow_latent_change);
	jw_object_end(&w);
	jw_key(&w, "clean");
	jw_bool(&w, check_regressions(c) == 0);
	versions_diff_json(&c->versions, &w);

	for (int k = CK_REGRESSION; k <= CK_NOTE; k++) {
		jw_key(&w, kind_keys[k]);
		jw_array_begin(&w);
		for (size_t i = 0; i < c->nfindings; i++)
			if ((int)c->findings[i].kind == k)
				json_finding(&w, &c->findings[i]);
		jw_array_end(&w);
	}
	jw_object_end(&w);
	strbuf_addch(out, '\n');
}
