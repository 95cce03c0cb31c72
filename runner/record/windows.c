/* windows.c -- stage windows and their peaks: one `peak` event per stage window */

#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../../meter/meter.h"
#include "../../traces/window.h"
#include "record_int.h"

/* ---- per-stage peaks ------------------------------------------------------ */

/* Every stage window ends in one `peak` event: the kernel high-water mark
 * (reset at the window's start) when the meter has one and the reset is on,
 * else the largest sampled footprint of the window; "bytes": null with a
 * "why" when nothing was measured. */
#define SAMPLED_PEAK_METRIC "sampled_footprint"

static void stage_window_poll_peak(struct run *r)
{
	uint64_t b;
	if (!r->sw.open || !run_kernel_peaks(r))
		return;
	/* 0 means only zombies answered (they lose their Vm fields): no reading */
	if (!meter_peak_read(r->m, &b) && b) {
		if (!r->sw.has_peak || b > r->sw.peak)
			r->sw.peak = b;
		r->sw.has_peak = true;
	}
}

static const char *stage_window_why(const struct run *r)
{
	if (r->sw.late)
		return "the command had exited before its stage event was read: no process "
		       "was left to measure";
	if (run_kernel_peaks(r))
		return "no process of the command could be read in this window (each had "
		       "exited, or was exiting, when it was looked at)";
	return "no sample fell in this window";
}

void stage_window_close(struct run *r, double t)
{
	if (!r->sw.open)
		return;
	/* A process that exited before this stage event was merged (a command
	 * that ends right after its last stage line) is a zombie without VmHWM:
	 * reap it first so that its ru_maxrss counts here (on_reaped()), and
	 * again after the reading for one that died during it. */
	if (r->sp.pid > 0)
		spawn_reap(&r->sp);
	unsigned raised = r->sw.exit_peaks;
	stage_window_poll_peak(r);
	if (r->sp.pid > 0) {
		spawn_reap(&r->sp);
		if (r->sw.exit_peaks != raised)
			stage_window_poll_peak(r);
	}
	struct trace_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.t = t < r->sw.from ? r->sw.from : t;
	ev.kind = EV_PEAK;
	ev.kind_name = (char *)"peak";
	ev.ndim = -1;
	ev.stage = (char *)window_stage(&r->win);
	ev.metric = (char *)(run_kernel_peaks(r) ? r->mi->peak_metric : SAMPLED_PEAK_METRIC);
	ev.has_bytes = r->sw.has_peak;
	ev.bytes = r->sw.peak;
	ev.has_from = true;
	ev.from = r->sw.from;
	if (!r->sw.has_peak) {
		trace_fields_null(&ev.fields, "bytes");
		trace_fields_string(&ev.fields, "why", stage_window_why(r));
	}
	write_event(r, &ev);
	trace_fields_release(&ev.fields);
	r->sw.open = false;
}

/* A window from t; reset: the tree's high-water marks start again there (not
 * for setup's window: a process's mark starts with its exec, and a reset
 * right after the spawn could come after a fast command's first peak). */
void stage_window_open_at(struct run *r, double t, bool reset)
{
	r->sw.open = true;
	r->sw.from = t;
	r->sw.has_peak = false;
	r->sw.peak = 0;
	r->sw.late = r->sp.reaped;
	if (!run_kernel_peaks(r))
		return;
	if (reset && meter_peak_reset(r->m))
		return; /* the tree may be between processes: the next read tells */
	stage_window_poll_peak(r);
}

/* A sample right after an event that starts a window (a stage event, or a
 * release that moves its start), so that a stage shorter than the interval
 * still has one: t is at least the event's, and the analyzer's windows
 * include a sample at their start (t >= start). While the command runs. */
void stage_window_sample(struct run *r, double ev_t)
{
	if (r->sp.pid > 0 && !r->sp.reaped)
		engine_take_sample(r, mono_ns(), ev_t);
}
