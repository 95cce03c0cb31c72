/* test_probe_nosigpipe.c -- the C probe header where F_SETNOSIGPIPE exists (macOS)
 *
 * On macOS a SIGPIPE raised by a pipe write goes to the process, not the
 * writing thread, so the header asks the descriptor not to raise it. Linux has
 * no such fcntl: here it is defined and fcntl() is intercepted, so the macOS
 * branch of the header is compiled and run on every system.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef F_SETNOSIGPIPE
#define F_SETNOSIGPIPE 0x7ffe /* any command number: the fake below answers it */
#define FAKE_NOSIGPIPE 1
#endif

static int nosigpipe_fd = -1, nosigpipe_calls;

static int fake_fcntl(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	long arg = va_arg(ap, long);
	va_end(ap);
	if (cmd == F_SETNOSIGPIPE) {
		nosigpipe_fd = fd;
		nosigpipe_calls++;
#ifdef FAKE_NOSIGPIPE
		return 0;
#endif
	}
	return fcntl(fd, cmd, arg);
}

#define fcntl fake_fcntl
#include "probe/stagebench_probe.h"
#undef fcntl

Test(probe_nosigpipe, the_descriptor_is_told_not_to_raise_sigpipe_once)
{
	int fds[2];
	char num[16];
	cr_assert_eq(pipe(fds), 0);
	snprintf(num, sizeof(num), "%d", fds[1]);
	setenv("STAGEBENCH_FD", num, 1);
	cr_assert_eq(sbp_stage("load"), 0);
	cr_assert_eq(sbp_mark("two"), 0);
	cr_assert_eq(nosigpipe_calls, 1, "F_SETNOSIGPIPE set once, got %d", nosigpipe_calls);
	cr_assert_eq(nosigpipe_fd, fds[1]);

	/* The reader goes: EPIPE, the probe turns off. Linux ignores the fake
	 * fcntl, so SIGPIPE is ignored here as F_SETNOSIGPIPE would make it. */
	signal(SIGPIPE, SIG_IGN);
	close(fds[0]);
	errno = 0;
	cr_assert_eq(sbp_mark("gone"), -1);
	cr_assert_eq(errno, EPIPE);
	cr_assert_eq(sbp_mark("off"), 0, "the probe is off now");
}
