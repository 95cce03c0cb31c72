/* latents_json.c -- a latent set as JSON: every copy and every pair */
#include <math.h>

#include "../common/jsonw.h"
#include "latents.h"
#include "npy.h"

static void json_shape(struct jsonw *w, int ndim, const int64_t *shape)
{
	jw_array_begin(w);
	for (int i = 0; i < ndim; i++)
		jw_i64(w, shape[i]);
	jw_array_end(w);
}

static void json_number(struct jsonw *w, double v)
{
	if (isnan(v))
		jw_string(w, "nan");
	else if (isinf(v))
		jw_string(w, "inf");
	else
		jw_double(w, v);
}

static void json_copies(struct jsonw *w, const struct latent_set *s, const struct latent *l)
{
	jw_key(w, "copies");
	jw_array_begin(w);
	for (size_t r = 0; r < s->nruns; r++) {
		const struct latent_copy *c = l->copies[r];
		if (!c)
			continue;
		jw_object_begin(w);
		jw_key(w, "run");
		jw_string(w, s->runs[r].id);
		jw_key(w, "state");
		jw_string(w, c->state == COPY_OK ? "ok" : c->state == COPY_CORRUPT ? "corrupt"
								       : "no file");
		jw_key(w, "file");
		jw_string(w, c->path);
		jw_key(w, "sha256");
		jw_string(w, c->sha256);
		if (c->actual_sha256[0]) {
			jw_key(w, "data_sha256");
			jw_string(w, c->actual_sha256);
			jw_key(w, "dtype");
			jw_string(w, npy_dtype_name(c->npy_dtype));
			jw_key(w, "shape");
			json_shape(w, c->npy_ndim, c->npy_shape);
		}
		if (c->problem) {
			jw_key(w, "problem");
			jw_string(w, c->problem);
		}
		jw_object_end(w);
	}
	jw_array_end(w);
}

static void json_pairs(struct jsonw *w, const struct latent_set *s, const struct latent *l)
{
	jw_key(w, "pairs");
	jw_array_begin(w);
	for (size_t k = 0; k < l->npairs; k++) {
		const struct latent_pair *p = &l->pairs[k];
		if (p->diff.result == LR_BOTH_ABSENT)
			continue;
		jw_object_begin(w);
		jw_key(w, "a");
		jw_string(w, s->runs[p->a].id);
		jw_key(w, "b");
		jw_string(w, s->runs[p->b].id);
		jw_key(w, "result");
		jw_string(w, latent_result_name(p->diff.result));
		if (p->diff.result == LR_DIFFERS) {
			jw_key(w, "max_abs_diff");
			json_number(w, p->diff.max_abs_diff);
			jw_key(w, "elements_differing");
			jw_u64(w, p->diff.ndiffer);
			jw_key(w, "noise");
			jw_string(w, latent_noise_name(p->noise));
		}
		jw_key(w, "finding");
		jw_bool(w, latent_pair_is_finding(p));
		jw_object_end(w);
	}
	jw_array_end(w);
}

void latents_render_json(const struct latent_set *s, struct strbuf *out)
{
	struct jsonw w = JSONW_INIT(out);
	jw_object_begin(&w);
	jw_key(&w, "baseline");
	jw_string(&w, s->baseline);
	jw_key(&w, "runs");
	jw_array_begin(&w);
	for (size_t r = 0; r < s->nruns; r++) {
		jw_object_begin(&w);
		jw_key(&w, "id");
		jw_string(&w, s->runs[r].id);
		jw_key(&w, "mode");
		jw_string(&w, s->runs[r].mode);
		jw_key(&w, "trace");
		jw_string(&w, s->runs[r].trace_path);
		jw_key(&w, "note");
		jw_string(&w, s->runs[r].note);
		jw_object_end(&w);
	}
	jw_array_end(&w);
	jw_key(&w, "latents");
	jw_array_begin(&w);
	for (size_t i = 0; i < s->nlatents; i++) {
		const struct latent *l = &s->latents[i];
		jw_object_begin(&w);
		jw_key(&w, "name");
		jw_string(&w, l->name);
		jw_key(&w, "stage");
		jw_string(&w, l->stage);
		jw_key(&w, "occurrence");
		jw_i64(&w, l->occurrence);
		jw_key(&w, "spread");
		if (l->spread_pairs)
			json_number(&w, l->spread);
		else
			jw_null(&w);
		jw_key(&w, "baseline_copies");
		jw_u64(&w, l->baseline_copies);
		json_copies(&w, s, l);
		json_pairs(&w, s, l);
		jw_object_end(&w);
	}
	jw_array_end(&w);
	jw_key(&w, "findings");
	jw_u64(&w, latent_findings(s));
	jw_object_end(&w);
	strbuf_addch(out, '\n');
}
