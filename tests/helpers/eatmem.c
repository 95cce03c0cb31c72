/* eatmem.c -- test workload: allocate, free, fork and emit probe events in scripted steps
 *
 * Usage: eatmem STEP...   (steps run in order; see usage() below)
 * Standalone: built with only this file and probe/stagebench_probe.h.
 * Exit status: 0, or N from exit=N, or 2 for a bad step (message names it).
 */
#include "probe/stagebench_probe.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "common/parse.h"

static void usage(FILE *f)
{
	fputs("usage: eatmem STEP...\n"
	      "  stage=NAME         emit a stage event (and remember the stage)\n"
	      "  alloc=SIZE         malloc SIZE and touch every page (held until freed)\n"
	      "  dirty=SIZE         write to the first SIZE of the most recent held allocation\n"
	      "                     (after a fork: private copies of pages it shared)\n"
	      "  free | free=all    free the most recent held allocation | all of them\n"
	      "  spike=SIZE/DUR     alloc+touch SIZE, hold DUR, free it\n"
	      "  release=NAME/SIZE  free the most recent allocation, emit a release event\n"
	      "  load=NAME/SIZE     alloc+touch SIZE, emit a load event\n"
	      "  ramp=SIZE/RATE     allocate SIZE at RATE per second in 16 MiB steps\n"
	      "  map=FILE           map FILE (shared, read-only) and read every page (held)\n"
	      "  lib=FILE           map FILE private and executable, as a shared library's\n"
	      "                     code is, and read every page (held)\n"
	      "  pageout            evict the most recent mapping's pages (madvise\n"
	      "                     MADV_PAGEOUT, then posix_fadvise DONTNEED on the file;\n"
	      "                     then MADV_RANDOM: no read-ahead, a fault per page read)\n"
	      "  reread             read every page of the most recent mapping again\n"
	      "  sleep=DUR          sleep\n"
	      "  fork               a child runs the remaining steps; exit with its status\n"
	      "  orphan             a child runs the remaining steps; exit 0 at once\n"
	      "  setsid             leave the process group\n"
	      "  ready=FILE         write this process's pid to FILE (atomically)\n"
	      "  wait=FILE          wait until FILE exists (polls every millisecond)\n"
	      "  mark=TEXT          emit a mark event\n"
	      "  exit=N             exit with N\n"
	      "  kill=SIG           raise SIG (number or name: TERM, KILL, INT, ...)\n"
	      "  print=TEXT         print TEXT and a newline, flushed\n"
	      "  log=FILE           from now on append 'MONO WHAT BYTES' lines to FILE (MONO:\n"
	      "                     CLOCK_MONOTONIC seconds) as alloc, spike (touch, held,\n"
	      "                     freed) and each ramp step complete, and 'MONO sigterm 0'\n"
	      "                     when SIGTERM arrives (then die of it)\n"

	      "SIZE: 300M, 1.5G, 4096, 10k (binary units); DUR: 50ms, 2s, 1m, 250us\n",
	      f);
}

static const char *cur_step;

static void bad(const char *why)
{
	fprintf(stderr, "eatmem: bad step '%s': %s\n", cur_step, why);
	exit(2);
}

static void fail(const char *what)
{
	fprintf(stderr, "eatmem: step '%s': %s: %s\n", cur_step, what, strerror(errno));
	exit(3);
}

static uint64_t need_size(const char *s)
{
	uint64_t b;
	if (parse_size(s, &b))
		bad("not a size (e.g. 300M)");
	return b;
}

static int64_t need_duration(const char *s)
{
	int64_t ns;
	if (parse_duration(s, &ns))
		bad("not a duration (e.g. 50ms)");
	return ns;
}

/* "A/B" -> copies of A and B in the caller's buffers. */
static void split2(const char *s, char *a, char *b, size_t cap)
{
	const char *slash = strchr(s, '/');
	if (!slash)
		bad("expected two values separated by '/'");
	size_t na = (size_t)(slash - s), nb = strlen(slash + 1);
	if (na == 0 || nb == 0 || na >= cap || nb >= cap)
		bad("expected two values separated by '/'");
	memcpy(a, s, na);
	a[na] = '\0';
	memcpy(b, slash + 1, nb + 1);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_for(int64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000), (long)(ns % 1000000000) };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---- progress log (log=FILE) ---- */

static int log_fd = -1;

/* Async-signal-safe: "SEC.NSEC WHAT BYTES\n" built by hand, one write(). */
static void log_line(const char *what, uint64_t bytes)
{
	char buf[128], num[24];
	struct timespec ts;
	size_t n = 0;
	if (log_fd < 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	int k = 0;
	uint64_t v = (uint64_t)ts.tv_sec;
	do { num[k++] = (char)('0' + v % 10); v /= 10; } while (v);
	while (k)
		buf[n++] = num[--k];
	buf[n++] = '.';
	long ns = ts.tv_nsec;
	for (long d = 100000000; d; d /= 10)
		buf[n++] = (char)('0' + (ns / d) % 10);
	buf[n++] = ' ';
	for (const char *w = what; *w && n < 80; w++)
		buf[n++] = *w;
	buf[n++] = ' ';
	v = bytes;
	do { num[k++] = (char)('0' + v % 10); v /= 10; } while (v);
	while (k)
		buf[n++] = num[--k];
	buf[n++] = '\n';
	ssize_t w = write(log_fd, buf, n);
	(void)w;
}

static void on_sigterm(int sig)
{
	log_line("sigterm", 0);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* ---- held allocations ---- */

struct block {
	unsigned char *p;
	uint64_t size;
};
static struct block *blocks;
static size_t nblocks, blocks_alloc;

static void touch(unsigned char *p, uint64_t from, uint64_t to)
{
	long page = sysconf(_SC_PAGESIZE);
	if (page <= 0)
		page = 4096;
	for (uint64_t i = from; i < to; i += (uint64_t)page)
		p[i] = 1;
	if (to > from)
		p[to - 1] = 1;
}

static unsigned char *grab(uint64_t size)
{
	if (size > SIZE_MAX)
		bad("size too large");
	unsigned char *p = malloc(size ? (size_t)size : 1);
	if (!p)
		fail("out of memory");
	return p;
}

static void hold(unsigned char *p, uint64_t size)
{
	if (nblocks == blocks_alloc) {
		blocks_alloc = blocks_alloc ? blocks_alloc * 2 : 16;
		blocks = realloc(blocks, blocks_alloc * sizeof(*blocks));
		if (!blocks)
			fail("out of memory");
	}
	blocks[nblocks].p = p;
	blocks[nblocks].size = size;
	nblocks++;
}

static void free_last(void)
{
	if (!nblocks)
		bad("nothing is allocated");
	nblocks--;
	free(blocks[nblocks].p);
}

/* ---- mapped files ---- */

static struct block mapping; /* the most recent map=FILE */
static int mapping_fd = -1;

/* Read every page of the mapping (a sum the compiler cannot drop). */
static void read_pages(void)
{
	long page = sysconf(_SC_PAGESIZE);
	volatile unsigned sum = 0;
	for (uint64_t i = 0; i < mapping.size; i += (uint64_t)(page > 0 ? page : 4096))
		sum += mapping.p[i];
	(void)sum;
}

static void map_file(const char *path, bool code)
{
	struct stat sb;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) < 0)
		fail(path);
	if (sb.st_size <= 0)
		bad("the file is empty");
	void *p = mmap(NULL, (size_t)sb.st_size, code ? PROT_READ | PROT_EXEC : PROT_READ,
		       code ? MAP_PRIVATE : MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		fail("mmap");
	mapping.p = p;
	mapping.size = (uint64_t)sb.st_size;
	mapping_fd = fd;
	read_pages();
}

static void page_out(void)
{
	if (!mapping.p)
		bad("nothing is mapped");
	if (madvise(mapping.p, (size_t)mapping.size, MADV_PAGEOUT) < 0)
		fail("madvise(MADV_PAGEOUT)");
	if (posix_fadvise(mapping_fd, 0, 0, POSIX_FADV_DONTNEED))
		fail("posix_fadvise");
	/* No read-ahead from now on: each page read again is a fault of its own. */
	if (madvise(mapping.p, (size_t)mapping.size, MADV_RANDOM) < 0)
		fail("madvise(MADV_RANDOM)");
}

/* ---- steps ---- */

static int signal_number(const char *s)
{
	static const struct { const char *name; int sig; } sigs[] = {
		{ "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT }, { "ABRT", SIGABRT },
		{ "KILL", SIGKILL }, { "SEGV", SIGSEGV }, { "PIPE", SIGPIPE }, { "ALRM", SIGALRM },
		{ "TERM", SIGTERM }, { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "BUS", SIGBUS },
	};
	if (!strncasecmp(s, "SIG", 3))
		s += 3;
	if (isdigit((unsigned char)*s)) {
		char *end;
		errno = 0;
		long v = strtol(s, &end, 10);
		if (errno || *end || v <= 0 || v >= 65)
			bad("not a signal");
		return (int)v;
	}
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (!strcasecmp(s, sigs[i].name))
			return sigs[i].sig;
	bad("not a signal");
	return 0;
}

static void write_ready(const char *path)
{
	char tmp[4096], pid[32];
	int n = snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(tmp))
		bad("path too long");
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		fail(tmp);
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (write(fd, pid, (size_t)n) != n || close(fd) < 0)
		fail(tmp);
	if (rename(tmp, path) < 0)
		fail(path);
}

static int wait_status(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			fail("waitpid");
	}
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

static void ramp(uint64_t size, uint64_t rate)
{
	const uint64_t step = 16u << 20;
	unsigned char *p = grab(size);
	double t0 = now_s();
	for (uint64_t done = 0; done < size;) {
		uint64_t n = size - done < step ? size - done : step;
		touch(p, done, done + n);
		done += n;
		log_line("ramp", done);
		double due = t0 + (double)done / (double)rate;
		double left = due - now_s();
		if (left > 0)
			sleep_for((int64_t)(left * 1e9));
	}
	hold(p, size);
}

static void run_step(const char *arg)
{
	char a[1024], b[1024];
	const char *eq = strchr(arg, '=');
	const char *val = eq ? eq + 1 : NULL;
	size_t klen = eq ? (size_t)(eq - arg) : strlen(arg);

	cur_step = arg;
#define IS(k) (klen == sizeof(k) - 1 && !strncmp(arg, k, klen))
#define NEED_VALUE() do { if (!val || !*val) bad("missing value"); } while (0)
#define NO_VALUE() do { if (val) bad("takes no value"); } while (0)
	if (IS("stage")) {
		NEED_VALUE();
		sbp_stage(val);
	} else if (IS("alloc")) {
		NEED_VALUE();
		uint64_t size = need_size(val);
		unsigned char *p = grab(size);
		touch(p, 0, size);
		hold(p, size);
		log_line("alloc", size);
	} else if (IS("dirty")) {
		NEED_VALUE();
		uint64_t size = need_size(val);
		if (!nblocks)
			bad("nothing is allocated");
		if (size > blocks[nblocks - 1].size)
			bad("larger than the most recent allocation");
		touch(blocks[nblocks - 1].p, 0, size);
	} else if (IS("free")) {
		if (val && strcmp(val, "all"))
			bad("expected 'free' or 'free=all'");
		if (val) {
			while (nblocks)
				free_last();
		} else {
			free_last();
		}
	} else if (IS("spike")) {
		NEED_VALUE();
		split2(val, a, b, sizeof(a));
		uint64_t size = need_size(a);
		int64_t ns = need_duration(b);
		log_line("spike-touch", size);
		unsigned char *p = grab(size);
		touch(p, 0, size);
		log_line("spike-held", size);
		sleep_for(ns);
		free(p);
		log_line("spike-freed", size);
	} else if (IS("release")) {
		NEED_VALUE();
		split2(val, a, b, sizeof(a));
		uint64_t size = need_size(b);
		free_last();
		sbp_release(a, NULL, size);
	} else if (IS("load")) {
		NEED_VALUE();
		split2(val, a, b, sizeof(a));
		uint64_t size = need_size(b);
		double t0 = now_s();
		unsigned char *p = grab(size);
		touch(p, 0, size);
		hold(p, size);
		sbp_load(a, size, now_s() - t0);
	} else if (IS("ramp")) {
		NEED_VALUE();
		split2(val, a, b, sizeof(a));
		uint64_t size = need_size(a), rate = need_size(b);
		if (!rate)
			bad("rate must be above 0");
		ramp(size, rate);
	} else if (IS("map") || IS("lib")) {
		NEED_VALUE();
		map_file(val, IS("lib"));
	} else if (IS("pageout") || IS("reread")) {
		NO_VALUE();
		if (!mapping.p)
			bad("nothing is mapped");
		if (IS("pageout"))
			page_out();
		else
			read_pages();
	} else if (IS("sleep")) {
		NEED_VALUE();
		sleep_for(need_duration(val));
	} else if (IS("fork") || IS("orphan")) {
		NO_VALUE();
		fflush(NULL);
		pid_t pid = fork();
		if (pid < 0)
			fail("fork");
		if (pid == 0)
			return; /* the child runs the remaining steps */
		if (IS("orphan"))
			_exit(0);
		exit(wait_status(pid));
	} else if (IS("setsid")) {
		NO_VALUE();
		if (setsid() < 0)
			fail("setsid");
	} else if (IS("ready")) {
		NEED_VALUE();
		write_ready(val);
	} else if (IS("wait")) {
		NEED_VALUE();
		while (access(val, F_OK) < 0)
			sleep_for(1000000);
	} else if (IS("mark")) {
		NEED_VALUE();
		sbp_mark(val);
	} else if (IS("exit")) {
		NEED_VALUE();
		char *end;
		errno = 0;
		long n = strtol(val, &end, 10);
		if (errno || *end || n < 0 || n > 255)
			bad("expected an exit status 0..255");
		fflush(NULL);
		exit((int)n);
	} else if (IS("kill")) {
		NEED_VALUE();
		int sig = signal_number(val);
		fflush(NULL);
		signal(sig, SIG_DFL);
		raise(sig);
	} else if (IS("print")) {
		if (!val)
			bad("missing value");
		printf("%s\n", val);
		fflush(stdout);
	} else if (IS("log")) {
		NEED_VALUE();
		if (log_fd >= 0)
			close(log_fd);
		log_fd = open(val, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (log_fd < 0)
			fail(val);
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_sigterm;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGTERM, &sa, NULL) < 0)
			fail("sigaction");
	} else {
		bad("unknown step");
	}
#undef IS
#undef NEED_VALUE
#undef NO_VALUE
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	for (int i = 1; i < argc; i++)
		run_step(argv[i]);
	return 0;
}
