/* loadplan_json.c -- the plan as it ran (loadplan.h) as the "plan" key of the table's JSON:
 * the variants, and per model its size and each variant's runs grouped by their spans */
#include "../common/jsonw.h"
#include "loadplan.h"

static const char *plan_size_source(enum loadplan_size s)
{
	switch (s) {
	case LOADPLAN_SIZE_LOADS: return "loads";
	case LOADPLAN_SIZE_RELEASES: return "releases";
	case LOADPLAN_SIZE_MARK: return "not_staged_mark";
	case LOADPLAN_SIZE_NONE: break;
	}
	return NULL;
}

static void plan_group_json(const struct loadplan_group *g, struct jsonw *w)
{
	jw_object_begin(w);
	jw_key(w, "runs");
	jw_array_begin(w);
	for (size_t r = 0; r < g->nruns; r++)
		jw_string(w, g->runs[r]);
	jw_array_end(w);
	jw_key(w, "spans");
	jw_array_begin(w);
	for (size_t i = 0; i < g->nspans; i++) {
		const struct loadplan_span *s = &g->spans[i];
		jw_object_begin(w);
		jw_key(w, "loaded"); jw_string(w, s->loaded);
		jw_key(w, "released"); jw_string(w, s->released);
		jw_key(w, "reload"); jw_bool(w, s->reload);
		jw_key(w, "builds"); jw_u64(w, s->nbuilds);
		jw_object_end(w);
	}
	jw_array_end(w);
	jw_object_end(w);
}

static void plan_model_json(const struct loadplan *p, size_t x, struct jsonw *w)
{
	const struct loadplan_model *md = &p->models[x];
	jw_object_begin(w);
	jw_key(w, "name"); jw_string(w, md->name);
	jw_key(w, "min_bytes");
	if (md->size_from) jw_u64(w, md->min_bytes); else jw_null(w);
	jw_key(w, "max_bytes");
	if (md->size_from) jw_u64(w, md->max_bytes); else jw_null(w);
	jw_key(w, "size_from"); jw_string(w, plan_size_source(md->size_from));
	jw_key(w, "modes");
	jw_array_begin(w);
	for (size_t m = 0; m < p->nmodes; m++) {
		const struct loadplan_cell *c = loadplan_cell(p, x, m);
		if (!c->ngroups && !c->why)
			continue;
		jw_object_begin(w);
		jw_key(w, "mode"); jw_string(w, p->modes[m].name);
		jw_key(w, "runs_agree"); jw_bool(w, c->ngroups <= 1);
		jw_key(w, "held_to_end"); jw_bool(w, c->held);
		jw_key(w, "not_staged"); jw_string(w, c->why);
		jw_key(w, "groups");
		jw_array_begin(w);
		for (size_t g = 0; g < c->ngroups; g++)
			plan_group_json(&c->groups[g], w);
		jw_array_end(w);
		jw_object_end(w);
	}
	jw_array_end(w);
	jw_object_end(w);
}

void loadplan_write_json(const struct loadplan *p, struct jsonw *w)
{
	jw_key(w, "plan");
	jw_object_begin(w);
	jw_key(w, "modes");
	jw_array_begin(w);
	for (size_t m = 0; m < p->nmodes; m++) {
		const struct loadplan_mode *pm = &p->modes[m];
		jw_object_begin(w);
		jw_key(w, "mode"); jw_string(w, pm->name);
		jw_key(w, "reported"); jw_bool(w, pm->reported);
		jw_key(w, "released_any"); jw_bool(w, pm->released_any);
		jw_key(w, "one_stage"); jw_string(w, pm->one_stage);
		jw_object_end(w);
	}
	jw_array_end(w);
	jw_key(w, "models");
	jw_array_begin(w);
	for (size_t x = 0; x < p->nmodels; x++)
		plan_model_json(p, x, w);
	jw_array_end(w);
	jw_object_end(w);
}
