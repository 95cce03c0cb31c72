/* analysis_json.c -- what `stagebench analyze --json` prints for runs, bytes and seconds */
#include "../common/jsonw.h"
#include "analysis.h"
#include "text.h"
#include "versions.h"

static void json_windows(struct jsonw *w, const struct analysis *a, size_t i)
{
	jw_key(w, "windows");
	jw_array_begin(w);
	for (size_t k = 0; k < a->nwindows; k++) {
		const struct stage_window *win = &a->windows[k];
		if (win->stage != i)
			continue;
		jw_object_begin(w);
		jw_key(w, "stage_t"); jw_double(w, win->stage_t);
		jw_key(w, "start_t"); jw_double(w, win->start_t); /* -inf (setup) -> null */
		jw_key(w, "end_t"); jw_double(w, win->end_t);     /* +inf (last) -> null */
		jw_key(w, "samples"); jw_u64(w, win->nsamples);
		jw_key(w, "peak_footprint_bytes");
		if (win->nsamples) jw_u64(w, win->peak_footprint); else jw_null(w);
		jw_key(w, "releases"); jw_u64(w, win->nreleases);
		if (win->nreleases) {
			jw_key(w, "release_bytes"); jw_u64(w, win->release_bytes);
			jw_key(w, "releases_done_t"); jw_double(w, win->releases_done_t);
			jw_key(w, "footprint_before_bytes");
			if (win->has_before) jw_u64(w, win->footprint_before); else jw_null(w);
			jw_key(w, "lowest_after_bytes");
			if (win->has_low_after) jw_u64(w, win->lowest_after); else jw_null(w);
		}
		jw_object_end(w);
	}
	jw_array_end(w);
}

static void analysis_json_stages(struct jsonw *w, const struct analysis *a)
{
	jw_key(w, "stages");
	jw_array_begin(w);
	for (size_t i = 0; i < a->nstages; i++) {
		const struct stage_stats *s = &a->stages[i];
		jw_object_begin(w);
		jw_key(w, "name"); jw_string(w, s->name);
		jw_key(w, "samples"); jw_u64(w, s->nsamples);
		jw_key(w, "peak_footprint_bytes");
		if (s->nsamples) jw_u64(w, s->peak_footprint); else jw_null(w);
		jw_key(w, "seconds"); jw_double(w, s->seconds);
		jw_key(w, "completed"); jw_bool(w, s->completed);
		jw_key(w, "ended_here"); jw_bool(w, s->ended_here);
		jw_key(w, "swap_rise_bytes");
		if (s->has_swap_rise) jw_u64(w, s->swap_rise); else jw_null(w);
		if (a->has_device) {
			jw_key(w, "device_peak_bytes");
			if (s->has_device) jw_u64(w, s->device_peak); else jw_null(w);
			jw_key(w, "device_exact"); jw_bool(w, s->device_exact);
		}
		if (a->has_gpu) {
			jw_key(w, "gpu_peak_bytes");
			if (s->has_gpu) jw_u64(w, s->gpu_peak); else jw_null(w);
		}
		if (a->has_mapped) {
			jw_key(w, "mapped_peak_bytes");
			if (s->has_mapped) jw_u64(w, s->mapped_peak); else jw_null(w);
		}
		if (a->has_majflt) {
			jw_key(w, "major_faults");
			if (s->has_majflt) jw_u64(w, s->majflt); else jw_null(w);
		}
		jw_key(w, "kernel_peaks");
		jw_array_begin(w);
		for (int m = 0; m < KPEAK_NMETRICS; m++) {
			const struct kernel_peak *p = &s->kpeak[m];
			if (!p->present)
				continue;
			jw_object_begin(w);
			jw_key(w, "metric"); jw_string(w, kernel_peak_metric_names[m]);
			jw_key(w, "bytes"); jw_u64(w, p->bytes);
			jw_key(w, "sampled_bytes");
			if (p->has_sampled) jw_u64(w, p->sampled_bytes); else jw_null(w);
			jw_key(w, "missed_spike"); jw_bool(w, p->missed_spike);
			jw_object_end(w);
		}
		jw_array_end(w);
		json_windows(w, a, i);
		jw_object_end(w);
	}
	jw_array_end(w);
}

void analysis_write_json(struct jsonw *w, const struct analysis *a)
{
	char how[64];
	jw_object_begin(w);
	jw_key(w, "path"); jw_string(w, a->path);
	jw_key(w, "mode"); jw_string(w, a->mode);
	jw_key(w, "reader"); jw_string(w, reader_info(a->reader)->name);
	jw_key(w, "damaged"); jw_bool(w, a->damaged);
	jw_key(w, "ran_to"); jw_string(w, a->stages[a->ran_to].name);
	jw_key(w, "outcome"); jw_string(w, text_outcome_key(a->outcome));
	jw_key(w, "outcome_text"); jw_string(w, analysis_outcome_str(a, how, sizeof(how)));
	jw_key(w, "exit_code");
	if (a->outcome == RUN_EXIT) jw_i64(w, a->exit_code); else jw_null(w);
	jw_key(w, "signal");
	if (a->outcome == RUN_SIGNAL) jw_i64(w, a->signal); else jw_null(w);
	jw_key(w, "reason"); jw_string(w, a->reason);
	versions_run_json(a, w);
	jw_key(w, "samples"); jw_u64(w, a->nsamples);
	jw_key(w, "peak_footprint_bytes");
	if (a->has_footprint) jw_u64(w, a->peak_footprint); else jw_null(w);
	jw_key(w, "peak_t");
	if (a->has_footprint) jw_double(w, a->peak_t); else jw_null(w);
	jw_key(w, "swap");
	if (a->has_swap) {
		jw_object_begin(w);
		jw_key(w, "start_bytes"); jw_u64(w, a->swap_start);
		jw_key(w, "peak_bytes"); jw_u64(w, a->swap_peak);
		jw_key(w, "rise_bytes"); jw_u64(w, a->swap_rise);
		jw_object_end(w);
	} else {
		jw_null(w);
	}
	if (a->has_device) {
		jw_key(w, "device");
		jw_object_begin(w);
		jw_key(w, "metric"); jw_string(w, a->device_metric);
		jw_key(w, "label"); jw_string(w, analysis_device_label(a));
		jw_key(w, "peak_bytes"); jw_u64(w, a->device_peak);
		jw_key(w, "peak_t");
		if (a->device_sampled) jw_double(w, a->device_peak_t); else jw_null(w);
		jw_key(w, "sampled"); jw_bool(w, a->device_sampled);
		jw_object_end(w);
	}
	if (a->has_gpu) {
		jw_key(w, "gpu_peak_bytes"); jw_u64(w, a->gpu_peak);
	}
	if (a->has_mapped) {
		jw_key(w, "mapped_peak_bytes"); jw_u64(w, a->mapped_peak);
	}
	if (a->has_majflt) {
		jw_key(w, "major_faults"); jw_u64(w, a->majflt);
	}
	jw_key(w, "lowest_available_pct");
	if (a->has_level) jw_double(w, a->lowest_level); else jw_null(w);
	jw_key(w, "wall_s"); jw_double(w, a->wall_s);
	jw_key(w, "loads");
	jw_object_begin(w);
	jw_key(w, "count"); jw_u64(w, a->nloads);
	jw_key(w, "reloads"); jw_u64(w, a->nreloads);
	jw_key(w, "bytes"); jw_u64(w, a->load_bytes);
	jw_key(w, "seconds"); jw_double(w, a->load_seconds);
	jw_key(w, "outside_their_stage"); jw_u64(w, a->loads_outside);
	jw_key(w, "items");
	jw_array_begin(w);
	for (size_t i = 0; i < a->nloads; i++) {
		const struct load_info *l = &a->loads[i];
		jw_object_begin(w);
		jw_key(w, "name"); jw_string(w, l->name);
		jw_key(w, "kind"); jw_string(w, l->reload ? "reload" : "load");
		jw_key(w, "stage"); jw_string(w, l->stage);
		jw_key(w, "stage_in_force"); jw_string(w, l->stage_in_force);
		jw_key(w, "t"); jw_double(w, l->t);
		jw_key(w, "bytes"); jw_u64(w, l->nbytes);
		jw_key(w, "seconds"); jw_double(w, l->seconds);
		jw_key(w, "outside"); jw_bool(w, l->outside);
		jw_object_end(w);
	}
	jw_array_end(w);
	jw_object_end(w);
	jw_key(w, "releases");
	jw_object_begin(w);
	jw_key(w, "count"); jw_u64(w, a->nreleases);
	jw_key(w, "bytes"); jw_u64(w, a->release_bytes);
	jw_object_end(w);
	analysis_json_stages(w, a);
	jw_object_end(w);
}

void analysis_render_json(const struct analysis_runs *r, struct strbuf *o)
{
	struct jsonw w = JSONW_INIT(o);
	jw_object_begin(&w);
	jw_key(&w, "runs");
	jw_array_begin(&w);
	for (size_t i = 0; i < r->n; i++)
		analysis_write_json(&w, &r->runs[i]);
	jw_array_end(&w);
	jw_object_end(&w);
	strbuf_addch(o, '\n');
}
