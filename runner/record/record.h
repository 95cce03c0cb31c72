/* record.h -- the record engine: spawn, sample, merge probe events, guard, write the trace
 *
 * One engine serves three commands:
 *   stagebench record  = record_run() with a trace and, when GUARD OPTIONS
 *                        were given, the guard checks;
 *   stagebench guard   = record_run() with the guard checks and (without -o)
 *                        no trace;
 *   stagebench compare = record_run() once per run, in-process, then the next.
 * record_run() keeps no state between calls, installs its signal handlers only
 * for its own duration (previous ones restored) and never exits the process.
 *
 * What a run does, in order:
 *   1. git commit/dirty of commit_dir or the command's directory;
 *   2. open the trace (if any) and write `start`;
 *   3. when guarded: wait for admission (guard events "wait"/"admit"/"timeout");
 *   4. spawn the command in its own process group with the probe pipe as fd 3
 *      and stdout_fd (if any) as its stdout (STAGEBENCH_FD=3, STAGEBENCH_MODE, STAGEBENCH_LATENTS, STAGEBENCH_TRACE);
 *   5. run the dispatcher of loop.h: timers for samples (at absolute
 *      deadlines every interval), guard checks (every --poll; PSI pressure
 *      wakeups move it), GPU readings (1 s), the status line, flushes (>= 1/s)
 *      and the stop (TERM, grace, KILL); fds for the signal self-pipe
 *      (SIGINT/TERM/HUP/CHLD), the probe pipe (lines merged as events, exact
 *      per-stage `peak` events) and PSI; a check each turn for the child's exit;
 *   6. stop the tree when the guard or a signal says so (TERM, grace, KILL);
 *   7. write `end` and close the trace.
 *
 * The result's exit_code is what the command line tool exits with: the
 * command's own status, 128+N for a signal N, 127 when it could not start,
 * 3 when the guard stopped it, 4 when the guard never had room to start it,
 * 128+N when this process received signal N and stopped the command.
 */
#ifndef SB_RECORD_H
#define SB_RECORD_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../traces/trace.h"
#include "../guard.h"

struct record_opts {
	const char *trace_path;   /* NULL: no trace */
	const char *mode;         /* STAGEBENCH_MODE and start.mode; NULL for none */
	int64_t interval_ns;      /* sample interval (default 0.5 s, >= 1 ms) */
	const struct trace_label *labels;
	size_t nlabels;
	const char *latents_dir;  /* STAGEBENCH_LATENTS; NULL for none */
	bool guarded;             /* admission and stop checks */
	const struct guard_opts *guard; /* NULL: defaults (its grace is used unguarded too) */
	const char *meter_spec;   /* NULL: $STAGEBENCH_METER, else the platform default */
	const char *cwd;          /* directory to run the command in; NULL: ours */
	const char **env_set;     /* extra "KEY=VALUE" for the command; NULL-terminated */
	const char *name;         /* "record" / "guard": the message prefix */
	bool status_line;         /* live status on stderr when it is a TTY */
	const char *status_label; /* leads the status line ("[2/4] staged run 1");
				   * NULL: the mode */
	bool summary;             /* one-line summary on stderr at the end */
	bool no_peak_reset;       /* no kernel high-water-mark resets: peaks from samples */
	const char *commit_dir;   /* the git checkout whose commit the start record
				   * names; NULL: cwd, else the current directory */
	int stdout_fd;            /* the command's stdout (e.g. a log), -1: ours */
	int stderr_copy_fd;       /* a file the command's stderr is copied to as it
				   * comes, besides ours (a pipe the loop relays);
				   * -1: the command writes to ours directly */
	const struct record_signals *signals; /* the caller's signal pipe (see
				   * below); NULL: record_run installs its own */
	const struct trace_fields *start_fields; /* more keys for the start record
				   * (written after stagebench's own); NULL for none */
	uint64_t prime_bytes;     /* memory primed (runner/conditions.h) just before
				   * the run's origin (t = 0, before admission), at
				   * most half of what is available; 0: none */
};
#define PRIME_OFF UINT64_MAX /* record_opts.prime_bytes in compare's session: none */
#define RECORD_OPTS_INIT                                                       \
	{ NULL, NULL, 500LL * 1000000LL, NULL, 0, NULL, false, NULL, NULL,     \
	  NULL, NULL, "record", true, NULL, true, false, NULL, -1, -1, NULL, NULL, 0 }

struct record_result {
	int exit_code;            /* see above */
	bool started;             /* the command ran */
	int signal;               /* signal that ended the command, 0 for none */
	enum stopped_by stopped_by;
	char *reason;             /* why it was stopped; NULL when not stopped */
	double wall_s;            /* command start to exit */
	double cpu_s;             /* CPU of the command's tree (user + sys) */
	uint64_t peak_footprint;  /* largest sampled footprint */
	size_t nsamples;
};
#define RECORD_RESULT_INIT { 0, false, 0, STOPPED_NONE, NULL, 0, 0, 0, 0 }

/* Run argv (NULL-terminated) under the engine. Returns 0 when the run was
 * carried out (whatever the command did: see res->exit_code), -1 after
 * error() when the recorder itself failed (trace not writable, no meter). */
int record_run(const struct record_opts *o, char **argv, struct record_result *res);
void record_result_release(struct record_result *res); /* NULL ok */

/*
 * SIGINT, SIGTERM, SIGHUP, SIGPIPE (sent by another process) and SIGCHLD into
 * a self-pipe (non-blocking, close-on-exec), the previous handlers saved. record_run() installs one for its
 * own duration; a caller that runs one record_run() after another (compare)
 * installs one for its whole duration and hands it over in
 * record_opts.signals, so that no signal is lost between runs: one that came
 * before a run's start ends that run before its command starts (exit 128+N,
 * stopped_by signal), and one that came after a run's command ended is left
 * in the pipe for record_signals_take().
 */
struct record_signals {
	int pipe[2];
	struct sigaction old[5];
	bool installed;
};
/* Fills *ss: 0, or -1 after error(). */
int record_signals_install(struct record_signals *ss);
/* Puts the previous handlers back, then closes the pipe; returns the last
 * SIGINT/SIGTERM/SIGHUP/SIGPIPE that was still waiting in it (0 for none). */
int record_signals_restore(struct record_signals *ss);
/* The last SIGINT/SIGTERM/SIGHUP/SIGPIPE waiting in the pipe (SIGCHLD dropped), 0 for none. */
int record_signals_take(const struct record_signals *ss);

/* "stagebench-20261006-103612.trace.jsonl.zst" for the local time now; caller frees. */
char *record_default_trace_name(void);

#endif
