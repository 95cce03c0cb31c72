/* signals.c -- the record engine's self-pipe for signals, installed for one run (or by
 * the caller) */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/util.h"
#include "record.h"
#include "record_int.h"

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

/* Returns the signal number read from the self-pipe (last one), 0 for none;
 * sets *chld (when not NULL) if a SIGCHLD came. */
int drain_signals(int fd, bool *chld)
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
