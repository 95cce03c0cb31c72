/* gnuplot.c -- find gnuplot on PATH and feed it a script on stdin, capturing what it says */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plot.h"

extern char **environ;

/* The executable `name` resolves to (PATH search unless it has a '/'), or NULL. */
static char *find_program(const char *name)
{
	struct stat st;
	int err;
	if (strchr(name, '/'))
		return (!stat(name, &st) && S_ISREG(st.st_mode) && !access(name, X_OK)) ?
			       xstrdup(name) : NULL;
	return path_search(name, &err);
}

/* pipe2(fds, O_CLOEXEC) in POSIX terms (pipe2 is not on macOS). */
static int pipe_cloexec(int fds[2])
{
	if (pipe(fds))
		return -1;
	if (fcntl(fds[0], F_SETFD, FD_CLOEXEC) || fcntl(fds[1], F_SETFD, FD_CLOEXEC)) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	return 0;
}

bool plot_have_gnuplot(const char *program)
{
	char *exe = find_program(program ? program : "gnuplot");
	free(exe);
	return exe != NULL;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Trim trailing white space, for quoting gnuplot's message. */
static void rtrim(struct strbuf *sb)
{
	while (sb->len && (sb->buf[sb->len - 1] == '\n' || sb->buf[sb->len - 1] == ' ' ||
			   sb->buf[sb->len - 1] == '\r'))
		sb->buf[--sb->len] = '\0';
}

/* Start `exe` with stdin from in[0], stdout and stderr into err[1]; SIGPIPE
 * default in the child. Returns the pid, or -1 after error(). */
static pid_t spawn_gnuplot(const char *name, const char *exe, const int in[2], const int err[2])
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	pid_t pid = -1;
	if (posix_spawn_file_actions_init(&fa)) {
		error("cannot set up gnuplot's process: %s", strerror(errno));
		return -1;
	}
	if (posix_spawnattr_init(&attr)) {
		error("cannot set up gnuplot's process: %s", strerror(errno));
		posix_spawn_file_actions_destroy(&fa);
		return -1;
	}
	sigset_t dflt;
	sigemptyset(&dflt);
	sigaddset(&dflt, SIGPIPE);
	/* the script as a file to load, not typed input: gnuplot reads its stdin
	 * a byte a call, a file it loads through stdio (and says the line of an
	 * error) */
	char *argv[] = { (char *)name, (char *)"/dev/stdin", NULL };
	int serr;
	if (posix_spawn_file_actions_adddup2(&fa, in[0], 0) ||
	    posix_spawn_file_actions_adddup2(&fa, err[1], 1) ||
	    posix_spawn_file_actions_adddup2(&fa, err[1], 2) ||
	    posix_spawnattr_setsigdefault(&attr, &dflt) ||
	    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF))
		error("cannot set up gnuplot's process: %s", strerror(errno));
	else if ((serr = posix_spawn(&pid, exe, &fa, &attr, argv, environ)) != 0) {
		pid = -1;
		if (serr == ENOENT)
			error(PLOT_GNUPLOT_MISSING);
		else
			error("cannot start '%s': %s", exe, strerror(serr));
	}
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	return pid;
}

/* One gnuplot being fed its script and heard. */
struct gp_job {
	pid_t pid;
	int in, err; /* our ends: its stdin, its stdout and stderr */
	const char *script;
	size_t len, off;
	struct strbuf msg;
};

/* Feed one job's stdin what it can take now. */
static void pump_in(struct gp_job *j)
{
	ssize_t w = write(j->in, j->script + j->off, j->len - j->off);
	if (w > 0)
		j->off += (size_t)w;
	else if (w < 0 && errno != EAGAIN && errno != EINTR)
		j->off = j->len; /* gnuplot stopped reading: its stderr says why */
	if (j->off == j->len)
		close_fd(&j->in);
}

/* Read what one job says now. */
static void pump_err(struct gp_job *j)
{
	char buf[4096];
	ssize_t r = read(j->err, buf, sizeof(buf));
	if (r > 0)
		strbuf_add(&j->msg, buf, (size_t)r);
	else if (r == 0 || (errno != EAGAIN && errno != EINTR))
		close_fd(&j->err);
}

/* Write each job's script while collecting what each says, all at once,
 * until every pipe is closed. Returns 0, or -1 after error(). */
static int pump(struct gp_job *jobs, size_t n)
{
	struct pollfd *p = xcalloc(2 * n, sizeof(*p));
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		if (jobs[i].in >= 0)
			fcntl(jobs[i].in, F_SETFL, fcntl(jobs[i].in, F_GETFL) | O_NONBLOCK);
		if (jobs[i].len == 0)
			close_fd(&jobs[i].in);
	}
	for (;;) {
		bool open_any = false;
		for (size_t i = 0; i < n; i++) {
			p[2 * i] = (struct pollfd){ .fd = jobs[i].in, .events = POLLOUT };
			p[2 * i + 1] = (struct pollfd){ .fd = jobs[i].err, .events = POLLIN };
			open_any |= jobs[i].in >= 0 || jobs[i].err >= 0;
		}
		if (!open_any)
			break;
		if (poll(p, 2 * n, -1) < 0) {
			if (errno == EINTR)
				continue;
			rc = error("cannot wait for gnuplot: %s", strerror(errno));
			break;
		}
		for (size_t i = 0; i < n; i++) {
			if (jobs[i].in >= 0 && (p[2 * i].revents & (POLLOUT | POLLERR | POLLHUP)))
				pump_in(&jobs[i]);
			if (jobs[i].err >= 0 && (p[2 * i + 1].revents & (POLLIN | POLLERR | POLLHUP)))
				pump_err(&jobs[i]);
		}
	}
	free(p);
	return rc;
}

/* What gnuplot said, fit for a terminal: its stdout shares the pipe, and a
 * gnuplot that could not open its output writes the image there. Cut the
 * message at the first control byte and say how much was left out. */
static void tidy_message(struct strbuf *msg)
{
	for (size_t i = 0; i < msg->len; i++) {
		unsigned char c = (unsigned char)msg->buf[i];
		if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
			size_t dropped = msg->len - i;
			msg->buf[i] = '\0';
			msg->len = i;
			rtrim(msg);
			strbuf_addf(msg, "%s[%zu bytes of binary output left out]", msg->len ? " " : "",
				    dropped);
			return;
		}
	}
}

/* Reap gnuplot and judge how it ended. Returns 0, or -1 after error(). */
static int reap(pid_t pid, struct strbuf *msg)
{
	int status;
	pid_t w;
	while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	tidy_message(msg);
	rtrim(msg);
	if (w < 0)
		return error("cannot wait for gnuplot: %s", strerror(errno));
	if (WIFSIGNALED(status))
		return error("gnuplot was killed by signal %d%s%s", WTERMSIG(status),
			     msg->len ? ": " : "", strbuf_str(msg));
	if (WEXITSTATUS(status) != 0)
		return error("gnuplot failed (exit %d): %s", WEXITSTATUS(status),
			     msg->len ? strbuf_str(msg) : "no message");
	if (msg->len)
		warning("gnuplot said: %s", strbuf_str(msg));
	return 0;
}

/* Start one job: pipes and the process. Returns 0, or -1 after error(). */
static int job_start(struct gp_job *j, const char *name, const char *exe)
{
	int in[2] = { -1, -1 }, err[2] = { -1, -1 };
	if (pipe_cloexec(in) || pipe_cloexec(err)) {
		error("cannot create a pipe for gnuplot: %s", strerror(errno));
		close_fd(&in[0]);
		close_fd(&in[1]);
		return -1;
	}
	j->pid = spawn_gnuplot(name, exe, in, err);
	close_fd(&in[0]);
	close_fd(&err[1]);
	j->in = in[1];
	j->err = err[0];
	return j->pid < 0 ? -1 : 0;
}

static void job_close(struct gp_job *j)
{
	close_fd(&j->in);
	close_fd(&j->err);
	if (j->pid > 0)
		while (waitpid(j->pid, NULL, 0) < 0 && errno == EINTR)
			;
	j->pid = -1;
	strbuf_release(&j->msg);
}

int plot_run_gnuplots(const char *program, const char *const *scripts, const size_t *lens,
		      size_t n, int *rcs)
{
	const char *name = program ? program : "gnuplot";
	for (size_t i = 0; i < n; i++)
		rcs[i] = -1;
	char *exe = find_program(name);
	if (!exe)
		return error(PLOT_GNUPLOT_MISSING);
	struct gp_job *jobs = xcalloc(n ? n : 1, sizeof(*jobs));
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_pipe;
	int rc = 0;
	size_t started = 0;
	for (; started < n; started++) {
		jobs[started] = (struct gp_job){ .pid = -1, .in = -1, .err = -1,
						 .script = scripts[started], .len = lens[started],
						 .msg = STRBUF_INIT };
		if (job_start(&jobs[started], name, exe)) {
			rc = -1;
			started++;
			break;
		}
	}
	/* A gnuplot that dies early must not take us down with SIGPIPE. */
	bool pipe_saved = !sigaction(SIGPIPE, &ign, &old_pipe);
	if (!rc)
		rc = pump(jobs, n);
	for (size_t i = 0; i < n; i++) {
		if (!rc && !(i && rcs[i - 1])) {
			rcs[i] = reap(jobs[i].pid, &jobs[i].msg);
			jobs[i].pid = -1;
		}
	}
	if (pipe_saved)
		sigaction(SIGPIPE, &old_pipe, NULL);
	for (size_t i = 0; i < started; i++)
		job_close(&jobs[i]);
	free(jobs);
	free(exe);
	for (size_t i = 0; i < n && !rc; i++)
		rc = rcs[i];
	return rc;
}

int plot_run_gnuplot(const char *program, const char *script, size_t len)
{
	int rc1;
	int rc = plot_run_gnuplots(program, &script, &len, 1, &rc1);
	return rc ? rc : rc1;
}
