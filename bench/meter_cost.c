/* meter_cost.c -- benchmark: recorder CPU per meter_sample for trees of 1, 20 and threaded processes
 *
 * Build (from the repository root, after `make BUILD=build`):
 *   cc -D_GNU_SOURCE -I. -O2 -o build/meter_cost bench/meter_cost.c \
 *      $(ls build/meter/[a-z]*.o build/meter/gpu/*.o build/platform/*.o \
 *           build/platform/linux/*.o build/common/[a-z]*.o) build/traces/schema.o \
 *      -ldl -lm -lpthread -lcrypto
 * Run:  build/meter_cost [SAMPLES]        (default 10000)
 * The last two cases are a 1 GiB parent with 4 forked workers sharing it
 * (the Linux meter reads smaps_rollup for them: docs/platforms.md), idle,
 * and with the workers busy (each spins writing to a page of its own, so
 * every sample sees them changed and re-reads as often as its budget lets).
 * Prints one line per case: CPU (user+sys, getrusage of this process) and
 * wall time per sample, in microseconds.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/parse.h"
#include "common/util.h"
#include "meter/meter.h"

static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* A child that sleeps with `threads` threads (1 = single-threaded). */
static pid_t idle_child(int threads)
{
	pid_t pid = fork();
	if (pid < 0)
		die(3, "fork: cannot start a child");
	if (pid == 0) {
		for (int i = 1; i < threads; i++) {
			pthread_t t;
			pthread_create(&t, NULL, idle_thread, NULL);
		}
		for (;;)
			pause();
	}
	return pid;
}

/* A root that forks `n - 1` children and sleeps. */
static pid_t tree_root(int n)
{
	pid_t pid = fork();
	if (pid < 0)
		die(3, "fork: cannot start the tree");
	if (pid == 0) {
		setpgid(0, 0);
		for (int i = 1; i < n; i++)
			idle_child(1);
		for (;;)
			pause();
	}
	return pid;
}

/* A parent holding 1 GiB (touched) that forks 4 workers; busy: they spin. */
static pid_t shared_tree(bool busy)
{
	pid_t pid = fork();
	if (pid < 0)
		die(3, "fork: cannot start the tree");
	if (pid == 0) {
		setpgid(0, 0);
		size_t len = (size_t)1 << 30;
		char *p = malloc(len);
		if (!p)
			_exit(3);
		memset(p, 1, len);
		for (int i = 0; i < 4; i++)
			if (fork() == 0) {
				volatile char *mine = p + (size_t)i * 4096;
				for (unsigned v = 0; busy; v++)
					*mine = (char)v;
				for (;;)
					pause();
			}
		for (;;)
			pause();
	}
	return pid;
}

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void measure(const char *name, pid_t root, int want_procs, long samples)
{
	struct meter *m = meter_new(NULL);
	struct trace_sample s;
	if (!m)
		die(3, "cannot create the meter");
	meter_track(m, root);
	/* Wait until the whole tree is visible, then warm up. */
	for (int i = 0; i < 2000; i++) {
		if (meter_sample(m, &s) == 0 && s.procs >= want_procs)
			break;
		usleep(1000);
	}
	if (s.procs != want_procs)
		die(3, "%s: expected %d processes, saw %d", name, want_procs, s.procs);
	for (int i = 0; i < 100; i++)
		meter_sample(m, &s);

	double c0 = cpu_s();
	int64_t w0 = mono_ns();
	for (long i = 0; i < samples; i++)
		if (meter_sample(m, &s))
			die(3, "%s: sample failed", name);
	double cpu = cpu_s() - c0;
	double wall = (double)(mono_ns() - w0) / 1e9;
	printf("%-28s procs=%-3d  footprint %5.0f MiB  cpu %7.2f us/sample  wall %7.2f us/sample\n", name, s.procs, (double)s.footprint / 1048576,
	       cpu * 1e6 / (double)samples, wall * 1e6 / (double)samples);

	struct meter_system sys;
	c0 = cpu_s();
	for (long i = 0; i < samples; i++)
		meter_system(m, &sys);
	cpu = cpu_s() - c0;
	if (!strcmp(name, "1 process"))
		printf("%-28s            cpu %7.2f us/call\n", "  (meter_system alone)",
		       cpu * 1e6 / (double)samples);
	meter_free(m);
}

static void stop(pid_t pid)
{
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int main(int argc, char **argv)
{
	long samples = 10000;
	if (argc > 1) {
		int64_t v;
		if (parse_i64(argv[1], &v) || v <= 0)
			die(2, "usage: meter_cost [SAMPLES]");
		samples = (long)v;
	}

	pid_t one = idle_child(1);
	measure("1 process", one, 1, samples);
	stop(one);

	pid_t threaded = idle_child(16);
	measure("1 process, 16 threads", threaded, 1, samples);
	stop(threaded);

	/* A 20-process tree in its own group so it can be killed at once. */
	pid_t root = tree_root(20);
	setpgid(root, root);
	measure("20 processes", root, 20, samples);
	stop(root);

	root = shared_tree(false);
	setpgid(root, root);
	measure("1 GiB + 4 forked, idle", root, 5, samples);
	stop(root);
	root = shared_tree(true);
	setpgid(root, root);
	measure("1 GiB + 4 forked, busy", root, 5, samples / 10);
	stop(root);
	return finish_stdout() ? 3 : 0;
}
