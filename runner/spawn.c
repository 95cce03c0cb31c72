/* spawn.c -- fork/exec in a new process group, exec errors over a pipe, tree-wide stop */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/util.h"
#include "../platform/platform.h"
#include "spawn.h"

extern char **environ;

#ifndef NSIG
#define NSIG 65 /* not POSIX: past the last signal, sigaction() fails and is skipped */
#endif

/* This process is a child subreaper (Linux): a descendant stays one while it lives. */
static bool subreaper;

int spawn_set_subreaper(void)
{
	int rc = pl_set_subreaper();
	subreaper = rc == 0;
	return rc < 0 ? -1 : 0;
}

static bool env_key_in(const char *entry, const char **set)
{
	const char *eq = strchr(entry, '=');
	size_t klen = eq ? (size_t)(eq - entry) : strlen(entry);
	for (; set && *set; set++)
		if (!strncmp(*set, entry, klen) && (*set)[klen] == '=')
			return true;
	return false;
}

static char **spawn_build_env(const char **set)
{
	size_t n = 0, k = 0;
	for (char **e = environ; e && *e; e++)
		n++;
	for (const char **s = set; s && *s; s++)
		n++;
	char **env = xcalloc(n + 1, sizeof(*env));
	for (char **e = environ; e && *e; e++)
		if (!env_key_in(*e, set))
			env[k++] = *e;
	for (const char **s = set; s && *s; s++)
		env[k++] = (char *)*s;
	env[k] = NULL;
	return env;
}

/* Only async-signal-safe calls from here to execve/_exit. */
static void child_exec(const struct spawn *sp, const char *path, char **env, int errfd,
		       const sigset_t *oldmask)
{
	int e;
	setpgid(0, 0);
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;
		if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &sa))
			continue;
		/* SIGPIPE too: stagebench ignores it (cli/main.c), the command must not */
		if (sig == SIGPIPE || (sa.sa_handler != SIG_IGN && sa.sa_handler != SIG_DFL)) {
			sa.sa_handler = SIG_DFL;
			sa.sa_flags = 0;
			sigaction(sig, &sa, NULL);
		}
	}
	if (sp->stdout_fd >= 0) {
		if (sp->stdout_fd == STDOUT_FILENO) {
			int fl = fcntl(STDOUT_FILENO, F_GETFD);
			if (fl < 0 || fcntl(STDOUT_FILENO, F_SETFD, fl & ~FD_CLOEXEC) < 0)
				goto fail;
		} else if (dup2(sp->stdout_fd, STDOUT_FILENO) < 0) {
			goto fail;
		}
	}
	if (sp->stderr_fd >= 0 && sp->stderr_fd != STDERR_FILENO &&
	    dup2(sp->stderr_fd, STDERR_FILENO) < 0)
		goto fail;
	if (sp->probe_fd >= 0) {
		if (sp->probe_fd == SPAWN_PROBE_FD) {
			int fl = fcntl(SPAWN_PROBE_FD, F_GETFD);
			if (fl < 0 || fcntl(SPAWN_PROBE_FD, F_SETFD, fl & ~FD_CLOEXEC) < 0)
				goto fail;
		} else if (dup2(sp->probe_fd, SPAWN_PROBE_FD) < 0) {
			goto fail;
		}
	}
	if (sp->cwd && chdir(sp->cwd))
		goto fail;
	/* Not joining it only costs the meter its whole-tree reader (it checks). */
	if (sp->cgroup_fd >= 0 && write(sp->cgroup_fd, "0", 1) < 0)
		errno = 0;
	fd_limit_restore();
	sigprocmask(SIG_SETMASK, oldmask, NULL);
	execve(path, sp->argv, env);
fail:
	e = errno;
	while (write(errfd, &e, sizeof(e)) < 0 && errno == EINTR)
		;
	_exit(127);
}

int spawn_start(struct spawn *sp)
{
	int err = 0, pfd[2] = { -1, -1 };
	if (!sp->argv || !sp->argv[0])
		BUG("spawn_start without a command");
	char *path = path_search(sp->argv[0], &err);
	if (!path) {
		sp->start_errno = err;
		return error("cannot run '%s': %s", sp->argv[0], strerror(err));
	}
	char **env = spawn_build_env(sp->env_set);
	if (pipe(pfd)) {
		err = errno;
		goto fail_noproc;
	}
	/* Keep the error pipe clear of the fd the probe pipe is moved to. */
	for (int i = 0; i < 2; i++) {
		int fd = fcntl(pfd[i], F_DUPFD_CLOEXEC, SPAWN_PROBE_FD + 1);
		if (fd < 0) {
			err = errno;
			goto fail_noproc;
		}
		close(pfd[i]);
		pfd[i] = fd;
	}

	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid_t pid = fork();
	if (pid == 0)
		child_exec(sp, path, env, pfd[1], &old);
	err = errno;
	if (pid > 0)
		setpgid(pid, pid); /* also in the parent: no race with a kill(-pgid) */
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(pfd[1]);
	pfd[1] = -1;
	if (pid < 0)
		goto fail_noproc;

	int child_err = 0;
	ssize_t r;
	do
		r = read(pfd[0], &child_err, sizeof(child_err));
	while (r < 0 && errno == EINTR);
	close(pfd[0]);
	free(path);
	free(env);
	if (r == (ssize_t)sizeof(child_err)) {
		int st;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		sp->start_errno = child_err;
		return error("cannot run '%s': %s", sp->argv[0], strerror(child_err));
	}
	sp->pid = sp->pgid = pid;
	sp->reaped = false;
	sp->self = getpid();
	return 0;

fail_noproc:
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	free(path);
	free(env);
	sp->start_errno = err;
	return error("cannot run '%s': %s", sp->argv[0], strerror(err));
}

int spawn_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 255;
}

int spawn_exit_signal(int status)
{
	return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

static void tree_remove_at(struct spawn *sp, size_t i)
{
	sp->tree[i] = sp->tree[--sp->ntree];
}

/* waitpid() through pl_wait(), telling on_reap of a reaped process. */
static pid_t reap_one(struct spawn *sp, pid_t pid, int *status, int flags)
{
	uint64_t maxrss;
	pid_t r = pl_wait(pid, status, flags, &maxrss);
	if (r == pid && sp->on_reap)
		sp->on_reap(sp->on_reap_arg, pid, maxrss);
	return r;
}

bool spawn_reap(struct spawn *sp)
{
	if (sp->pid > 0 && !sp->reaped) {
		int st;
		pid_t r;
		do
			r = reap_one(sp, sp->pid, &st, WNOHANG);
		while (r < 0 && errno == EINTR);
		if (r == sp->pid) {
			sp->reaped = true;
			sp->status = st;
		} else if (r < 0 && errno == ECHILD) {
			/* someone else reaped it: it is gone, status unknown */
			sp->reaped = true;
			sp->status = 0;
		}
	}
	for (size_t i = 0; i < sp->ntree;) {
		pid_t r;
		do
			r = reap_one(sp, sp->tree[i].pid, NULL, WNOHANG);
		while (r < 0 && errno == EINTR);
		if (r == sp->tree[i].pid ||
		    (r < 0 && errno == ECHILD && kill(sp->tree[i].pid, 0) && errno == ESRCH))
			tree_remove_at(sp, i);
		else
			i++;
	}
	return sp->reaped;
}

int spawn_wait(struct spawn *sp)
{
	while (!sp->reaped) {
		int st;
		pid_t r = reap_one(sp, sp->pid, &st, 0);
		if (r == sp->pid) {
			sp->reaped = true;
			sp->status = st;
		} else if (r < 0 && errno != EINTR) {
			sp->reaped = true;
			sp->status = 0;
		}
	}
	return spawn_exit_code(sp->status);
}

/* Whether the process pp (its stat just read) is our descendant: its parent
 * is this process or the unreaped leader, or, with the subreaper, a tracked
 * descendant still alive as the same process (its start time); else its
 * parent chain is walked (spawn_is_descendant). One or two reads where the
 * walk reads one per generation: a chain of N processes met as it grows,
 * a few at each sample, cost N * N / 2 reads. */
static bool tracked_descendant(const struct spawn *sp, pid_t self, const struct pl_proc *pp)
{
	if (pp->ppid == self || (pp->ppid == sp->pid && !sp->reaped))
		return true;
	for (size_t j = 0; subreaper && j < sp->ntree; j++) {
		struct pl_proc q;
		if (sp->tree[j].pid != pp->ppid)
			continue;
		if (sp->tree[j].start && !pl_proc_read(pp->ppid, &q) && q.start == sp->tree[j].start)
			return true;
		break;
	}
	return spawn_is_descendant(pp->pid);
}

void spawn_track(struct spawn *sp, const pid_t *pids, size_t n)
{
	pid_t self = sp->self ? sp->self : getpid();
	for (size_t i = 0; i < n; i++) {
		pid_t p = pids[i];
		struct pl_proc pp;
		if (p <= 1 || p == sp->pid || p == self)
			continue;
		size_t j;
		for (j = 0; j < sp->ntree && sp->tree[j].pid != p; j++)
			;
		if (j < sp->ntree)
			continue;
		ALLOC_GROW(sp->tree, sp->ntree + 1, sp->tree_alloc);
		sp->tree[sp->ntree].pid = p;
		/* Its identity, taken while it is ours: where no subreaper keeps
		 * orphans with us (macOS), a descendant whose parent died is then
		 * still recognised by pid and start time, and stopped by pid. */
		sp->tree[sp->ntree].start =
			!pl_proc_read(p, &pp) && tracked_descendant(sp, self, &pp) ? pp.start : 0;
		sp->ntree++;
	}
}

/* Still a process of the command: our descendant now, or the very process
 * (same start time) that was our descendant when it was tracked. A zombie
 * that is not our child is gone for us: its new parent reaps it. */
static bool still_ours(const struct spawn_member *m)
{
	struct pl_proc pp;
	if (m->start && !pl_proc_read(m->pid, &pp) && pp.start == m->start &&
	    pp.state != 'Z' && pp.state != 'X')
		return true; /* one read: the walk up reads one per generation */
	return spawn_is_descendant(m->pid);
}

/* ---- the process table (platform/platform.h) ---------------------------- */

pid_t spawn_parent_of(pid_t pid)
{
	struct pl_proc pp;
	return pl_proc_read(pid, &pp) ? -1 : pp.ppid;
}

struct scan {
	struct pl_proc *p;
	size_t n, alloc;
};

static int scan_add(const struct pl_proc *p, void *arg)
{
	struct scan *sc = arg;
	ALLOC_GROW(sc->p, sc->n + 1, sc->alloc);
	sc->p[sc->n++] = *p;
	return 0;
}

bool spawn_is_descendant(pid_t pid)
{
	pid_t self = getpid();
	if (pid <= 1 || pid == self)
		return false;
	for (int depth = 0; depth < 256; depth++) {
		pid_t pp = spawn_parent_of(pid);
		if (pp == self)
			return true;
		if (pp <= 1)
			return false;
		pid = pp;
	}
	return false;
}

void spawn_scan_tree(struct spawn *sp)
{
	if (sp->pid <= 0)
		return;
	struct scan sc = { NULL, 0, 0 };
	if (pl_proc_each(scan_add, &sc)) {
		free(sc.p);
		return;
	}
	pid_t self = sp->self ? sp->self : getpid();
	bool changed = true;
	while (changed) {
		changed = false;
		for (size_t i = 0; i < sc.n; i++) {
			pid_t p = sc.p[i].pid;
			if (p == sp->pid || p == self)
				continue;
			bool known = false, parent_known = sc.p[i].ppid == sp->pid;
			for (size_t j = 0; j < sp->ntree; j++) {
				known |= sp->tree[j].pid == p;
				parent_known |= sp->tree[j].pid == sc.p[i].ppid;
			}
			if (known)
				continue;
			if (parent_known || (sp->pgid > 1 && sc.p[i].pgrp == sp->pgid)) {
				spawn_track(sp, &p, 1);
				changed = true;
			}
		}
	}
	free(sc.p);
}

static bool group_signallable(const struct spawn *sp)
{
	return sp->pgid > 1 && sp->pgid != getpgrp();
}

int spawn_signal_tree(struct spawn *sp, int sig)
{
	int count = 0;
	/* Descendants outside the group first: once the group's leader dies they
	 * would be re-parented away (without a subreaper) and fail the check. */
	for (size_t i = 0; i < sp->ntree; i++) {
		pid_t p = sp->tree[i].pid;
		if (getpgid(p) == sp->pgid || !still_ours(&sp->tree[i]))
			continue; /* signalled with the group, or no longer ours */
		if (!kill(p, sig))
			count++;
	}
	if (group_signallable(sp) && !kill(-sp->pgid, sig))
		count++;
	return count;
}

bool spawn_tree_alive(struct spawn *sp)
{
	spawn_scan_tree(sp);
	spawn_reap(sp);
	if (sp->pid <= 0)
		return false;
	if (!sp->reaped)
		return true;
	if (group_signallable(sp) && (!kill(-sp->pgid, 0) || errno == EPERM))
		return true;
	for (size_t i = 0; i < sp->ntree; i++)
		if (still_ours(&sp->tree[i]))
			return true;
	return false;
}

void spawn_stop_begin(struct spawn *sp, struct spawn_stop *st, int64_t grace_ns, int64_t now_ns)
{
	memset(st, 0, sizeof(*st));
	spawn_signal_tree(sp, SIGTERM);
	st->kill_at_ns = now_ns + grace_ns;
}

void spawn_stop_kill(struct spawn *sp, struct spawn_stop *st, int64_t now_ns)
{
	if (st->killed)
		return;
	spawn_signal_tree(sp, SIGKILL);
	st->killed = true;
	st->give_up_at_ns = now_ns + SPAWN_KILL_WAIT_NS;
}

enum spawn_stop_state spawn_stop_step(struct spawn *sp, struct spawn_stop *st, int64_t now_ns)
{
	if (!spawn_tree_alive(sp))
		return SPAWN_STOP_GONE;
	if (!st->killed && now_ns >= st->kill_at_ns) {
		spawn_stop_kill(sp, st, now_ns);
	} else if (st->killed && now_ns >= st->give_up_at_ns) {
		warning("processes of '%s' survived SIGKILL", sp->argv[0]);
		return SPAWN_STOP_SURVIVED;
	}
	return SPAWN_STOP_WAITING;
}

int spawn_kill_tree(struct spawn *sp, int64_t grace_ns)
{
	if (!spawn_tree_alive(sp))
		return 0;
	struct spawn_stop st;
	spawn_stop_begin(sp, &st, grace_ns, mono_ns());
	for (;;) {
		switch (spawn_stop_step(sp, &st, mono_ns())) {
		case SPAWN_STOP_GONE:
			return 0;
		case SPAWN_STOP_SURVIVED:
			return -1;
		case SPAWN_STOP_WAITING:
			break;
		}
		sleep_ns(10 * 1000000LL);
	}
}

void spawn_release(struct spawn *sp)
{
	if (!sp)
		return;
	free(sp->tree);
	sp->tree = NULL;
	sp->ntree = sp->tree_alloc = 0;
}

int spawn_capture(const char *const *argv, struct strbuf *out)
{
	int pfd[2];
	if (pipe(pfd))
		return -1;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	posix_spawn_file_actions_addclose(&fa, pfd[0]);
	posix_spawn_file_actions_addclose(&fa, pfd[1]);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	if (rc) {
		close(pfd[0]);
		return -1;
	}
	char buf[4096];
	ssize_t r;
	while ((r = read(pfd[0], buf, sizeof(buf))) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		strbuf_add(out, buf, (size_t)r);
	}
	close(pfd[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}
