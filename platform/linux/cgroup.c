/* cgroup.c -- the Linux meter's whole-tree reader: a memory cgroup of the run's own, made
 * under the recorder's own (v1 or v2), which the command joins before its exec; its
 * memory.stat counts the tree's anonymous and shared memory each page once in one read
 * (docs/platforms.md, Linux) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "meter_int.h"

/* The recorder's memory cgroup path (relative to its hierarchy's root) from
 * /proc/self/cgroup into rel: the v1 line naming the memory controller, else
 * the v2 line ("0::PATH"). Returns 1 for v2, 0 for v1, -1 when neither. */
static int own_cgroup(char *rel, size_t size)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[PATH_MAX + 64];
	int kind = -1;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		char *c = strchr(line, ':');
		char *p = c ? strchr(c + 1, ':') : NULL;
		if (!p)
			continue;
		*p++ = '\0';
		*c = '\0';
		bool v1 = false;
		for (char *tok = strtok(c + 1, ","); tok; tok = strtok(NULL, ","))
			v1 |= !strcmp(tok, "memory");
		if (v1 || (kind < 0 && !strcmp(line, "0") && !c[1])) { /* "0::PATH" */
			snprintf(rel, size, "%s", p);
			kind = v1 ? 0 : 1;
			if (v1)
				break;
		}
	}
	fclose(f);
	return kind;
}

/* The mount point of the hierarchy (v1: a cgroup mount with the memory option;
 * v2: cgroup2) whose root holds rel, into dir, with rel's path below it. */
static int mount_of(bool v2, const char *rel, char *dir, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[2 * PATH_MAX];
	int rc = -1;
	if (!f)
		return -1;
	while (rc && fgets(line, sizeof(line), f)) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER */
		char root[PATH_MAX], mnt[PATH_MAX], fstype[32], super[512];
		const char *dash = strstr(line, " - ");
		if (!dash || sscanf(line, "%*s %*s %*s %4095s %4095s", root, mnt) != 2 ||
		    sscanf(dash + 3, "%31s %*s %511s", fstype, super) != 2)
			continue;
		if (v2 ? strcmp(fstype, "cgroup2") : strcmp(fstype, "cgroup"))
			continue;
		if (!v2 && !strstr(super, "memory"))
			continue;
		size_t rl = strcmp(root, "/") ? strlen(root) : 0;
		if (rl && (strncmp(rel, root, rl) || (rel[rl] && rel[rl] != '/')))
			continue;
		size_t ml = strlen(mnt), tl = strlen(rel + rl);
		if (ml + tl + 1 > size)
			continue;
		memcpy(dir, mnt, ml);
		memcpy(dir + ml, rel + rl, tl + 1);
		rc = 0;
	}
	fclose(f);
	return rc;
}

static int open_in(const char *dir, const char *name, int flags)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return open(path, flags | O_CLOEXEC);
}

/* v2: the children of dir get a memory controller. It is not turned on here:
 * that is the host's setting (and v2 lends controllers only from a cgroup
 * with no processes of its own, the root aside). */
static bool v2_memory_below(const char *dir)
{
	char buf[256];
	int fd = open_in(dir, "cgroup.subtree_control", O_RDONLY);
	if (fd < 0)
		return false;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return strstr(buf, "memory") != NULL;
}

void memcg_init(struct memcg *cg)
{
	memset(cg, 0, sizeof(*cg));
	cg->stat_fd = cg->procs_fd = cg->peak_fd = cg->dir_fd = -1;
}

/* The cgroups that recorders killed before they could remove theirs left
 * under parent ("stagebench-PID-N" of a PID that no longer runs): removed
 * where empty (rmdir refuses a cgroup that still holds a process). */
static void remove_stale(const char *parent)
{
	DIR *d = opendir(parent);
	if (!d)
		return;
	struct dirent *e;
	char path[PATH_MAX];
	while ((e = readdir(d))) {
		long pid;
		unsigned n;
		char end;
		if (sscanf(e->d_name, "stagebench-%ld-%u%c", &pid, &n, &end) != 2 || pid <= 0 ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		int k = snprintf(path, sizeof(path), "%s/%s", parent, e->d_name);
		if (k > 0 && (size_t)k < sizeof(path))
			rmdir(path);
	}
	closedir(d);
}

int memcg_create(struct memcg *cg)
{
	static unsigned seq;
	char rel[PATH_MAX], parent[PATH_MAX];
	memcg_remove(cg);
	int kind = own_cgroup(rel, sizeof(rel));
	if (kind < 0 || mount_of(kind == 1, rel, parent, sizeof(parent)))
		return -1;
	if (kind == 1 && !v2_memory_below(parent))
		return -1;
	if (!seq)
		remove_stale(parent);
	int n = snprintf(cg->dir, sizeof(cg->dir), "%s/stagebench-%d-%u", parent, (int)getpid(),
			 seq++);
	if (n < 0 || (size_t)n >= sizeof(cg->dir) || mkdir(cg->dir, 0755)) {
		cg->dir[0] = '\0';
		return -1;
	}
	snprintf(cg->parent, sizeof(cg->parent), "%s", parent);
	cg->v2 = kind == 1;
	cg->stat_len = 0;
	cg->dir_fd = open(cg->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cg->stat_fd = open_in(cg->dir, "memory.stat", O_RDONLY);
	cg->procs_fd = open_in(cg->dir, "cgroup.procs", O_WRONLY);
	cg->peak_fd = open_in(cg->dir, cg->v2 ? "memory.peak" : "memory.max_usage_in_bytes",
			      O_RDWR);
	if (cg->stat_fd < 0 || cg->procs_fd < 0) {
		memcg_remove(cg);
		return -1;
	}
	return cg->procs_fd;
}

bool memcg_holds(const struct memcg *cg, pid_t pid)
{
	char path[64], buf[1024];
	if (!cg->dir[0])
		return false;
	const char *name = strrchr(cg->dir, '/') + 1;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* the memory line (v1) or the unified one (v2) ends in /NAME */
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
		size_t ll = strlen(l), nl = strlen(name);
		bool line = cg->v2 ? !strncmp(l, "0::", 3) : strstr(l, ":memory") != NULL;
		if (line && ll > nl && l[ll - nl - 1] == '/' && !strcmp(l + ll - nl, name))
			return true;
	}
	return false;
}

int memcg_read(struct memcg *cg, char *buf, size_t size, struct memcg_fields *f)
{
	ssize_t n;
	if (cg->stat_fd < 0)
		return -1;
	do
		n = pread(cg->stat_fd, buf, size - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -1;
	/* The text, counters of faults and page moves included, stands still
	 * only while nothing in the tree touches memory (tree_still). */
	cg->stat_same = cg->stat_len == (size_t)n && !memcmp(cg->stat_text, buf, (size_t)n);
	if (!cg->stat_same) {
		cg->stat_len = (size_t)n <= sizeof(cg->stat_text) ? (size_t)n : 0;
		memcpy(cg->stat_text, buf, cg->stat_len);
	}
	linux_parse_memcg_stat(buf, (size_t)n, cg->v2, f);
	return (f->have & (MC_ANON | MC_SHMEM)) == (MC_ANON | MC_SHMEM) ? 0 : -1;
}

/* The pids in the cgroup now (its cgroup.procs) into buf, NUL-terminated: their
 * text's length, or -1 when unreadable or longer than buf. The file is opened
 * for every reading: v1 builds its list at a descriptor's first read and serves
 * that list to the descriptor's later reads for as long as they come less than a
 * second apart (measured on 6.18: three children forked after the first read were
 * missing from every re-read of a kept descriptor), so a kept one would not show
 * a process forked since. */
ssize_t memcg_procs(const struct memcg *cg, char *buf, size_t size)
{
	if (!cg->dir[0] || size < 2)
		return -1;
	/* in the kept directory: no walk of the cgroup's whole path each time */
	int fd = cg->dir_fd >= 0 ? openat(cg->dir_fd, "cgroup.procs", O_RDONLY | O_CLOEXEC)
				 : open_in(cg->dir, "cgroup.procs", O_RDONLY);
	if (fd < 0)
		return -1;
	size_t len = 0;
	for (;;) {
		ssize_t n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0)
				len = size; /* failed: no list */
			break;
		}
		len += (size_t)n;
		if (len == size - 1) {
			len = size; /* full: the list may go on */
			break;
		}
	}
	close(fd);
	if (len >= size)
		return -1;
	buf[len] = '\0';
	return (ssize_t)len;
}

int memcg_peak_reset(struct memcg *cg)
{
	/* v1: writing 0 sets max_usage_in_bytes to the usage now; v2 (6.12+):
	 * any write makes this descriptor's memory.peak count from now */
	if (cg->peak_fd < 0)
		return -1;
	return pwrite(cg->peak_fd, "0\n", 2, 0) == 2 ? 0 : -1;
}

int memcg_peak(struct memcg *cg, uint64_t *bytes)
{
	char buf[64];
	if (cg->peak_fd < 0)
		return -1;
	ssize_t n = pread(cg->peak_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	char *e;
	unsigned long long v = strtoull(buf, &e, 10);
	if (e == buf)
		return -1;
	*bytes = v;
	return 0;
}

/* Processes still in it go to the parent cgroup (a command's leftovers), then
 * the directory goes; its charges move to the parent. */
void memcg_remove(struct memcg *cg)
{
	if (cg->stat_fd >= 0)
		close(cg->stat_fd);
	if (cg->procs_fd >= 0)
		close(cg->procs_fd);
	if (cg->peak_fd >= 0)
		close(cg->peak_fd);
	if (cg->dir_fd >= 0)
		close(cg->dir_fd);
	cg->stat_fd = cg->procs_fd = cg->peak_fd = cg->dir_fd = -1;
	if (!cg->dir[0])
		return;
	if (rmdir(cg->dir) && errno == EBUSY) {
		char buf[4096];
		int in = open_in(cg->dir, "cgroup.procs", O_RDONLY);
		int out = open_in(cg->parent, "cgroup.procs", O_WRONLY);
		ssize_t n = in >= 0 ? read(in, buf, sizeof(buf) - 1) : -1;
		buf[n > 0 ? n : 0] = '\0';
		for (char *l = strtok(buf, "\n"); out >= 0 && l; l = strtok(NULL, "\n"))
			if (write(out, l, strlen(l)) < 0)
				continue; /* gone meanwhile */
		if (in >= 0)
			close(in);
		if (out >= 0)
			close(out);
		rmdir(cg->dir);
	}
	cg->dir[0] = '\0';
}

/* ---- the meter's sample of the tree's cgroup ---------------------------- */

/* The tree's cgroup's figures into *cf; false without one (a failed reading
 * turns it off for the rest of the run: the per-process reading takes over). */
bool read_cgroup(struct linux_meter *lm, struct memcg_fields *cf)
{
	if (lm->cg_on && memcg_read(&lm->cg, lm->buf, sizeof(lm->buf), cf))
		lm->cg_on = false;
	return lm->cg_on;
}

/* Whether this sample stands on the per-process readings of the last one that
 * made them, at most STILL_MAX samples in a row: with the tree in its cgroup
 * (cg), nothing in it touched memory since the sample before (memory.stat's
 * text, which counts the faults and the pages charged or freed, read the same),
 * no walk is due (a pid handed out anywhere and a process new to the cgroup's
 * list, or one gone from it) and the table is as it was. A process that
 * forks, faults a page in or frees one moves one of these, and so does one that
 * ends (its own pages are freed). What the kernel's counters hold back (fewer
 * than about 64 page events per CPU, shown at its flush every 2 s) and what
 * other work takes from the tree's processes (a page of a library, reclaimed
 * where another cgroup was charged for it) show at the latest STILL_MAX samples
 * on. The footprint and the window's peak are read from the cgroup every
 * sample. */
bool tree_still(struct linux_meter *lm, bool cg, bool walk)
{
	bool still = cg && !walk && lm->cg.stat_same && lm->sums.valid &&
		     lm->sums.gen == lm->tab.gen && lm->sums.run < STILL_MAX;
	lm->sums.run = still ? lm->sums.run + 1 : 0;
	return still;
}
