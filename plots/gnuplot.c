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
	char *argv[] = { (char *)name, NULL };
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

/* Write the script to *in_fd while collecting what gnuplot says from *err_fd,
 * until both are closed. Returns 0, or -1 after error(). */
static int pump(int *in_fd, int *err_fd, const char *script, size_t len, struct strbuf *msg)
{
	fcntl(*in_fd, F_SETFL, fcntl(*in_fd, F_GETFL) | O_NONBLOCK);
	size_t off = 0;
	if (len == 0)
		close_fd(in_fd);
	while (*in_fd >= 0 || *err_fd >= 0) {
		struct pollfd p[2] = { { .fd = *in_fd, .events = POLLOUT },
				       { .fd = *err_fd, .events = POLLIN } };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return error("cannot wait for gnuplot: %s", strerror(errno));
		}
		if (*in_fd >= 0 && (p[0].revents & (POLLOUT | POLLERR | POLLHUP))) {
			ssize_t w = write(*in_fd, script + off, len - off);
			if (w > 0)
				off += (size_t)w;
			else if (w < 0 && errno != EAGAIN && errno != EINTR)
				off = len; /* gnuplot stopped reading: its stderr says why */
			if (off == len)
				close_fd(in_fd);
		}
		if (*err_fd >= 0 && (p[1].revents & (POLLIN | POLLERR | POLLHUP))) {
			char buf[4096];
			ssize_t r = read(*err_fd, buf, sizeof(buf));
			if (r > 0)
				strbuf_add(msg, buf, (size_t)r);
			else if (r == 0 || (errno != EAGAIN && errno != EINTR))
				close_fd(err_fd);
		}
	}
	return 0;
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

int plot_run_gnuplot(const char *program, const char *script, size_t len)
{
	const char *name = program ? program : "gnuplot";
	char *exe = find_program(name);
	if (!exe)
		return error(PLOT_GNUPLOT_MISSING);

	int in[2] = { -1, -1 }, err[2] = { -1, -1 };
	int rc = -1;
	pid_t pid = -1;
	struct strbuf msg = STRBUF_INIT;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_pipe;
	bool pipe_saved = false;

	if (pipe_cloexec(in) || pipe_cloexec(err)) {
		error("cannot create a pipe for gnuplot: %s", strerror(errno));
		goto out;
	}
	pid = spawn_gnuplot(name, exe, in, err);
	if (pid < 0)
		goto out;
	close_fd(&in[0]);
	close_fd(&err[1]);

	/* A gnuplot that dies early must not take us down with SIGPIPE. */
	if (!sigaction(SIGPIPE, &ign, &old_pipe))
		pipe_saved = true;
	if (pump(&in[1], &err[0], script, len, &msg))
		goto out;
	rc = reap(pid, &msg);
	pid = -1;
out:
	if (pipe_saved)
		sigaction(SIGPIPE, &old_pipe, NULL);
	close_fd(&in[0]);
	close_fd(&in[1]);
	close_fd(&err[0]);
	close_fd(&err[1]);
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	strbuf_release(&msg);
	free(exe);
	return rc;
}
