/* test_meter.c -- the meter: Linux tree walk and peaks on real processes, fake scripts, NVML logic */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <pthread.h>
#include <sys/prctl.h>
#endif
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "meter/meter.h"
#include "meter/meter_internal.h"
#ifdef __linux__
#include "platform/linux/linux.h"
#include "platform/linux/procfs.h"
#endif

#define MiB (1024ull * 1024)

/* ---- helpers --------------------------------------------------------------- */

static char eatmem_path[PATH_MAX + 32];
static char tmpdir[64];

static pid_t tmpdir_owner;

/* Removes the test's directory when the test's own process exits (never from
 * a forked child that happens to run exit handlers). */
static void remove_tmpdir(void)
{
	if (getpid() != tmpdir_owner || !tmpdir[0])
		return;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "test_meter: could not remove %s\n", tmpdir);
}

static void make_tmpdir(void)
{
	static bool registered;
	remove_tmpdir(); /* a worker may run several tests: one directory at a time */
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/sb-meter-XXXXXX");
	cr_assert(mkdtemp(tmpdir));
	tmpdir_owner = getpid();
	if (!registered)
		atexit(remove_tmpdir);
	registered = true;
}

static const char *tmp(const char *name)
{
	static char paths[8][128];
	static int next;
	char *p = paths[next++ % 8];
	snprintf(p, 128, "%s/%.32s", tmpdir, name);
	return p;
}

#ifdef __linux__
static const char *eatmem(void)
{
	const char *dir = getenv("SB_HELPERS");
	if (dir && *dir) {
		snprintf(eatmem_path, sizeof(eatmem_path), "%s/eatmem", dir);
	} else {
		/* BUILD/tests/test_meter -> BUILD/helpers/eatmem */
		char self[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		cr_assert(n > 0);
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		*slash = '\0';
		slash = strrchr(self, '/');
		*slash = '\0';
		snprintf(eatmem_path, sizeof(eatmem_path), "%s/helpers/eatmem", self);
	}
	cr_assert(access(eatmem_path, X_OK) == 0, "eatmem helper not found at %s", eatmem_path);
	return eatmem_path;
}

/* Start eatmem with the given steps (NULL-terminated), in the cgroup whose
 * cgroup.procs cgfd is (meter_enclose's; -1: none), joined before the exec as
 * runner/spawn.c does. */
static pid_t spawn_in(int cgfd, const char *const *steps)
{
	const char *argv[32];
	size_t n = 0;
	argv[n++] = eatmem();
	while (*steps && n < 31)
		argv[n++] = *steps++;
	argv[n] = NULL;
	int ex[2]; /* closed by the exec: the child is in its cgroup by then */
	cr_assert_eq(pipe2(ex, O_CLOEXEC), 0);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test leaves no waiting tree */
		if (cgfd >= 0 && write(cgfd, "0", 1) != 1)
			_exit(126);
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	close(ex[1]);
	char c;
	while (read(ex[0], &c, 1) < 0 && errno == EINTR)
		;
	close(ex[0]);
	return pid;
}

static pid_t spawn(const char *const *steps)
{
	return spawn_in(-1, steps);
}

/* Wait up to 20 s for a ready file; returns the pid written in it. */
static pid_t wait_ready(const char *path)
{
	for (int i = 0; i < 20000; i++) {
		FILE *f = fopen(path, "r");
		if (f) {
			long pid = 0;
			int ok = fscanf(f, "%ld", &pid);
			fclose(f);
			if (ok == 1)
				return (pid_t)pid;
		}
		usleep(1000);
	}
	cr_assert_fail("timed out waiting for %s", path);
	return -1;
}

static void go(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT, 0644);
	cr_assert(fd >= 0);
	close(fd);
}

static void kill_and_reap(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

static struct trace_sample sample(struct meter *m)
{
	struct trace_sample s = { 0 };
	cr_assert_eq(meter_sample(m, &s), 0);
	return s;
}

#endif /* __linux__ */

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert(f);
	fputs(text, f);
	fclose(f);
}

static bool within(uint64_t got, uint64_t want, double frac)
{
	double d = (double)got - (double)want;
	return d <= frac * (double)want && -d <= frac * (double)want;
}

/* ---- Linux: real processes ------------------------------------------------ */
#ifdef __linux__

Test(meter, footprint_counts_a_300_mib_allocation_within_5_percent, .timeout = 60)
{
	make_tmpdir();
	const char *steps[] = { "ready=" , "wait=", "alloc=300M", "ready=", "sleep=60s", NULL };
	char a[160], g[160], b[160];
	snprintf(a, sizeof(a), "ready=%s", tmp("a"));
	snprintf(g, sizeof(g), "wait=%s", tmp("go"));
	snprintf(b, sizeof(b), "ready=%s", tmp("b"));
	steps[0] = a, steps[1] = g, steps[3] = b;

	struct meter *m = meter_new(NULL);
	cr_assert(m);
	cr_assert_str_eq(meter_info(m)->backend, "linux");
	cr_assert(meter_info(m)->fields & SF_FOOTPRINT);
	cr_assert_not(meter_info(m)->fields & SF_GPU || meter_info(m)->gpu,
		      "no NVIDIA library here, gpu must be off");
	pid_t pid = spawn(steps);
	meter_track(m, pid);
	wait_ready(tmp("a"));
	struct trace_sample idle = sample(m);
	cr_assert_eq(idle.procs, 1);
	cr_assert(idle.fields & SF_LEVEL);
	cr_assert(idle.level > 0 && idle.level <= 100);
	go(tmp("go"));
	wait_ready(tmp("b"));
	struct trace_sample full = sample(m);
	uint64_t grew = full.footprint - idle.footprint;
	cr_assert(full.footprint > idle.footprint);
	cr_assert(within(grew, 300 * MiB, 0.05), "footprint grew by %llu bytes, expected 300 MiB",
		  (unsigned long long)grew);
	cr_assert(full.rss >= full.footprint, "VmRSS includes RssAnon + RssShmem");
	size_t n;
	const pid_t *pids = meter_pids(m, &n);
	cr_assert_eq(n, 1);
	cr_assert_eq(pids[0], pid);

	kill_and_reap(pid);
	struct trace_sample gone = { 0 };
	cr_assert_eq(meter_sample(m, &gone), -1, "the root is gone: nothing measured");
	meter_free(m);
}

/* A child that forks a grandchild which allocates (and leaves the group). */
static void tree_test(bool scan)
{
	make_tmpdir();
	char b[160];
	snprintf(b, sizeof(b), "ready=%s", tmp("b"));
	const char *steps[] = { "fork", "setsid", "alloc=200M", b, "sleep=60s", NULL };
	struct meter *m = meter_new(NULL);
	cr_assert(m);
	if (scan)
		meter_linux_force_scan(m);
	pid_t pid = spawn(steps);
	meter_track(m, pid);
	pid_t grandchild = wait_ready(tmp("b"));
	cr_assert_neq(grandchild, pid);
	struct trace_sample s = sample(m);
	cr_assert_eq(s.procs, 2, "root and grandchild, got %d", s.procs);
	cr_assert(s.footprint >= 200 * MiB, "grandchild's 200 MiB counted: %llu",
		  (unsigned long long)s.footprint);
	size_t n;
	const pid_t *pids = meter_pids(m, &n);
	cr_assert_eq(n, 2);
	cr_assert_eq(pids[0], pid, "root first");
	cr_assert_eq(pids[1], grandchild);
	kill(grandchild, SIGKILL);
	kill_and_reap(pid);
	meter_free(m);
}

Test(meter, grandchild_memory_is_counted_through_the_tree_walk, .timeout = 60)
{
	tree_test(false);
}

Test(meter, grandchild_is_found_by_the_stat_scan_fallback, .timeout = 60)
{
	tree_test(true);
}

/* Child side of the threaded test: a second thread forks the grandchild. */
static const char *thread_ready;
static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void *forking_thread(void *arg)
{
	(void)arg;
	pid_t pid = fork();
	if (pid == 0) {
		size_t n = 100 * MiB;
		char *mem = malloc(n);
		for (size_t i = 0; i < n; i += 4096)
			mem[i] = 1;
		FILE *f = fopen(thread_ready, "w");
		fprintf(f, "%d\n", (int)getpid());
		fclose(f);
		for (;;)
			pause();
	}
	for (;;)
		pause();
	return NULL;
}

Test(meter, grandchild_forked_by_a_secondary_thread_is_found, .timeout = 60)
{
	make_tmpdir();
	thread_ready = tmp("b");
	struct meter *m = meter_new(NULL);
	cr_assert(m);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		pthread_t t[3];
		for (int i = 0; i < 3; i++)
			pthread_create(&t[i], NULL, i == 2 ? forking_thread : idle_thread, NULL);
		for (;;)
			pause();
	}
	meter_track(m, pid);
	pid_t grandchild = wait_ready(tmp("b"));
	struct trace_sample s = sample(m);
	cr_assert_eq(s.procs, 2, "child and the grandchild its thread forked, got %d", s.procs);
	cr_assert(s.footprint >= 100 * MiB);
	/* Again: the cached per-thread fds are re-read. */
	s = sample(m);
	cr_assert_eq(s.procs, 2);
	kill(grandchild, SIGKILL);
	kill_and_reap(pid);
	meter_free(m);
}

/*
 * Child side of the late-thread tests. The child runs its main thread and
 * one more (late_first), says ready (file A), waits for file GO, then starts
 * a thread that forks a grandchild, which says ready (file B) with its pid.
 * With late_replace, late_first ends before that thread starts, so the
 * child's Threads: count is the same at the first sample and after the fork.
 */
static const char *late_a, *late_go, *late_b;
static bool late_replace;

static void late_wait_go(void)
{
	while (access(late_go, F_OK))
		usleep(1000);
}

static void *late_first(void *arg)
{
	(void)arg;
	if (late_replace) {
		late_wait_go();
		return NULL;
	}
	for (;;)
		pause();
	return NULL;
}

static void late_say_ready(const char *path)
{
	char text[32];
	int len = snprintf(text, sizeof(text), "%d\n", (int)getpid());
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, text, (size_t)len) != len)
		_exit(1);
	close(fd);
}

static void *late_forker(void *arg)
{
	(void)arg;
	if (fork() == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* gone with the child if a test fails */
		late_say_ready(late_b);
		for (;;)
			pause();
	}
	for (;;)
		pause();
	return NULL;
}

static void late_child(void)
{
	pthread_t first, second;
	prctl(PR_SET_PDEATHSIG, SIGKILL); /* gone with the test if it fails */
	if (pthread_create(&first, NULL, late_first, NULL))
		_exit(1);
	late_say_ready(late_a);
	late_wait_go();
	if (late_replace && pthread_join(first, NULL))
		_exit(1);
	if (pthread_create(&second, NULL, late_forker, NULL))
		_exit(1);
	for (;;)
		pause();
}

/* Meter the child: list its threads with a first sample, let it fork from a
 * new thread; returns the grandchild's pid, *listed_ns the time right after
 * that first sample (no later than its listing). */
static pid_t late_start(struct meter *m, bool replace, pid_t *child, int64_t *listed_ns)
{
	make_tmpdir();
	late_a = tmp("a");
	late_go = tmp("go");
	late_b = tmp("b");
	late_replace = replace;
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0)
		late_child();
	*child = pid;
	meter_track(m, pid);
	cr_assert_eq(wait_ready(late_a), pid);
	struct trace_sample s = sample(m);
	*listed_ns = mono_ns();
	cr_assert_eq(s.procs, 1, "the child alone, got %d", s.procs);
	go(late_go);
	return wait_ready(late_b);
}

static bool late_counted(struct meter *m, pid_t grandchild)
{
	size_t n;
	const pid_t *pids = meter_pids(m, &n);
	for (size_t i = 0; i < n; i++)
		if (pids[i] == grandchild)
			return true;
	return false;
}

Test(meter, child_of_a_thread_started_after_the_listing_counts_at_the_next_sample, .timeout = 60)
{
	struct meter *m = meter_new(NULL);
	cr_assert(m);
	pid_t child;
	int64_t listed_ns;
	pid_t grandchild = late_start(m, false, &child, &listed_ns);
	/* Threads: went from 2 to 3: the list is read again at once */
	struct trace_sample s = sample(m);
	cr_assert_eq(s.procs, 2, "child and the grandchild of its new thread, got %d", s.procs);
	cr_assert(late_counted(m, grandchild));
	kill(grandchild, SIGKILL);
	kill_and_reap(child);
	meter_free(m);
}

Test(meter, child_of_a_thread_replacing_another_counts_within_100ms_of_the_listing, .timeout = 60)
{
	struct meter *m = meter_new(NULL);
	cr_assert(m);
	pid_t child;
	int64_t listed_ns;
	pid_t grandchild = late_start(m, true, &child, &listed_ns);
	/* Threads: is 2 again: samples until 100 ms after the listing may read
	 * the kept children files only; the first one after must list again */
	while (mono_ns() - listed_ns < 100 * 1000000LL) {
		sample(m);
		usleep(5000);
	}
	struct trace_sample s = sample(m);
	cr_assert_eq(s.procs, 2, "child and the grandchild of its new thread, got %d", s.procs);
	cr_assert(late_counted(m, grandchild));
	kill(grandchild, SIGKILL);
	kill_and_reap(child);
	meter_free(m);
}

/* As the recorder (a subreaper): a new meter, and a root that forks a child
 * allocating ALLOC (then writing its pid to the ready file "b") and exits. */
static struct meter *start_orphan(const char *alloc, pid_t *root)
{
	make_tmpdir();
	cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	char b[160];
	snprintf(b, sizeof(b), "ready=%s", tmp("b"));
	const char *steps[] = { "orphan", alloc, b, "sleep=60s", NULL };
	struct meter *m = meter_new(NULL);
	cr_assert(m);
	*root = spawn(steps);
	return m;
}

Test(meter, orphaned_grandchild_reparented_to_the_recorder_still_counts, .timeout = 60)
{
	pid_t pid;
	struct meter *m = start_orphan("alloc=200M", &pid);
	meter_track(m, pid);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	pid_t orphan = wait_ready(tmp("b"));
	struct trace_sample s = sample(m);
	cr_assert_eq(s.procs, 1);
	cr_assert(s.footprint >= 200 * MiB, "orphan's 200 MiB counted: %llu",
		  (unsigned long long)s.footprint);
	size_t n;
	const pid_t *pids = meter_pids(m, &n);
	cr_assert_eq(n, 1);
	cr_assert_eq(pids[0], orphan);
	kill_and_reap(orphan);
	meter_free(m);
}

/* The root forks and exits between its exec and meter_track (spawn_start
 * returns after the exec): its orphan is the recorder's child already when the
 * tree is first listed, and is the root's all the same, not a foreign child. */
Test(meter, orphan_made_before_meter_track_is_still_the_roots, .timeout = 60)
{
	pid_t pid;
	struct meter *m = start_orphan("alloc=100M", &pid);
	pid_t orphan = wait_ready(tmp("b"));
	struct pl_proc pp = { 0 };
	for (int i = 0; i < 20000 && !(pl_proc_read(orphan, &pp) == 0 && pp.ppid == getpid()); i++)
		usleep(1000);
	cr_assert_eq(pp.ppid, getpid(), "the orphan was re-parented to the recorder");
	meter_track(m, pid); /* the root is a zombie now, not yet reaped */
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	struct trace_sample s = sample(m);
	cr_assert_eq(s.procs, 1);
	cr_assert(s.footprint >= 100 * MiB, "orphan's 100 MiB counted: %llu",
		  (unsigned long long)s.footprint);
	kill_and_reap(orphan);
	meter_free(m);
}

Test(meter, ignored_and_earlier_children_of_the_recorder_are_not_adopted, .timeout = 60)
{
	make_tmpdir();
	char a[160], c[160];
	snprintf(a, sizeof(a), "ready=%s", tmp("a"));
	snprintf(c, sizeof(c), "ready=%s", tmp("c"));
	const char *before_steps[] = { "alloc=50M", a, "sleep=60s", NULL };
	const char *root_steps[] = { "sleep=60s", NULL };
	const char *later_steps[] = { "alloc=50M", c, "sleep=60s", NULL };
	struct meter *m = meter_new(NULL);
	cr_assert(m);
	pid_t before = spawn(before_steps);
	wait_ready(tmp("a"));
	pid_t root = spawn(root_steps);
	meter_track(m, root);
	pid_t later = spawn(later_steps);
	meter_ignore(m, later);
	wait_ready(tmp("c"));
	struct trace_sample s = sample(m);
	cr_assert_eq(s.procs, 1, "only the root, got %d", s.procs);
	cr_assert(s.footprint < 40 * MiB);
	kill_and_reap(before);
	kill_and_reap(root);
	kill_and_reap(later);
	meter_free(m);
}

Test(meter, exact_peak_catches_a_50ms_spike_between_samples, .timeout = 60)
{
	make_tmpdir();
	char a[160], g[160], b[160];
	snprintf(a, sizeof(a), "ready=%s", tmp("a"));
	snprintf(g, sizeof(g), "wait=%s", tmp("go"));
	snprintf(b, sizeof(b), "ready=%s", tmp("b"));
	const char *steps[] = { "alloc=20M", "free", a, g, "spike=200M/50ms", b, "sleep=60s", NULL };
	struct meter *m = meter_new(NULL);
	cr_assert(m);
	cr_assert_str_eq(meter_info(m)->peak_metric, "rss");
	pid_t pid = spawn(steps);
	meter_track(m, pid);
	wait_ready(tmp("a"));
	struct trace_sample before = sample(m);
	cr_assert_eq(meter_peak_reset(m), 0);
	uint64_t peak;
	cr_assert_eq(meter_peak_read(m, &peak), 0);
	cr_assert(peak < 100 * MiB, "just reset: %llu", (unsigned long long)peak);
	go(tmp("go"));
	wait_ready(tmp("b"));
	cr_assert_eq(meter_peak_read(m, &peak), 0);
	cr_assert(peak >= 200 * MiB, "VmHWM sum since the reset: %llu", (unsigned long long)peak);
	struct trace_sample after = sample(m);
	cr_assert(after.footprint < before.footprint + 20 * MiB,
		  "the spike is over: %llu vs %llu", (unsigned long long)after.footprint,
		  (unsigned long long)before.footprint);
	/* A reset after the spike forgets it. */
	cr_assert_eq(meter_peak_reset(m), 0);
	cr_assert_eq(meter_peak_read(m, &peak), 0);
	cr_assert(peak < 100 * MiB, "reset after the spike: %llu", (unsigned long long)peak);
	kill_and_reap(pid);
	meter_free(m);
}

#endif /* __linux__ */

Test(meter, system_figures_are_sane)
{
	struct meter *m = meter_new(NULL);
	struct meter_system sys;
	cr_assert(m);
	cr_assert_eq(meter_system(m, &sys), 0);
	cr_assert(sys.total_bytes > 64 * MiB);
	cr_assert(sys.avail_bytes > 0 && sys.avail_bytes <= sys.total_bytes);
	cr_assert(sys.avail_pct > 0 && sys.avail_pct <= 100);
	cr_assert(sys.has_swap);
	cr_assert(sys.swap_used <= sys.swap_total);
	struct trace_sample s = { 0 };
	cr_assert_eq(meter_sample(m, &s), -1, "nothing tracked: nothing measured");
	cr_assert(s.fields & SF_LEVEL, "system figures are filled even so");
	cr_assert(s.level > 0 && s.level <= 100);
	meter_free(m);
}

Test(meter, host_info_is_sane)
{
	struct host_info h;
	host_info_get(&h);
	cr_assert(h.os[0]);
	cr_assert(h.kernel[0]);
	cr_assert(h.machine[0]);
	cr_assert(h.cpus >= 1);
	cr_assert(h.memory > 64 * MiB);
	cr_assert(h.swap < (1ull << 50));
}

Test(meter, unknown_spec_is_refused)
{
	cr_assert_null(meter_new("bogus"));
#ifdef __linux__
	cr_assert_null(meter_new("macos"));
#else
	cr_assert_null(meter_new("linux"));
#endif
	cr_assert_null(meter_new("fake:/nonexistent/script"));
}

/* ---- Linux parsing ----------------------------------------------------------- */

Test(meter, status_parser_reads_the_memory_lines)
{
	static const char text[] =
		"Name:\tpython3\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t42\n"
		"VmPeak:\t 9999 kB\nVmHWM:\t    2048 kB\nVmRSS:\t    1536 kB\n"
		"RssAnon:\t     1000 kB\nRssFile:\t      500 kB\nRssShmem:\t       36 kB\n"
		"VmSwap:\t      12 kB\nThreads:\t7\nSigQ:\t0/1\n";
	struct status_fields f;
	linux_parse_status(text, sizeof(text) - 1, &f);
	cr_assert_eq(f.vm_hwm, 2048 * 1024);
	cr_assert_eq(f.vm_rss, 1536 * 1024);
	cr_assert_eq(f.rss_anon, 1000 * 1024);
	cr_assert_eq(f.rss_file, 500 * 1024);
	cr_assert_eq(f.rss_shmem, 36 * 1024);
	cr_assert_eq(f.vm_swap, 12 * 1024);
	cr_assert_eq(f.threads, 7);
	cr_assert_eq(f.state, 'S');
	cr_assert_eq(f.have, ST_RSS_ANON | ST_RSS_SHMEM | ST_VM_RSS | ST_VM_SWAP | ST_VM_HWM |
			     ST_THREADS | ST_STATE | ST_RSS_FILE);
}

Test(meter, status_parser_of_a_zombie_has_no_memory_lines)
{
	static const char text[] = "Name:\tx\nState:\tZ (zombie)\nThreads:\t1\n";
	struct status_fields f;
	linux_parse_status(text, sizeof(text) - 1, &f);
	cr_assert_eq(f.state, 'Z');
	cr_assert_eq(f.have, ST_STATE | ST_THREADS);
}

Test(meter, meminfo_parser_reads_the_four_lines)
{
	static const char text[] = "MemTotal:       24000000 kB\nMemFree:  1 kB\n"
				   "MemAvailable:   12000000 kB\nBuffers: 5 kB\n"
				   "SwapTotal:       8000000 kB\nSwapFree:        6000000 kB\n";
	struct meminfo_fields f;
	linux_parse_meminfo(text, sizeof(text) - 1, &f);
	cr_assert_eq(f.have, MI_MEM_TOTAL | MI_MEM_AVAILABLE | MI_SWAP_TOTAL | MI_SWAP_FREE);
	cr_assert_eq(f.mem_total, 24000000ull * 1024);
	cr_assert_eq(f.mem_available, 12000000ull * 1024);
	cr_assert_eq(f.swap_total, 8000000ull * 1024);
	cr_assert_eq(f.swap_free, 6000000ull * 1024);
}

Test(meter, rollup_parser_reads_rss_pss_the_anon_and_shmem_shares_and_private_dirty)
{
	static const char text[] =
		"55efa9ad2000-7ffe3e06f000 ---p 00000000 00:00 0   [rollup]\n"
		"Rss:             1049088 kB\nPss:              524429 kB\n"
		"Pss_Dirty:        524370 kB\nPss_Anon:         524366 kB\n"
		"Pss_File:             63 kB\nPss_Shmem:             7 kB\n"
		"Shared_Clean:         12 kB\nShared_Dirty:     1048576 kB\n"
		"Private_Clean:       116 kB\nPrivate_Dirty:        384 kB\n";
	struct rollup_fields f;
	linux_parse_rollup(text, sizeof(text) - 1, &f);
	cr_assert_eq(f.have, RU_RSS | RU_PSS | RU_PSS_ANON | RU_PSS_SHMEM | RU_PRIVATE_DIRTY |
			     RU_PRIVATE_CLEAN);
	cr_assert_eq(f.private_dirty, 384ull * 1024);
	cr_assert_eq(f.private_clean, 116ull * 1024);
	cr_assert_eq(f.rss, 1049088ull * 1024);
	cr_assert_eq(f.pss, 524429ull * 1024);
	cr_assert_eq(f.pss_anon, 524366ull * 1024);
	cr_assert_eq(f.pss_shmem, 7ull * 1024);
	/* before Linux 5.7: no Pss_Anon */
	static const char old[] = "Rss: 8 kB\nPss: 4 kB\nShared_Clean: 4 kB\n";
	linux_parse_rollup(old, sizeof(old) - 1, &f);
	cr_assert_eq(f.have, RU_RSS | RU_PSS);
}

Test(meter, memcg_stat_parser_reads_v1_totals_and_v2_keys)
{
	/* v1: the hierarchy's total_ lines, not the cgroup's own nor their longer
	 * namesakes (total_rss_huge) */
	static const char v1[] = "cache 8192\nrss 4096\nshmem 12\nmapped_file 1\n"
		"total_cache 300\ntotal_rss 1048576\ntotal_rss_huge 2097152\n"
		"total_shmem 65536\ntotal_mapped_file 4096\n";
	struct memcg_fields f;
	linux_parse_memcg_stat(v1, sizeof(v1) - 1, false, &f);
	cr_assert_eq(f.have, MC_ANON | MC_SHMEM | MC_FILE_MAPPED);
	cr_assert_eq(f.anon, 1048576);
	cr_assert_eq(f.shmem, 65536);
	cr_assert_eq(f.file_mapped, 4096);
	static const char v2[] = "anon 7340032\nfile 100\nkernel 5\nshmem 8192\n"
		"file_mapped 40960\nanon_thp 2097152\nshmem_thp 0\n";
	linux_parse_memcg_stat(v2, sizeof(v2) - 1, true, &f);
	cr_assert_eq(f.have, MC_ANON | MC_SHMEM | MC_FILE_MAPPED);
	cr_assert_eq(f.anon, 7340032);
	cr_assert_eq(f.shmem, 8192);
	cr_assert_eq(f.file_mapped, 40960);
	linux_parse_memcg_stat("cache 1\n", 8, false, &f);
	cr_assert_eq(f.have, 0u);
}

Test(meter, stat_faults_parser_adds_minflt_and_majflt_after_the_last_paren)
{
	/* comm holds ") 1 2"; tpgid is -1 */
	static const char text[] = "42 (a) 1 2) S 1 42 42 0 -1 4194560 1500 7 25 0 3 4 0 0 20\n";
	uint64_t v = 0;
	cr_assert_eq(linux_parse_stat_faults(text, sizeof(text) - 1, &v), 0);
	cr_assert_eq(v, 1525);
	cr_assert_eq(linux_parse_stat_faults("42 (a) S 1", 10, &v), -1);
	cr_assert_eq(linux_parse_stat_faults("no paren", 8, &v), -1);
}

Test(meter, stat_majflt_parser_reads_fields_12_and_13)
{
	/* comm holds ") 1 2"; majflt 25, cmajflt 4 */
	static const char text[] = "42 (a) 1 2) S 1 42 42 0 -1 4194560 1500 7 25 4 3 4 0 0 20\n";
	uint64_t v = 0;
	cr_assert_eq(linux_parse_stat_majflt(text, sizeof(text) - 1, &v), 0);
	cr_assert_eq(v, 29);
	cr_assert_eq(linux_parse_stat_majflt("42 (a) S 1 2 3 4 5 6 7 8", 24, &v), -1);
	cr_assert_eq(linux_parse_stat_majflt("no paren", 8, &v), -1);
}

Test(meter, smaps_header_parser_reads_device_inode_path_and_exec)
{
	struct smaps_header h;
	static const char lib[] = "7f5eb8e00000-7f5ebce00000 r-xp 00002000 fe:01 9979993"
				  "                    /usr/lib/x86_64-linux-gnu/libc.so.6";
	cr_assert_eq(linux_parse_smaps_header(lib, sizeof(lib) - 1, &h), 0);
	cr_assert(h.exec);
	cr_assert_eq(h.dev, (uint64_t)makedev(0xfe, 0x01));
	cr_assert_eq(h.ino, 9979993);
	cr_assert_eq(h.plen, strlen("/usr/lib/x86_64-linux-gnu/libc.so.6"));
	cr_assert_eq(memcmp(h.path, "/usr/lib/x86_64-linux-gnu/libc.so.6", h.plen), 0);
	/* a large minor number, a path with blanks */
	static const char data[] = "ffffffffff600000-ffffffffff601000 r--s 00000000 103:1a05 12 /m/a b.bin";
	cr_assert_eq(linux_parse_smaps_header(data, sizeof(data) - 1, &h), 0);
	cr_assert(!h.exec);
	cr_assert_eq(h.dev, (uint64_t)makedev(0x103, 0x1a05));
	cr_assert_eq(h.plen, strlen("/m/a b.bin"));
	static const char anon[] = "55d52c836000-55d52c838000 rw-p 00000000 00:00 0 ";
	cr_assert_eq(linux_parse_smaps_header(anon, sizeof(anon) - 1, &h), 0);
	cr_assert_null(h.path);
	cr_assert_eq(h.ino, 0);
	cr_assert_eq(linux_parse_smaps_header("Rss:   8 kB", 11, &h), -1);
	cr_assert_eq(linux_parse_smaps_header("VmFlags: rd mr", 14, &h), -1);
}

static void collect(pid_t pid, void *arg)
{
	struct { pid_t p[8]; int n; } *c = arg;
	c->p[c->n++] = pid;
}

Test(meter, children_list_parser_reads_every_pid)
{
	struct { pid_t p[8]; int n; } c = { { 0 }, 0 };
	static const char text[] = "123 4567 89\n";
	cr_assert_eq(linux_parse_pidlist(text, sizeof(text) - 1, collect, &c), 3);
	cr_assert_eq(c.n, 3);
	cr_assert_eq(c.p[0], 123);
	cr_assert_eq(c.p[1], 4567);
	cr_assert_eq(c.p[2], 89);
	c.n = 0;
	cr_assert_eq(linux_parse_pidlist("", 0, collect, &c), 0);
}

Test(meter, stat_parser_takes_the_fields_after_the_last_paren)
{
	/* fields 3.. after ')': state ppid pgrp session tty tpgid flags minflt
	 * cminflt majflt cmajflt utime stime cutime cstime priority nice threads
	 * itrealvalue starttime */
	static const char text[] = "4242 (evil) S 17 (name)) R 999 4200 4200 0 -1 4194560 "
				   "10 0 0 0 1 2 0 0 20 0 1 0 123456 1000 10";
	struct pl_proc p = { 0 };
	cr_assert_eq(procfs_parse_stat(text, sizeof(text) - 1, &p), 0);
	cr_assert_eq(p.pid, 4242);
	cr_assert_eq(p.state, 'R');
	cr_assert_eq(p.ppid, 999);
	cr_assert_eq(p.pgrp, 4200);
	cr_assert_eq(p.start, 123456);
	static const char plain[] = "1 (init) S 0 1 1 0";
	cr_assert_eq(procfs_parse_stat(plain, sizeof(plain) - 1, &p), 0);
	cr_assert_eq(p.ppid, 0);
	cr_assert_eq(p.start, 0, "cut short: start unknown");
	cr_assert_eq(procfs_parse_stat("garbage", 7, &p), -1);
	cr_assert_eq(procfs_parse_stat("12 (x", 5, &p), -1);
}

Test(meter, one_walker_lists_this_process_with_its_parent_and_start)
{
	struct pl_proc self, again;
	cr_assert_eq(pl_proc_read(getpid(), &self), 0);
	cr_assert_eq(self.ppid, getppid());
	cr_assert_eq(self.pgrp, getpgrp());
	cr_assert_gt(self.start, 0);
	cr_assert_eq(pl_proc_read(getpid(), &again), 0);
	cr_assert_eq(again.start, self.start, "the start time names the process");
	cr_assert_eq(pl_proc_read(-5, &again), -1);
}

/* ---- the process table --------------------------------------------------------- */

Test(meter, proctab_keeps_order_when_removing)
{
	struct proctab t;
	proctab_init(&t, sizeof(struct mproc));
	for (pid_t p = 10; p < 15; p++)
		proctab_add(&t, p);
	proctab_remove(&t, 1, NULL);
	size_t n;
	const pid_t *pids = proctab_pids(&t, &n);
	cr_assert_eq(n, 4);
	cr_assert_eq(pids[0], 10);
	cr_assert_eq(pids[1], 12);
	cr_assert_eq(pids[3], 14);
	cr_assert_eq(proctab_find(&t, 11), -1);
	cr_assert_eq(proctab_find(&t, 13), 2);
	proctab_add_foreign(&t, 99);
	cr_assert(proctab_is_foreign(&t, 99));
	cr_assert_not(proctab_is_foreign(&t, 10));
	proctab_release(&t, NULL);
	proctab_release(NULL, NULL);
}

/* ---- the fake backend ------------------------------------------------------------ */

static struct meter *fake(const char *script)
{
	make_tmpdir();
	write_text(tmp("script"), script);
	char spec[160];
	snprintf(spec, sizeof(spec), "fake:%s", tmp("script"));
	return meter_new(spec);
}

Test(meter, fake_script_returns_one_line_per_sample_and_repeats_the_last)
{
	struct meter *m = fake("# a comment\n"
			       "footprint=100M rss=120M swap_used=1G level=80\n"
			       "\n"
			       "footprint=1.5G rss=2G swap_used=0 level=12.5 procs=3\n");
	cr_assert(m);
	cr_assert_str_eq(meter_info(m)->backend, "fake");
	cr_assert_eq(meter_info(m)->fields, SF_FOOTPRINT | SF_RSS | SF_SWAP_USED | SF_LEVEL |
						    SF_PROCS);
	cr_assert_null(meter_info(m)->peak_metric);
	cr_assert_not(meter_info(m)->gpu);
	meter_track(m, 1234);
	struct trace_sample s = { .t = 7.5 };
	cr_assert_eq(meter_sample(m, &s), 0);
	cr_assert_eq(s.t, 7.5, "t is the caller's");
	cr_assert_eq(s.fields, SF_FOOTPRINT | SF_RSS | SF_SWAP_USED | SF_LEVEL);
	cr_assert_eq(s.footprint, 100 * MiB);
	cr_assert_eq(s.rss, 120 * MiB);
	cr_assert_eq(s.swap_used, 1024 * MiB);
	cr_assert_eq(s.level, 80);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(meter_sample(m, &s), 0);
		cr_assert_eq(s.footprint, 1536 * MiB);
		cr_assert_eq(s.level, 12.5);
		cr_assert_eq(s.procs, 3);
		cr_assert_eq(s.swap_used, 0);
		cr_assert(s.fields & SF_SWAP_USED, "0 present is not absent");
	}
	uint64_t b;
	cr_assert_eq(meter_peak_reset(m), -1, "no peak= lines: no exact peaks");
	cr_assert_eq(meter_peak_read(m, &b), -1);
	cr_assert_eq(meter_gpu(m, &b), -1);
	size_t n;
	const pid_t *pids = meter_pids(m, &n);
	cr_assert_eq(n, 1);
	cr_assert_eq(pids[0], 1234);
	meter_free(m);
}

Test(meter, fake_absent_fields_stay_absent)
{
	struct meter *m = fake("footprint=1M\nlevel=50\n");
	cr_assert(m);
	struct trace_sample s;
	cr_assert_eq(meter_sample(m, &s), 0);
	cr_assert_eq(s.fields, SF_FOOTPRINT);
	cr_assert_eq(meter_sample(m, &s), 0);
	cr_assert_eq(s.fields, SF_LEVEL);
	cr_assert_eq(s.footprint, 0);
	meter_free(m);
}

Test(meter, fake_peak_is_the_highest_since_the_reset)
{
	struct meter *m = fake("peak_metric=footprint\n"
			       "footprint=100M level=90 peak=150M\n"
			       "footprint=300M level=70\n"
			       "footprint=200M level=75 peak=320M gpu=2G\n"
			       "footprint=50M level=95\n"
			       "gone\n");
	cr_assert(m);
	cr_assert_str_eq(meter_info(m)->peak_metric, "footprint");
	cr_assert(meter_info(m)->gpu);
	struct trace_sample s;
	uint64_t b;
	cr_assert_eq(meter_sample(m, &s), 0);
	cr_assert_eq(meter_peak_reset(m), 0);
	cr_assert_eq(meter_sample(m, &s), 0);
	cr_assert_eq(meter_sample(m, &s), 0);
	cr_assert_eq(meter_peak_read(m, &b), 0);
	cr_assert_eq(b, 320 * MiB);
	cr_assert_eq(meter_gpu(m, &b), 0);
	cr_assert_eq(b, 2048 * MiB);
	cr_assert_eq(meter_sample(m, &s), 0);
	cr_assert_eq(meter_peak_reset(m), 0);
	cr_assert_eq(meter_peak_read(m, &b), 0);
	cr_assert_eq(b, 50 * MiB, "no peak= since the reset: the highest footprint");
	cr_assert_eq(meter_sample(m, &s), -1, "gone");
	cr_assert_eq(s.fields, 0);
	meter_free(m);
}

Test(meter, fake_system_steps_through_the_script_when_never_sampled)
{
	struct meter *m = fake("level=20 swap_used=2G swap_total=8G total=32G\nlevel=60\n");
	struct meter_system sys;
	cr_assert(m);
	cr_assert_eq(meter_system(m, &sys), 0);
	cr_assert_eq(sys.avail_pct, 20);
	cr_assert_eq(sys.total_bytes, 32ull << 30);
	cr_assert(within(sys.avail_bytes, (32ull << 30) / 5, 1e-9));
	cr_assert(sys.has_swap);
	cr_assert_eq(sys.swap_used, 2ull << 30);
	cr_assert_eq(sys.swap_total, 8ull << 30);
	cr_assert_eq(meter_system(m, &sys), 0);
	cr_assert_eq(sys.avail_pct, 60);
	cr_assert_not(sys.has_swap);
	cr_assert_eq(sys.total_bytes, 16ull << 30);
	meter_free(m);
}

Test(meter, fake_script_errors_name_the_line)
{
	const char *bad[] = { "footprint=100M\nfootprint=abc\n", "colour=blue\n",
			      "level=101\n", "footprint=1M footprint=2M\n", "justaword\n",
			      "# nothing\n\n", "peak_metric=vmhwm\n" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct meter *m = fake(bad[i]);
		cr_assert_null(m, "script %zu should be refused", i);
	}
	struct fake_line fl;
	bool empty;
	const char *why, *key;
	cr_assert_eq(fake_parse_line("rss=1M bogus=2", &fl, &empty, &why, &key), -1);
	cr_assert_str_eq(why, "unknown key");
	cr_assert_str_eq(key, "bogus=2");
}

/* ---- NVML logic (no GPU needed) ------------------------------------------------------ */

static void put_entry(unsigned char *buf, size_t stride, unsigned i, unsigned pid,
		      unsigned long long used)
{
	unsigned char *e = buf + (size_t)i * stride;
	memset(e, 0, stride); /* the library writes whole entries, padding included */
	memcpy(e, &pid, sizeof(pid));
	memcpy(e + 8, &used, sizeof(used));
	unsigned gi = 0xffffffffu;
	memcpy(e + 16, &gi, sizeof(gi));
}

Test(meter, nvml_stride_is_inferred_from_how_far_the_library_wrote)
{
	unsigned char buf[8 * NVML_ENTRY_ALLOC];
	for (size_t stride = 24; stride <= 32; stride += 8) {
		for (unsigned count = 1; count <= 4; count++) {
			memset(buf, NVML_PATTERN, sizeof(buf));
			for (unsigned i = 0; i < count; i++)
				put_entry(buf, stride, i, 100 + i, 1000);
			cr_assert_eq(nvml_infer_stride(buf, 8, count), stride,
				     "stride %zu, %u entries", stride, count);
		}
	}
	memset(buf, NVML_PATTERN, sizeof(buf));
	cr_assert_eq(nvml_infer_stride(buf, 8, 0), 24);
}

Test(meter, nvml_sum_counts_tree_pids_and_skips_unavailable)
{
	unsigned char buf[8 * NVML_ENTRY_ALLOC];
	pid_t tree[] = { 10, 11, 12 };
	for (size_t stride = 24; stride <= 32; stride += 8) {
		memset(buf, NVML_PATTERN, sizeof(buf));
		put_entry(buf, stride, 0, 10, 1000);
		put_entry(buf, stride, 1, 99, 5000);   /* not ours */
		put_entry(buf, stride, 2, 12, ~0ULL);  /* NVML_VALUE_NOT_AVAILABLE */
		put_entry(buf, stride, 3, 11, 300);
		cr_assert_eq(nvml_sum_tree(buf, 4, stride, tree, 3), 1300);
	}
}

/* A fake driver with the R535 behaviour: 32-byte entries, and a process list
 * that grows between the counting call and the filling call. */
static unsigned fake_nprocs;
static int fake_calls;
static int f_init(void) { return 0; }
static int f_shutdown(void) { return 0; }
static int f_count(unsigned *c) { *c = 2; return 0; }
static int f_handle(unsigned i, void **dev) { *dev = (void *)(uintptr_t)(i + 1); return 0; }
static int f_procs(void *dev, unsigned *count, void *infos)
{
	unsigned n = fake_nprocs + (fake_calls++ > 0 ? 3 : 0); /* grows after the first call */
	if (*count < n) {
		*count = n;
		return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
	}
	for (unsigned i = 0; i < n; i++)
		put_entry(infos, 32, i, (unsigned)(uintptr_t)dev * 100 + i, 1ull << 20);
	*count = n;
	return 0;
}

Test(meter, nvml_reads_every_device_with_headroom_for_a_growing_list)
{
	struct nvml_api api = { f_init, f_shutdown, f_count, f_handle, f_procs };
	struct nvml *n = nvml_open_api(&api);
	cr_assert(n);
	pid_t tree[] = { 100, 101, 102, 200, 204 };
	uint64_t bytes;
	fake_nprocs = 2;
	fake_calls = 0;
	cr_assert_eq(nvml_tree_bytes(n, tree, 5, &bytes), 0);
	/* device 1: pids 100..104 (3 ours), device 2: 200..204 (2 ours) */
	cr_assert_eq(bytes, 5ull << 20);
	nvml_close(n);
	nvml_close(NULL);
}

/* ---- NVML through a library: the tests' fake libnvidia-ml.so ------------------- */

static void put_file(const char *dir, const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	cr_assert(f);
	fputs(text, f);
	fclose(f);
}

/* Two devices: pids 100 and 101 on device 0, 100 and 102 (not available) on
 * device 1, and a process outside the tree on each. */
static void fake_nvml_env(const char *lib, const char *grow)
{
	const char *helpers = getenv("SB_HELPERS");
	cr_assert(helpers && *helpers, "SB_HELPERS names the built helpers");
	make_tmpdir();
	put_file(tmpdir, "0.100", "1000");
	put_file(tmpdir, "0.101", "2000");
	put_file(tmpdir, "0.999", "5000000");
	put_file(tmpdir, "1.100", "300");
	put_file(tmpdir, "1.102", "na");
	put_file(tmpdir, "1.998", "7000000");
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", helpers, lib);
	cr_assert_eq(access(path, R_OK), 0, "%s is built", path);
	setenv("STAGEBENCH_NVML_LIB", path, 1);
	setenv("FAKE_NVML_DIR", tmpdir, 1);
	setenv("FAKE_NVML_DEVICES", "2", 1);
	setenv("FAKE_NVML_GROW", grow, 1);
	setenv("FAKE_NVML_LOG", tmp("log"), 1);
}

static void nvml_library_case(const char *lib, const char *grow)
{
	fake_nvml_env(lib, grow);
	struct nvml *n = nvml_open();
	cr_assert_not_null(n, "%s loads", lib);
	pid_t tree[] = { 100, 101, 102 };
	uint64_t bytes = 0;
	cr_assert_eq(nvml_tree_bytes(n, tree, 3, &bytes), 0);
	cr_assert_eq(bytes, 3300, "%s grow=%s: %llu bytes", lib, grow, (unsigned long long)bytes);
	cr_assert_eq(nvml_tree_bytes(n, tree, 3, &bytes), 0);
	cr_assert_eq(bytes, 3300, "again");
	nvml_close(n);
}

Test(meter, nvml_v3_library_with_32_byte_entries_and_a_list_that_grows)
{
	nvml_library_case("libnvidia-ml-fake.so", "1");
}

Test(meter, nvml_v2_library_when_v3_is_absent)
{
	nvml_library_case("libnvidia-ml-fake-v2.so", "1");
}

Test(meter, nvml_retries_when_the_list_outgrows_the_headroom)
{
	nvml_library_case("libnvidia-ml-fake.so", "40");
	char *log;
	size_t len;
	cr_assert_eq(read_file(tmp("log"), &log, &len), 0);
	/* device 0 (3 processes): the count, a fill with headroom that comes
	 * back short (rc 7: 3 + 40 entries now), a fill with room */
	cr_assert_not_null(strstr(log, "procs 0 0->3 rc 7\nprocs 0 12->43 rc 7\nprocs 0 72->43 rc 0"),
			   "log:\n%s", log);
	free(log);
}

Test(meter, nvml_absent_library_means_no_gpu_and_no_message)
{
	setenv("STAGEBENCH_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
	cr_assert_null(nvml_open());
	struct meter *m = meter_new(NULL);
	cr_assert(m);
	cr_assert_not(meter_info(m)->gpu);
	uint64_t b;
	cr_assert_eq(meter_gpu(m, &b), -1);
	meter_free(m);
}

Test(meter, nvml_found_makes_the_meter_sample_gpu_for_its_tree)
{
	fake_nvml_env("libnvidia-ml-fake.so", "1");
	struct meter *m = meter_new(NULL);
	cr_assert(m);
	cr_assert(meter_info(m)->gpu);
	cr_assert(meter_info(m)->fields & SF_GPU);
	char name[32];
	snprintf(name, sizeof(name), "0.%d", (int)getpid());
	put_file(tmpdir, name, "4096");
	meter_track(m, getpid()); /* a tree of one: this process */
	uint64_t b = 0;
	cr_assert_eq(meter_gpu(m, &b), 0);
	cr_assert_eq(b, 4096);
	meter_free(m);
}

#ifdef __linux__
/* ---- statm sampling stays exact ------------------------------------------------ */

/* The child's status now: RssAnon + RssShmem. */
static uint64_t status_footprint(pid_t pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	int fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);
	ssize_t n = read(fd, buf, sizeof(buf));
	close(fd);
	cr_assert_gt(n, 0);
	struct status_fields f;
	linux_parse_status(buf, (size_t)n, &f);
	cr_assert((f.have & (ST_RSS_ANON | ST_RSS_SHMEM)) == (ST_RSS_ANON | ST_RSS_SHMEM));
	return f.rss_anon + f.rss_shmem;
}

/* A child holding shared memory (MAP_SHARED, as DataLoader workers do) and
 * private memory, touched a step at a time on command: at every sample,
 * most of them answered through statm without re-reading status, the
 * footprint equals RssAnon + RssShmem of the child's status read just after
 * (the child is idle, blocked on the command pipe, while both are read). */
Test(meter, footprint_from_statm_sampling_equals_rss_anon_plus_shmem, .timeout = 60)
{
	int cmd[2], ack[2];
	cr_assert_eq(pipe(cmd), 0);
	cr_assert_eq(pipe(ack), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		size_t shared_len = 96 * MiB, anon_len = 48 * MiB, s_off = 0, a_off = 0;
		char *sh = mmap(NULL, shared_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				-1, 0);
		char *an = mmap(NULL, anon_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				-1, 0);
		char c;
		close(cmd[1]); /* a failed test closes its end: read() sees EOF */
		close(ack[0]);
		if (sh == MAP_FAILED || an == MAP_FAILED)
			_exit(2);
		while (read(cmd[0], &c, 1) == 1 && c != 'q') {
			if (c == 's' && s_off < shared_len) {
				memset(sh + s_off, 1, 8 * MiB);
				s_off += 8 * MiB;
			} else if (c == 'a' && a_off < anon_len) {
				memset(an + a_off, 1, 4 * MiB);
				a_off += 4 * MiB;
			} else if (c == 'u' && s_off) {
				s_off -= 8 * MiB; /* give shared pages back */
				madvise(sh + s_off, 8 * MiB, MADV_REMOVE);
			}
			if (write(ack[1], &c, 1) != 1)
				_exit(3);
		}
		_exit(0);
	}
	close(cmd[0]);
	close(ack[1]);
	struct meter *m = meter_new(NULL);
	cr_assert(m);
	meter_track(m, pid);
	const char steps[] = "ssasssauasssuuaa";
	uint64_t shmem_seen = 0;
	for (size_t k = 0; k < sizeof(steps) - 1; k++) {
		char c = steps[k];
		cr_assert_eq(write(cmd[1], &c, 1), 1);
		cr_assert_eq(read(ack[0], &c, 1), 1);
		for (int rep = 0; rep < 3; rep++) {
			struct trace_sample s = sample(m);
			uint64_t want = status_footprint(pid);
			cr_assert_eq(s.footprint, want,
				     "step %zu (%c), sample %d: footprint %llu, RssAnon + RssShmem %llu",
				     k, steps[k], rep, (unsigned long long)s.footprint,
				     (unsigned long long)want);
			if (s.footprint > shmem_seen)
				shmem_seen = s.footprint;
		}
	}
	cr_assert_gt(shmem_seen, 60 * MiB, "the shared pages were counted");
	char q = 'q';
	cr_assert_eq(write(cmd[1], &q, 1), 1);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	meter_free(m);
}
#endif /* __linux__ */

#ifdef __linux__
/* Samples skip the children files while no pid was handed out for a second
 * (platform/linux/meter.c, last_pid_now): a child born after such a quiet
 * spell is found at the very next sample. */
Test(meter, child_born_after_a_quiet_second_is_found_at_the_next_sample, .timeout = 60)
{
	make_tmpdir();
	char w[160], b[160];
	snprintf(w, sizeof(w), "wait=%s", tmp("go"));
	snprintf(b, sizeof(b), "ready=%s", tmp("b"));
	const char *steps[] = { w, "fork", "alloc=64M", b, "sleep=60s", NULL };
	struct meter *m = meter_new(NULL);
	cr_assert(m);
	pid_t pid = spawn(steps);
	meter_track(m, pid);
	int64_t t0 = mono_ns();
	struct trace_sample s;
	do {
		s = sample(m);
		cr_assert_eq(s.procs, 1);
		usleep(20000);
	} while (mono_ns() - t0 < 1300 * 1000000LL); /* past the walks after the last pid */
	go(tmp("go"));
	pid_t grandchild = wait_ready(tmp("b"));
	s = sample(m);
	cr_assert_eq(s.procs, 2, "the child born after the quiet spell, got %d", s.procs);
	cr_assert(late_counted(m, grandchild));
	cr_assert_geq(s.footprint, 64 * MiB);
	kill(grandchild, SIGKILL);
	kill_and_reap(pid);
	meter_free(m);
}

/* A meter whose next command goes into a memory cgroup of its own (*cgfd:
 * meter_enclose's); the test is skipped where none can be made. */
static struct meter *enclosed_meter(int *cgfd)
{
	struct meter *m = meter_new(NULL);
	cr_assert(m);
	*cgfd = meter_enclose(m);
	if (*cgfd < 0) {
		meter_free(m);
		cr_skip_test("no memory cgroup of its own can be made here");
	}
	return m;
}

/* A process outside any metered tree that forks and reaps a child every 2 ms:
 * the last pid handed out moves all the time, as on a machine with other work. */
static pid_t pid_mover(void)
{
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (;;) {
		pid_t c = fork();
		if (c == 0)
			_exit(0);
		if (c > 0)
			waitpid(c, NULL, 0);
		usleep(2000);
	}
}

/* With the tree in its cgroup, pids handed out elsewhere do not make the meter
 * walk a tree of more than CG_LIST_MIN processes (read every process's
 * children): it walks when the cgroup lists a process it does not know, and
 * finds it. A tree of one process is walked (cheaper than reading the list).
 * Without the cgroup, the same moving pids make it walk (the test's control:
 * the mover does move them). */
Test(meter, in_its_cgroup_the_tree_is_walked_only_when_the_cgroup_lists_a_new_process,
     .timeout = 60)
{
	make_tmpdir();
	int cgfd;
	struct meter *m = enclosed_meter(&cgfd);
	char w[160], a[160], b[160];
	snprintf(w, sizeof(w), "wait=%s", tmp("go"));
	snprintf(a, sizeof(a), "ready=%s", tmp("a"));
	snprintf(b, sizeof(b), "ready=%s", tmp("b"));
	/* a chain of six (each process waits for its child), the last one waits */
	const char *steps[] = { "fork", "fork", "fork", "fork", "fork", a, w,
				"fork", "alloc=64M", b, "sleep=60s", NULL };
	pid_t mover = pid_mover();
	pid_t pid = spawn_in(cgfd, steps);
	wait_ready(tmp("a"));
	meter_track(m, pid);
	struct trace_sample s = sample(m);
	cr_assert_eq(s.procs, 6);
	unsigned long w0 = meter_linux_walks(m);
	for (int i = 0; i < 20; i++) {
		usleep(20000);
		s = sample(m);
		cr_assert_eq(s.procs, 6);
	}
	cr_assert_eq(meter_linux_walks(m), w0,
		     "walked at %lu of 20 samples with nothing new in the cgroup",
		     meter_linux_walks(m) - w0);
	go(tmp("go"));
	pid_t last = wait_ready(tmp("b"));
	s = sample(m);
	cr_assert_eq(s.procs, 7, "the child forked in the cgroup, got %d processes", s.procs);
	cr_assert_geq(s.footprint, 64 * MiB);
	cr_assert_gt(meter_linux_walks(m), w0);
	kill(last, SIGKILL);
	kill_and_reap(pid);
	meter_free(m);

	struct meter *one = enclosed_meter(&cgfd);
	const char *idle1[] = { "sleep=60s", NULL };
	pid = spawn_in(cgfd, idle1);
	meter_track(one, pid);
	sample(one);
	w0 = meter_linux_walks(one);
	for (int i = 0; i < 10; i++) {
		usleep(20000);
		cr_assert_eq(sample(one).procs, 1);
	}
	cr_assert_geq(meter_linux_walks(one) - w0, 5,
		      "a tree of one process in its cgroup walked at %lu of 10 samples while "
		      "pids moved (its children file costs less than the cgroup's list)",
		      meter_linux_walks(one) - w0);
	kill_and_reap(pid);
	meter_free(one);

	struct meter *plain = meter_new(NULL);
	cr_assert(plain);
	const char *idle[] = { "sleep=60s", NULL };
	pid = spawn(idle);
	meter_track(plain, pid);
	sample(plain);
	w0 = meter_linux_walks(plain);
	for (int i = 0; i < 10; i++) {
		usleep(20000);
		sample(plain);
	}
	cr_assert_geq(meter_linux_walks(plain) - w0, 5,
		      "without the cgroup, walked at %lu of 10 samples while pids moved",
		      meter_linux_walks(plain) - w0);
	kill_and_reap(pid);
	kill_and_reap(mover);
	meter_free(plain);
}
#endif /* __linux__ */

#ifdef __linux__
/* ---- shared pages: read again only when a sharing process may have changed them ---- */

/* A process holding 64 MiB (touched) forks a copy that runs without a fault
 * (it spins reading a flag in a MAP_SHARED page), then, when the flag is 1,
 * writes to 16 MiB of what it shares and sets the flag to 2. */
static pid_t spinning_copy(volatile int **flag)
{
	*flag = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	cr_assert(*flag != MAP_FAILED);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test's worker takes both with it */
	volatile int *f = *flag;
	char *buf = mmap(NULL, 64 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		_exit(2);
	memset(buf, 1, 64 * MiB);
	if (fork() == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		f[2] = 1; /* spinning from now on: no fault until *f is 1 */
		while (*f != 1)
			;
		memset(buf, 2, 16 * MiB);
		*f = 2;
		for (;;)
			pause();
	}
	f[1] = 1; /* nothing but pause() from now on */
	for (;;)
		pause();
}

/* pid's one child (its children file), after the fork. */
static pid_t only_child(pid_t pid)
{
	char path[64];
	long child = 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	FILE *f = fopen(path, "r");
	cr_assert(f, "%s", path);
	cr_assert_eq(fscanf(f, "%ld", &child), 1, "%d has no child", (int)pid);
	fclose(f);
	return (pid_t)child;
}

/* pid's /proc/PID/statm line into out (128 bytes). */
static void statm_of(pid_t pid, char *out)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
	FILE *f = fopen(path, "r");
	cr_assert(f, "%s", path);
	cr_assert(fgets(out, 128, f), "%s", path);
	fclose(f);
}

/* Sample until the meter has read no smaps_rollup for 8 samples in a row: the faults that
 * came before the processes settled have been read (however late a busy machine ran them). */
static struct trace_sample settle(struct meter *m)
{
	struct trace_sample s;
	unsigned long last = meter_linux_rollups(m);
	for (int same = 0; same < 8;) {
		usleep(25000);
		s = sample(m);
		unsigned long now = meter_linux_rollups(m);
		same = now == last ? same + 1 : 0;
		last = now;
	}
	return s;
}

/* The copy runs all the time but never faults: after the first readings
 * (each process when first seen, then every sharing one) nothing is read
 * again, and the shared 64 MiB count once. Its writes to shared pages are
 * faults: they are read again and count. (The run time alone, the former
 * signal, read every sharing process as often as the cost budget let.)
 * Both processes say when they have settled (flag[1], flag[2]): only then
 * do their faults stop, which on a busy machine can be long after the fork. */
Test(meter, a_sharing_copy_that_runs_without_faults_is_not_read_again, .timeout = 60)
{
	volatile int *flag;
	pid_t pid = spinning_copy(&flag);
	struct meter *m = meter_new(NULL);
	cr_assert(m);
	meter_track(m, pid);
	struct trace_sample s;
	do {
		usleep(20000);
		s = sample(m);
	} while (s.procs < 2 || s.footprint < 64 * MiB || !flag[1] || !flag[2]);
	s = settle(m); /* the faults of both before they settled */
	unsigned long before = meter_linux_rollups(m);
	cr_assert_gt(before, 0);
	/* The kernel may still move their resident pages (here DAMON pages out cold
	 * file pages of their libraries; a refault brings them back): a statm that
	 * moved is read again, rightly, both processes at most once for it. */
	pid_t copy = only_child(pid);
	char was[2][128], now[2][128];
	statm_of(pid, was[0]);
	statm_of(copy, was[1]);
	int moves = 0;
	for (int i = 0; i < 40; i++) {
		usleep(25000);
		s = sample(m);
		cr_assert_eq(s.procs, 2);
		cr_assert(within(s.footprint, 64 * MiB, 0.1), "footprint %llu MiB, 64 shared once",
			  (unsigned long long)(s.footprint / MiB));
		statm_of(pid, now[0]);
		statm_of(copy, now[1]);
		moves += strcmp(now[0], was[0]) || strcmp(now[1], was[1]);
		memcpy(was, now, sizeof(was));
	}
	cr_assert_leq(meter_linux_rollups(m) - before, 2ul * (unsigned long)moves,
		      "smaps_rollup read %lu more times for a copy that only ran (its statm or "
		      "its holder's moved at %d samples)", meter_linux_rollups(m) - before, moves);
	*flag = 1;
	while (*flag != 2)
		usleep(1000);
	do {
		usleep(25000);
		s = sample(m);
	} while (s.footprint < 64 * MiB + 15 * MiB); /* the criterion timeout bounds the wait */
	cr_assert_gt(meter_linux_rollups(m), before);
	cr_assert(within(s.footprint, 80 * MiB, 0.1), "footprint %llu MiB, 64 + 16 written",
		  (unsigned long long)(s.footprint / MiB));
	kill_and_reap(pid); /* the copy goes with it (PR_SET_PDEATHSIG) */
	meter_free(m);
}
#endif /* __linux__ */

#ifdef __linux__
/* A process holding 64 MiB (touched) forks a copy, which forks a second
 * copy when told (cmd) and says so (ack); all of them pause. */
static pid_t sharing_chain(int cmd[2], int ack[2])
{
	cr_assert_eq(pipe(cmd), 0);
	cr_assert_eq(pipe(ack), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test leaves nothing behind */
	close(cmd[1]);
	close(ack[0]);
	char *buf = mmap(NULL, 64 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		_exit(2);
	memset(buf, 1, 64 * MiB);
	if (fork() == 0) {
		char c;
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (read(cmd[0], &c, 1) != 1)
			_exit(3);
		if (fork() == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (write(ack[1], &c, 1) != 1)
				_exit(4);
			for (;;)
				pause();
		}
		for (;;)
			pause();
	}
	for (;;)
		pause();
}

/* The tree's proportional sizes, each page once: Pss_Anon + Pss_Shmem
 * (*anon) and Pss (*all) summed over the meter's processes. */
static void pss_total(struct meter *m, uint64_t *anon, uint64_t *all)
{
	size_t n;
	const pid_t *pids = meter_pids(m, &n);
	*anon = *all = 0;
	for (size_t i = 0; i < n; i++) {
		char path[64], buf[4096];
		snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pids[i]);
		int fd = open(path, O_RDONLY);
		cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
		ssize_t len = read(fd, buf, sizeof(buf));
		close(fd);
		cr_assert_gt(len, 0);
		struct rollup_fields ru;
		linux_parse_rollup(buf, (size_t)len, &ru);
		cr_assert(ru.have & RU_PSS_ANON);
		*anon += ru.pss_anon + ru.pss_shmem;
		*all += ru.pss;
	}
}

/* A copy forked by a process that already shares is read when first seen;
 * its partners, whose shares it lowered, are read again in a round that
 * waits for the cost budget (platform/linux/shared.c, share_update) but comes:
 * the 64 MiB count once in the end, in the footprint and in the peak. */
Test(meter, a_sharers_new_child_counts_once_after_the_deferred_round, .timeout = 60)
{
	int cmd[2], ack[2];
	pid_t pid = sharing_chain(cmd, ack);
	struct meter *m = meter_new(NULL);
	cr_assert(m);
	meter_track(m, pid);
	struct trace_sample s;
	uint64_t anon, all;
	int n = 0;
	do {
		usleep(10000);
		s = sample(m);
		pss_total(m, &anon, &all);
	} while (++n < 500 && (s.procs < 2 || !within(s.footprint, anon, 0.03)));
	cr_assert(within(s.footprint, anon, 0.03), "2 processes: footprint %llu MiB, Pss_Anon + "
		  "Pss_Shmem %llu MiB", (unsigned long long)(s.footprint / MiB),
		  (unsigned long long)(anon / MiB));
	cr_assert_eq(meter_peak_reset(m), 0);
	char c = 'f';
	cr_assert_eq(write(cmd[1], &c, 1), 1);
	cr_assert_eq(read(ack[0], &c, 1), 1);
	n = 0;
	do {
		usleep(10000);
		s = sample(m);
		pss_total(m, &anon, &all);
	} while (++n < 500 && (s.procs < 3 || !within(s.footprint, anon, 0.03)));
	cr_assert_eq(s.procs, 3);
	cr_assert_gt(anon, 64 * MiB);
	cr_assert(within(s.footprint, anon, 0.03), "footprint %llu MiB after %d samples, "
		  "Pss_Anon + Pss_Shmem %llu MiB", (unsigned long long)(s.footprint / MiB), n,
		  (unsigned long long)(anon / MiB));
	uint64_t peak;
	cr_assert_eq(meter_peak_read(m, &peak), 0);
	cr_assert(within(peak, all, 0.05), "peak %llu MiB, Pss %llu MiB",
		  (unsigned long long)(peak / MiB), (unsigned long long)(all / MiB));
	kill_and_reap(pid); /* the copies go with it (PR_SET_PDEATHSIG) */
	close(cmd[1]);
	close(ack[0]);
	meter_free(m);
}
#endif /* __linux__ */

#ifdef __linux__
/* A process read alone forks a copy that forks a second copy before the next
 * sample, with no round of readings at that sample (its budget spent): the
 * first copy counts only its own pages (its parent's older reading counts
 * those they share), and so does the second, read after its parent but
 * sharing what the root's reading counts: 64 MiB once, not 64 + a third. */
Test(meter, a_chain_forked_between_two_samples_counts_its_pages_once, .timeout = 60)
{
	make_tmpdir();
	char a[160], b[160], w[160];
	snprintf(a, sizeof(a), "ready=%s", tmp("a"));
	snprintf(w, sizeof(w), "wait=%s", tmp("go"));
	snprintf(b, sizeof(b), "ready=%s", tmp("b"));
	const char *steps[] = { "alloc=64M", a, w, "fork", "fork", b, "sleep=60s", NULL };
	pid_t pid = spawn(steps);
	wait_ready(tmp("a"));
	struct meter *m = meter_new(NULL);
	cr_assert(m);
	meter_track(m, pid);
	struct trace_sample s = sample(m);
	cr_assert_eq(s.procs, 1);
	cr_assert(within(s.footprint, 64 * MiB, 0.1), "alone: %llu MiB",
		  (unsigned long long)(s.footprint / MiB));
	meter_linux_owe(m);
	go(tmp("go"));
	pid_t last = wait_ready(tmp("b"));
	unsigned long before = meter_linux_rollups(m);
	s = sample(m);
	cr_assert_eq(s.procs, 3);
	cr_assert_eq(meter_linux_rollups(m) - before, 2, "the two copies read, no round");
	cr_assert(within(s.footprint, 64 * MiB, 0.1), "a chain of 3: footprint %llu MiB, "
		  "64 shared", (unsigned long long)(s.footprint / MiB));
	kill(last, SIGKILL);
	kill_and_reap(pid);
	meter_free(m);
}
#endif /* __linux__ */

#ifdef __linux__
/* A parent with a 32 MiB MAP_SHARED region it never touches forks two workers
 * that write all of it once told (cmd): the workers' RssShmem grows by 32 MiB
 * each, the pages are 32 MiB once, and each one's Pss falls as the other maps
 * them, with no change to its statm. Busy: then they fault pages in and out
 * for as long as they live (the sharing group moves at every sample); else
 * they pause. */
static pid_t shm_writers(int cmd[2], bool busy)
{
	char *m = mmap(NULL, 32 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	cr_assert(m != MAP_FAILED);
	cr_assert_eq(pipe(cmd), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (int k = 0; k < 2; k++)
		if (fork() == 0) {
			char c;
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (read(cmd[0], &c, 1) != 1)
				_exit(3);
			memset(m, k + 1, 32 * MiB);
			while (busy) {
				char *p = mmap(NULL, MiB, PROT_READ | PROT_WRITE,
					       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
				if (p != MAP_FAILED) {
					memset(p, 1, MiB);
					munmap(p, MiB);
				}
			}
			for (;;)
				pause();
		}
	for (;;)
		pause();
}

/* The sharing group is read whole when one member changed: once the writes
 * are over, every sample counts the 32 MiB once (the Pss sum), the growth in
 * statm between rounds counting no more than the system's shmem grew by. */
Test(meter, shared_memory_written_by_two_workers_counts_once, .timeout = 60)
{
	int cmd[2];
	pid_t pid = shm_writers(cmd, false);
	struct meter *m = meter_new(NULL);
	cr_assert(m);
	meter_track(m, pid);
	struct trace_sample s;
	do {
		usleep(10000);
		s = sample(m);
	} while (s.procs < 3);
	settle(m);
	char c[2] = "ww";
	cr_assert_eq(write(cmd[1], c, 2), 2);
	uint64_t anon, all;
	int n = 0;
	do {
		s = settle(m);
		pss_total(m, &anon, &all);
	} while (++n < 20 && anon < 32 * MiB);
	cr_assert_gt(anon, 32 * MiB);
	for (int i = 0; i < 10; i++) {
		usleep(20000);
		s = sample(m);
		pss_total(m, &anon, &all);
		cr_assert(within(s.footprint, anon, 0.03), "footprint %llu MiB, Pss_Anon + "
			  "Pss_Shmem %llu MiB", (unsigned long long)(s.footprint / MiB),
			  (unsigned long long)(anon / MiB));
	}
	kill_and_reap(pid);
	close(cmd[0]);
	close(cmd[1]);
	meter_free(m);
}

/* Pss_Anon + Pss_Shmem of pid. */
static uint64_t pss_of(pid_t pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	int fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	ssize_t len = read(fd, buf, sizeof(buf));
	close(fd);
	cr_assert_gt(len, 0);
	struct rollup_fields ru;
	linux_parse_rollup(buf, (size_t)len, &ru);
	return ru.pss_anon + ru.pss_shmem;
}

/* A partner that leaves hands its shares of what it shared to the others,
 * whose Pss grew by as much: the sample that finds it gone counts the pages
 * once without reading anyone (the others' Pss sum). */
Test(meter, a_departed_partners_shares_go_to_the_others, .timeout = 60)
{
	int cmd[2], ack[2];
	pid_t pid = sharing_chain(cmd, ack);
	struct meter *m = meter_new(NULL);
	cr_assert(m);
	meter_track(m, pid);
	struct trace_sample s;
	char c = 'f';
	cr_assert_eq(write(cmd[1], &c, 1), 1);
	cr_assert_eq(read(ack[0], &c, 1), 1);
	uint64_t anon, all;
	int n = 0;
	do {
		usleep(10000);
		s = sample(m);
	} while (++n < 500 && s.procs < 3);
	s = settle(m);
	pss_total(m, &anon, &all);
	cr_assert(within(s.footprint, anon, 0.03), "3 processes: footprint %llu MiB, Pss sum "
		  "%llu MiB", (unsigned long long)(s.footprint / MiB),
		  (unsigned long long)(anon / MiB));
	pid_t mid = only_child(pid), last = only_child(mid);
	kill(last, SIGKILL); /* a zombie: its parent never waits */
	char path[64], st[4096];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)last);
	for (bool z = false; !z; usleep(1000)) {
		FILE *f = fopen(path, "r");
		cr_assert(f);
		z = fgets(st, sizeof(st), f) && strstr(st, ") Z ");
		fclose(f);
	}
	usleep(20000);
	s = sample(m);
	anon = pss_of(pid) + pss_of(mid);
	cr_assert(within(s.footprint, anon, 0.03), "footprint %llu MiB once one left, Pss sum "
		  "%llu MiB", (unsigned long long)(s.footprint / MiB),
		  (unsigned long long)(anon / MiB));
	kill_and_reap(pid);
	close(cmd[1]);
	close(ack[0]);
	meter_free(m);
}
#endif /* __linux__ */

/* ---- Linux: when the mapped figure reads smaps ------------------------------ */
#ifdef __linux__
#include <sys/statvfs.h>
#include <sys/vfs.h>

/* PID's status line KEY ("RssFile:"), bytes. */
static uint64_t status_bytes(pid_t pid, const char *key)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	cr_assert(f, "%s", path);
	unsigned long long kb = 0;
	size_t kl = strlen(key);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && sscanf(line + kl, " %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

/* PID's RssFile (status), bytes. */
static uint64_t rss_file_of(pid_t pid)
{
	return status_bytes(pid, "RssFile:");
}

static void write_pattern(const char *path, uint64_t size)
{
	FILE *f = fopen(path, "w");
	cr_assert(f, "%s", path);
	static unsigned char block[65536];
	for (size_t i = 0; i < sizeof(block); i++)
		block[i] = (unsigned char)(i * 131 + 7);
	for (uint64_t at = 0; at < size; at += sizeof(block))
		cr_assert_eq(fwrite(block, 1, sizeof(block), f), sizeof(block));
	cr_assert_eq(fclose(f), 0);
}

/* A library file (mapped executable) and an 8 MiB data file in a new directory whose
 * pages are file pages (not tmpfs) and may be mapped executable (not noexec): lib= and
 * map= steps for eatmem naming them. The test is skipped where there is none. */
struct lib_and_data {
	char dir[32], lib[96], data[96];
	char l[128], d[128]; /* "lib=FILE", "map=FILE" */
};

static void lib_and_data_make(struct lib_and_data *f, uint64_t lib_size)
{
	snprintf(f->dir, sizeof(f->dir), "/var/tmp/sb-mapped-XXXXXX");
	cr_assert(mkdtemp(f->dir));
	struct statfs fs;
	struct statvfs vfs;
	if (statfs(f->dir, &fs) || (unsigned long)fs.f_type == 0x01021994 ||
	    statvfs(f->dir, &vfs) || (vfs.f_flag & ST_NOEXEC)) {
		rmdir(f->dir);
		cr_skip_test("%s is tmpfs or noexec: no library file can be mapped there", f->dir);
	}
	snprintf(f->lib, sizeof(f->lib), "%s/libmodel.so", f->dir);
	snprintf(f->data, sizeof(f->data), "%s/weights.bin", f->dir);
	write_pattern(f->lib, lib_size);
	write_pattern(f->data, 8 * MiB);
	snprintf(f->l, sizeof(f->l), "lib=%s", f->lib);
	snprintf(f->d, sizeof(f->d), "map=%s", f->data);
}

static void lib_and_data_remove(const struct lib_and_data *f)
{
	unlink(f->lib);
	unlink(f->data);
	rmdir(f->dir);
}

/* Before the tree maps a data file, the meter reads no smaps (a page-table walk):
 * the pages of the libraries it maps come and go (the kernel pages cold ones out,
 * the process faults them back in), its RssFile moves with nothing for the mapped
 * figure to find. A data file mapped afterwards is found (the process's mappings
 * changed) and measured. */
Test(meter, no_smaps_is_read_before_a_data_file_is_mapped_and_then_it_is_found,
     .timeout = 60)
{
	make_tmpdir();
	struct lib_and_data f;
	lib_and_data_make(&f, 32 * MiB);
	char ra[160], rb[160], rc[160], rd[160], g1[160], g2[160], g3[160];
	snprintf(ra, sizeof(ra), "ready=%s", tmp("a"));
	snprintf(rb, sizeof(rb), "ready=%s", tmp("b"));
	snprintf(rc, sizeof(rc), "ready=%s", tmp("c"));
	snprintf(rd, sizeof(rd), "ready=%s", tmp("d"));
	snprintf(g1, sizeof(g1), "wait=%s", tmp("g1"));
	snprintf(g2, sizeof(g2), "wait=%s", tmp("g2"));
	snprintf(g3, sizeof(g3), "wait=%s", tmp("g3"));
	const char *steps[] = { f.l, ra, g1, "pageout", rb, g2, "reread", rc, g3, f.d, rd,
				"sleep=60s", NULL };
	struct meter *m = meter_new(NULL);
	cr_assert(m);
	pid_t pid = spawn(steps);
	wait_ready(tmp("a"));
	meter_track(m, pid);
	struct trace_sample s = sample(m);
	for (int i = 0; i < 5; i++)
		s = sample(m);
	uint64_t held = rss_file_of(pid);
	unsigned long r0 = meter_linux_mapping_reads(m, true);
	unsigned long m0 = meter_linux_mapping_reads(m, false);
	cr_assert_eq(r0, 0, "smaps read %lu times with no data file mapped", r0);
	cr_assert_geq(m0, 1, "the process's maps were not read");
	cr_assert_eq(s.mapped, 0, "a library counted as mapped data: %llu bytes",
		     (unsigned long long)s.mapped);

	go(tmp("g1"));
	wait_ready(tmp("b"));
	uint64_t out = rss_file_of(pid);
	if (out + 16 * MiB > held) {
		kill_and_reap(pid);
		meter_free(m);
		cr_skip_test("MADV_PAGEOUT evicted nothing here (RssFile %llu, then %llu)",
			     (unsigned long long)held, (unsigned long long)out);
	}
	for (int i = 0; i < 10; i++) {
		usleep(10000);
		s = sample(m);
	}
	go(tmp("g2"));
	wait_ready(tmp("c"));
	cr_assert_geq(rss_file_of(pid) + 4 * MiB, held, "the library's pages did not come back");
	for (int i = 0; i < 10; i++) {
		usleep(10000);
		s = sample(m);
	}
	cr_assert(meter_linux_mapping_reads(m, true) == r0 &&
		  meter_linux_mapping_reads(m, false) == m0,
		  "smaps read %lu times, maps %lu times while only the library's pages moved "
		  "(RssFile %llu, %llu, %llu)",
		  meter_linux_mapping_reads(m, true) - r0,
		  meter_linux_mapping_reads(m, false) - m0, (unsigned long long)held,
		  (unsigned long long)out, (unsigned long long)rss_file_of(pid));

	go(tmp("g3"));
	wait_ready(tmp("d"));
	bool found = false;
	for (int i = 0; i < 200 && !found; i++) {
		s = sample(m);
		found = within(s.mapped, 8 * MiB, 0.03);
		if (!found)
			usleep(10000);
	}
	cr_assert(found, "the data file mapped afterwards was not found: mapped %llu bytes",
		  (unsigned long long)s.mapped);
	cr_assert_gt(meter_linux_mapping_reads(m, true), r0);
	kill_and_reap(pid);
	meter_free(m);
	lib_and_data_remove(&f);
}

/* Between smaps readings, a one-process tree's mapped figure follows its RssFile, which
 * also moves by the library pages it faults in (a first forward pass brings in hundreds of
 * MB of torch's code): the figure stays within what the data files mapped at the last
 * reading can hold. The process holds 1 GiB of its own so that a reading costs enough
 * (a page-table walk) to make the next wait (MAPPED_COST_FACTOR times its cost). */
Test(meter, between_readings_the_mapped_figure_stays_within_the_data_files_sizes, .timeout = 60)
{
	make_tmpdir();
	struct lib_and_data f;
	lib_and_data_make(&f, 24 * MiB);
	char ra[160], rb[160], g1[160];
	snprintf(ra, sizeof(ra), "ready=%s", tmp("a"));
	snprintf(rb, sizeof(rb), "ready=%s", tmp("b"));
	snprintf(g1, sizeof(g1), "wait=%s", tmp("g1"));
	const char *steps[] = { "alloc=1G", f.d, f.l, "pageout", ra, g1, "reread", rb, "sleep=60s",
				NULL };
	struct meter *m = meter_new(NULL);
	cr_assert(m);
	pid_t pid = spawn(steps);
	wait_ready(tmp("a"));
	meter_track(m, pid);
	struct trace_sample s = sample(m);
	for (int i = 0; i < 300 && !within(s.mapped, 8 * MiB, 0.03); i++) {
		usleep(10000);
		s = sample(m);
	}
	cr_assert(within(s.mapped, 8 * MiB, 0.03), "the data file was not found: mapped %llu",
		  (unsigned long long)s.mapped);
	/* That sample's reading found it: the next one waits for the budget. */
	unsigned long r0 = meter_linux_mapping_reads(m, true);
	uint64_t before = rss_file_of(pid);
	go(tmp("g1"));
	wait_ready(tmp("b"));
	uint64_t after = rss_file_of(pid);
	s = sample(m);
	bool read_again = meter_linux_mapping_reads(m, true) != r0;
	kill_and_reap(pid);
	meter_free(m);
	lib_and_data_remove(&f);
	cr_assert_geq(after, before + 16 * MiB, "the library's pages did not come back (RssFile "
		      "%llu, then %llu)", (unsigned long long)before, (unsigned long long)after);
	if (read_again)
		cr_skip_test("smaps was read again at once: the budget did not hold the reading back");
	cr_assert_leq(s.mapped, 8 * MiB + 64 * 1024,
		      "mapped %llu bytes with 8 MiB of data files mapped (RssFile rose by %llu)",
		      (unsigned long long)s.mapped, (unsigned long long)(after - before));
}

/* ---- Linux: a still tree in its cgroup is read from the cgroup alone -------- */

/* The sum of VmRSS over PID and its descendants (their children files), and
 * how many they are: the kernel's own figures, read here, not by the meter. */
static uint64_t tree_vm_rss(pid_t pid, int *n)
{
	char path[96], buf[4096];
	uint64_t sum = status_bytes(pid, "VmRSS:");
	(*n)++;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	int fd = open(path, O_RDONLY);
	ssize_t len = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[len > 0 ? len : 0] = '\0';
	for (char *t = strtok(buf, " \n"); t; t = strtok(NULL, " \n"))
		sum += tree_vm_rss((pid_t)atoi(t), n);
	return sum;
}

/* A tree of six processes in its cgroup that touches no memory: after a sample
 * has read every process, samples stand on that reading (the cgroup's
 * memory.stat read the same), at most STILL_MAX (30) in a row, and what they
 * give is what the kernel says now. When one process touches 16 MiB, the next
 * sample reads every process again and finds it. */
Test(meter, a_still_tree_in_its_cgroup_is_read_from_the_cgroup_alone_until_it_moves,
     .timeout = 60)
{
	make_tmpdir();
	int cgfd;
	struct meter *m = enclosed_meter(&cgfd);
	char ra[160], rb[160], g[160];
	snprintf(ra, sizeof(ra), "ready=%s", tmp("a"));
	snprintf(rb, sizeof(rb), "ready=%s", tmp("b"));
	snprintf(g, sizeof(g), "wait=%s", tmp("go"));
	const char *steps[] = { "alloc=8M", "fork", "fork", "fork", "fork", "fork", ra, g,
				"alloc=16M", rb, "sleep=60s", NULL };
	pid_t pid = spawn_in(cgfd, steps);
	pid_t last = wait_ready(tmp("a"));
	meter_track(m, pid);
	struct trace_sample s = sample(m);
	unsigned long st0 = meter_linux_still(m), run = 0, longest = 0, stood = 0;
	for (int i = 0; i < 200 && stood < 40; i++) {
		usleep(2000);
		s = sample(m);
		unsigned long st = meter_linux_still(m);
		run = st > st0 ? run + 1 : 0;
		stood += st > st0;
		longest = run > longest ? run : longest;
		st0 = st;
	}
	cr_assert_geq(stood, 40, "%lu of 200 samples of a still tree stood on the last "
		      "per-process reading", stood);
	cr_assert_leq(longest, 30, "%lu samples in a row stood on one reading", longest);
	int n = 0;
	uint64_t truth = tree_vm_rss(pid, &n);
	cr_assert_eq(s.procs, 6);
	cr_assert_eq(n, 6);
	cr_assert(within(s.rss, truth, 0.01), "rss %llu, the processes' VmRSS sum %llu",
		  (unsigned long long)s.rss, (unsigned long long)truth);

	go(tmp("go"));
	wait_ready(tmp("b"));
	unsigned long st1 = meter_linux_still(m);
	s = sample(m);
	n = 0;
	truth = tree_vm_rss(pid, &n);
	cr_assert_eq(meter_linux_still(m), st1,
		     "the sample after 16 MiB were touched stood on the last reading");
	cr_assert(within(s.rss, truth, 0.01), "rss %llu after 16 MiB were touched, the VmRSS "
		  "sum %llu", (unsigned long long)s.rss, (unsigned long long)truth);
	cr_assert_geq(s.footprint, 8 * MiB + 16 * MiB);
	kill(last, SIGKILL);
	kill_and_reap(pid);
	meter_free(m);
}

/* Before any data file is known, the children a process forks with its own
 * mappings (a worker pool's forks) are not read: their parent's reading stands
 * for them. One that maps something afterwards (its address space grew) is. */
Test(meter, forks_with_their_parents_mappings_are_not_read_for_the_mapped_figure,
     .timeout = 60)
{
	make_tmpdir();
	struct lib_and_data f;
	lib_and_data_make(&f, 24 * MiB);
	char r0[160], ra[160], rb[160], g1[160], g2[160];
	snprintf(r0, sizeof(r0), "ready=%s", tmp("0"));
	snprintf(ra, sizeof(ra), "ready=%s", tmp("a"));
	snprintf(rb, sizeof(rb), "ready=%s", tmp("b"));
	snprintf(g1, sizeof(g1), "wait=%s", tmp("g1"));
	snprintf(g2, sizeof(g2), "wait=%s", tmp("g2"));
	const char *steps[] = { r0, g1, "fork", "fork", "fork", ra, g2, f.l, rb, "sleep=60s",
				NULL };
	struct meter *m = meter_new(NULL);
	cr_assert(m);
	pid_t pid = spawn(steps);
	wait_ready(tmp("0")); /* past its exec: the first reading is of eatmem's mappings */
	meter_track(m, pid);
	struct trace_sample s = sample(m);
	for (int i = 0; i < 3; i++)
		s = sample(m);
	unsigned long m0 = meter_linux_mapping_reads(m, false);
	cr_assert_eq(m0, 1, "the root's maps read %lu times", m0);

	go(tmp("g1"));
	pid_t last = wait_ready(tmp("a"));
	for (int i = 0; i < 30; i++) {
		usleep(10000);
		s = sample(m);
	}
	cr_assert_eq(s.procs, 4);
	cr_assert_eq(meter_linux_mapping_reads(m, false), m0,
		     "maps read %lu times for 3 forks with their parent's mappings",
		     meter_linux_mapping_reads(m, false) - m0);

	go(tmp("g2"));
	wait_ready(tmp("b"));
	for (int i = 0; i < 200 && meter_linux_mapping_reads(m, false) == m0; i++) {
		usleep(10000);
		s = sample(m);
	}
	cr_assert_eq(meter_linux_mapping_reads(m, false), m0 + 1,
		     "maps read %lu times after one fork mapped a library",
		     meter_linux_mapping_reads(m, false) - m0);
	cr_assert_eq(meter_linux_mapping_reads(m, true), 0);
	kill(last, SIGKILL);
	kill_and_reap(pid);
	meter_free(m);
	lib_and_data_remove(&f);
}
#endif /* __linux__ */

#ifdef __linux__
/* Shares that stay stale for a whole window (the group moves at every sample
 * and the readings' budget is spent) hold the window's parts back, but not
 * below what its samples read: the window's peak is at least the largest
 * footprint a sample in it took. */
Test(meter, a_window_peak_is_at_least_its_samples_footprint_while_shares_are_stale,
     .timeout = 60)
{
	int cmd[2];
	pid_t pid = shm_writers(cmd, true);
	struct meter *m = meter_new(NULL);
	cr_assert(m);
	meter_track(m, pid);
	struct trace_sample s;
	do {
		usleep(10000);
		s = sample(m);
	} while (s.procs < 3);
	settle(m);
	cr_assert_eq(meter_peak_reset(m), 0);
	char c[2] = "ww";
	cr_assert_eq(write(cmd[1], c, 2), 2);
	uint64_t most = 0;
	for (int i = 0; i < 50; i++) {
		meter_linux_owe(m);
		usleep(20000);
		s = sample(m);
		if (s.footprint > most)
			most = s.footprint;
	}
	cr_assert_gt(most, 32 * MiB);
	uint64_t peak;
	cr_assert_eq(meter_peak_read(m, &peak), 0);
	cr_assert_geq(peak, most, "peak %llu MiB, the samples' largest footprint %llu MiB",
		      (unsigned long long)(peak / MiB), (unsigned long long)(most / MiB));
	kill_and_reap(pid);
	close(cmd[0]);
	close(cmd[1]);
	meter_free(m);
}
#endif /* __linux__ */
