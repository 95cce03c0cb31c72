/* wake_floor.c -- benchmark: the least CPU a sample of N processes can cost here
 *
 * A process that sleeps INTERVAL, wakes, and reads the kept /proc/PID/statm
 * of N idle children (one pread each, as the Linux meter's steady sample does)
 * and nothing else: no tree walk, no trace written. What it costs per wakeup is
 * a floor under any recorder that reads each process of a tree; N = 0 is a
 * bare wakeup.
 *
 * With FILEs, each wakeup also reads each of them once (a kept descriptor, one
 * pread): the system figures any sample of this meter needs whatever the tree
 * (/proc/meminfo for available memory and swap, the tree cgroup's memory.stat
 * for its footprint), so that what they cost is measured beside the floor.
 *
 * With --walk, each wakeup also does for each child what the meter's sample
 * does to find new processes without a cgroup of the run's own while pids are
 * being handed out on the machine (a walk): an fstat of its kept task/
 * directory (the thread count) and a pread of its kept children file.
 *
 * Build (bench/items_recorder.py does it): cc -O2 -o build/wake_floor bench/wake_floor.c
 * Run:  build/wake_floor INTERVAL_S COUNT N [--walk] [FILE...]
 * Prints: CPU µs per wakeup (the process's own sum_exec_runtime, /proc/self/schedstat).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long runtime_ns(void)
{
	char b[128];
	int fd = open("/proc/self/schedstat", O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, b, sizeof(b) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		perror("wake_floor: /proc/self/schedstat");
		exit(1);
	}
	b[n] = 0;
	return atoll(b);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: wake_floor INTERVAL_S COUNT N [--walk] [FILE...]\n");
		return 2;
	}
	double iv = atof(argv[1]);
	int count = atoi(argv[2]), n = atoi(argv[3]);
	if (iv <= 0 || count <= 0 || n < 0 || n > 1000) {
		fprintf(stderr, "wake_floor: bad arguments\n");
		return 2;
	}
	int first = 4, walk = argc > 4 && !strcmp(argv[4], "--walk");
	first += walk;
	pid_t *kids = calloc((size_t)n + 1, sizeof(*kids));
	int nfiles = argc - first;
	int *fds = calloc((size_t)n + (size_t)nfiles + 1, sizeof(*fds));
	int *task = calloc((size_t)n + 1, sizeof(*task));
	int *children = calloc((size_t)n + 1, sizeof(*children));
	for (int j = 0; j < nfiles; j++)
		if ((fds[n + j] = open(argv[first + j], O_RDONLY)) < 0) {
			perror(argv[first + j]);
			return 1;
		}
	for (int i = 0; i < n; i++) {
		kids[i] = fork();
		if (kids[i] < 0) {
			perror("wake_floor: fork");
			return 1;
		}
		if (!kids[i]) {
			for (;;)
				pause();
		}
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/statm", (int)kids[i]);
		if ((fds[i] = open(path, O_RDONLY)) < 0) {
			perror(path);
			return 1;
		}
		snprintf(path, sizeof(path), "/proc/%d/task", (int)kids[i]);
		task[i] = walk ? open(path, O_RDONLY | O_DIRECTORY) : -1;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)kids[i], (int)kids[i]);
		children[i] = walk ? open(path, O_RDONLY) : -1;
		if (walk && (task[i] < 0 || children[i] < 0)) {
			perror(path);
			return 1;
		}
	}
	struct timespec ts = { (time_t)iv, (long)((iv - (double)(time_t)iv) * 1e9) };
	static char buf[16384];
	nanosleep(&ts, NULL);
	long long a = runtime_ns();
	for (int k = 0; k < count; k++) {
		nanosleep(&ts, NULL);
		for (int i = 0; i < n + nfiles; i++)
			if (pread(fds[i], buf, sizeof(buf), 0) <= 0) {
				perror("wake_floor: pread");
				return 1;
			}
		for (int i = 0; walk && i < n; i++) {
			struct stat sb;
			if (fstat(task[i], &sb) || pread(children[i], buf, sizeof(buf), 0) < 0) {
				perror("wake_floor: walk");
				return 1;
			}
		}
	}
	long long b = runtime_ns();
	for (int i = 0; i < n; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	printf("%.1f\n", (double)(b - a) / 1e3 / count);
	free(kids);
	free(fds);
	free(task);
	free(children);
	return 0;
}
