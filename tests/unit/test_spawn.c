/* test_spawn.c -- exit codes, exec failures, probe fd and whole-tree stops */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/parse.h"
#include "../../common/util.h"
#include "../../platform/platform.h"
#include "../../runner/spawn.h"

static int run(char **argv)
{
	struct spawn sp = SPAWN_INIT;
	sp.argv = argv;
	if (spawn_start(&sp))
		return -1;
	int rc = spawn_wait(&sp);
	spawn_release(&sp);
	return rc;
}

Test(spawn, passes_the_exit_code_through, .timeout = 10)
{
	char *argv[] = { "sh", "-c", "exit 5", NULL };
	cr_assert_eq(run(argv), 5);
	char *ok[] = { "true", NULL };
	cr_assert_eq(run(ok), 0);
}

Test(spawn, reports_death_by_signal_as_128_plus_n, .timeout = 10)
{
	char *argv[] = { "sh", "-c", "kill -TERM $$", NULL };
	cr_assert_eq(run(argv), 128 + SIGTERM);
	char *k[] = { "sh", "-c", "kill -KILL $$", NULL };
	cr_assert_eq(run(k), 137);
}

Test(spawn, missing_command_fails_to_start_with_enoent, .timeout = 10)
{
	struct spawn sp = SPAWN_INIT;
	char *argv[] = { "stagebench-no-such-command-xyz", NULL };
	sp.argv = argv;
	cr_assert_eq(spawn_start(&sp), -1);
	cr_assert_eq(sp.start_errno, ENOENT);
	char *abs[] = { "/nonexistent/dir/cmd", NULL };
	struct spawn sp2 = SPAWN_INIT;
	sp2.argv = abs;
	cr_assert_eq(spawn_start(&sp2), -1);
	cr_assert_eq(sp2.start_errno, ENOENT);
	cr_assert_eq(sp2.pid, 0);
}

Test(spawn, child_runs_in_its_own_process_group, .timeout = 10)
{
	struct spawn sp = SPAWN_INIT;
	char *argv[] = { "sleep", "5", NULL };
	sp.argv = argv;
	cr_assert_eq(spawn_start(&sp), 0);
	cr_assert_eq(getpgid(sp.pid), sp.pid);
	cr_assert_neq(getpgid(sp.pid), getpgrp());
	cr_assert_eq(spawn_kill_tree(&sp, 1000000000LL), 0);
	cr_assert(sp.reaped);
	cr_assert_eq(spawn_exit_code(sp.status), 128 + SIGTERM);
	spawn_release(&sp);
}

Test(spawn, sets_environment_and_hands_over_the_probe_fd, .timeout = 10)
{
	int pfd[2];
	cr_assert_eq(pipe2(pfd, O_CLOEXEC), 0);
	struct spawn sp = SPAWN_INIT;
	const char *env[] = { "SB_TEST_VAR=hello", "STAGEBENCH_FD=3", NULL };
	char *argv[] = { "sh", "-c", "echo \"$SB_TEST_VAR fd=$STAGEBENCH_FD\" >&3", NULL };
	sp.argv = argv;
	sp.env_set = env;
	sp.probe_fd = pfd[1];
	cr_assert_eq(spawn_start(&sp), 0);
	close(pfd[1]);
	char buf[128] = { 0 };
	size_t got = 0;
	ssize_t r;
	while ((r = read(pfd[0], buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)r;
	close(pfd[0]);
	cr_assert_eq(spawn_wait(&sp), 0);
	cr_assert_str_eq(buf, "hello fd=3\n");
	spawn_release(&sp);
}

/* stdout_fd becomes the command's stdout, even when it sits at the probe fd's
 * number; this process's own stdout is untouched. */
Test(spawn, hands_over_stdout_fd_beside_the_probe_fd, .timeout = 10)
{
	int out[2], pfd[2];
	cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(pfd, O_CLOEXEC), 0);
	/* put the stdout pipe's write end at fd 3, where the probe fd goes */
	int saved3 = fcntl(SPAWN_PROBE_FD, F_DUPFD_CLOEXEC, 10);
	cr_assert_eq(dup3(out[1], SPAWN_PROBE_FD, O_CLOEXEC), SPAWN_PROBE_FD);
	close(out[1]);
	struct spawn sp = SPAWN_INIT;
	char *argv[] = { "sh", "-c", "echo to-stdout; echo to-probe >&3", NULL };
	sp.argv = argv;
	sp.stdout_fd = SPAWN_PROBE_FD;
	sp.probe_fd = pfd[1];
	cr_assert_eq(spawn_start(&sp), 0);
	close(SPAWN_PROBE_FD);
	if (saved3 >= 0) {
		dup3(saved3, SPAWN_PROBE_FD, O_CLOEXEC);
		close(saved3);
	}
	close(pfd[1]);
	char a[64] = { 0 }, b[64] = { 0 };
	size_t ga = 0, gb = 0;
	ssize_t r;
	while ((r = read(out[0], a + ga, sizeof(a) - 1 - ga)) > 0)
		ga += (size_t)r;
	while ((r = read(pfd[0], b + gb, sizeof(b) - 1 - gb)) > 0)
		gb += (size_t)r;
	close(out[0]);
	close(pfd[0]);
	cr_assert_eq(spawn_wait(&sp), 0);
	cr_assert_str_eq(a, "to-stdout\n");
	cr_assert_str_eq(b, "to-probe\n");
	spawn_release(&sp);
}

static pid_t read_pid_file(const char *path)
{
	for (int i = 0; i < 500; i++) {
		char *data = NULL;
		size_t len;
		int pid;
		if (!access(path, R_OK) && !read_file(path, &data, &len)) {
			while (len && (data[len - 1] == '\n'))
				data[--len] = '\0';
			int ok = len && !parse_int(data, &pid);
			free(data);
			if (ok)
				return pid;
		}
		usleep(10000);
	}
	return -1;
}

/* A grandchild in the group, and a descendant that left the group with setsid. */
Test(spawn, kill_tree_stops_grandchild_and_setsid_descendant, .timeout = 20)
{
	char dir[] = "/tmp/sb-spawn-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char *script = xasprintf("sleep 60 & echo $! > %s/gc.tmp && mv %s/gc.tmp %s/gc; "
				 "setsid sh -c 'echo $$ > %s/ss.tmp && mv %s/ss.tmp %s/ss; exec sleep 60' & "
				 "wait",
				 dir, dir, dir, dir, dir, dir);
	char *argv[] = { "sh", "-c", script, NULL };
	struct spawn sp = SPAWN_INIT;
	sp.argv = argv;
	cr_assert_eq(spawn_start(&sp), 0);
	char *gcp = xasprintf("%s/gc", dir), *ssp = xasprintf("%s/ss", dir);
	pid_t gc = read_pid_file(gcp), ss = read_pid_file(ssp);
	cr_assert_gt(gc, 1);
	cr_assert_gt(ss, 1);
	cr_assert_eq(getpgid(gc), sp.pgid);
	for (int i = 0; i < 200 && getpgid(ss) != ss; i++)
		usleep(10000); /* setsid may not have run yet */
	cr_assert_eq(getpgid(ss), ss, "the setsid'ed descendant left the group");
	spawn_scan_tree(&sp);
	cr_assert_eq(spawn_kill_tree(&sp, 2000000000LL), 0);
	cr_assert_eq(kill(gc, 0), -1);
	cr_assert_eq(kill(ss, 0), -1, "setsid'ed descendant %d survived", (int)ss);
	spawn_release(&sp);
	char *cmd = xasprintf("rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	free(gcp);
	free(ssp);
	free(script);
}

/* An orphan re-parented to us (subreaper) is still stopped, and a process we
 * started outside the command survives. */
Test(spawn, orphans_are_stopped_and_bystanders_survive, .timeout = 20)
{
	cr_assert_eq(spawn_set_subreaper(), 0);
	pid_t bystander = fork();
	if (bystander == 0) {
		execlp("sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	cr_assert_gt(bystander, 0);

	char dir[] = "/tmp/sb-spawn-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	/* The middle shell exits at once: its setsid'ed child becomes our orphan. */
	char *script = xasprintf("sh -c 'setsid sleep 60 & echo $! > %s/o.tmp; mv %s/o.tmp %s/o'; sleep 60",
				 dir, dir, dir);
	char *argv[] = { "sh", "-c", script, NULL };
	struct spawn sp = SPAWN_INIT;
	sp.argv = argv;
	cr_assert_eq(spawn_start(&sp), 0);
	char *op = xasprintf("%s/o", dir);
	pid_t orphan = read_pid_file(op);
	cr_assert_gt(orphan, 1);
	for (int i = 0; i < 200; i++) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)orphan);
		char *data = NULL;
		size_t len;
		if (read_file(path, &data, &len))
			break;
		char *rp = strrchr(data, ')');
		int ppid = -1;
		char st;
		sscanf(rp + 1, " %c %d", &st, &ppid);
		free(data);
		if (ppid == getpid())
			break;
		usleep(10000);
	}
	cr_assert(spawn_is_descendant(orphan));
	cr_assert_not(spawn_is_descendant(1));
	/* The scan cannot link the orphan to the command any more; the meter
	 * remembers it, as spawn_track does here. */
	spawn_track(&sp, &orphan, 1);
	cr_assert_eq(spawn_kill_tree(&sp, 2000000000LL), 0);
	cr_assert_eq(kill(orphan, 0), -1);
	cr_assert_eq(kill(bystander, 0), 0, "the bystander was signalled");
	kill(bystander, SIGKILL);
	waitpid(bystander, NULL, 0);
	spawn_release(&sp);
	char *cmd = xasprintf("rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	free(op);
	free(script);
}

/* A chain of processes deeper than spawn_is_descendant's walk (256
 * generations), handed over a few at a time as it grows (as the meter finds
 * it, sample by sample): with the subreaper each is tracked as ours from its
 * tracked parent (one or two reads, not one per generation), so every one is
 * signalled, the deepest too. */
Test(spawn, tracks_and_signals_a_chain_deeper_than_the_walk, .timeout = 60)
{
#ifndef __linux__
	cr_skip("no subreaper here: descendants are found by walking their parents");
#endif
	enum { DEPTH = 280, BATCH = 7 };
	cr_assert_eq(spawn_set_subreaper(), 0);
	int fds[2];
	cr_assert_eq(pipe(fds), 0);
	pid_t first = fork();
	cr_assert_geq(first, 0);
	if (first == 0) {
		close(fds[0]);
		for (int k = 0; k < DEPTH; k++) {
			pid_t me = getpid();
			if (write(fds[1], &me, sizeof(me)) != sizeof(me) || k == DEPTH - 1 || fork())
				break; /* this one stays; its child goes on */
		}
		close(fds[1]);
		for (;;)
			pause();
	}
	close(fds[1]);
	struct spawn sp = SPAWN_INIT;
	pid_t pids[DEPTH];
	size_t got = 0, tracked = 0;
	while (got < DEPTH) {
		ssize_t n = read(fds[0], &pids[got], sizeof(pid_t));
		cr_assert_eq(n, (ssize_t)sizeof(pid_t), "the chain stopped at %zu", got);
		if (++got - tracked == BATCH || got == DEPTH) {
			spawn_track(&sp, &pids[tracked], got - tracked);
			tracked = got;
		}
	}
	close(fds[0]);
	cr_assert_eq(sp.ntree, (size_t)DEPTH);
	size_t ours = 0;
	for (size_t i = 0; i < sp.ntree; i++)
		ours += sp.tree[i].start != 0;
	int signalled = spawn_signal_tree(&sp, SIGKILL);
	int reaped = 0;
	while (waitpid(-1, NULL, 0) > 0) /* orphans of the killed come to us */
		reaped++;
	cr_assert_eq(ours, (size_t)DEPTH, "%zu of %d tracked as ours", ours, DEPTH);
	cr_assert_eq(signalled, DEPTH);
	cr_assert_eq(reaped, DEPTH);
	spawn_release(&sp);
}

Test(spawn, never_signals_a_process_that_is_not_ours, .timeout = 10)
{
	struct spawn sp = SPAWN_INIT;
	char *argv[] = { "true", NULL };
	sp.argv = argv;
	cr_assert_eq(spawn_start(&sp), 0);
	cr_assert_eq(spawn_wait(&sp), 0);
	pid_t foreign[] = { 1, getppid() };
	spawn_track(&sp, foreign, 2);
	/* pid 1 is dropped by spawn_track; our parent is not our descendant */
	cr_assert_eq(spawn_signal_tree(&sp, 0), 0);
	spawn_release(&sp);
}

Test(spawn, capture_keeps_stdout_only_and_gives_an_empty_stdin, .timeout = 10)
{
	struct strbuf out = STRBUF_INIT;
	const char *const argv[] = { "sh", "-c", "echo out; echo err >&2; cat; printf tail", NULL };
	cr_assert_eq(spawn_capture(argv, &out), 0);
	cr_assert_str_eq(out.buf, "out\ntail");
	strbuf_release(&out);
}

Test(spawn, capture_fails_on_a_non_zero_exit_and_a_missing_command, .timeout = 10)
{
	struct strbuf out = STRBUF_INIT;
	const char *const fails[] = { "sh", "-c", "echo partial; exit 1", NULL };
	cr_assert_eq(spawn_capture(fails, &out), -1);
	cr_assert_str_eq(out.buf, "partial\n", "output before the failure is kept");
	strbuf_reset(&out);
	const char *const missing[] = { "/nonexistent/stagebench-no-such-command", NULL };
	cr_assert_eq(spawn_capture(missing, &out), -1);
	cr_assert_eq(out.len, 0);
	strbuf_release(&out);
}

Test(spawn, parent_of_names_the_parent_and_fails_for_a_reaped_pid, .timeout = 10)
{
	cr_assert_eq(spawn_parent_of(getpid()), getppid());
	pid_t child = fork();
	cr_assert_geq(child, 0);
	if (child == 0)
		_exit(0);
	cr_assert_eq(waitpid(child, NULL, 0), child);
	cr_assert_eq(spawn_parent_of(child), -1, "a reaped pid has no parent");
}

/* Without a subreaper (as on macOS) a descendant that left the group and
 * whose parent died goes to init: it is no longer our descendant, yet it is
 * the process that was tracked (same pid and start time) and is stopped. */
Test(spawn, orphan_outside_the_group_is_stopped_without_a_subreaper, .timeout = 20)
{
	char dir[] = "/tmp/sb-spawn-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char *fifo = xasprintf("%s/go", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	/* The leader starts a setsid'ed sleeper, then exits once told to. */
	char *script = xasprintf("setsid sleep 60 & echo $! > %s/o.tmp; mv %s/o.tmp %s/o; "
				 "read x < %s; exit 0", dir, dir, dir, fifo);
	char *argv[] = { "sh", "-c", script, NULL };
	struct spawn sp = SPAWN_INIT;
	sp.argv = argv;
	cr_assert_eq(spawn_start(&sp), 0);
	char *op = xasprintf("%s/o", dir);
	pid_t orphan = read_pid_file(op);
	cr_assert_gt(orphan, 1);
	spawn_track(&sp, &orphan, 1); /* seen in the tree while its parent lives */
	int fd = open(fifo, O_WRONLY);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(spawn_wait(&sp), 0);
	cr_assert_not(spawn_is_descendant(orphan), "re-parented away from us");
	cr_assert_eq(spawn_kill_tree(&sp, 2000000000LL), 0);
	struct pl_proc pp;
	cr_assert(pl_proc_read(orphan, &pp) || pp.state == 'Z', "the orphan %d survived",
		  (int)orphan);
	kill(orphan, SIGKILL);
	spawn_release(&sp);
	char *cmd = xasprintf("rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	free(op);
	free(fifo);
	free(script);
}

/* Runs `sh -c SCRIPT` through spawn_start with a pipe as its stdout (or its
 * stderr), waits for a zero exit, and leaves what it wrote there in buf. */
static void run_sh_into(const char *script, bool to_stderr, char *buf, size_t size)
{
	int fd[2];
	cr_assert_eq(pipe2(fd, O_CLOEXEC), 0);
	struct spawn sp = SPAWN_INIT;
	char *argv[] = { "sh", "-c", (char *)script, NULL };
	sp.argv = argv;
	if (to_stderr)
		sp.stderr_fd = fd[1];
	else
		sp.stdout_fd = fd[1];
	cr_assert_eq(spawn_start(&sp), 0);
	close(fd[1]);
	size_t got = 0;
	ssize_t r;
	while ((r = read(fd[0], buf + got, size - 1 - got)) > 0)
		got += (size_t)r;
	buf[got] = '\0';
	close(fd[0]);
	cr_assert_eq(spawn_wait(&sp), 0);
	spawn_release(&sp);
}

/* stderr_fd becomes the command's stderr; this process's own is untouched. */
Test(spawn, hands_over_stderr_fd, .timeout = 10)
{
	char buf[64];
	run_sh_into("echo to-stderr >&2", true, buf, sizeof(buf));
	cr_assert_str_eq(buf, "to-stderr\n");
}

/* The recorder raises its soft open-files limit (fd_limit_raise: the meter
 * keeps files open per tree process); the command it starts gets the soft
 * limit it had, as programs that use select() expect. */
Test(spawn, the_command_gets_the_open_files_limit_back, .timeout = 10)
{
	struct rlimit rl;
	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < 1024)
		cr_skip_test("hard open-files limit %llu: nothing to raise",
			     (unsigned long long)rl.rlim_max);
	struct rlimit low = { 512, rl.rlim_max };
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	fd_limit_raise();
	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	cr_assert_gt(rl.rlim_cur, 512, "raised to the hard limit, got %llu",
		     (unsigned long long)rl.rlim_cur);
	char got[64];
	run_sh_into("ulimit -Sn", false, got, sizeof(got));
	cr_assert_str_eq(got, "512\n");
}
