/* engine.c -- what the record engine's files share below them: a trace write that failed,
 * an event written, a stop begun, a sample taken (and counted for its stage window); record.c
 * and the job files (windows.c, probe_pipe.c, admission.c, handlers.c) call these, and these
 * call none of them (record_int.h) */
#include <string.h>

#include "../../common/util.h"
#include "../../meter/meter.h"
#include "../../traces/trace.h"
#include "../loop.h"
#include "record_int.h"
#include "../spawn.h"

/* A write of the trace failed (the writer said why: disk full, I/O error):
 * say at once what happens now, once. */
void trace_failed(struct run *r)
{
	if (r->write_failed)
		return;
	r->write_failed = -1;
	error("%s: the trace '%s' is incomplete from here on; '%s' goes on%s, and the run "
	      "ends as failed (exit %d)", r->o->name, r->o->trace_path, r->argv[0],
	      r->o->guarded ? " under the guard" : "", SB_EXIT_FAILURE);
}

void write_event(struct run *r, const struct trace_event *ev)
{
	if (r->w && trace_writer_event(r->w, ev))
		trace_failed(r);
}

void begin_stop(struct run *r, enum stopped_by by, const char *reason, int64_t now)
{
	if (r->stopping) {
		/* asked again: do not wait for the grace period */
		spawn_stop_kill(&r->sp, &r->stop, now);
		return;
	}
	r->stopping = true;
	r->res->stopped_by = by;
	r->res->reason = xstrdup(reason);
	size_t n = 0;
	const pid_t *pids = meter_pids(r->m, &n);
	spawn_track(&r->sp, pids, n);
	spawn_scan_tree(&r->sp);
	spawn_stop_begin(&r->sp, &r->stop, r->g->grace_ns, now);
	/* no more guard checks; the tree is watched until it is gone */
	loop_timer_set(&r->loop, r->t_guard, LOOP_NEVER);
	loop_del_fd(&r->loop, r->psi_fd);
	loop_timer_set(&r->loop, r->t_stop, now);
}

/* A sample's footprint counts for the window it falls in (t >= its start). */
void engine_window_sampled(struct run *r, const struct trace_sample *s)
{
	if (!r->sw.open || run_kernel_peaks(r) || !(s->fields & SF_FOOTPRINT) ||
	    s->t < r->sw.from)
		return;
	if (!r->sw.has_peak || s->footprint > r->sw.peak)
		r->sw.peak = s->footprint;
	r->sw.has_peak = true;
}

/* A sample at now, its t no earlier than t_min (-INFINITY: no floor). */
void engine_take_sample(struct run *r, int64_t now, double t_min)
{
	struct trace_sample s;
	memset(&s, 0, sizeof(s));
	if (meter_sample(r->m, &s))
		return;
	s.t = t_of(r, now);
	if (s.t < t_min)
		s.t = t_min;
	if (r->gpu_known) {
		s.gpu = r->gpu_bytes;
		s.fields |= SF_GPU;
	}
	size_t n = 0;
	const pid_t *pids = meter_pids(r->m, &n);
	spawn_track(&r->sp, pids, n);
	if (r->w && trace_writer_sample(r->w, &s))
		trace_failed(r);
	if ((s.fields & SF_FOOTPRINT) && s.footprint > r->res->peak_footprint)
		r->res->peak_footprint = s.footprint;
	r->res->nsamples++;
	engine_window_sampled(r, &s);
	if (!r->have_swap0 && (s.fields & SF_SWAP_USED)) {
		r->swap0 = s.swap_used;
		r->have_swap0 = true;
	}
	r->last_sample = s;
	r->have_sample = true;
	r->last_sample_ns = now;
	/* No peak read here: the sample refreshed the meter's per-process
	 * peaks, which the read at the window's end sums. A process that exits
	 * after its last reading keeps its peak through on_reaped(). */
}
