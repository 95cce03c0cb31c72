/* report.c -- one run's analysis as text and as JSON (what `stagebench analyze` prints) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/jsonw.h"
#include "../common/parse.h"
#include "../common/util.h"
#include "analysis.h"

static void gb(uint64_t bytes, char out[32])
{
	format_gb(bytes, out);
}

void analysis_render_text(struct strbuf *o, const struct analysis *a)
{
	char b1[32], b2[32], b3[32], how[64];
	strbuf_addf(o, "%s%s\n", a->path, a->damaged ? " (damaged: read up to the fault)" : "");
	strbuf_addf(o, "  %-18s %s\n", "mode", a->mode ? a->mode : "(none)");
	strbuf_addf(o, "  %-18s %s\n", "ran to", a->stages[a->ran_to].name);
	strbuf_addf(o, "  %-18s %s%s%s%s\n", "ended", analysis_outcome_str(a, how, sizeof(how)),
		    a->reason ? " (" : "", a->reason ? a->reason : "", a->reason ? ")" : "");
	if (a->has_footprint) {
		gb(a->peak_footprint, b1);
		strbuf_addf(o, "  %-18s %s at %.1f s\n", "peak footprint", b1, a->peak_t);
	} else {
		strbuf_addf(o, "  %-18s no sample\n", "peak footprint");
	}
	if (a->has_swap) {
		gb(a->swap_start, b1);
		gb(a->swap_peak, b2);
		gb(a->swap_rise, b3);
		strbuf_addf(o, "  %-18s %s at start, peak %s, rise %s\n", "swap", b1, b2, b3);
	}
	if (a->has_level)
		strbuf_addf(o, "  %-18s %.0f %%\n", "lowest available", a->lowest_level);
	strbuf_addf(o, "  %-18s %.1f s\n", "wall time", a->wall_s);
	gb(a->load_bytes, b1);
	strbuf_addf(o, "  %-18s %zu (%zu reloads), %s in %.1f s, %zu outside their stage\n", "loads",
		    a->nloads, a->nreloads, b1, a->load_seconds, a->loads_outside);
	for (size_t i = 0; i < a->nloads; i++) {
		const struct load_info *l = &a->loads[i];
		if (l->outside)
			strbuf_addf(o, "  %-18s %s %s for %s at %.3f s, in %s\n", "", l->reload ? "reload" : "load",
				    l->name ? l->name : "(unnamed)", l->stage, l->t, l->stage_in_force);
	}
	gb(a->release_bytes, b1);
	strbuf_addf(o, "  %-18s %zu, %s\n", "releases", a->nreleases, b1);

	strbuf_addf(o, "  %-16s %14s %8s %9s  %s\n", "stage", "peak footprint", "samples", "time", "kernel peak");
	for (size_t i = 0; i < a->nstages; i++) {
		const struct stage_stats *s = &a->stages[i];
		char kp[160] = "";
		size_t k = 0;
		if (s->nsamples)
			gb(s->peak_footprint, b1);
		else
			snprintf(b1, sizeof(b1), "no sample");
		for (int m = 0; m < KPEAK_NMETRICS; m++) {
			const struct kernel_peak *p = &s->kpeak[m];
			if (!p->present)
				continue;
			gb(p->bytes, b2);
			k += (size_t)snprintf(kp + k, sizeof(kp) - k, "%s%s %s%s", k ? ", " : "",
					      kernel_peak_metric_names[m], b2,
					      p->missed_spike ? " (sampler missed a spike)" : "");
			if (k >= sizeof(kp))
				k = sizeof(kp) - 1;
		}
		strbuf_addf(o, "  %-16s %14s %8zu %7.1f s  %s\n", s->name, b1, s->nsamples, s->seconds,
			    *kp ? kp : "-");
	}
	for (size_t i = 0; i < a->nwindows; i++) {
		const struct stage_window *w = &a->windows[i];
		if (!w->nreleases)
			continue;
		gb(w->release_bytes, b1);
		strbuf_addf(o, "  entering %s at %.3f s released %zu model%s (%s) by %.3f s: footprint ",
			    a->stages[w->stage].name, w->stage_t, w->nreleases, w->nreleases == 1 ? "" : "s", b1,
			    w->releases_done_t);
		if (w->has_before) {
			gb(w->footprint_before, b2);
			strbuf_addf(o, "%s just before", b2);
		} else {
			strbuf_addf(o, "no sample before");
		}
		if (w->has_low_after) {
			gb(w->lowest_after, b3);
			strbuf_addf(o, ", lowest %s within 2 s after\n", b3);
		} else {
			strbuf_addf(o, ", no sample within 2 s after\n");
		}
	}
}

void analysis_render_json(struct jsonw *w, const struct analysis *a)
{
	char how[64];
	static const char *const outcome_keys[] = { "completed", "guard", "signal", "exit", "recorder_died" };
	jw_object_begin(w);
	jw_key(w, "path"); jw_string(w, a->path);
	jw_key(w, "mode"); jw_string(w, a->mode);
	jw_key(w, "damaged"); jw_bool(w, a->damaged);
	jw_key(w, "ran_to"); jw_string(w, a->stages[a->ran_to].name);
	jw_key(w, "outcome"); jw_string(w, outcome_keys[a->outcome]);
	jw_key(w, "outcome_text"); jw_string(w, analysis_outcome_str(a, how, sizeof(how)));
	jw_key(w, "exit_code");
	if (a->outcome == RUN_EXIT) jw_i64(w, a->exit_code); else jw_null(w);
	jw_key(w, "signal");
	if (a->outcome == RUN_SIGNAL) jw_i64(w, a->signal); else jw_null(w);
	jw_key(w, "reason"); jw_string(w, a->reason);
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
		jw_object_end(w);
	}
	jw_array_end(w);
	jw_object_end(w);
}

void analysis_warn_spikes(const struct analysis *a)
{
	for (size_t i = 0; i < a->nstages; i++)
		for (int m = 0; m < KPEAK_NMETRICS; m++) {
			const struct kernel_peak *p = &a->stages[i].kpeak[m];
			char b1[32], b2[32];
			if (!p->missed_spike)
				continue;
			format_gb(p->bytes, b1);
			format_gb(p->sampled_bytes, b2);
			warning("%s: stage %s: kernel %s peak %s is more than 10%% above the sampled %s: "
				"the sampler missed a spike (record with a shorter --interval)",
				a->path, a->stages[i].name, kernel_peak_metric_names[m], b1, b2);
		}
}
