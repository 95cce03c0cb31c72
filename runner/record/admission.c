/* admission.c -- the guard during a recording: admission before the start, checks while it runs */

#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/units.h"
#include "../../common/util.h"
#include "../../meter/meter.h"
#include "../guard.h"
#include "record_int.h"

void guard_event(struct run *r, const char *action, const char *reason,
			const struct guard_readings *rd)
{
	if (!r->w)
		return;
	struct trace_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.t = t_of(r, mono_ns());
	ev.kind = EV_GUARD;
	ev.kind_name = (char *)"guard";
	ev.ndim = -1;
	ev.action = (char *)action;
	ev.reason = (char *)reason;
	if (rd)
		guard_readings_fields(rd, &r->gs, &ev.fields);
	write_event(r, &ev);
	trace_fields_release(&ev.fields);
}

/* ---- guard readings ------------------------------------------------------- */

static int read_system(struct run *r, struct guard_readings *rd)
{
	struct meter_system sys;
	memset(rd, 0, sizeof(*rd));
	rd->since_busy_ns = -1;
	if (meter_system(r->m, &sys))
		return -1;
	rd->avail_pct = sys.avail_pct;
	rd->has_swap = sys.has_swap;
	rd->swap_used = sys.swap_used;
	return 0;
}

void admission_poll(struct run *r, int64_t now)
{
	struct guard_readings rd;
	if (read_system(r, &rd))
		return;
	if (r->g->has_max_footprint) {
		struct trace_sample s;
		memset(&s, 0, sizeof(s));
		if (!meter_sample(r->m, &s) && (s.fields & SF_FOOTPRINT)) {
			rd.has_footprint = true;
			rd.footprint = s.footprint;
			if (s.footprint > r->res->peak_footprint)
				r->res->peak_footprint = s.footprint;
		}
	}
	rd.has_devmem = r->devmem_known;
	rd.devmem = r->devmem;
	rd.devmem_total = r->devmem_total;
	struct strbuf reason = STRBUF_INIT;
	if (guard_check(r->g, &r->gs, &rd, &reason)) {
		status_clear(r);
		note("guard: stopping: %s", reason.buf);
		guard_event(r, "stop", reason.buf, &rd);
		begin_stop(r, STOPPED_GUARD, reason.buf, now);
	} else if (sb_verbosity >= 2) {
		status_clear(r);
		note("guard: ok: available %.0f%%", rd.avail_pct);
	}
	strbuf_release(&reason);
	r->last = rd;
	r->have_last = true;
}

/* A signal waiting in the pipe before the start (one that came between the
 * runs of a compare, too): the run ends before its command starts. Returns
 * the negated signal number, or 0 when none came. */
static int interrupted_before_start(struct run *r, int sigfd, int ms,
				    const struct guard_readings *rd)
{
	struct pollfd pfd = { sigfd, POLLIN, 0 };
	if (poll(&pfd, 1, ms < 0 ? 0 : ms) <= 0)
		return 0;
	int sig = drain_signals(sigfd, NULL);
	if (!sig)
		return 0;
	char *reason = xasprintf("received %s before the start", strsignal(sig));
	note("%s: interrupted while waiting (%s)", r->o->name, strsignal(sig));
	guard_event(r, "interrupted", reason, rd);
	r->got_signal = sig;
	r->res->stopped_by = STOPPED_SIGNAL;
	r->res->reason = reason;
	r->res->exit_code = 128 + sig;
	return -sig;
}

/* Wait for admission. Returns 1 admitted, 0 timed out (exit 4 set), or the
 * negated signal number when interrupted. */
int admission(struct run *r, int sigfd)
{
	int64_t begin = mono_ns(), last_log = INT64_MIN, last_busy = INT64_MIN;
	struct strbuf why = STRBUF_INIT;
	int sig = interrupted_before_start(r, sigfd, 0, NULL);
	while (!sig) {
		int64_t now = mono_ns();
		struct guard_readings rd;
		if (read_system(r, &rd)) {
			strbuf_release(&why);
			return error("cannot read the system's memory figures");
		}
		if (guard_busy_scan(r->g, rd.busy_what, sizeof(rd.busy_what))) {
			rd.busy = true;
			last_busy = now;
		}
		rd.since_busy_ns = last_busy == INT64_MIN ? -1 : now - last_busy;
		strbuf_reset(&why);
		if (guard_admit(r->g, &rd, &why)) {
			if (sb_verbosity >= 2 || last_log != INT64_MIN)
				note("%s: starting: %s", r->o->name, why.buf);
			guard_event(r, "admit", why.buf, &rd);
			guard_state_start(&r->gs, &rd);
			strbuf_release(&why);
			return 1;
		}
		if (now - begin >= r->g->start_timeout_ns) {
			char d[32];
			format_duration(now - begin, d);
			error("%s: no room to start '%s' after %s: %s", r->o->name, r->argv[0], d, why.buf);
			guard_event(r, "timeout", why.buf, &rd);
			r->res->stopped_by = STOPPED_GUARD;
			r->res->reason = xasprintf("no room to start: %s", why.buf);
			r->res->exit_code = GUARD_EXIT_NO_ROOM;
			strbuf_release(&why);
			return 0;
		}
		if (last_log == INT64_MIN || now - last_log >= WAIT_LOG_INTERVAL_NS || sb_verbosity >= 2) {
			note("%s: waiting: %s", r->o->name, why.buf);
			guard_event(r, "wait", why.buf, &rd);
			last_log = now;
		}
		int64_t wait = r->g->poll_ns;
		if (begin + r->g->start_timeout_ns - now < wait)
			wait = begin + r->g->start_timeout_ns - now;
		sig = interrupted_before_start(r, sigfd, (int)((wait + NS_PER_MS - 1) / NS_PER_MS), &rd);
	}
	strbuf_release(&why);
	return sig;
}
