/* record.c -- the record engine (record, guard, compare) */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/jsonw.h"
#include "../common/parse.h"
#include "../common/units.h"
#include "../common/util.h"
#include "../common/version.h"
#include "../meter/meter.h"
#include "../platform/platform.h"
#include "../traces/trace.h"
#include "../traces/window.h"
#include "git.h"
#include "guard.h"
#include "loop.h"
#include "record.h"
#include "spawn.h"

#define NS_PER_S 1000000000LL
#define NS_PER_MS 1000000LL
#define GPU_INTERVAL_NS NS_PER_S
#define STATUS_INTERVAL_NS (250 * NS_PER_MS)
#define FLUSH_INTERVAL_NS NS_PER_S
#define WAIT_LOG_INTERVAL_NS (5 * NS_PER_S)
#define STOP_TICK_NS (10 * NS_PER_MS) /* how often a stopping tree is looked at */
/* The sample taken when the command's root exits is skipped when the last
 * one is younger than this. */
#define FINAL_SAMPLE_AGE_NS (5 * NS_PER_MS)
/* The longest line taken from the probe pipe (the C probe writes at most 16 KiB). */
#define PROBE_LINE_MAX (1 << 20)
/* Bytes read from the probe pipe per turn of the loop: a command that writes
 * without pause does not hold up samples and guard checks. */
#define PROBE_READ_TURN (256 * 1024)
/* ... and once the command ended (orphans may go on writing). */
#define PROBE_READ_LAST (64 * 1024 * 1024)

/* ---- signals: a self-pipe, installed for one run (or by the caller) ------- */

static volatile sig_atomic_t sig_pipe_fd = -1;
/* SIGPIPE: a `kill -PIPE` from another process stops the run like SIGINT/TERM/HUP;
 * the one the kernel sends for our own write to a closed pipe (stdout, stderr, a
 * log reader gone) is dropped, that write fails with EPIPE and the run goes on. */
static const int handled_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD };
#define NHANDLED (sizeof(handled_signals) / sizeof(handled_signals[0]))
_Static_assert(NHANDLED == sizeof(((struct record_signals *)0)->old) / sizeof(struct sigaction),
	       "record_signals.old holds one saved action per handled signal");

static void on_signal(int sig, siginfo_t *si, void *ctx)
{
	int saved = errno;
	unsigned char c = (unsigned char)sig;
	/* The kernel's SIGPIPE for our own write comes as SI_USER from our own pid. */
	if (sig == SIGPIPE && si && si->si_code == SI_USER && si->si_pid == getpid())
		return;
	if (sig_pipe_fd >= 0) {
		ssize_t r = write(sig_pipe_fd, &c, 1);
		(void)r;
	}
	errno = saved;
}

int record_signals_install(struct record_signals *ss)
{
	if (pipe(ss->pipe))
		return error("cannot create a pipe: %s", strerror(errno));
	for (int i = 0; i < 2; i++) {
		fcntl(ss->pipe[i], F_SETFD, FD_CLOEXEC);
		fcntl(ss->pipe[i], F_SETFL, O_NONBLOCK);
	}
	sig_pipe_fd = ss->pipe[1];
	for (size_t i = 0; i < NHANDLED; i++) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_signal;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_SIGINFO | SA_RESTART | (handled_signals[i] == SIGCHLD ? SA_NOCLDSTOP : 0);
		sigaction(handled_signals[i], &sa, &ss->old[i]);
	}
	ss->installed = true;
	return 0;
}

static int drain_signals(int fd, bool *chld);

int record_signals_restore(struct record_signals *ss)
{
	if (!ss->installed)
		return 0;
	/* Handlers first, then the pipe: a signal that comes after this loop gets
	 * its previous action (for SIGINT/SIGTERM: ends the process with it), and
	 * one that came before it is in the pipe; none falls between the two. */
	for (size_t i = 0; i < NHANDLED; i++)
		sigaction(handled_signals[i], &ss->old[i], NULL);
	sig_pipe_fd = -1;
	int late = drain_signals(ss->pipe[0], NULL);
	close(ss->pipe[0]);
	close(ss->pipe[1]);
	ss->installed = false;
	return late;
}

int record_signals_take(const struct record_signals *ss)
{
	return ss->installed ? drain_signals(ss->pipe[0], NULL) : 0;
}

char *record_default_trace_name(void)
{
	time_t now = time(NULL);
	struct tm tm;
	char buf[64];
	localtime_r(&now, &tm);
	strftime(buf, sizeof(buf), "stagebench-%Y%m%d-%H%M%S.trace.jsonl.zst", &tm);
	return xstrdup(buf);
}

/* ---- the run ------------------------------------------------------------- */

struct run {
	const struct record_opts *o;
	const struct guard_opts *g;
	struct record_result *res;
	char **argv;
	struct trace_writer *w;
	struct meter *m;
	const struct meter_info *mi;
	struct spawn sp;
	int64_t t0_ns;          /* run origin: t = 0 */
	int64_t spawn_ns, exit_ns;
	int probe_fd;           /* read end, -1 once closed */
	int err_pipe[2];        /* the command's stderr when o->stderr_copy_fd is set */
	int err_fd;             /* its read end once the command runs, -1 once closed */
	bool err_copy_failed;   /* a write to the copy failed (warned once) */
	struct strbuf probe_buf;  /* a line's start, read before its newline */
	bool probe_warned;
	bool probe_skipping;      /* in a line over PROBE_LINE_MAX: dropped up to its newline */
	unsigned probe_skipped;   /* lines skipped so */
	/* stage window for exact peaks */
	struct window_state win; /* the window rule: the stage in force, its start */
	bool window_open;
	double window_from;
	bool window_has_peak;
	uint64_t window_peak;
	bool window_late;       /* opened after the command's root was reaped */
	unsigned exit_peaks;    /* times on_reaped() raised a window's peak */
	/* guard */
	struct guard_state gs;
	struct guard_readings last;
	bool have_last;
	/* stopping */
	bool stopping;
	struct spawn_stop stop; /* TERM, grace, KILL (spawn.h) */
	int got_signal;
	/* gpu */
	bool gpu_known;
	uint64_t gpu_bytes;
	bool devmem_known;      /* the probe's last device reading (devmem lines) */
	uint64_t devmem, devmem_total;
	bool devmem_pct_warned; /* --max-device PCT% without the device's size: said once */
	/* status line */
	bool status_shown;
	struct trace_sample last_sample;
	bool have_swap0;        /* swap used at the first sample: the status line's rise */
	uint64_t swap0;
	bool have_sample;
	int64_t last_sample_ns; /* when it was taken */
	int write_failed;
	/* the loop */
	struct loop loop;
	int t_sample, t_guard, t_gpu, t_status, t_flush, t_stop;
	int64_t next_sample;
	bool chld;              /* a SIGCHLD came since the last look */
	struct record_signals ss;  /* our own, unless the caller gave its own */
	int sigfd;                 /* the signal pipe's read end */
	int psi_fd;             /* PSI trigger (guarded runs), -1 for none */
	/* what record_run() owns */
	struct trace_start st;
	struct host_info host;
	int probe[2];
	const char **env;       /* the command's extra environment */
	size_t env_own;         /* entries of env that are the caller's */
	char *trace_abs;
};

static double t_of(const struct run *r, int64_t ns)
{
	return (double)(ns - r->t0_ns) / 1e9;
}

/* A write of the trace failed (the writer said why: disk full, I/O error):
 * say at once what happens now, once. */
static void trace_failed(struct run *r)
{
	if (r->write_failed)
		return;
	r->write_failed = -1;
	error("%s: the trace '%s' is incomplete from here on; '%s' goes on%s, and the run "
	      "ends as failed (exit %d)", r->o->name, r->o->trace_path, r->argv[0],
	      r->o->guarded ? " under the guard" : "", SB_EXIT_FAILURE);
}

static void write_event(struct run *r, const struct trace_event *ev)
{
	if (r->w && trace_writer_event(r->w, ev))
		trace_failed(r);
}

static void guard_event(struct run *r, const char *action, const char *reason,
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
	ev.extra_json = rd ? guard_readings_json(rd, &r->gs) : NULL;
	write_event(r, &ev);
	free(ev.extra_json);
}

/* The run whose status line is on the terminal (one at a time). */
static struct run *status_run;

static void status_clear(struct run *r)
{
	if (r->status_shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		r->status_shown = false;
	}
	if (status_run == r) {
		status_run = NULL;
		sb_report_hook = NULL;
	}
}

/* sb_report_hook: a message clears the status line first (the next refresh
 * draws it again below the message). */
static void status_clear_for_message(void)
{
	if (status_run)
		status_clear(status_run);
}

static int terminal_columns(void)
{
	struct winsize ws;
	if (!ioctl(2, TIOCGWINSZ, &ws) && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

/* A name from the command (a stage) as the terminal should see it: control
 * bytes (a newline, an escape sequence's ESC) become '?'. */
static void add_printable(struct strbuf *sb, const char *s)
{
	for (; *s; s++)
		strbuf_addch(sb, (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
}

/* One line on stderr, redrawn in place a few times a second while the command
 * runs (only on a terminal, not under NO_COLOR or -q):
 *   [2/4] staged run 1  stage preprocess  footprint 1.2 GB  peak 1.4 GB
 *   swap +12 MB  available 63%  12.5 s
 * cut to the terminal's width so that it never wraps. */
static void status_update(struct run *r, int64_t now)
{
	if (!r->o->status_line || sb_verbosity < 1 || !stderr_is_tty() || !r->have_sample)
		return;
	const struct trace_sample *s = &r->last_sample;
	const char *label = r->o->status_label ? r->o->status_label : r->o->mode;
	struct strbuf sb = STRBUF_INIT;
	char el[32];
	if (label) {
		add_printable(&sb, label);
		strbuf_addstr(&sb, "  ");
	}
	strbuf_addstr(&sb, "stage ");
	add_printable(&sb, r->win.stage ? r->win.stage : "-");
	if (s->fields & SF_FOOTPRINT) {
		strbuf_addstr(&sb, "  footprint ");
		units_add_size(&sb, (double)s->footprint, UNITS_COARSE, false);
		strbuf_addstr(&sb, "  peak ");
		units_add_size(&sb, (double)r->res->peak_footprint, UNITS_COARSE, false);
	}
	if ((s->fields & SF_SWAP_USED) && r->have_swap0) {
		strbuf_addstr(&sb, "  swap ");
		units_add_size(&sb, (double)s->swap_used - (double)r->swap0, UNITS_COARSE, true);
	}
	if (s->fields & SF_LEVEL)
		strbuf_addf(&sb, "  available %.0f%%", s->level);
	format_duration(now - r->spawn_ns, el);
	strbuf_addf(&sb, "  %s", el);
	int cols = terminal_columns() - 1;
	fprintf(stderr, "\r\033[K%.*s", cols, sb.buf);
	fflush(stderr);
	strbuf_release(&sb);
	r->status_shown = true;
	status_run = r;
	sb_report_hook = status_clear_for_message;
}

/* ---- per-stage peaks ------------------------------------------------------ */

/* Every stage window ends in one `peak` event: the kernel high-water mark
 * (reset at the window's start) when the meter has one and the reset is on,
 * else the largest sampled footprint of the window; "bytes": null with a
 * "why" when nothing was measured. */
#define SAMPLED_PEAK_METRIC "sampled_footprint"

static bool kernel_peaks(const struct run *r)
{
	return r->mi->peak_metric && !r->o->no_peak_reset;
}

static void window_poll_peak(struct run *r)
{
	uint64_t b;
	if (!r->window_open || !kernel_peaks(r))
		return;
	/* 0 means only zombies answered (they lose their Vm fields): no reading */
	if (!meter_peak_read(r->m, &b) && b) {
		if (!r->window_has_peak || b > r->window_peak)
			r->window_peak = b;
		r->window_has_peak = true;
	}
}

/* A sample's footprint counts for the window it falls in (t >= its start). */
static void window_sampled(struct run *r, const struct trace_sample *s)
{
	if (!r->window_open || kernel_peaks(r) || !(s->fields & SF_FOOTPRINT) ||
	    s->t < r->window_from)
		return;
	if (!r->window_has_peak || s->footprint > r->window_peak)
		r->window_peak = s->footprint;
	r->window_has_peak = true;
}

static const char *window_why(const struct run *r)
{
	if (r->window_late)
		return "the command had exited before its stage event was read: no process "
		       "was left to measure";
	if (kernel_peaks(r))
		return "no process of the command could be read in this window (each had "
		       "exited, or was exiting, when it was looked at)";
	return "no sample fell in this window";
}

static void window_close(struct run *r, double t)
{
	if (!r->window_open)
		return;
	/* A process that exited before this stage event was merged (a command
	 * that ends right after its last stage line) is a zombie without VmHWM:
	 * reap it first so that its ru_maxrss counts here (on_reaped()), and
	 * again after the reading for one that died during it. */
	if (r->sp.pid > 0)
		spawn_reap(&r->sp);
	unsigned raised = r->exit_peaks;
	window_poll_peak(r);
	if (r->sp.pid > 0) {
		spawn_reap(&r->sp);
		if (r->exit_peaks != raised)
			window_poll_peak(r);
	}
	struct trace_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.t = t < r->window_from ? r->window_from : t;
	ev.kind = EV_PEAK;
	ev.kind_name = (char *)"peak";
	ev.ndim = -1;
	ev.stage = (char *)window_stage(&r->win);
	ev.metric = (char *)(kernel_peaks(r) ? r->mi->peak_metric : SAMPLED_PEAK_METRIC);
	ev.has_bytes = r->window_has_peak;
	ev.bytes = r->window_peak;
	ev.has_from = true;
	ev.from = r->window_from;
	struct strbuf why = STRBUF_INIT;
	if (!r->window_has_peak) {
		strbuf_addstr(&why, "\"bytes\":null,\"why\":");
		json_escape(&why, window_why(r));
		ev.extra_json = why.buf;
	}
	write_event(r, &ev);
	strbuf_release(&why);
	r->window_open = false;
}

/* A window from t; reset: the tree's high-water marks start again there (not
 * for setup's window: a process's mark starts with its exec, and a reset
 * right after the spawn could come after a fast command's first peak). */
static void window_open_at(struct run *r, double t, bool reset)
{
	r->window_open = true;
	r->window_from = t;
	r->window_has_peak = false;
	r->window_peak = 0;
	r->window_late = r->sp.reaped;
	if (!kernel_peaks(r))
		return;
	if (reset && meter_peak_reset(r->m))
		return; /* the tree may be between processes: the next read tells */
	window_poll_peak(r);
}

/* ---- probe lines ---------------------------------------------------------- */

static void take_sample(struct run *r, int64_t now, double t_min);

/* A sample right after an event that starts a window (a stage event, or a
 * release that moves its start), so that a stage shorter than the interval
 * still has one: t is at least the event's, and the analyzer's windows
 * include a sample at their start (t >= start). While the command runs. */
static void window_sample(struct run *r, double ev_t)
{
	if (r->sp.pid > 0 && !r->sp.reaped)
		take_sample(r, mono_ns(), ev_t);
}

static void probe_line(struct run *r, const char *line, size_t len)
{
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (!len)
		return;
	struct trace_event ev;
	struct trace_sample dev;
	const char *msg = NULL;
	memset(&ev, 0, sizeof(ev));
	if (trace_parse_probe_line(line, len, (double)r->t0_ns / 1e9, &ev, &msg)) {
		if (!r->probe_warned)
			warning("ignoring a malformed line from the command's probe pipe: %s: '%.*s'",
				msg ? msg : "unreadable", (int)(len > 80 ? 80 : len), line);
		r->probe_warned = true;
		trace_event_release(&ev);
		return;
	}
	if (!trace_devmem_sample(&ev, &dev, &r->devmem_total)) {
		/* device memory on the interval: a sample of its own, the guard's reading */
		if (r->w && trace_writer_sample(r->w, &dev))
			trace_failed(r);
		r->devmem_known = true;
		r->devmem = dev.devmem;
		if (r->g->has_max_device && r->g->max_device_pct > 0 && !r->devmem_total &&
		    !r->devmem_pct_warned) {
			r->devmem_pct_warned = true;
			warning("--max-device %g%%: the probe reports no device size (torch.mps without "
				"recommended_max_memory); device memory is not checked", r->g->max_device_pct);
		}
		trace_event_release(&ev);
		return;
	}
	/* the window rule (traces/window.h): a stage event opens a window, a
	 * release of the stage in force moves its start */
	if (window_continues(&r->win, &ev)) {
		/* the first stage event is "setup": setup's window, open since
		 * the command started, goes on */
		window_step(&r->win, &ev);
		write_event(r, &ev);
	} else if (ev.kind == EV_STAGE) {
		window_close(r, ev.t); /* the peak of the stage that ends here */
		window_step(&r->win, &ev);
		write_event(r, &ev);
		window_open_at(r, ev.t, true);
		window_sample(r, ev.t);
	} else {
		write_event(r, &ev);
		if (window_step(&r->win, &ev) == WINDOW_MOVE && r->window_open) {
			window_open_at(r, r->win.start_t, true);
			window_sample(r, ev.t);
		}
	}
	trace_event_release(&ev);
}

/* Take n bytes read from the pipe: every complete line goes to probe_line();
 * a line longer than PROBE_LINE_MAX is skipped up to its newline, with a
 * warning. Each byte is looked at once, whatever the lines' lengths. */
static void probe_take(struct run *r, const char *p, size_t n)
{
	while (n) {
		const char *nl = memchr(p, '\n', n);
		size_t len = nl ? (size_t)(nl - p) : n;
		if (r->probe_skipping) {
			/* dropped up to its end */
		} else if (r->probe_buf.len + len > PROBE_LINE_MAX) {
			if (!r->probe_skipped++) {
				char head[41];
				const char *h = r->probe_buf.len ? r->probe_buf.buf : p;
				size_t k;
				for (k = 0; k < 40 && h[k]; k++)
					head[k] = h[k] >= 0x20 && h[k] < 0x7f ? h[k] : '?';
				head[k] = '\0';
				warning("%s: skipping a line longer than %d bytes (the limit for a line "
					"on the probe pipe) from '%s': '%s...'", r->o->name,
					PROBE_LINE_MAX, r->argv[0], head);
			}
			r->probe_skipping = true;
			strbuf_reset(&r->probe_buf);
		} else if (nl && !r->probe_buf.len) {
			probe_line(r, p, len); /* a whole line in this read: no copy */
		} else {
			strbuf_add(&r->probe_buf, p, len);
			if (nl) {
				probe_line(r, r->probe_buf.buf, r->probe_buf.len);
				strbuf_reset(&r->probe_buf);
			}
		}
		if (!nl)
			return;
		r->probe_skipping = false;
		p = nl + 1;
		n -= len + 1;
	}
}

/* Read what the non-blocking *fd holds, at most max bytes (the loop's timers
 * run before the rest is read), handing each chunk to take(r, ...). At EOF
 * (every holder of the write end is gone) or an error *fd is closed and set to
 * -1, and true returned. */
static bool drain(struct run *r, int *fd, size_t max,
		  void (*take)(struct run *r, const char *p, size_t n))
{
	char buf[65536];
	size_t total = 0;
	while (total < max) {
		ssize_t n = read(*fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			close(*fd);
			*fd = -1;
			return true;
		}
		total += (size_t)n;
		take(r, buf, (size_t)n);
	}
	return false;
}

/* The probe's pipe: whole lines as they come; at EOF the last, unended one. */
static void probe_read(struct run *r, size_t max)
{
	if (!drain(r, &r->probe_fd, max, probe_take))
		return;
	if (r->probe_buf.len && !r->probe_skipping)
		probe_line(r, r->probe_buf.buf, r->probe_buf.len);
	strbuf_reset(&r->probe_buf);
}

/* ---- the command's stderr, copied --------------------------------------------- */

/* What the command wrote to its stderr: to the copy as it comes (nothing held
 * back: it survives our end) and to our stderr. */
static void err_take(struct run *r, const char *p, size_t n)
{
	if (!r->err_copy_failed && write_all(r->o->stderr_copy_fd, p, n)) {
		r->err_copy_failed = true;
		warning("%s: cannot keep the command's stderr: %s", r->o->name, strerror(errno));
	}
	status_clear(r);
	write_all(STDERR_FILENO, p, n);
}

/* Relay the command's stderr, at most max bytes; at EOF the pipe is closed. */
static void err_relay(struct run *r, size_t max)
{
	drain(r, &r->err_fd, max, err_take);
}

/* The pipe the command's stderr goes to (o->stderr_copy_fd set); 0 or -1. */
static int err_pipe_open(struct run *r)
{
	if (r->o->stderr_copy_fd < 0)
		return 0;
	if (pipe(r->err_pipe))
		return error("cannot create a pipe: %s", strerror(errno));
	fcntl(r->err_pipe[0], F_SETFD, FD_CLOEXEC);
	fcntl(r->err_pipe[0], F_SETFL, O_NONBLOCK);
	fcntl(r->err_pipe[1], F_SETFD, FD_CLOEXEC);
	r->sp.stderr_fd = r->err_pipe[1];
	return 0;
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

static void begin_stop(struct run *r, enum stopped_by by, const char *reason, int64_t now)
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

/* A sample at now, its t no earlier than t_min (-INFINITY: no floor). */
static void take_sample(struct run *r, int64_t now, double t_min)
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
	window_sampled(r, &s);
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

static void guard_poll(struct run *r, int64_t now)
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

/* Returns the signal number read from the self-pipe (last one), 0 for none;
 * sets *chld (when not NULL) if a SIGCHLD came. */
static int drain_signals(int fd, bool *chld)
{
	unsigned char c[64];
	int sig = 0;
	ssize_t n;
	while ((n = read(fd, c, sizeof(c))) > 0)
		for (ssize_t i = 0; i < n; i++) {
			if (c[i] != SIGCHLD)
				sig = c[i];
			else if (chld)
				*chld = true;
		}
	return sig;
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
static int admission(struct run *r, int sigfd)
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

static double rusage_children_s(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_CHILDREN, &ru))
		return 0;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* spawn's on_reap: a tree process was reaped with this ru_maxrss. A zombie
 * has no VmHWM, so a peak it reached after its last reading (a sample, or
 * the window's start) would be lost: meter_peak_exited() makes ru_maxrss its
 * part of the open window's peak when it exceeds every reading seen, i.e.
 * when it was reached after them (meter.h states the rule and its limits).
 * This replaces reading every VmHWM every 25 ms while a window was open
 * (~2 ms of recorder CPU per 0.5 s sample for one process). */
static void on_reaped(void *arg, pid_t pid, uint64_t maxrss)
{
	struct run *r = arg;
	if (r->window_open && maxrss && meter_peak_exited(r->m, pid, maxrss) > 0)
		r->exit_peaks++;
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

/* The main loop while the command runs. */
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
	if (got_chld && r->probe_fd >= 0)
		on_probe_pipe(l, r->probe_fd, POLLIN, r);
	if (root_exited(r, &r->chld)) {
		/* Last look at the tree before the leader is reaped (the
		 * leader itself is a zombie: its memory is gone already). */
		if (!r->have_sample || now - r->last_sample_ns >= FINAL_SAMPLE_AGE_NS)
			take_sample(r, now, -INFINITY);
		r->exit_ns = mono_ns();
		/* reaped first: on_reaped() may raise the window's peak */
		spawn_reap(&r->sp);
		window_close(r, t_of(r, r->exit_ns));
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
	take_sample(r, now, -INFINITY);
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
	guard_poll(r, now);
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
	if (r->probe_fd < 0)
		loop_del_fd(l, fd);
}

static void on_err_pipe(struct loop *l, int fd, short revents, void *arg)
{
	struct run *r = arg;
	err_relay(r, PROBE_READ_TURN);
	if (r->err_fd < 0)
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
static void run_loop(struct run *r)
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
	if (r->probe_fd >= 0)
		loop_add_fd(l, r->probe_fd, POLLIN, on_probe_pipe, r);
	if (r->err_fd >= 0)
		loop_add_fd(l, r->err_fd, POLLIN, on_err_pipe, r);
	if (r->psi_fd >= 0 && r->o->guarded)
		loop_add_fd(l, r->psi_fd, POLLPRI, on_psi, r);
	loop_run(l);
	if (r->stopping) {
		/* stopped: the tree is gone (or survived KILL) */
		r->exit_ns = mono_ns();
		spawn_reap(&r->sp);
		window_close(r, t_of(r, r->exit_ns));
	}
}

static void fill_start(struct run *r, struct trace_start *st, struct host_info *h)
{
	char utc[32];
	utc_iso8601(real_ns(), utc);
	st->format = (char *)TRACE_FORMAT;
	st->utc = xstrdup(utc);
	st->interval = (double)r->o->interval_ns / 1e9;
	st->mode = (char *)r->o->mode;
	st->command = r->argv;
	host_info_get(h);
	st->host_name = h->name[0] ? h->name : NULL;
	st->host_os = h->os;
	st->host_kernel = h->kernel;
	st->host_machine = h->machine;
	st->host_cpus = h->cpus;
	st->host_memory = h->memory;
	st->host_swap = h->swap;
	st->meter_backend = (char *)r->mi->backend;
	st->meter_footprint = (char *)r->mi->footprint;
	struct strbuf extra = STRBUF_INIT;
	strbuf_addstr(&extra, kernel_peaks(r) ? "\"peak_reset\":true,\"peaks\":\"kernel\""
			      : r->o->no_peak_reset ? "\"peak_reset\":false,\"peaks\":\"samples\""
						    : "\"peaks\":\"samples\"");
	/* which stagebench wrote the trace */
	strbuf_addstr(&extra, ",\"stagebench\":{\"version\":");
	json_escape(&extra, sb_version);
	strbuf_addstr(&extra, ",\"commit\":");
	json_escape(&extra, sb_commit);
	strbuf_addch(&extra, '}');
	if (r->o->start_extra) {
		strbuf_addch(&extra, ',');
		strbuf_addstr(&extra, r->o->start_extra);
	}
	st->extra_json = strbuf_detach(&extra);
	st->labels = (struct trace_label *)r->o->labels;
	st->nlabels = r->o->nlabels;
	const char *dir = r->o->commit_dir;
	if (!dir || !*dir)
		dir = r->o->cwd ? r->o->cwd : ".";
	int dirty;
	st->commit = git_head(dir, false, &dirty);
	if (st->commit && dirty >= 0) {
		st->has_dirty = true;
		st->dirty = dirty > 0;
	}
}

static char *absolute_path(const char *p)
{
	if (!p || p[0] == '/')
		return xstrdup(p);
	char *cwd = getcwd(NULL, 0);
	char *abs = cwd ? xasprintf("%s/%s", cwd, p) : xstrdup(p);
	free(cwd);
	return abs;
}

/* The command's environment: the caller's env_set, then ours; r->env owns
 * the entries past the caller's. */
static void build_env(struct run *r)
{
	const struct record_opts *o = r->o;
	size_t nenv = 0, k = 0;
	for (const char **e = o->env_set; e && *e; e++)
		nenv++;
	r->env_own = nenv;
	r->env = xcalloc(nenv + 6, sizeof(*r->env));
	for (const char **e = o->env_set; e && *e; e++)
		r->env[k++] = *e;
	r->env[k++] = xasprintf("STAGEBENCH_FD=%d", SPAWN_PROBE_FD);
	/* the probe reads device memory on the same interval */
	r->env[k++] = xasprintf("STAGEBENCH_INTERVAL=%.6g", (double)o->interval_ns / 1e9);
	if (o->mode)
		r->env[k++] = xasprintf("STAGEBENCH_MODE=%s", o->mode);
	if (o->latents_dir)
		r->env[k++] = xasprintf("STAGEBENCH_LATENTS=%s", o->latents_dir);
	if (o->trace_path) {
		r->trace_abs = absolute_path(o->trace_path);
		r->env[k++] = xasprintf("STAGEBENCH_TRACE=%s", r->trace_abs);
	}
	r->env[k] = NULL;
}

/* The meter, the trace and its start record, the signal handlers. */
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
	r->t0_ns = mono_ns();
	fill_start(r, &r->st, &r->host);
	if (r->w && trace_writer_start(r->w, &r->st))
		return -1;
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
	build_env(r);
	r->sp.argv = r->argv;
	r->sp.env_set = r->env;
	r->sp.probe_fd = r->probe[1];
	r->sp.cwd = r->o->cwd;
	r->sp.stdout_fd = r->o->stdout_fd;
	r->sp.on_reap = on_reaped;
	r->sp.on_reap_arg = r;

	double cpu0 = rusage_children_s();
	r->spawn_ns = mono_ns();
	int started = spawn_start(&r->sp);
	close(r->probe[1]);
	r->probe[1] = -1;
	if (r->err_pipe[1] >= 0) {
		close(r->err_pipe[1]);
		r->err_pipe[1] = -1;
		r->err_fd = r->err_pipe[0];
		r->err_pipe[0] = -1;
	}
	if (started) {
		res->exit_code = GUARD_EXIT_CANNOT_RUN;
		res->reason = xasprintf("cannot run '%s': %s", r->argv[0], strerror(r->sp.start_errno));
		return 0;
	}
	res->started = true;
	r->probe_fd = r->probe[0];
	r->probe[0] = -1;
	meter_track(r->m, r->sp.pid);
	/* setup's window: from the command's start to its first stage event
	 * (or its end), so that it gets a peak event like every stage */
	window_open_at(r, t_of(r, r->spawn_ns), false);

	run_loop(r);

	if (r->probe_fd >= 0) {
		/* whatever the command wrote before it ended; orphans may hold the pipe */
		probe_read(r, PROBE_READ_LAST);
	}
	if (r->err_fd >= 0)
		err_relay(r, PROBE_READ_LAST); /* what is there: orphans may hold it */
	window_close(r, t_of(r, r->exit_ns)); /* one a late stage event opened */
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
	if (!r->o->summary || sb_verbosity < 1 || !res->started)
		return;
	char fp[32], wall[32];
	format_gb(res->peak_footprint, fp);
	format_duration((int64_t)(res->wall_s * 1e9), wall);
	if (r->probe_skipped > 1)
		warning("%s: skipped %u lines longer than %d bytes from the probe pipe in all",
			r->o->name, r->probe_skipped, PROBE_LINE_MAX);
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
	if (r->probe_fd >= 0)
		close(r->probe_fd);
	for (int i = 0; i < 2; i++)
		if (r->err_pipe[i] >= 0)
			close(r->err_pipe[i]);
	if (r->err_fd >= 0)
		close(r->err_fd);
	if (r->env) {
		for (size_t i = r->env_own; r->env[i]; i++)
			free((char *)r->env[i]);
		free(r->env);
	}
	free(r->trace_abs);
	free(r->st.utc);
	free(r->st.commit);
	free(r->st.extra_json);
	window_state_release(&r->win);
	strbuf_release(&r->probe_buf);
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
	r.probe[0] = r.probe[1] = r.psi_fd = r.probe_fd = -1;
	r.err_pipe[0] = r.err_pipe[1] = r.err_fd = -1;
	*res = (struct record_result)RECORD_RESULT_INIT;
	r.o = o;
	r.g = o->guard ? o->guard : &default_guard;
	r.res = res;
	r.argv = argv;
	r.sp = (struct spawn)SPAWN_INIT;
	strbuf_init(&r.probe_buf);
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
			r.psi_fd = guard_psi_open();
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
