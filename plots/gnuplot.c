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
	if (strchr(name, '/'))
		return (!stat(name, &st) && S_ISREG(st.st_mode) && !access(name, X_OK)) ?
			       xstrdup(name) : NULL;
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *colon = strchrnul(path, ':');
		size_t len = (size_t)(colon - path);
		char *cand = len ? xasprintf("%.*s/%s", (int)len, path, name) : xasprintf("./%s", name);
		if (!stat(cand, &st) && S_ISREG(st.st_mode) && !access(cand, X_OK))
			return cand;
		free(cand);
		path = *colon ? colon + 1 : colon;
	}
	return NULL;
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
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	bool fa_ok = false, attr_ok = false;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_pipe;
	bool pipe_saved = false;

	if (pipe2(in, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
		error("cannot create a pipe for gnuplot: %s", strerror(errno));
		goto out;
	}
	if (posix_spawn_file_actions_init(&fa))
		goto spawn_fail;
	fa_ok = true;
	if (posix_spawn_file_actions_adddup2(&fa, in[0], 0) ||
	    posix_spawn_file_actions_adddup2(&fa, err[1], 1) ||
	    posix_spawn_file_actions_adddup2(&fa, err[1], 2))
		goto spawn_fail;
	if (posix_spawnattr_init(&attr))
		goto spawn_fail;
	attr_ok = true;
	sigset_t dflt;
	sigemptyset(&dflt);
	sigaddset(&dflt, SIGPIPE);
	if (posix_spawnattr_setsigdefault(&attr, &dflt) ||
	    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF))
		goto spawn_fail;
	char *argv[] = { (char *)name, NULL };
	int serr = posix_spawn(&pid, exe, &fa, &attr, argv, environ);
	if (serr) {
		pid = -1;
		if (serr == ENOENT)
			error(PLOT_GNUPLOT_MISSING);
		else
			error("cannot start '%s': %s", exe, strerror(serr));
		goto out;
	}
	close_fd(&in[0]);
	close_fd(&err[1]);

	/* A gnuplot that dies early must not take us down with SIGPIPE. */
	if (!sigaction(SIGPIPE, &ign, &old_pipe))
		pipe_saved = true;
	fcntl(in[1], F_SETFL, fcntl(in[1], F_GETFL) | O_NONBLOCK);
	size_t off = 0;
	if (len == 0)
		close_fd(&in[1]);
	while (in[1] >= 0 || err[0] >= 0) {
		struct pollfd p[2] = { { .fd = in[1], .events = POLLOUT },
				       { .fd = err[0], .events = POLLIN } };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			error("cannot wait for gnuplot: %s", strerror(errno));
			goto out;
		}
		if (in[1] >= 0 && (p[0].revents & (POLLOUT | POLLERR | POLLHUP))) {
			ssize_t w = write(in[1], script + off, len - off);
			if (w > 0)
				off += (size_t)w;
			else if (w < 0 && errno != EAGAIN && errno != EINTR)
				off = len; /* gnuplot stopped reading: its stderr says why */
			if (off == len)
				close_fd(&in[1]);
		}
		if (err[0] >= 0 && (p[1].revents & (POLLIN | POLLERR | POLLHUP))) {
			char buf[4096];
			ssize_t r = read(err[0], buf, sizeof(buf));
			if (r > 0)
				strbuf_add(&msg, buf, (size_t)r);
			else if (r == 0 || (errno != EAGAIN && errno != EINTR))
				close_fd(&err[0]);
		}
	}
	int status;
	pid_t w;
	while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	pid = -1;
	rtrim(&msg);
	if (w < 0) {
		error("cannot wait for gnuplot: %s", strerror(errno));
	} else if (WIFSIGNALED(status)) {
		error("gnuplot was killed by signal %d%s%s", WTERMSIG(status),
		      msg.len ? ": " : "", strbuf_str(&msg));
	} else if (WEXITSTATUS(status) != 0) {
		error("gnuplot failed (exit %d): %s", WEXITSTATUS(status),
		      msg.len ? strbuf_str(&msg) : "no message");
	} else {
		if (msg.len)
			warning("gnuplot said: %s", strbuf_str(&msg));
		rc = 0;
	}
	goto out;

spawn_fail:
	error("cannot set up gnuplot's process: %s", strerror(errno));
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
	if (fa_ok)
		posix_spawn_file_actions_destroy(&fa);
	if (attr_ok)
		posix_spawnattr_destroy(&attr);
	strbuf_release(&msg);
	free(exe);
	return rc;
}
