/* record_int.h -- the run one record_run() drives, shared by the files of the record engine:
 * record.c (the run's life), signals.c, status.c, windows.c, probe_pipe.c, admission.c,
 * handlers.c, start.c, and engine.c (what they share below them) */
#ifndef SB_RECORD_INT_H
#define SB_RECORD_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../common/util.h"
#include "../../meter/meter.h"
#include "../../platform/platform.h"
#include "../../traces/trace.h"
#include "../../traces/window.h"
#include "../guard.h"
#include "../loop.h"
#include "record.h"
#include "../spawn.h"

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

/* The stage window open now and its peak so far (windows.c). */
struct stage_window {
	bool open;
	double from;
	bool has_peak;
	uint64_t peak;
	bool late;              /* opened after the command's root was reaped */
	unsigned exit_peaks;    /* times on_reaped() raised a window's peak */
};

/* The probe pipe's read side (probe_pipe.c). */
struct probe_in {
	int fd;                 /* read end, -1 once closed */
	struct strbuf buf;      /* a line's start, read before its newline */
	bool warned;
	bool skipping;          /* in a line over PROBE_LINE_MAX: dropped up to its newline */
	unsigned skipped;       /* lines skipped so */
};

/* The command's stderr, relayed to a copy (probe_pipe.c). */
struct err_copy {
	int pipe[2];            /* the command's stderr when o->stderr_copy_fd is set */
	int fd;                 /* its read end once the command runs, -1 once closed */
	bool copy_failed;       /* a write to the copy failed (warned once) */
};

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
	uint64_t primed;        /* memory primed before t = 0 (record_opts.prime_bytes) */
	double primed_s;        /* how long it took; < 0: none primed */
	int64_t spawn_ns, exit_ns;
	struct probe_in pin;    /* the probe pipe's read side (probe_pipe.c) */
	struct err_copy err;    /* the command's stderr copied (probe_pipe.c) */
	/* stage window for exact peaks */
	struct window_state win; /* the window rule: the stage in force, its start */
	struct stage_window sw;  /* the open window's peak (windows.c) */
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

static inline double t_of(const struct run *r, int64_t ns)
{
	return (double)(ns - r->t0_ns) / 1e9;
}

/* engine.c */
void trace_failed(struct run *r);
void write_event(struct run *r, const struct trace_event *ev);
void begin_stop(struct run *r, enum stopped_by by, const char *reason, int64_t now);
void engine_window_sampled(struct run *r, const struct trace_sample *s);
void engine_take_sample(struct run *r, int64_t now, double t_min);
/* signals.c */
int drain_signals(int fd, bool *chld);
/* status.c */
void status_clear(struct run *r);
void status_update(struct run *r, int64_t now);
/* windows.c */
void stage_window_close(struct run *r, double t);
void stage_window_open_at(struct run *r, double t, bool reset);
void stage_window_sample(struct run *r, double ev_t);
/* probe_pipe.c */
void probe_read(struct run *r, size_t max);
void err_relay(struct run *r, size_t max);
int err_pipe_open(struct run *r);
/* admission.c */
void guard_event(struct run *r, const char *action, const char *reason,
		 const struct guard_readings *rd);
void admission_poll(struct run *r, int64_t now);
int admission(struct run *r, int sigfd);
/* handlers.c */
void on_reaped(void *arg, pid_t pid, uint64_t maxrss);
void run_loop(struct run *r);
/* start.c */
void fill_start(struct run *r, struct trace_start *st, struct host_info *h);
/* Stage peaks from the kernel's high-water marks (reset at each window's start)
 * when the meter has one and the reset is on, else sampled. */
static inline bool run_kernel_peaks(const struct run *r)
{
	return r->mi->peak_metric && !r->o->no_peak_reset;
}
void start_build_env(struct run *r);

#endif
