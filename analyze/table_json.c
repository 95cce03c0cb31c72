/* table_json.c -- the per-stage peak table as JSON, bytes and seconds */
#include "../common/jsonw.h"
#include "loadplan.h"
#include "text.h"
#include "table.h"

static void json_range(struct jsonw *w, const char *lo_key, const char *hi_key, bool has, uint64_t lo, uint64_t hi)
{
	jw_key(w, lo_key);
	if (has) jw_u64(w, lo); else jw_null(w);
	jw_key(w, hi_key);
	if (has) jw_u64(w, hi); else jw_null(w);
}

static void table_json_stages(struct jsonw *w, const struct table *t)
{
	jw_key(w, "stages");
	jw_array_begin(w);
	for (size_t s = 0; s < t->nstages; s++) {
		jw_object_begin(w);
		jw_key(w, "stage"); jw_string(w, t->stages[s]);
		jw_key(w, "cells");
		jw_array_begin(w);
		for (size_t m = 0; m < t->nmodes; m++) {
			const struct table_cell *c = table_cell(t, s, m);
			jw_object_begin(w);
			jw_key(w, "mode"); jw_string(w, t->modes[m].name);
			jw_key(w, "runs_entered"); jw_u64(w, c->nentered);
			jw_key(w, "from_supplement"); jw_bool(w, c->from_supplement);
			jw_key(w, "runs_completed"); jw_u64(w, c->ncompleted);
			json_range(w, "peak_min_bytes", "peak_max_bytes", c->ncompleted > 0, c->min_bytes, c->max_bytes);
			json_range(w, "swap_rise_min_bytes", "swap_rise_max_bytes", c->has_swap, c->swap_min,
				   c->swap_max);
			jw_key(w, "swap_rose"); jw_bool(w, c->swap_rose);
			if (t->has_device) {
				json_range(w, "device_min_bytes", "device_max_bytes", c->has_device,
					   c->device_min, c->device_max);
				jw_key(w, "device_sampled"); jw_bool(w, c->device_sampled);
			}
			if (t->has_mapped) {
				json_range(w, "mapped_min_bytes", "mapped_max_bytes", c->has_mapped,
					   c->mapped_min, c->mapped_max);
				json_range(w, "major_faults_min", "major_faults_max", c->has_majflt,
					   c->majflt_min, c->majflt_max);
				json_range(w, "total_min_bytes", "total_max_bytes", c->has_total,
					   c->total_min, c->total_max);
			}
			jw_key(w, "ended");
			jw_array_begin(w);
			for (size_t k = 0; k < c->nendings; k++) {
				const struct table_ending *e = &c->endings[k];
				jw_object_begin(w);
				jw_key(w, "how"); jw_string(w, text_outcome_key(e->outcome));
				jw_key(w, "code");
				if (e->outcome == RUN_SIGNAL || e->outcome == RUN_EXIT) jw_i64(w, e->code);
				else jw_null(w);
				jw_key(w, "runs"); jw_u64(w, e->nruns);
				jw_key(w, "sampled_runs"); jw_u64(w, e->nsampled);
				json_range(w, "peak_min_bytes", "peak_max_bytes", e->nsampled > 0, e->min_bytes, e->max_bytes);
				jw_object_end(w);
			}
			jw_array_end(w);
			jw_object_end(w);
		}
		jw_array_end(w);
		jw_object_end(w);
	}
	jw_array_end(w);
}

void table_render_json(const struct table *t, struct strbuf *out)
{
	struct jsonw w = JSONW_INIT(out);
	jw_object_begin(&w);
	jw_key(&w, "modes");
	jw_array_begin(&w);
	for (size_t m = 0; m < t->nmodes; m++) {
		const struct table_mode *tm = &t->modes[m];
		jw_object_begin(&w);
		jw_key(&w, "mode"); jw_string(&w, tm->name);
		jw_key(&w, "runs");
		jw_array_begin(&w);
		for (size_t k = 0; k < tm->nruns; k++) {
			const struct analysis *a = &t->runs[tm->runs[k]].a;
			jw_object_begin(&w);
			jw_key(&w, "path"); jw_string(&w, a->path);
			jw_key(&w, "reader"); jw_string(&w, reader_info(a->reader)->name);
			jw_key(&w, "ran_to"); jw_string(&w, a->stages[a->ran_to].name);
			jw_key(&w, "outcome"); jw_string(&w, text_outcome_key(a->outcome));
			jw_key(&w, "code");
			if (a->outcome == RUN_SIGNAL) jw_i64(&w, a->signal);
			else if (a->outcome == RUN_EXIT) jw_i64(&w, a->exit_code);
			else jw_null(&w);
			jw_key(&w, "peak_footprint_bytes");
			if (a->has_footprint) jw_u64(&w, a->peak_footprint); else jw_null(&w);
			jw_key(&w, "swap_rise_bytes");
			if (a->has_swap) jw_u64(&w, a->swap_rise); else jw_null(&w);
			jw_key(&w, "wall_s"); jw_double(&w, a->wall_s);
			jw_key(&w, "loads"); jw_u64(&w, a->nloads);
			jw_key(&w, "load_bytes"); jw_u64(&w, a->load_bytes);
			jw_key(&w, "load_s"); jw_double(&w, a->load_seconds);
			versions_run_json(a, &w);
			jw_object_end(&w);
		}
		jw_array_end(&w);
		jw_object_end(&w);
	}
	jw_array_end(&w);

	table_json_stages(&w, t);
	struct loadplan plan;
	loadplan_build(&plan, t);
	loadplan_write_json(&plan, &w);
	loadplan_release(&plan);

	jw_key(&w, "comparisons");
	jw_array_begin(&w);
	for (size_t i = 0; i < t->ncomparisons; i++) {
		const struct table_comparison *c = &t->comparisons[i];
		jw_object_begin(&w);
		jw_key(&w, "mode"); jw_string(&w, t->modes[c->mode].name);
		jw_key(&w, "against"); jw_string(&w, t->modes[c->against].name);
		jw_key(&w, "swap_worse"); jw_bool(&w, c->swap_worse);
		jw_key(&w, "stages");
		jw_array_begin(&w);
		for (size_t k = 0; k < c->nstages; k++) {
			jw_object_begin(&w);
			jw_key(&w, "stage"); jw_string(&w, t->stages[c->stages[k].stage]);
			jw_key(&w, "min_less_bytes"); jw_i64(&w, c->stages[k].min_less);
			jw_key(&w, "max_less_bytes"); jw_i64(&w, c->stages[k].max_less);
			jw_key(&w, "swap_worse"); jw_bool(&w, c->stages[k].swap_worse);
			jw_object_end(&w);
		}
		jw_array_end(&w);
		for (int k2 = 0; t->has_mapped && k2 < 2; k2++) {
			const struct table_stage_diff *d = k2 ? c->totals : c->mapped;
			jw_key(&w, k2 ? "total" : "mapped");
			jw_array_begin(&w);
			for (size_t k = 0; k < (k2 ? c->ntotals : c->nmapped); k++) {
				jw_object_begin(&w);
				jw_key(&w, "stage"); jw_string(&w, t->stages[d[k].stage]);
				jw_key(&w, "min_less_bytes"); jw_i64(&w, d[k].min_less);
				jw_key(&w, "max_less_bytes"); jw_i64(&w, d[k].max_less);
				jw_object_end(&w);
			}
			jw_array_end(&w);
		}
		jw_object_end(&w);
	}
	jw_array_end(&w);
	versions_diff_json(&t->versions, &w);
	jw_key(&w, "readers_differ"); jw_bool(&w, t->readers_differ);
	if (t->has_device) {
		jw_key(&w, "device"); jw_string(&w, t->device_label);
	}
	jw_object_end(&w);
	strbuf_addch(out, '\n');
}
