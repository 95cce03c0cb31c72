/* handlers.c -- the record loop's handlers (loop.h): timers, pipes, the end of the command */

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "../../common/util.h"
#include "../../meter/meter.h"
#include "../loop.h"
#include "record_int.h"
#include "../spawn.h"

/* spawn's on_reap: a tree process was reaped with this ru_maxrss. A zombie
 * has no VmHWM, so a peak it reached after its last reading (a sample, or
 * the window's start) would be lost: meter_peak_exited() makes ru_maxrss its
 * part of the open window's peak when it exceeds every reading seen, i.e.
 * when it was reached after them (meter.h states the rule and its limits).
 * This replaces reading every VmHWM every 25 ms while a window was open
 * (~2 ms of recorder CPU per 0.5 s sample for one process). */
void on_reaped(void *arg, pid_t pid, uint64_t maxrss)
{
	struct run *r = arg;
	if (r->sw.open && maxrss && meter_peak_exited(r->m, pid, maxrss) > 0)
		r->sw.exit_peaks++;
}

/* After a SIGCHLD: every zombie child of ours but the leader. The recorder's
 * children during a run are the leader and orphans re-parented to it (a
 * subreaper); one the tree listings missed (re-parented between two of them)
 * would otherwise stay a zombie for the rest of the run, and a command that
 * waits for it to go would wait for ever. The leader is left to
 * root_exited(), whose status the run needs. */
static void reap_strays(struct run *r)
{
	for (;;) {
		siginfo_t si;
		memset(&si, 0, sizeof(si));
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) || !si.si_pid ||
		    si.si_pid == r->sp.pid)
			return;
		uint64_t maxrss = 0;
		if (pl_wait(si.si_pid, NULL, WNOHANG, &maxrss) != si.si_pid)
			return;
		on_reaped(r, si.si_pid, maxrss);
	}
}

/* Only asked after a SIGCHLD (*chld, cleared here): the handler writes to
 * the self-pipe, so one that comes later wakes the loop's poll. */
static bool root_exited(struct run *r, bool *chld)
{
	if (r->sp.reaped)
		return true;
	if (!*chld)
		return false;
	*chld = false;
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	int rc;
	do
		rc = waitid(P_PID, (id_t)r->sp.pid, &si, WEXITED | WNOHANG | WNOWAIT);
	while (rc < 0 && errno == EINTR);
	return (rc == 0 && si.si_pid == r->sp.pid) || (rc < 0 && errno == ECHILD);
}

/* ---- the loop's handlers (loop.h) ----------------------------------------- */

static void on_probe_pipe(struct loop *l, int fd, short revents, void *arg);

/* Check, every turn: the command's root ended (only asked after a SIGCHLD),
 * or another tree process did (orphans are ours: reap it now, while its
 * window is open, on_reaped()). */
static void on_turn(struct loop *l, int64_t now, void *arg)
{
	struct run *r = arg;
	bool got_chld = r->chld;
	if (r->stopping)
		return; /* on_stop_tick() watches the tree */
	/* Lines written before a process exited are applied before it is
	 * reaped: a stage boundary counts at the event's own time, and the
	 * ru_maxrss of a process that ends goes to the window it ended in. */
	if (got_chld && r->pin.fd >= 0)
		on_probe_pipe(l, r->pin.fd, POLLIN, r);
	if (root_exited(r, &r->chld)) {
		/* Last look at the tree before the leader is reaped (the
		 * leader itself is a zombie: its memory is gone already). */
		if (!r->have_sample || now - r->last_sample_ns >= FINAL_SAMPLE_AGE_NS)
			engine_take_sample(r, now, -INFINITY);
		r->exit_ns = mono_ns();
		/* reaped first: on_reaped() may raise the window's peak */
		spawn_reap(&r->sp);
		stage_window_close(r, t_of(r, r->exit_ns));
		loop_stop(l);
		return;
	}
	if (got_chld && r->sp.ntree)
		spawn_reap(&r->sp);
	if (got_chld)
		reap_strays(r);
}

static void flush_trace(struct run *r)
{
	if (r->w && trace_writer_flush(r->w))
		trace_failed(r);
}

static void on_sample_due(struct loop *l, int64_t now, void *arg)
{
	struct run *r = arg;
	engine_take_sample(r, now, -INFINITY);
	while (r->next_sample <= now)
		r->next_sample += r->o->interval_ns;
	loop_timer_set(l, r->t_sample, r->next_sample);
	/* flush with this sample when the next one comes after the flush is
	 * due: one wakeup instead of two, still >= 1/s */
	if (r->next_sample > loop_timer_when(l, r->t_flush)) {
		flush_trace(r);
		loop_timer_set(l, r->t_flush, now + FLUSH_INTERVAL_NS);
	}
}

static void on_guard_due(struct loop *l, int64_t now, void *arg)
{
	struct run *r = arg;
	admission_poll(r, now);
	if (r->stopping)
		return; /* begin_stop() turned the guard off */
	int64_t step = r->g->poll_ns;
	if (guard_check_soon(&r->gs))
		step = step / 4 > NS_PER_MS ? step / 4 : NS_PER_MS;
	loop_timer_set(l, r->t_guard, now + step);
}

static void on_gpu_due(struct loop *l, int64_t now, void *arg)
{
	struct run *r = arg;
	uint64_t b;
	if (!meter_gpu(r->m, &b)) {
		r->gpu_known = true;
		r->gpu_bytes = b;
	}
	loop_timer_set(l, r->t_gpu, now + GPU_INTERVAL_NS);
}

static void on_status_due(struct loop *l, int64_t now, void *arg)
{
	struct run *r = arg;
	status_update(r, now);
	loop_timer_set(l, r->t_status, now + STATUS_INTERVAL_NS);
}

static void on_flush_due(struct loop *l, int64_t now, void *arg)
{
	struct run *r = arg;
	flush_trace(r);
	loop_timer_set(l, r->t_flush, now + FLUSH_INTERVAL_NS);
}

/* While stopping, every STOP_TICK_NS: done when the tree is gone; KILL after
 * the grace time; give up SPAWN_KILL_WAIT_NS later (spawn_stop_step). */
static void on_stop_tick(struct loop *l, int64_t now, void *arg)
{
	struct run *r = arg;
	if (spawn_stop_step(&r->sp, &r->stop, now) != SPAWN_STOP_WAITING) {
		loop_stop(l);
		return;
	}
	loop_timer_set(l, r->t_stop, now + STOP_TICK_NS);
}

static void on_signal_pipe(struct loop *l, int fd, short revents, void *arg)
{
	struct run *r = arg;
	if (!(revents & POLLIN))
		return;
	int sig = drain_signals(fd, &r->chld);
	if (r->chld && r->stopping)
		loop_timer_set(l, r->t_stop, mono_ns()); /* maybe the last one went */
	if (!sig)
		return;
	char *reason = xasprintf("received %s", strsignal(sig));
	status_clear(r);
	if (!r->stopping) {
		note("%s: %s: stopping '%s'", r->o->name, reason, r->argv[0]);
		r->got_signal = sig;
		guard_event(r, "interrupted", reason, r->have_last ? &r->last : NULL);
	}
	begin_stop(r, STOPPED_SIGNAL, reason, mono_ns());
	free(reason);
}

static void on_probe_pipe(struct loop *l, int fd, short revents, void *arg)
{
	struct run *r = arg;
	probe_read(r, PROBE_READ_TURN);
	if (r->pin.fd < 0)
		loop_del_fd(l, fd);
}

static void on_err_pipe(struct loop *l, int fd, short revents, void *arg)
{
	struct run *r = arg;
	err_relay(r, PROBE_READ_TURN);
	if (r->err.fd < 0)
		loop_del_fd(l, fd);
}

static void on_psi(struct loop *l, int fd, short revents, void *arg)
{
	struct run *r = arg;
	if (revents & POLLPRI)
		loop_timer_set(l, r->t_guard, mono_ns()); /* memory pressure: check now */
	if (revents & (POLLERR | POLLNVAL))
		loop_del_fd(l, fd);
}

/* The command runs: samples, probe lines, guard checks, GPU readings, the
 * status line and flushes until the root exits or a stop ends. */
void run_loop(struct run *r)
{
	struct loop *l = &r->loop;
	int64_t now = mono_ns();
	/* No status line shown: no wakeups for it (each costs ~15-25 us of CPU). */
	bool show_status = r->o->status_line && sb_verbosity >= 1 && stderr_is_tty();
	loop_init(l);
	r->chld = true; /* the command may have ended before the handler saw it */
	r->next_sample = now;
	loop_add_check(l, on_turn, r);
	r->t_sample = loop_add_timer(l, now, on_sample_due, r);
	r->t_guard = loop_add_timer(l, r->o->guarded ? now + r->g->poll_ns : LOOP_NEVER,
				    on_guard_due, r);
	r->t_gpu = loop_add_timer(l, r->mi->gpu ? now : LOOP_NEVER, on_gpu_due, r);
	r->t_status = loop_add_timer(l, show_status ? now + STATUS_INTERVAL_NS : LOOP_NEVER,
				     on_status_due, r);
	r->t_flush = loop_add_timer(l, now + FLUSH_INTERVAL_NS, on_flush_due, r);
	r->t_stop = loop_add_timer(l, LOOP_NEVER, on_stop_tick, r);
	loop_add_fd(l, r->sigfd, POLLIN, on_signal_pipe, r);
	if (r->pin.fd >= 0)
		loop_add_fd(l, r->pin.fd, POLLIN, on_probe_pipe, r);
	if (r->err.fd >= 0)
		loop_add_fd(l, r->err.fd, POLLIN, on_err_pipe, r);
	if (r->psi_fd >= 0 && r->o->guarded)
		loop_add_fd(l, r->psi_fd, POLLPRI, on_psi, r);
	loop_run(l);
	if (r->stopping) {
		/* stopped: the tree is gone (or survived KILL) */
		r->exit_ns = mono_ns();
		spawn_reap(&r->sp);
		stage_window_close(r, t_of(r, r->exit_ns));
	}
}
