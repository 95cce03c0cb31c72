/* testutil.h -- scratch directories and stderr capture for the unit tests */
#ifndef SB_TESTUTIL_H
#define SB_TESTUTIL_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../common/util.h"

/* A fresh directory /tmp/sb-test-NAME-XXXXXX; caller frees the path. */
static inline char *test_tmpdir(const char *name)
{
	char *d = xasprintf("/tmp/sb-test-%s-XXXXXX", name);
	cr_assert_not_null(mkdtemp(d));
	return d;
}

static inline void test_rm_rf(const char *dir)
{
	char *cmd = xasprintf("rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
}

/* Capture what the code under test writes to stderr:
 *   struct stderr_capture c; stderr_capture_begin(&c);
 *   ... call ...
 *   char *msg = stderr_capture_end(&c);   (caller frees) */
struct stderr_capture {
	char path[32];
	int fd, saved;
};

static inline void stderr_capture_begin(struct stderr_capture *c)
{
	snprintf(c->path, sizeof(c->path), "/tmp/sb-test-stderr-XXXXXX");
	c->fd = mkstemp(c->path);
	cr_assert(c->fd >= 0);
	fflush(stderr);
	c->saved = dup(2);
	dup2(c->fd, 2);
}

__attribute__((noinline, unused)) static char *stderr_capture_end(struct stderr_capture *c)
{
	char *msg;
	size_t len;
	fflush(stderr);
	dup2(c->saved, 2);
	close(c->saved);
	close(c->fd);
	cr_assert_eq(read_file(c->path, &msg, &len), 0);
	unlink(c->path);
	return msg;
}

#endif
