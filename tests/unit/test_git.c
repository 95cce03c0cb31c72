/* test_git.c -- git_head on a scratch repository: full and short commit, clean and dirty, no checkout */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../../runner/git.h"
#include "../../runner/spawn.h"

static char tmpdir[64];

/* Run a shell command in tmpdir; it must succeed. */
static void sh(const char *what)
{
	char *cmd = xasprintf("cd '%s' && %s", tmpdir, what);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	free(cmd);
}

static void make_dir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/sb-git-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

static void remove_dir(void)
{
	char *cmd = xasprintf("rm -rf '%s'", tmpdir);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
}

/* A repository in tmpdir with one commit. */
static void make_repo(void)
{
	sh("git init -q . && echo a > f && git add f && "
	   "git -c user.name=t -c user.email=t@t -c commit.gpgsign=false commit -q -m one");
}

static char *git_says(const char *a1, const char *a2)
{
	struct strbuf out = STRBUF_INIT;
	const char *const argv[] = { "git", "-C", tmpdir, a1, a2, "HEAD", NULL };
	cr_assert_eq(spawn_capture(argv, &out), 0);
	while (out.len && out.buf[out.len - 1] == '\n')
		out.buf[--out.len] = '\0';
	return strbuf_detach(&out);
}

Test(git, full_and_short_commit_of_a_clean_checkout, .init = make_dir, .fini = remove_dir,
     .timeout = 30)
{
	make_repo();
	char *full = git_says("rev-parse", "--verify");
	char *abbrev = git_says("rev-parse", "--short");
	cr_assert_eq(strlen(full), 40);
	int dirty = 7;
	char *c = git_head(tmpdir, false, &dirty);
	cr_assert_str_eq(c, full);
	cr_assert_eq(dirty, 0);
	free(c);
	dirty = 7;
	c = git_head(tmpdir, true, &dirty);
	cr_assert_str_eq(c, abbrev);
	cr_assert_lt(strlen(c), 40);
	cr_assert_eq(dirty, 0);
	free(c);
	free(full);
	free(abbrev);
}

Test(git, uncommitted_or_untracked_files_make_it_dirty, .init = make_dir, .fini = remove_dir,
     .timeout = 30)
{
	make_repo();
	sh("echo b > new");
	int dirty = 7;
	char *c = git_head(tmpdir, true, &dirty);
	cr_assert_not_null(c);
	cr_assert_eq(dirty, 1);
	free(c);
}

Test(git, no_commit_outside_a_checkout, .init = make_dir, .fini = remove_dir, .timeout = 30)
{
	/* GIT_CEILING_DIRECTORIES keeps git from finding a repository above /tmp */
	setenv("GIT_CEILING_DIRECTORIES", "/tmp", 1);
	int dirty = 7;
	cr_assert_null(git_head(tmpdir, false, &dirty));
	cr_assert_eq(dirty, -1);
	sh("git init -q .");
	dirty = 7;
	cr_assert_null(git_head(tmpdir, true, &dirty), "a repository without a commit has no HEAD");
	cr_assert_eq(dirty, -1);
}
