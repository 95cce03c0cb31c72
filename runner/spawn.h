/* spawn.h -- start a command in its own process group, wait for it, stop its whole tree
 *
 * After git's run-command.c: argv, the environment and the PATH lookup are
 * prepared before fork(); the child only makes async-signal-safe calls
 * (setpgid, sigprocmask, dup2, chdir, execve) and reports an exec failure over
 * a close-on-exec pipe, so spawn_start() knows whether the command started.
 *
 * Call order:
 *   struct spawn sp = SPAWN_INIT;
 *   sp.argv = argv; sp.env_set = extra "KEY=VALUE" entries; sp.probe_fd = w;
 *   sp.stdout_fd = log (optional: the command's stdout);
 *   spawn_start(&sp)                  -> 0, or -1 with sp.start_errno set
 *   loop: spawn_reap(&sp)             -> reaps the leader and known tree pids
 *         spawn_track(&sp, pids, n)   -> remember pids seen in the tree (meter)
 *         spawn_signal_tree(&sp, SIGTERM) ... spawn_tree_alive(&sp)
 *   or:   spawn_wait(&sp) / spawn_kill_tree(&sp, grace_ns)
 *         (or spawn_stop_begin() and spawn_stop_step() from an event loop)
 *   spawn_release(&sp)
 *
 * What may be signalled: the command's process group (never pgid 0 or 1, never
 * our own group) and pids seen in the command's tree (its descendants, also
 * those that left the group with setsid), each checked just before the signal
 * to be still a descendant of this process, or the very process (same pid and
 * start time, platform/platform.h) that was a descendant when it was tracked:
 * without a subreaper (macOS) orphans go to launchd and are still stopped.
 * Nothing else: a process the caller started outside the command survives.
 * Call spawn_set_subreaper() once (Linux) so orphans stay our descendants.
 */
#ifndef SB_SPAWN_H
#define SB_SPAWN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The fd number the probe pipe's write end gets in the child (STAGEBENCH_FD). */
#define SPAWN_PROBE_FD 3

struct spawn {
	/* set by the caller before spawn_start() */
	char **argv;          /* NULL-terminated; argv[0] looked up in PATH */
	const char **env_set; /* NULL-terminated "KEY=VALUE" to set (replace), or NULL */
	int probe_fd;         /* fd to hand the child as SPAWN_PROBE_FD, or -1 */
	const char *cwd;      /* directory to run in, or NULL */
	int stdout_fd;        /* fd to hand the child as its stdout, or -1: ours */

	/* state */
	pid_t pid;            /* the command (group leader); 0 before start */
	pid_t pgid;           /* == pid once started */
	bool reaped;          /* the leader was waited for */
	int status;           /* raw wait status once reaped */
	int start_errno;      /* why spawn_start() failed (ENOENT, EACCES, ...) */
	struct spawn_member {
		pid_t pid;
		uint64_t start; /* start time when tracked as our descendant, 0 = not */
	} *tree;              /* processes seen in the command's tree (leader excluded) */
	size_t ntree, tree_alloc;
	pid_t self;           /* getpid() at spawn_start(), 0 before */

	/* optional, set by the caller: told of every process spawn_reap(),
	 * spawn_wait() or spawn_tree_alive() reaps (the leader and tree pids),
	 * with its wait4() maximum resident set size in bytes (0 = unknown) */
	void (*on_reap)(void *arg, pid_t pid, uint64_t maxrss);
	void *on_reap_arg;

	int stderr_fd;        /* fd to hand the child as its stderr, or -1: ours */
	int cgroup_fd;        /* the child writes "0" to it before its exec (a cgroup's
			       * cgroup.procs: meter_enclose), or -1 */
};
#define SPAWN_INIT { .probe_fd = -1, .stdout_fd = -1, .stderr_fd = -1, .cgroup_fd = -1 } /* the rest 0 or NULL */

/* Make this process a child subreaper (Linux prctl; no-op elsewhere) so that
 * orphaned descendants are re-parented to us and stay in reach. 0 or -1. */
int spawn_set_subreaper(void);

/* Fork and exec. Returns 0 when the command is running; -1 after error()
 * ("cannot run 'cmd': No such file or directory") when it could not start
 * (sp->start_errno says why; the caller's exit status is then 127). */
int spawn_start(struct spawn *sp);

/* Reap without blocking: the leader (sets reaped/status) and every tracked
 * tree pid that is our zombie child, each with wait4() (on_reap is called for
 * each). Returns true once the leader is reaped. */
bool spawn_reap(struct spawn *sp);

/* Block until the leader exits (EINTR retried); returns spawn_exit_code(). */
int spawn_wait(struct spawn *sp);

/* Remember tree pids (e.g. meter_pids()); duplicates and the leader ignored. */
void spawn_track(struct spawn *sp, const pid_t *pids, size_t n);
/* Scan the process table for the leader's descendants and group members
 * (including zombies) and track them. */
void spawn_scan_tree(struct spawn *sp);

/* Send sig to the group and to each tracked pid outside it that is still our
 * descendant. Returns the number of targets signalled. */
int spawn_signal_tree(struct spawn *sp, int sig);
/* True while the group or any tracked descendant still exists (after reaping
 * what can be reaped). */
bool spawn_tree_alive(struct spawn *sp);

/*
 * Stopping a tree with a grace period, one rule for every caller: TERM, then
 * KILL once grace_ns has passed, then give up SPAWN_KILL_WAIT_NS later.
 * Without blocking (the record loop): spawn_stop_begin() sends TERM;
 * spawn_stop_step() is called now and then (reaping what it can) and says
 * whether the tree is gone, still waited for, or survived KILL (warned once);
 * spawn_stop_kill() sends KILL at once (asked twice), unless already sent.
 */
#define SPAWN_KILL_WAIT_NS 2000000000LL
struct spawn_stop {
	bool killed;
	int64_t kill_at_ns;     /* when KILL follows TERM */
	int64_t give_up_at_ns;  /* after KILL: when to stop waiting */
};
enum spawn_stop_state { SPAWN_STOP_GONE, SPAWN_STOP_WAITING, SPAWN_STOP_SURVIVED };
void spawn_stop_begin(struct spawn *sp, struct spawn_stop *st, int64_t grace_ns, int64_t now_ns);
void spawn_stop_kill(struct spawn *sp, struct spawn_stop *st, int64_t now_ns);
enum spawn_stop_state spawn_stop_step(struct spawn *sp, struct spawn_stop *st, int64_t now_ns);

/* The same, blocking: the stopper above, looked at every 10 ms. Returns 0
 * when nothing is left (or nothing was running), -1 (after warning) otherwise. */
int spawn_kill_tree(struct spawn *sp, int64_t grace_ns);

/* Exit code for a raw wait status: the code, or 128+N for signal N. */
int spawn_exit_code(int status);
/* Signal number that ended the command, or 0. */
int spawn_exit_signal(int status);

/* The parent of pid (pl_proc_read: /proc/PID/stat on Linux, sysctl on
 * macOS), or -1 when pid is gone or cannot be read. */
pid_t spawn_parent_of(pid_t pid);
/* True when pid is a descendant of this process (parent chain reaches us). */
bool spawn_is_descendant(pid_t pid);

void spawn_release(struct spawn *sp); /* frees tracking; NULL ok; does not kill */

struct strbuf;
/* Run argv (argv[0] looked up in PATH; NULL-terminated) to completion, apart
 * from struct spawn: same process group, nothing tracked. stdin and stderr are
 * /dev/null, stdout is appended to out (the caller releases it). Blocks until
 * the command exits. Returns 0 when it exited 0, -1 otherwise (could not
 * start, failed, was signalled); prints nothing. For short helper commands
 * such as git. */
int spawn_capture(const char *const *argv, struct strbuf *out);

#endif
