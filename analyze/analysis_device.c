/* analysis_device.c -- one run's device memory per stage from the probe's gpu events, and
 * what the device figures count (see analysis.h) */
#include "analysis.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../traces/trace.h"

#define DEVICES_MAX 16

/* One stage's `gpu` events: per device the largest of bytes and max_bytes,
 * summed over the devices; *exact when a max_bytes (a peak counter) was seen. */
static bool stage_device_events(const struct trace *tr, const char *stage, uint64_t *sum,
				bool *exact)
{
	const char *dev[DEVICES_MAX];
	uint64_t top[DEVICES_MAX];
	size_t nd = 0;
	/* gpu events with bytes: never plain, all in tr->events (trace.h) */
	for (size_t i = 0; i < tr->nevents; i++) {
		const struct trace_event *ev = &tr->events[i];
		if (ev->kind != EV_GPU || !ev->stage || !ev->has_bytes || strcmp(ev->stage, stage))
			continue;
		const char *d = ev->device ? ev->device : "";
		uint64_t b = ev->has_max_bytes && ev->max_bytes > ev->bytes ? ev->max_bytes : ev->bytes;
		*exact |= ev->has_max_bytes;
		size_t k = 0;
		while (k < nd && strcmp(dev[k], d))
			k++;
		if (k == nd && nd == DEVICES_MAX)
			continue;
		if (k == nd) {
			dev[nd] = d;
			top[nd++] = b;
		} else if (b > top[k]) {
			top[k] = b;
		}
	}
	*sum = 0;
	for (size_t k = 0; k < nd; k++)
		*sum += top[k];
	return nd > 0;
}

/* The probe's device memory per stage: its devmem samples (stage_rows) and
 * its boundaries' gpu events; what the figures count (the first gpu event's
 * metric). */
void analysis_device_peaks(const struct trace *tr, struct analysis *a)
{
	a->device_metric = "device";
	/* gpu events with a metric: never plain, all in tr->events (trace.h) */
	for (size_t i = 0; i < tr->nevents; i++) {
		const struct trace_event *ev = &tr->events[i];
		if (ev->kind == EV_GPU && ev->metric &&
		    (!strcmp(ev->metric, "mps_driver") || !strcmp(ev->metric, "cuda_reserved"))) {
			a->device_metric = !strcmp(ev->metric, "mps_driver") ? "mps_driver" : "cuda_reserved";
			break;
		}
	}
	bool any = false; /* else each stage's search below is for nothing: stages x events */
	for (size_t i = 0; i < tr->nevents && !any; i++)
		any = tr->events[i].kind == EV_GPU && tr->events[i].stage && tr->events[i].has_bytes;
	for (size_t si = 0; any && si < a->nstages; si++) {
		struct stage_stats *s = &a->stages[si];
		uint64_t b;
		if (!stage_device_events(tr, s->name, &b, &s->device_exact))
			continue;
		if (!s->has_device || b > s->device_peak)
			s->device_peak = b;
		s->has_device = a->has_device = true;
		if (b > a->device_peak || (!a->device_sampled && !a->device_peak)) {
			a->device_peak = b;
			a->device_peak_t = NAN;
		}
	}
}

const char *analysis_device_label(const struct analysis *a)
{
	if (a->device_metric && !strcmp(a->device_metric, "mps_driver"))
		return "MPS driver";
	if (a->device_metric && !strcmp(a->device_metric, "cuda_reserved"))
		return "CUDA reserved";
	return "device";
}

