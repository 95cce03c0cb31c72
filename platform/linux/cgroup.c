/* cgroup.c -- the Linux meter's whole-tree reader: a memory cgroup of the run's own, made
 * where cgroup_home.c finds room (v1 or v2), which the command joins before its exec; its
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
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "meter_int.h"

void memcg_init(struct memcg *cg)
{
	memset(cg, 0, sizeof(*cg));
	cg->stat_fd = cg->procs_fd = cg->peak_fd = cg->dir_fd = -1;
	cg->lock_fd = cg->leaf_fd = -1;
}

/* dir and every cgroup below it removed, deepest first; processes still in
 * them go to cgroup to (a command's leftovers) when to is given, else the
 * cgroups that hold one stay. */
static void remove_tree(const char *dir, const char *to, int depth)
{
	DIR *d = depth < 16 ? opendir(dir) : NULL;
	struct dirent *e;
	char path[PATH_MAX];
	while (d && (e = readdir(d))) {
		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		int k = snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (k > 0 && (size_t)k < sizeof(path))
			remove_tree(path, to, depth + 1);
	}
	if (d)
		closedir(d);
	if (rmdir(dir) && errno == EBUSY && to) {
		memcg_move_all(dir, to);
		rmdir(dir);
	}
}

/* The cgroups that recorders killed before they could remove theirs left
 * under parent: a "stagebench-" cgroup that nobody holds locked (a recorder
 * holds its own locked for as long as it lives, whatever its PID namespace)
 * is removed with what is below it, where empty: a process still in one was
 * not started by this recorder and is not moved. */
static void remove_stale(const char *parent, const char *keep)
{
	DIR *d = opendir(parent);
	if (!d)
		return;
	struct dirent *e;
	char path[PATH_MAX];
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "stagebench-", 11))
			continue;
		int k = snprintf(path, sizeof(path), "%s/%s", parent, e->d_name);
		if (k <= 0 || (size_t)k >= sizeof(path) || !strcmp(path, keep))
			continue;
		int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!flock(fd, LOCK_EX | LOCK_NB))
			remove_tree(path, NULL, 0);
		close(fd);
	}
	closedir(d);
}

int memcg_create(struct memcg *cg)
{
	static bool swept;
	memcg_remove(cg);
	if (memcg_home(cg))
		return -1;
	if (!swept)
		remove_stale(cg->parent, cg->leaf);
	swept = true;
	if (memcg_make_locked(cg->parent, "", cg->dir, sizeof(cg->dir), &cg->lock_fd))
		return -1;
	cg->stat_len = 0;
	cg->dir_fd = open(cg->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cg->stat_fd = memcg_open_in(cg->dir, "memory.stat", O_RDONLY);
	cg->procs_fd = memcg_open_in(cg->dir, "cgroup.procs", O_WRONLY);
	cg->peak_fd = memcg_open_in(cg->dir, cg->v2 ? "memory.peak" : "memory.max_usage_in_bytes",
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

bool memcg_ran(struct memcg *cg)
{
	uint64_t peak;
	return cg->dir[0] && !memcg_peak(cg, &peak) && peak > 0;
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
				 : memcg_open_in(cg->dir, "cgroup.procs", O_RDONLY);
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

/* Processes still in it (a command's leftovers) go to the recorder's leaf
 * (v2, delegated) or to the parent, and the directory goes with every cgroup
 * the command made below it; its charges move to the parent. */
void memcg_remove(struct memcg *cg)
{
	int *fds[] = { &cg->stat_fd, &cg->procs_fd, &cg->peak_fd, &cg->dir_fd };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
	if (cg->dir[0])
		remove_tree(cg->dir, cg->leaf[0] ? cg->leaf : cg->parent, 0);
	if (cg->lock_fd >= 0)
		close(cg->lock_fd);
	cg->lock_fd = -1;
	cg->dir[0] = '\0';
}

/* ---- the meter's sample of the tree's cgroup ---------------------------- */

/* A cgroup for the next command (meter.h) where one can be made, unless
 * STAGEBENCH_CGROUP=0 (docs/platforms.md); STAGEBENCH_CGROUP=1 asks for one: the
 * recorder warns once where none can be made. */
int memcg_enclose(struct memcg *cg)
{
	const char *e = getenv("STAGEBENCH_CGROUP");
	if (e && !strcmp(e, "0")) {
		memcg_remove(cg);
		return -1;
	}
	int fd = memcg_create(cg);
	static bool said;
	if (fd < 0 && !said && e && !strcmp(e, "1")) {
		warning("STAGEBENCH_CGROUP=1: no memory cgroup of the run's own can be made here "
			"(none of: cgroup v1's memory controller; a v2 cgroup of the recorder's "
			"that passes memory down or is delegated to this user; a delegated "
			"scope from systemd): the tree is read process by process "
			"(docs/platforms.md)");
		said = true;
	}
	return fd;
}

uint64_t outside_part(const struct linux_proc *p)
{
	return p->outside ? sat_sub(p->last.rss_anon + p->last.rss_shmem, p->outside_base) : 0;
}

/* What the tree's processes outside its cgroup (they moved themselves out)
 * add to the cgroup's figures: each one's own growth since it left. */
uint64_t outside_sum(struct linux_meter *lm)
{
	uint64_t sum = 0;
	for (size_t i = 0; lm->outside && i < lm->tab.n; i++)
		if (!lm->tab.p[i]->zombie)
			sum += outside_part(entry(lm, i));
	return sum;
}

/* With the cgroup, what a process gone held that no sample's cgroup reading
 * saw, as peak_sum counts it while it lives: its ru_maxrss when the recorder
 * reaped it and took it (a spike held between two samples, right before its
 * exit), else its rise above its resident set at its last reading. The
 * window's peak adds it once, at the sample that found it gone; peak_bound
 * keeps the sum under the cgroup's own high-water mark. */
uint64_t cg_departed(const struct linux_proc *p)
{
	if (p->maxrss_taken)
		return p->super.hwm;
	if (p->super.zombie || !(p->last.have & ST_VM_HWM))
		return 0;
	return sat_sub(p->super.hwm, p->last.vm_rss);
}

/* The tree's cgroup's figures read again into *cf once the sample has read the
 * processes (linux_sample; not while the tree stands still): a process that
 * freed pages between the sample's first reading and its own would count them
 * twice in the window's peak, in the cgroup's anon and in its VmHWM over its
 * VmRSS (peak_sum; seen in a Debian 13 guest under TCG: a 1 GiB parent of 16
 * idle forks freeing its buffer at its end, a peak 1.107 of the truth). A
 * failed reading keeps *cf. */
void reread_cgroup(struct linux_meter *lm, struct memcg_fields *cf)
{
	struct memcg_fields again;
	if (lm->cg_on && !memcg_read(&lm->cg, lm->buf, sizeof(lm->buf), &again))
		*cf = again;
}

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
	bool still = cg && !walk && !lm->outside && lm->cg.stat_same && lm->sums.valid &&
		     lm->sums.gen == lm->tab.gen && lm->sums.run < STILL_MAX;
	lm->sums.run = still ? lm->sums.run + 1 : 0;
	return still;
}
