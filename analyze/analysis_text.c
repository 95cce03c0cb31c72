/* analysis_text.c -- what `stagebench analyze` prints for runs: a text block per run */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/units.h"
#include "analysis.h"
#include "text.h"

/* The device columns, only in a run that has them: the probe's device
 * memory (MPS driver, CUDA reserved), NVML's GPU memory; then the mapped
 * data files' peak and the major page faults. */
static void device_head(struct strbuf *o, const struct analysis *a)
{
	char h[32];
	if (a->has_device) {
		snprintf(h, sizeof(h), "%s peak", !strcmp(analysis_device_label(a), "MPS driver") ? "MPS" :
			 !strcmp(analysis_device_label(a), "CUDA reserved") ? "CUDA" : "device");
		strbuf_addf(o, " %12s", h);
	}
	if (a->has_gpu)
		strbuf_addf(o, " %11s", "GPU (NVML)");
	if (a->has_mapped)
		strbuf_addf(o, " %11s", "peak mapped");
	if (a->has_majflt)
		strbuf_addf(o, " %12s", "major faults");
}

static void device_cells(struct strbuf *o, const struct analysis *a, const struct stage_stats *s)
{
	char b[32];
	if (a->has_device) {
		if (s->has_device)
			format_gb(s->device_peak, b);
		strbuf_addf(o, " %12s", s->has_device ? b : "-");
	}
	if (a->has_gpu) {
		if (s->has_gpu)
			format_gb(s->gpu_peak, b);
		strbuf_addf(o, " %11s", s->has_gpu ? b : "-");
	}
	if (a->has_mapped) {
		if (s->has_mapped)
			format_gb(s->mapped_peak, b);
		strbuf_addf(o, " %11s", s->has_mapped ? b : "-");
	}
	if (a->has_majflt) {
		if (s->has_majflt)
			snprintf(b, sizeof(b), "%llu", (unsigned long long)s->majflt);
		strbuf_addf(o, " %12s", s->has_majflt ? b : "-");
	}
}

static void device_text(struct strbuf *o, const struct analysis *a)
{
	char b[32];
	if (a->has_device) {
		format_gb(a->device_peak, b);
		strbuf_addf(o, "  %-18s %s peak %s", "device memory", analysis_device_label(a), b);
		if (isfinite(a->device_peak_t) && a->device_sampled)
			strbuf_addf(o, " at %.1f s", a->device_peak_t);
		if (!strcmp(analysis_device_label(a), "CUDA reserved"))
			strbuf_addf(o, " (per stage exact: max_memory_reserved)\n");
		else if (a->interval > 0)
			strbuf_addf(o, " (sampled every %g s: a shorter spike can be missed; "
				    "record with a shorter --interval)\n", a->interval);
		else
			strbuf_addf(o, " (sampled)\n");
	}
	if (a->has_gpu) {
		format_gb(a->gpu_peak, b);
		strbuf_addf(o, "  %-18s %s (NVML, from outside)\n", "GPU memory", b);
	}
	if (a->has_mapped) {
		format_gb(a->mapped_peak, b);
		strbuf_addf(o, "  %-18s peak %s of data files resident (not in the footprint)"
			    ", %llu major page faults\n", "mapped files", b,
			    (unsigned long long)a->majflt);
	}
}

static void stage_rows_text(struct strbuf *o, const struct analysis *a)
{
	char b1[32], b2[32], b3[32];
	strbuf_addf(o, "  %-16s %14s %8s %9s %10s", "stage", "peak footprint", "samples", "time",
		    "swap rise");
	device_head(o, a);
	strbuf_addf(o, "  %s\n", "kernel peak");
	for (size_t i = 0; i < a->nstages; i++) {
		const struct stage_stats *s = &a->stages[i];
		char kp[160] = "";
		size_t k = 0;
		if (s->nsamples)
			format_gb(s->peak_footprint, b1);
		else
			snprintf(b1, sizeof(b1), "no sample");
		if (s->has_swap_rise)
			format_gb(s->swap_rise, b3);
		else
			snprintf(b3, sizeof(b3), "-");
		for (int m = 0; m < KPEAK_NMETRICS; m++) {
			const struct kernel_peak *p = &s->kpeak[m];
			if (!p->present)
				continue;
			format_gb(p->bytes, b2);
			k += (size_t)snprintf(kp + k, sizeof(kp) - k, "%s%s %s%s", k ? ", " : "",
					      kernel_peak_metric_names[m], b2,
					      p->missed_spike ? " (sampler missed a spike)" : "");
			if (k >= sizeof(kp))
				k = sizeof(kp) - 1;
		}
		char t1[UNITS_BUF];
		strbuf_addf(o, "  %-16s %14s %8zu %7s s %10s", s->name, b1, s->nsamples,
			    units_secs_num(s->seconds, 1, t1), b3);
		device_cells(o, a, s);
		strbuf_addf(o, "  %s\n", *kp ? kp : "-");
	}
}

static void releases_text(struct strbuf *o, const struct analysis *a)
{
	char b1[32], b2[32], b3[32], t1[UNITS_BUF], t2[UNITS_BUF];
	for (size_t i = 0; i < a->nwindows; i++) {
		const struct stage_window *w = &a->windows[i];
		if (!w->nreleases)
			continue;
		format_gb(w->release_bytes, b1);
		strbuf_addf(o, "  entering %s at %s s released %zu model%s (%s) by %s s: footprint ",
			    a->stages[w->stage].name, units_secs_num(w->stage_t, 3, t1), w->nreleases,
			    w->nreleases == 1 ? "" : "s", b1, units_secs_num(w->releases_done_t, 3, t2));
		if (w->has_before) {
			format_gb(w->footprint_before, b2);
			strbuf_addf(o, "%s just before", b2);
		} else {
			strbuf_addf(o, "no sample before");
		}
		if (w->has_low_after) {
			format_gb(w->lowest_after, b3);
			strbuf_addf(o, ", lowest %s within 2 s after\n", b3);
		} else {
			strbuf_addf(o, ", no sample within 2 s after\n");
		}
	}
}

static void render_text(struct strbuf *o, const struct analysis *a)
{
	char b1[32], b2[32], b3[32], how[64], t1[UNITS_BUF];
	strbuf_addf(o, "%s%s\n", a->path,
		    a->cut ? " (cut short: read up to the cut)"
		    : a->damaged ? " (damaged: read up to the fault)" : "");
	strbuf_addf(o, "  %-18s %s\n", "mode", a->mode ? a->mode : "(none)");
	strbuf_addf(o, "  %-18s %s\n", "ran to", a->stages[a->ran_to].name);
	strbuf_addf(o, "  %-18s %s%s%s%s\n", "ended", analysis_outcome_str(a, how, sizeof(how)),
		    a->reason ? " (" : "", a->reason ? a->reason : "", a->reason ? ")" : "");
	strbuf_addf(o, "  %-18s %s\n", "footprint reader", reader_info(a->reader)->label);
	if (reader_caveat(a->reader))
		strbuf_addf(o, "  %-18s %s\n", "", reader_caveat(a->reader));
	if (a->has_footprint) {
		format_gb(a->peak_footprint, b1);
		strbuf_addf(o, "  %-18s %s at %s s\n", "peak footprint", b1,
			    units_secs_num(a->peak_t, 1, t1));
	} else {
		strbuf_addf(o, "  %-18s no sample\n", "peak footprint");
	}
	if (a->has_swap) {
		format_gb(a->swap_start, b1);
		format_gb(a->swap_peak, b2);
		format_gb(a->swap_rise, b3);
		strbuf_addf(o, "  %-18s %s at start, peak %s, rise %s\n", "swap", b1, b2, b3);
	}
	device_text(o, a);
	if (a->has_level)
		strbuf_addf(o, "  %-18s %.0f %%\n", "lowest available", a->lowest_level);
	strbuf_addf(o, "  %-18s ", "wall time");
	units_add_seconds(o, a->wall_s, UNITS_COARSE, false);
	strbuf_addch(o, '\n');
	format_gb(a->load_bytes, b1);
	if (!a->nloads)
		strbuf_addf(o, "  %-18s not reported (no load events)\n", "loads");
	else
		strbuf_addf(o, "  %-18s %zu (%zu reloads), %s in %s, %zu outside their stage\n",
			    "loads", a->nloads, a->nreloads, b1,
			    units_seconds(a->load_seconds, UNITS_COARSE, false, t1), a->loads_outside);
	for (size_t i = 0; i < a->nloads; i++) {
		const struct load_info *l = &a->loads[i];
		if (l->outside)
			strbuf_addf(o, "  %-18s %s %s for %s at %s s, in %s\n", "", l->reload ? "reload" : "load",
				    l->name ? l->name : "(unnamed)", l->stage, units_secs_num(l->t, 3, t1),
				    l->stage_in_force);
	}
	format_gb(a->release_bytes, b1);
	strbuf_addf(o, "  %-18s %zu, %s\n", "releases", a->nreleases, b1);

	stage_rows_text(o, a);
	releases_text(o, a);
}


static char *term(const char *s)
{
	if (!s)
		return NULL;
	struct strbuf sb = STRBUF_INIT;
	text_term(&sb, s);
	strbuf_addstr(&sb, "");
	return strbuf_detach(&sb);
}

/* A terminal shows names from a trace as text: escape sequences and line
 * breaks in them print as "\x1b", "\n" (text.h). The block is written from
 * a view of the run whose strings are escaped. */
void analysis_write_text(struct strbuf *o, const struct analysis *a)
{
	struct analysis v = *a;
	v.path = term(a->path);
	v.mode = term(a->mode);
	v.reason = term(a->reason);
	v.stages = xcalloc(a->nstages + 1, sizeof(*v.stages));
	for (size_t i = 0; i < a->nstages; i++) {
		v.stages[i] = a->stages[i];
		v.stages[i].name = term(a->stages[i].name);
	}
	v.loads = xcalloc(a->nloads + 1, sizeof(*v.loads));
	for (size_t i = 0; i < a->nloads; i++) {
		v.loads[i] = a->loads[i];
		v.loads[i].name = term(a->loads[i].name);
		v.loads[i].stage = term(a->loads[i].stage);
		v.loads[i].stage_in_force = term(a->loads[i].stage_in_force);
	}
	render_text(o, &v);
	free(v.path);
	free(v.mode);
	free(v.reason);
	for (size_t i = 0; i < a->nstages; i++)
		free(v.stages[i].name);
	for (size_t i = 0; i < a->nloads; i++) {
		free(v.loads[i].name);
		free(v.loads[i].stage);
		free(v.loads[i].stage_in_force);
	}
	free(v.stages);
	free(v.loads);
}

void analysis_render_text(const struct analysis_runs *r, struct strbuf *o)
{
	for (size_t i = 0; i < r->n; i++) {
		if (i)
			strbuf_addch(o, '\n');
		analysis_write_text(o, &r->runs[i]);
	}
}
