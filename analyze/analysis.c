/* analysis.c -- one run's stage windows, peaks, swap, loads and releases (see analysis.h) */
#include "analysis.h"

#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/units.h"
#include "../common/util.h"
#include "../traces/runs.h"
#include "../traces/trace.h"
#include "../traces/window.h"
#include "strindex.h"

const char *const kernel_peak_metric_names[KPEAK_NMETRICS] = { "rss", "footprint" };

static const char *stage_key(const void *ctx, size_t i)
{
	return ((const struct analysis *)ctx)->stages[i].name;
}

static size_t stage_index(struct analysis *a, const char *name)
{
	size_t i = strindex_find(&a->stage_ix, stage_key, a, name);
	if (i != STRINDEX_NONE)
		return i;
	ALLOC_GROW(a->stages, a->nstages + 1, a->stages_alloc);
	struct stage_stats *s = &a->stages[a->nstages];
	memset(s, 0, sizeof(*s));
	s->name = xstrdup(name);
	strindex_add(&a->stage_ix, stage_key, a, a->nstages);
	return a->nstages++;
}

static struct stage_window *add_window(struct analysis *a, const char *name, double stage_t)
{
	ALLOC_GROW(a->windows, a->nwindows + 1, a->windows_alloc);
	struct stage_window *w = &a->windows[a->nwindows++];
	memset(w, 0, sizeof(*w));
	w->stage = stage_index(a, name);
	w->stage_t = stage_t;
	w->start_t = stage_t;
	w->end_t = INFINITY;
	a->stages[w->stage].nwindows++;
	return w;
}

static const char *stage_name_of(const struct trace_event *ev)
{
	return ev->stage ? ev->stage : "(unnamed)";
}

/* First sample index with t >= x (samples are sorted by t). */
static size_t lower_bound(const struct trace *tr, double x)
{
	size_t lo = 0, hi = tr->nsamples;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (tr->samples[mid].t < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool sample_metric(const struct trace_sample *s, int metric, uint64_t *v)
{
	if (metric == KPEAK_RSS && (s->fields & SF_RSS)) {
		*v = s->rss;
		return true;
	}
	if (metric == KPEAK_FOOTPRINT && (s->fields & SF_FOOTPRINT)) {
		*v = s->footprint;
		return true;
	}
	return false;
}

/* Max of a metric over samples in [from, to]; false when there is none. */
static bool sampled_max(const struct trace *tr, int metric, double from, double to, uint64_t *out)
{
	bool any = false;
	for (size_t i = lower_bound(tr, from); i < tr->nsamples && tr->samples[i].t <= to; i++) {
		uint64_t v;
		if (sample_metric(&tr->samples[i], metric, &v) && (!any || v > *out)) {
			*out = v;
			any = true;
		}
	}
	return any;
}

/* The windows, by the rule of traces/window.h. */
static void build_windows(const struct trace *tr, struct analysis *a)
{
	struct window_state ws = WINDOW_STATE_INIT;
	struct stage_window *cur = add_window(a, "setup", 0);
	cur->start_t = -INFINITY;
	struct trace_event tmp = TRACE_EVENT_INIT;
	for (size_t i = 0, n = trace_nevents(tr); i < n; i++) {
		const struct trace_event *ev = trace_event_at(tr, i, &tmp);
		if (ev->kind == EV_RELEASE) {
			if (ev->has_nbytes)
				a->release_bytes += ev->nbytes;
			a->nreleases++;
		}
		switch (window_step(&ws, ev)) {
		case WINDOW_OPEN:
			cur->end_t = ev->t;
			cur = add_window(a, stage_name_of(ev), ev->t);
			break;
		case WINDOW_MOVE:
			cur->start_t = ws.start_t;
			/* fall through */
		case WINDOW_RELEASE:
			cur->nreleases++;
			if (ev->has_nbytes)
				cur->release_bytes += ev->nbytes;
			cur->releases_done_t = ev->t;
			break;
		case WINDOW_SETUP:
		case WINDOW_NONE:
			break;
		}
	}
	window_state_release(&ws);
	cur->last = true;
	a->ran_to = cur->stage;
}

/* Device memory over the run: the probe's devmem, NVML's gpu; mapped files. */
static void scan_device(struct analysis *a, const struct trace_sample *s)
{
	if ((s->fields & SF_DEVMEM) && (!a->device_sampled || s->devmem > a->device_peak)) {
		a->device_peak = s->devmem;
		a->device_peak_t = s->t;
		a->device_sampled = a->has_device = true;
	}
	if ((s->fields & SF_GPU) && (!a->has_gpu || s->gpu > a->gpu_peak)) {
		a->gpu_peak = s->gpu;
		a->has_gpu = true;
	}
	if ((s->fields & SF_MAPPED) && (!a->has_mapped || s->mapped > a->mapped_peak)) {
		a->mapped_peak = s->mapped;
		a->has_mapped = true;
	}
	if ((s->fields & SF_MAJFLT) && (!a->has_majflt || (uint64_t)s->majflt > a->majflt)) {
		a->majflt = (uint64_t)s->majflt;
		a->has_majflt = true;
	}
}

/* A window's device memory, mapped files, major faults (from `before` on). */
static void window_device(struct stage_window *w, const struct trace_sample *s, uint64_t before)
{
	if ((s->fields & SF_DEVMEM) && (!w->has_devmem || s->devmem > w->devmem_top)) {
		w->devmem_top = s->devmem;
		w->has_devmem = true;
	}
	if ((s->fields & SF_GPU) && (!w->has_gpu || s->gpu > w->gpu_top)) {
		w->gpu_top = s->gpu;
		w->has_gpu = true;
	}
	if ((s->fields & SF_MAPPED) && (!w->has_mapped || s->mapped > w->mapped_top)) {
		w->mapped_top = s->mapped;
		w->has_mapped = true;
	}
	if (s->fields & SF_MAJFLT) {
		if ((uint64_t)s->majflt > before)
			w->majflt += (uint64_t)s->majflt - before;
		w->has_majflt = true;
	}
}

/* One pass over the samples: overall figures and each window's peak. */
static void scan_samples(const struct trace *tr, struct analysis *a)
{
	size_t wi = 0;
	uint64_t majflt = 0; /* the count at the last sample seen */
	a->nsamples = 0;
	for (size_t i = 0; i < tr->nsamples; i++) {
		const struct trace_sample *s = &tr->samples[i];
		a->nsamples += 1 + (size_t)s->merged; /* trace_read_summary() */
		if (s->fields & SF_FOOTPRINT) {
			if (!a->has_footprint || s->footprint > a->peak_footprint) {
				a->peak_footprint = s->footprint;
				a->peak_t = s->t;
			}
			a->has_footprint = true;
		}
		if (s->fields & SF_SWAP_USED) {
			if (!a->has_swap) {
				a->swap_start = a->swap_peak = s->swap_used;
				a->has_swap = true;
			} else if (s->swap_used > a->swap_peak) {
				a->swap_peak = s->swap_used;
			}
		}
		if (s->fields & SF_LEVEL) {
			if (!a->has_level || s->level < a->lowest_level)
				a->lowest_level = s->level;
			a->has_level = true;
		}
		scan_device(a, s);
		while (wi + 1 < a->nwindows && s->t >= a->windows[wi].end_t)
			wi++;
		struct stage_window *w = &a->windows[wi];
		uint64_t before = majflt;
		if (s->fields & SF_MAJFLT)
			majflt = (uint64_t)s->majflt;
		if (!window_holds(w->start_t, w->end_t, w->last, s->t))
			continue;
		window_device(w, s, before);
		if (s->fields & SF_SWAP_USED) {
			if (!w->has_swap)
				w->swap_first = w->swap_top = s->swap_used;
			else if (s->swap_used > w->swap_top)
				w->swap_top = s->swap_used;
			w->has_swap = true;
		}
		if (!(s->fields & SF_FOOTPRINT))
			continue;
		if (!w->nsamples || s->footprint > w->peak_footprint) {
			w->peak_footprint = s->footprint;
			w->peak_t = s->t;
		}
		w->nsamples += 1 + (size_t)s->merged;
	}
	a->swap_rise = a->swap_peak - a->swap_start;
}

/* Footprint just before each releasing stage event, lowest within 2 s after. */
static void release_effects(const struct trace *tr, struct analysis *a)
{
	for (size_t i = 0; i < a->nwindows; i++) {
		struct stage_window *w = &a->windows[i];
		if (!w->nreleases)
			continue;
		for (size_t j = lower_bound(tr, w->stage_t); j-- > 0;)
			if (tr->samples[j].fields & SF_FOOTPRINT) {
				w->has_before = true;
				w->footprint_before = tr->samples[j].footprint;
				break;
			}
		for (size_t j = lower_bound(tr, w->releases_done_t);
		     j < tr->nsamples && tr->samples[j].t <= w->releases_done_t + 2.0; j++) {
			const struct trace_sample *s = &tr->samples[j];
			if (!(s->fields & SF_FOOTPRINT))
				continue;
			if (!w->has_low_after || s->footprint < w->lowest_after)
				w->lowest_after = s->footprint;
			w->has_low_after = true;
		}
	}
}

static double last_record_t(const struct trace *tr)
{
	double t = 0;
	if (tr->nsamples)
		t = tr->samples[tr->nsamples - 1].t;
	struct trace_event tmp = TRACE_EVENT_INIT;
	size_t n = trace_nevents(tr);
	const struct trace_event *last = n ? trace_event_at(tr, n - 1, &tmp) : NULL;
	if (last && last->t > t)
		t = last->t;
	return t;
}

static void stage_rows(const struct trace *tr, struct analysis *a)
{
	double last_t = last_record_t(tr);
	for (size_t i = 0; i < a->nwindows; i++) {
		const struct stage_window *w = &a->windows[i];
		struct stage_stats *s = &a->stages[w->stage];
		double end = w->last ? last_t : w->end_t;
		if (end > w->stage_t)
			s->seconds += end - w->stage_t;
		if (w->nsamples) {
			if (!s->nsamples || w->peak_footprint > s->peak_footprint)
				s->peak_footprint = w->peak_footprint;
			s->nsamples += w->nsamples;
		}
		if (w->has_devmem && (!s->has_device || w->devmem_top > s->device_peak)) {
			s->device_peak = w->devmem_top;
			s->has_device = true;
		}
		if (w->has_gpu && (!s->has_gpu || w->gpu_top > s->gpu_peak)) {
			s->gpu_peak = w->gpu_top;
			s->has_gpu = true;
		}
		if (w->has_mapped && (!s->has_mapped || w->mapped_top > s->mapped_peak)) {
			s->mapped_peak = w->mapped_top;
			s->has_mapped = true;
		}
		if (w->has_majflt) {
			s->majflt += w->majflt;
			s->has_majflt = true;
			a->any_majflt |= s->majflt > 0;
		}
		if (w->has_swap) {
			uint64_t rise = w->swap_top - w->swap_first;
			if (!s->has_swap_rise || rise > s->swap_rise)
				s->swap_rise = rise;
			s->has_swap_rise = true;
		}
		if (!w->last || a->outcome == RUN_COMPLETED)
			s->completed = true;
		else
			s->ended_here = true;
	}
}

/* Sampled max of a metric over every window of stage si ([start, end] inclusive:
 * a sample at the end boundary can only lower the warning, never raise it).
 * first/next chain each stage's windows, so a peak event costs its own windows. */
static bool stage_sampled_max(const struct trace *tr, const struct analysis *a, const size_t *first,
			      const size_t *next, size_t si, int m, uint64_t *out)
{
	bool any = false;
	for (size_t k = first[si]; k != SIZE_MAX; k = next[k]) {
		const struct stage_window *w = &a->windows[k];
		uint64_t v;
		if (sampled_max(tr, m, w->start_t, w->last ? INFINITY : w->end_t, &v) && (!any || v > *out)) {
			*out = v;
			any = true;
		}
	}
	return any;
}

static void analysis_kernel_peaks(const struct trace *tr, struct analysis *a)
{
	size_t *first = xcalloc(a->nstages + 1, sizeof(*first));
	size_t *next = xcalloc(a->nwindows + 1, sizeof(*next));
	for (size_t si = 0; si < a->nstages; si++)
		first[si] = SIZE_MAX;
	for (size_t k = a->nwindows; k-- > 0;) {
		next[k] = first[a->windows[k].stage];
		first[a->windows[k].stage] = k;
	}
	/* peak events with a metric: never plain, all in tr->events (trace.h) */
	for (size_t i = 0; i < tr->nevents; i++) {
		const struct trace_event *ev = &tr->events[i];
		if (ev->kind != EV_PEAK || !ev->stage || !ev->metric || !ev->has_bytes)
			continue;
		int m;
		for (m = 0; m < KPEAK_NMETRICS; m++)
			if (!strcmp(ev->metric, kernel_peak_metric_names[m]))
				break;
		if (m == KPEAK_NMETRICS)
			continue;
		struct stage_stats *s = (struct stage_stats *)analysis_stage(a, ev->stage);
		if (!s)
			continue;
		struct kernel_peak *kp = &s->kpeak[m];
		if (kp->present && ev->bytes <= kp->bytes)
			continue;
		kp->present = true;
		kp->bytes = ev->bytes;
		kp->t = ev->t;
		kp->has_sampled = false;
		if (ev->has_from) {
			kp->has_sampled = sampled_max(tr, m, ev->from, ev->t, &kp->sampled_bytes);
		} else {
			kp->has_sampled = stage_sampled_max(tr, a, first, next, (size_t)(s - a->stages), m,
							    &kp->sampled_bytes);
		}
		kp->missed_spike = kp->has_sampled &&
				   (double)kp->bytes > (double)kp->sampled_bytes * 1.1;
	}
	free(first);
	free(next);
}

static void loads(const struct trace *tr, struct analysis *a)
{
	const char *in_force = "setup";
	struct trace_event tmp = TRACE_EVENT_INIT;
	for (size_t i = 0, n = trace_nevents(tr); i < n; i++) {
		const struct trace_event *ev = trace_event_at(tr, i, &tmp);
		if (ev->kind == EV_STAGE) {
			in_force = stage_name_of(ev);
			continue;
		}
		if (ev->kind == EV_RELEASE && ev->name) {
			ALLOC_GROW(a->released, a->nreleased + 1, a->released_alloc);
			a->released[a->nreleased++] = (struct release_info){
				.name = xstrdup(ev->name), .stage_in_force = xstrdup(in_force),
				.t = ev->t, .seq = i, .nbytes = ev->has_nbytes ? ev->nbytes : 0 };
			continue;
		}
		if (ev->kind != EV_LOAD && ev->kind != EV_RELOAD)
			continue;
		ALLOC_GROW(a->loads, a->nloads + 1, a->loads_alloc);
		struct load_info *l = &a->loads[a->nloads++];
		memset(l, 0, sizeof(*l));
		l->name = xstrdup(ev->name);
		l->stage = xstrdup(ev->stage);
		l->stage_in_force = xstrdup(in_force);
		l->t = ev->t;
		l->seq = i;
		l->reload = ev->kind == EV_RELOAD;
		l->nbytes = ev->has_nbytes ? ev->nbytes : 0;
		l->seconds = ev->has_seconds ? ev->seconds : 0;
		l->outside = ev->stage && strcmp(ev->stage, in_force);
		a->nreloads += l->reload;
		a->loads_outside += l->outside;
		a->load_bytes += l->nbytes;
		a->load_seconds += l->seconds;
	}
}

static void outcome(const struct trace *tr, const struct run_entry *e, struct analysis *a)
{
	a->outcome = RUN_COMPLETED;
	/* A stagebench trace's own end record is authoritative; runs.json decides
	 * for stageload traces, where exit 3 means the guard stopped the run even
	 * when the trace ends with `end` (a pipeline's own exit 3 under stagebench
	 * is just an exit code). */
	if (e && !(a->stagebench && tr->has_end)) {
		if (e->stopped_by == STOPPED_GUARD ||
		    (e->has_exit && e->exit == 3 && !a->stagebench)) {
			a->outcome = RUN_GUARD;
		} else if (e->stopped_by == STOPPED_SIGNAL || e->signal > 0) {
			a->outcome = RUN_SIGNAL;
			a->signal = e->signal;
		} else if (e->has_exit && e->exit > 128 && e->exit < 160 && !a->stagebench) {
			a->outcome = RUN_SIGNAL;
			a->signal = e->exit - 128;
		} else if (e->has_exit && e->exit != 0) {
			a->outcome = RUN_EXIT;
			a->exit_code = e->exit;
		} else if (!tr->has_end && e->stopped_by == STOPPED_RUNNING) {
			a->outcome = RUN_RECORDING;
		} else if (!tr->has_end) {
			a->outcome = a->stagebench ? RUN_RECORDER_DIED : RUN_GUARD;
		}
		if (tr->has_end)
			a->reason = xstrdup(tr->end.reason);
		else if (e->why)
			a->reason = xstrdup(e->why);
		return;
	}
	if (!tr->has_end) {
		a->outcome = a->stagebench ? RUN_RECORDER_DIED : RUN_GUARD;
		return;
	}
	const struct trace_end *end = &tr->end;
	a->reason = xstrdup(end->reason);
	if (end->stopped_by == STOPPED_GUARD) {
		a->outcome = RUN_GUARD;
	} else if (end->stopped_by == STOPPED_SIGNAL || end->signal > 0) {
		a->outcome = RUN_SIGNAL;
		a->signal = end->signal;
	} else if (end->has_exit && end->exit_code != 0) {
		a->outcome = RUN_EXIT;
		a->exit_code = end->exit_code;
	}
}

/* A run that ended as it should after being asked to stop at a stage:
 * stageload's start.stop_at, or a mark event "stopped at NAME" (the
 * published eager runs' note). */
static void stopped_as_asked(const struct trace *tr, struct analysis *a)
{
	static const char prefix[] = "stopped at ";
	if (a->outcome != RUN_COMPLETED)
		return;
	if (tr->start.stop_at && *tr->start.stop_at) {
		a->stopped_as_asked = xstrdup(tr->start.stop_at);
		return;
	}
	/* marks with a note: never plain, all in tr->events (trace.h) */
	for (size_t i = 0; i < tr->nevents; i++) {
		const struct trace_event *ev = &tr->events[i];
		if (ev->kind == EV_MARK && ev->note &&
		    !strncasecmp(ev->note, prefix, sizeof(prefix) - 1) &&
		    ev->note[sizeof(prefix) - 1]) {
			free(a->stopped_as_asked);
			a->stopped_as_asked = xstrdup(ev->note + sizeof(prefix) - 1);
		}
	}
}

/* Which reader read the run: its first reader mark, else its backend's. */
static void run_reader(const struct trace *tr, struct analysis *a)
{
	enum sb_reader marked = SB_READER_UNKNOWN;
	for (size_t i = 0; i < tr->nevents && marked == SB_READER_UNKNOWN; i++)
		if (tr->events[i].kind == EV_MARK)
			marked = reader_of_mark(tr->events[i].note);
	a->reader = reader_of_run(marked, tr->start.meter_backend);
}

/* The probe's notes on what it could not stage (analysis.h: staging_notes). */
static void staging_notes(const struct trace *tr, struct analysis *a)
{
	static const char *const prefixes[] = { "not staged: ", "plan does not match: " };
	for (size_t i = 0; i < tr->nevents; i++) {
		const struct trace_event *ev = &tr->events[i];
		bool ours = false;
		for (size_t p = 0; ev->kind == EV_MARK && ev->note && p < 2; p++)
			ours |= !strncmp(ev->note, prefixes[p], strlen(prefixes[p]));
		for (size_t k = 0; ours && k < a->nstaging_notes; k++)
			ours = strcmp(a->staging_notes[k], ev->note) != 0;
		if (!ours)
			continue;
		a->staging_notes = xrealloc(a->staging_notes,
					    (a->nstaging_notes + 1) * sizeof(*a->staging_notes));
		a->staging_notes[a->nstaging_notes++] = xstrdup(ev->note);
	}
}

int analysis_run(const struct trace *tr, const struct run_entry *entry, struct analysis *a)
{
	if (!tr->has_start)
		return error("%s: no start record: not a trace", tr->path ? tr->path : "(trace)");
	a->path = xstrdup(tr->path);
	a->mode = xstrdup(tr->start.mode);
	a->host = xstrdup(tr->start.host_name);
	a->commit = xstrdup(tr->start.commit);
	a->dirty = tr->start.has_dirty && tr->start.dirty;
	a->utc = xstrdup(tr->start.utc);
	a->stagebench = tr->start.format != NULL;
	a->damaged = tr->damaged;
	a->cut = tr->cut;
	if (tr->nversions)
		a->versions = xcalloc(tr->nversions, sizeof(*a->versions));
	for (size_t i = 0; i < tr->nversions; i++) {
		a->versions[i].name = xstrdup(tr->versions[i].key);
		a->versions[i].value = xstrdup(tr->versions[i].value);
	}
	a->nversions = tr->nversions;
	outcome(tr, entry, a);
	stopped_as_asked(tr, a);
	staging_notes(tr, a);
	run_reader(tr, a);
	build_windows(tr, a);
	scan_samples(tr, a);
	release_effects(tr, a);
	stage_rows(tr, a);
	analysis_kernel_peaks(tr, a);
	analysis_device_peaks(tr, a);
	a->interval = tr->start.interval;
	loads(tr, a);
	a->wall_s = tr->has_end && tr->end.has_wall ? tr->end.wall : last_record_t(tr);
	return 0;
}

int analysis_open(const char *path, struct analysis *out)
{
	struct trace tr = TRACE_INIT;
	struct run_list runs = RUN_LIST_INIT;
	char *dcopy = xstrdup(path), *bcopy = xstrdup(path);
	char *runs_path = xasprintf("%s/runs.json", dirname(dcopy));
	int rc = -1;

	if (trace_read_summary(path, &tr) < 0)
		goto out;
	if (runs_read(runs_path, &runs) < 0)
		goto out;
	rc = analysis_run(&tr, runs_find(&runs, basename(bcopy)), out);
out:
	free(runs_path);
	free(dcopy);
	free(bcopy);
	runs_release(&runs);
	trace_release(&tr);
	return rc;
}

void analysis_release(struct analysis *a)
{
	if (!a)
		return;
	free(a->path);
	free(a->mode);
	free(a->host);
	free(a->commit);
	free(a->utc);
	free(a->reason);
	free(a->stopped_as_asked);
	for (size_t i = 0; i < a->nstaging_notes; i++)
		free(a->staging_notes[i]);
	free(a->staging_notes);
	for (size_t i = 0; i < a->nversions; i++) {
		free(a->versions[i].name);
		free(a->versions[i].value);
	}
	free(a->versions);
	for (size_t i = 0; i < a->nstages; i++)
		free(a->stages[i].name);
	free(a->stages);
	free(a->windows);
	for (size_t i = 0; i < a->nloads; i++) {
		free(a->loads[i].name);
		free(a->loads[i].stage);
		free(a->loads[i].stage_in_force);
	}
	free(a->loads);
	for (size_t i = 0; i < a->nreleased; i++) {
		free(a->released[i].name);
		free(a->released[i].stage_in_force);
	}
	free(a->released);
	strindex_release(&a->stage_ix);
	memset(a, 0, sizeof(*a));
}

const struct stage_stats *analysis_stage(const struct analysis *a, const char *name)
{
	size_t i = strindex_find(&a->stage_ix, stage_key, a, name);
	return i == STRINDEX_NONE ? NULL : &a->stages[i];
}

const char *analysis_outcome_str(const struct analysis *a, char *buf, size_t len)
{
	switch (a->outcome) {
	case RUN_COMPLETED:
		if (a->stopped_as_asked)
			snprintf(buf, len, "stopped at %s as asked", a->stopped_as_asked);
		else
			snprintf(buf, len, "completed");
		break;
	case RUN_GUARD:
		snprintf(buf, len, "stopped by the guard");
		break;
	case RUN_SIGNAL:
		snprintf(buf, len, "killed by signal %d", a->signal);
		break;
	case RUN_EXIT:
		snprintf(buf, len, "exit code %d", a->exit_code);
		break;
	case RUN_RECORDER_DIED:
		snprintf(buf, len, "recorder died (no end record)");
		break;
	case RUN_RECORDING:
		snprintf(buf, len, "still recording (no end record yet)");
		break;
	}
	return buf;
}

bool stage_missed_spike(const struct stage_stats *s)
{
	for (int m = 0; m < KPEAK_NMETRICS; m++)
		if (s->kpeak[m].present && s->kpeak[m].missed_spike)
			return true;
	return false;
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
				"the sampler missed a spike (record with a shorter --interval)%s",
				a->path, a->stages[i].name, kernel_peak_metric_names[m], b1, b2,
				a->reader == SB_READER_PER_PROCESS
					? ", or the per-process reader's sum of high-water marks "
					  "counted pages that processes shared more than once"
					: "");
		}
}
