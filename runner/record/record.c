/* record.c -- the record engine (record, guard, compare): one run's life, from the meter and
 * the trace to the end record; its parts are in signals.c, status.c, windows.c, probe_pipe.c,
 * admission.c, handlers.c and start.c, what they share in engine.c (record_int.h) */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../../common/units.h"
#include "../../common/util.h"
#include "../../meter/meter.h"
#include "../../platform/platform.h"
#include "../../traces/trace.h"
#include "../conditions.h"
#include "../guard.h"
#include "../loop.h"
#include "record.h"
#include "record_int.h"
#include "../spawn.h"

static double rusage_children_s(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_CHILDREN, &ru))
		return 0;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* The meter, the trace and its start record, the signal handlers. */
/* Memory primed (runner/conditions.h) just before the run's origin, so that
 * it is no part of the run's time, at most half of what is available. */
static void prime(struct run *r)
{
	struct meter_system sys;
	r->primed = r->o->prime_bytes;
	if (!meter_system(r->m, &sys) && r->primed > sys.avail_bytes / 2)
		r->primed = sys.avail_bytes / 2;
	r->primed_s = memory_prime(r->primed);
}

/* A mark event saying text (and a note at -vv). */
static void write_mark(struct run *r, const char *text)
{
	struct trace_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.kind = EV_MARK;
	ev.note = (char *)text; /* written, not kept */
	ev.ndim = -1;
	write_event(r, &ev);
	if (sb_verbosity >= 2)
		note("%s: %s", r->o->name, text);
}

/* A mark event at t = 0 says what prime() did. */
static void prime_mark(struct run *r)
{
	char size[UNITS_BUF], took[UNITS_BUF];
	units_size((double)r->primed, UNITS_COARSE, false, size);
	units_seconds(r->primed_s, UNITS_COARSE, false, took);
	char *text = xasprintf("memory primed: %s written and freed in %s before the run started",
			       size, took);
	write_mark(r, text);
	free(text);
}

static int run_open(struct run *r)
{
	const struct record_opts *o = r->o;
	const char *spec = o->meter_spec ? o->meter_spec : getenv("STAGEBENCH_METER");
	r->m = meter_new(spec && *spec ? spec : NULL);
	if (!r->m)
		return -1;
	r->mi = meter_info(r->m);
	if (o->trace_path) {
		r->w = trace_writer_open(o->trace_path);
		if (!r->w)
			return -1;
	}
	r->primed_s = -1;
	if (o->prime_bytes)
		prime(r);
	r->t0_ns = mono_ns();
	fill_start(r, &r->st, &r->host);
	if (r->w && trace_writer_start(r->w, &r->st))
		return -1;
	if (r->primed_s >= 0)
		prime_mark(r);
	if (o->signals) {
		r->sigfd = o->signals->pipe[0];
	} else {
		if (record_signals_install(&r->ss))
			return -1;
		r->sigfd = r->ss.pipe[0];
	}
	spawn_set_subreaper();
	return 0;
}

/* Spawn the command with the probe pipe and run the loop. Returns 0 when it
 * ran (or could not start: exit 127 set), -1 after error(). */
static int run_command(struct run *r)
{
	struct record_result *res = r->res;
	if (pipe(r->probe))
		return error("cannot create a pipe: %s", strerror(errno));
	fcntl(r->probe[0], F_SETFD, FD_CLOEXEC);
	fcntl(r->probe[0], F_SETFL, O_NONBLOCK);
	fcntl(r->probe[1], F_SETFD, FD_CLOEXEC);
	if (err_pipe_open(r))
		return -1;
	start_build_env(r);
	r->sp.argv = r->argv;
	r->sp.env_set = r->env;
	r->sp.probe_fd = r->probe[1];
	r->sp.cwd = r->o->cwd;
	r->sp.stdout_fd = r->o->stdout_fd;
	r->sp.on_reap = on_reaped;
	r->sp.on_reap_arg = r;
	r->sp.cgroup_fd = meter_enclose(r->m);

	double cpu0 = rusage_children_s();
	r->spawn_ns = mono_ns();
	int started = spawn_start(&r->sp);
	close(r->probe[1]);
	r->probe[1] = -1;
	if (r->err.pipe[1] >= 0) {
		close(r->err.pipe[1]);
		r->err.pipe[1] = -1;
		r->err.fd = r->err.pipe[0];
		r->err.pipe[0] = -1;
	}
	if (started) {
		res->exit_code = GUARD_EXIT_CANNOT_RUN;
		res->reason = xasprintf("cannot run '%s': %s", r->argv[0], strerror(r->sp.start_errno));
		return 0;
	}
	res->started = true;
	r->pin.fd = r->probe[0];
	r->probe[0] = -1;
	meter_track(r->m, r->sp.pid);
	if (r->mi->reader != SB_READER_UNKNOWN) {
		/* "meter: TOKEN: WORDS" (common/reader.h, traces/FORMAT.md) */
		char *text = xasprintf(READER_MARK_PREFIX "%s: %s", reader_info(r->mi->reader)->name,
				       r->mi->reader_words ? r->mi->reader_words : "");
		write_mark(r, text);
		free(text);
	}
	/* setup's window: from the command's start to its first stage event
	 * (or its end), so that it gets a peak event like every stage */
	stage_window_open_at(r, t_of(r, r->spawn_ns), false);

	run_loop(r);

	if (r->pin.fd >= 0) {
		/* whatever the command wrote before it ended; orphans may hold the pipe */
		probe_read(r, PROBE_READ_LAST);
	}
	if (r->err.fd >= 0)
		err_relay(r, PROBE_READ_LAST); /* what is there: orphans may hold it */
	stage_window_close(r, t_of(r, r->exit_ns)); /* one a late stage event opened */
	res->wall_s = (double)(r->exit_ns - r->spawn_ns) / 1e9;
	res->cpu_s = rusage_children_s() - cpu0;
	if (res->cpu_s < 0)
		res->cpu_s = 0;
	res->signal = r->sp.reaped ? spawn_exit_signal(r->sp.status) : 0;
	if (res->stopped_by == STOPPED_GUARD)
		res->exit_code = GUARD_EXIT_STOPPED;
	else if (res->stopped_by == STOPPED_SIGNAL)
		res->exit_code = 128 + r->got_signal;
	else
		res->exit_code = spawn_exit_code(r->sp.status);
	if (!r->stopping) {
		spawn_scan_tree(&r->sp);
		spawn_reap(&r->sp);
		if (r->sp.ntree && sb_verbosity >= 2)
			note("%s: '%s' left %zu process(es) running", r->o->name, r->argv[0],
			     r->sp.ntree);
	}
	return 0;
}

/* The end record and the one-line summary. */
static void run_finish(struct run *r)
{
	const struct record_result *res = r->res;
	status_clear(r);
	if (r->w) {
		struct trace_end end;
		memset(&end, 0, sizeof(end));
		end.has_exit = true;
		end.exit_code = res->exit_code;
		end.signal = res->signal;
		end.stopped_by = res->stopped_by;
		end.reason = res->reason;
		end.has_wall = res->started;
		end.wall = res->wall_s;
		end.has_cpu = res->started;
		end.cpu = res->cpu_s;
		if (trace_writer_end(r->w, &end))
			trace_failed(r);
	}
	if (res->started && r->g && r->g->has_max_device && !r->devs.n)
		/* not a silent pass: nothing was there to judge */
		warning("%s: --max-device: the command's probe sent no device reading (no devmem "
			"line: no probe, or no device in use); device memory was not checked",
			r->o->name);
	if (r->devmem_stray > 1)
		warning("%s: dropped %zu device-memory readings timed outside the run in all",
			r->o->name, r->devmem_stray);
	if (!r->o->summary || sb_verbosity < 1 || !res->started)
		return;
	char fp[32], wall[32];
	format_gb(res->peak_footprint, fp);
	format_duration((int64_t)(res->wall_s * 1e9), wall);
	if (r->pin.skipped > 1)
		warning("%s: skipped %u lines longer than %d bytes from the probe pipe in all",
			r->o->name, r->pin.skipped, PROBE_LINE_MAX);
	if (r->o->trace_path)
		note("%s: %s%s: peak footprint %s, wall %s, exit %d", r->o->name, r->o->trace_path,
		     r->write_failed ? " (incomplete: a write failed)" : "", fp, wall,
		     res->exit_code);
	else
		note("%s: peak footprint %s, wall %s, exit %d", r->o->name, fp, wall, res->exit_code);
}

/* Closes and frees everything; ret, or -1 when the trace could not be written. */
static int run_close(struct run *r, int ret)
{
	status_clear(r);
	if (r->w && trace_writer_close(r->w))
		ret = -1;
	else if (r->write_failed && r->w)
		ret = error("cannot write the trace '%s'", r->o->trace_path);
	record_signals_restore(&r->ss);
	if (r->psi_fd >= 0)
		close(r->psi_fd);
	for (int i = 0; i < 2; i++)
		if (r->probe[i] >= 0)
			close(r->probe[i]);
	if (r->pin.fd >= 0)
		close(r->pin.fd);
	for (int i = 0; i < 2; i++)
		if (r->err.pipe[i] >= 0)
			close(r->err.pipe[i]);
	if (r->err.fd >= 0)
		close(r->err.fd);
	if (r->env) {
		for (size_t i = r->env_own; r->env[i]; i++)
			free((char *)r->env[i]);
		free(r->env);
	}
	free(r->trace_abs);
	free(r->st.utc);
	free(r->st.commit);
	trace_fields_release(&r->st.fields);
	window_state_release(&r->win);
	strbuf_release(&r->pin.buf);
	spawn_release(&r->sp);
	meter_free(r->m);
	return ret;
}

int record_run(const struct record_opts *o, char **argv, struct record_result *res)
{
	static const struct guard_opts default_guard = GUARD_OPTS_INIT;
	struct run r;

	memset(&r, 0, sizeof(r));
	r.win = (struct window_state)WINDOW_STATE_INIT;
	r.ss.pipe[0] = r.ss.pipe[1] = r.sigfd = -1;
	r.probe[0] = r.probe[1] = r.psi_fd = r.pin.fd = -1;
	r.err.pipe[0] = r.err.pipe[1] = r.err.fd = -1;
	*res = (struct record_result)RECORD_RESULT_INIT;
	r.o = o;
	r.g = o->guard ? o->guard : &default_guard;
	r.res = res;
	r.argv = argv;
	r.sp = (struct spawn)SPAWN_INIT;
	strbuf_init(&r.pin.buf);
	if (o->interval_ns < NS_PER_MS)
		BUG("record interval under 1 ms");

	if (run_open(&r))
		return run_close(&r, -1);
	int admitted = 1;
	if (o->guarded) {
		admitted = admission(&r, r.sigfd);
		if (admitted < 0 && res->exit_code == 0)
			return run_close(&r, -1); /* could not read the system */
		if (admitted > 0)
			r.psi_fd = pl_memory_pressure_open();
	}
	if (admitted > 0 && run_command(&r))
		return run_close(&r, -1);
	run_finish(&r);
	return run_close(&r, 0);
}

void record_result_release(struct record_result *res)
{
	if (!res)
		return;
	free(res->reason);
	res->reason = NULL;
}
