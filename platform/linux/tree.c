/* tree.c -- the Linux meter finds the process tree: children files of every thread, the
 * /proc scan where the kernel has none, the recorder's own children (meter_int.h) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "meter_int.h"

/* ---- tree discovery ---------------------------------------------------- */

/* Close the children files of p's threads: all, or those of threads not seen
 * in the last listing (gen). */
void close_threads(struct linux_proc *p, bool all)
{
	size_t k = 0;
	for (size_t i = 0; i < p->nthr; i++) {
		if (all || p->thr[i].gen != p->gen)
			close(p->thr[i].fd);
		else
			p->thr[k++] = p->thr[i];
	}
	p->nthr = k;
	if (all) {
		free(p->thr);
		p->thr = NULL;
		p->thr_alloc = 0;
	}
}


struct add_ctx {
	struct linux_meter *lm;
	bool from_self; /* children of the recorder: skip the ones it declared foreign */
	pid_t parent;   /* whose children these are */
};

static void add_child(pid_t pid, void *arg)
{
	struct add_ctx *c = arg;
	struct linux_meter *lm = c->lm;
	if (pid == lm->self_pid || proctab_find(&lm->tab, pid) >= 0)
		return;
	if (c->from_self && proctab_is_foreign(&lm->tab, pid))
		return;
	int fd = open_proc_file(pid, "status", O_RDONLY);
	if (fd < 0)
		return; /* already gone (or out of files: linux_sample says so) */
	struct linux_proc *p = (struct linux_proc *)proctab_add(&lm->tab, pid);
	p->status_fd = fd;
	p->task_fd = p->children_fd = p->statm_fd = p->faults_fd = p->runtime_fd = -1;
	p->threads = 1;
	p->ppid = c->from_self ? 0 : c->parent;
}

static void read_children_fd(struct linux_meter *lm, int fd, struct add_ctx *c)
{
	ssize_t n = reread(lm, fd);
	if (n > 0)
		linux_parse_pidlist(lm->buf, (size_t)n, add_child, c);
}

struct thread_ctx {
	struct linux_meter *lm;
	long idx;               /* the owner: table index, -1 for the recorder */
	struct add_ctx *add;
	int task_fd;
	size_t cursor;          /* threads come back in the same order: look here first */
};

static struct linux_proc *owner_of(struct linux_meter *lm, long idx)
{
	return idx < 0 ? &lm->self : entry(lm, (size_t)idx);
}

static size_t cached_thread_fds(struct linux_meter *lm)
{
	size_t n = lm->self.nthr;
	for (size_t i = 0; i < lm->tab.n; i++)
		n += entry(lm, i)->nthr;
	return n;
}

/* One thread of the owner: read its children (the table may grow: the
 * owner pointer is fetched again, never kept across a read). */
static void thread_children(pid_t tid, void *arg)
{
	struct thread_ctx *t = arg;
	struct linux_proc *p = owner_of(t->lm, t->idx);
	int fd;

	if (tid == p->super.pid) {
		read_children_fd(t->lm, p->children_fd, t->add);
		return;
	}
	for (size_t k = 0; k < p->nthr; k++) {
		size_t j = (t->cursor + k) % p->nthr;
		if (p->thr[j].tid == tid) {
			p->thr[j].gen = p->gen;
			t->cursor = j + 1;
			read_children_fd(t->lm, p->thr[j].fd, t->add);
			return;
		}
	}
	char name[32];
	snprintf(name, sizeof(name), "%d/children", (int)tid);
	fd = openat(t->task_fd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return; /* the thread ended */
	if (cached_thread_fds(t->lm) < THREAD_FD_BUDGET) {
		ALLOC_GROW(p->thr, p->nthr + 1, p->thr_alloc);
		p->thr[p->nthr].tid = tid;
		p->thr[p->nthr].fd = fd;
		p->thr[p->nthr].gen = p->gen;
		p->nthr++;
		read_children_fd(t->lm, fd, t->add);
		return;
	}
	read_children_fd(t->lm, fd, t->add);
	close(fd);
}

/* Add the children of the owner (every thread's) to the table. */
void discover_children(struct linux_meter *lm, long idx, bool from_self)
{
	struct linux_proc *p = owner_of(lm, idx);
	struct add_ctx c = { lm, from_self, p->super.pid };

	if (lm->scan) {
		pid_t pid = p->super.pid;
		for (size_t i = 0; i < lm->npairs; i++)
			if (lm->pairs[i].ppid == pid)
				add_child(lm->pairs[i].pid, &c);
		return;
	}
	if (p->children_fd < 0) {
		char name[48];
		snprintf(name, sizeof(name), "task/%d/children", (int)p->super.pid);
		p->children_fd = open_proc_file(p->super.pid, name, O_RDONLY);
		if (p->children_fd < 0)
			return;
	}
	if (p->threads <= 1) {
		if (p->nthr)
			close_threads(p, true);
		read_children_fd(lm, p->children_fd, &c);
		return;
	}
	if (p->task_fd < 0) {
		p->task_fd = open_proc_file(p->super.pid, "task", O_RDONLY | O_DIRECTORY);
		if (p->task_fd < 0)
			return;
	}
	/* The recorder's own count: its task/ directory has 2 + threads links.
	 * It forks from its main thread only, so its list is kept longer. */
	int threads = p->threads;
	int64_t relist_ns = RELIST_NS;
	if (idx < 0) {
		struct stat sb;
		threads = fstat(p->task_fd, &sb) || sb.st_nlink < 3 ? -1 : (int)(sb.st_nlink - 2);
		relist_ns = SELF_RELIST_NS;
	}
	if (p->listed_ns && lm->now_ns - p->listed_ns < relist_ns &&
	    threads >= 1 && (size_t)threads == p->nthr + 1) {
		read_children_fd(lm, p->children_fd, &c);
		for (size_t k = 0; k < owner_of(lm, idx)->nthr; k++)
			read_children_fd(lm, owner_of(lm, idx)->thr[k].fd, &c);
		return;
	}
	p->listed_ns = lm->now_ns;
	p->gen++;
	struct thread_ctx t = { lm, idx, &c, p->task_fd, 0 };
	procfs_each_number(p->task_fd, lm->dents, sizeof(lm->dents), thread_children, &t);
	close_threads(owner_of(lm, idx), false); /* threads that ended */
}

static void scan_one(pid_t pid, void *arg)
{
	struct linux_meter *lm = arg;
	struct pl_proc pp;
	if (procfs_read_stat(lm->proc_fd, pid, lm->buf, sizeof(lm->buf), &pp))
		return;
	ALLOC_GROW(lm->pairs, lm->npairs + 1, lm->pairs_alloc);
	lm->pairs[lm->npairs].pid = pid;
	lm->pairs[lm->npairs].ppid = pp.ppid;
	lm->npairs++;
}

/* The scan fallback: every process's parent, once per sample. */
void scan_parents(struct linux_meter *lm)
{
	lm->npairs = 0;
	procfs_each_number(lm->proc_fd, lm->dents, sizeof(lm->dents), scan_one, lm);
}

/* Born after the root: by start time (clock ticks), within one tick by pid (pids
 * are handed out in order; a wrap inside one 10 ms tick is ignored). */
static bool born_after_root(struct linux_meter *lm, pid_t pid)
{
	struct pl_proc pp;
	char stat[1024]; /* not lm->buf: it holds the pid list being parsed */
	if (!lm->root_start || procfs_read_stat(lm->proc_fd, pid, stat, sizeof(stat), &pp))
		return false;
	return pp.start > lm->root_start ||
	       (pp.start == lm->root_start && pid > lm->tab.p[0]->pid);
}

/* A child of the recorder at meter_track is foreign, unless the root made it:
 * a command can fork and let its own process exit between its exec and the
 * recorder's meter_track (spawn_start returns after the exec), and the orphan
 * is the recorder's child already then. */
void collect_recorder_children(pid_t pid, void *arg)
{
	struct linux_meter *lm = arg;
	if (pid != lm->tab.p[0]->pid && !born_after_root(lm, pid))
		proctab_add_foreign(&lm->tab, pid);
}

/* One thread of the recorder: its children now are not part of the tree. */
void recorder_thread_children(pid_t tid, void *arg)
{
	struct linux_meter *lm = arg;
	char name[32];
	snprintf(name, sizeof(name), "%d/children", (int)tid);
	int fd = openat(lm->self.task_fd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t len = reread(lm, fd);
	close(fd);
	if (len > 0)
		linux_parse_pidlist(lm->buf, (size_t)len, collect_recorder_children, lm);
}

/* ---- when to walk -------------------------------------------------------- */

/* The last pid handed out in our pid namespace (/proc/loadavg's last field:
 * "0.00 0.01 0.05 1/123 4567"), or -1. Every fork and thread creation moves
 * it, also for processes in a child pid namespace (they get a pid in ours). */
static long last_pid_now(struct linux_meter *lm)
{
	ssize_t n = lm->loadavg_fd >= 0 ? reread(lm, lm->loadavg_fd) : -1;
	if (n <= 0)
		return -1;
	while (n > 0 && (lm->buf[n - 1] == '\n' || lm->buf[n - 1] == ' '))
		n--;
	ssize_t k = n;
	while (k > 0 && lm->buf[k - 1] >= '0' && lm->buf[k - 1] <= '9')
		k--;
	if (k == n || k == 0 || lm->buf[k - 1] != ' ')
		return -1;
	long v = 0;
	for (ssize_t j = k; j < n && v < (1L << 40); j++)
		v = v * 10 + (lm->buf[j] - '0');
	return v;
}

/* Whether this sample walks the tree (reads the children files). */
bool walk_due(struct linux_meter *lm)
{
	/* No process or thread was created anywhere for a while (the last pid
	 * handed out did not move): no child can have appeared, and the
	 * children files are not read this time. "A while": walks go on for
	 * the longest relist interval after the last move, so that a thread
	 * list read before a new thread appeared is read again (discover_children
	 * may rely on kept files until then). */
	long last = last_pid_now(lm);
	if (last < 0 || last != lm->last_pid)
		lm->walk_until_ns = lm->now_ns + SELF_RELIST_NS;
	lm->last_pid = last;
	bool walk = lm->now_ns <= lm->walk_until_ns;
	/* With the tree in its cgroup, a walk is made only when the cgroup lists
	 * a process the table lacks: on a machine where pids are handed out all
	 * the time (other work forking) that is one read a sample instead of a
	 * children file and a task/ fstat per process. Not for a tree of a few
	 * processes (CG_LIST_MIN): walking it costs less than that read. */
	if (walk && lm->cg_on && !lm->scan && lm->tab.n > CG_LIST_MIN && !lm->cg_news)
		walk = false;
	return walk;
}

/* ---- the cgroup's list: anything new? ----------------------------------- */

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

struct listed_ctx {
	struct linux_meter *lm;
	size_t unknown; /* listed pids not known */
};

static void note_listed(pid_t pid, void *arg)
{
	struct listed_ctx *c = arg;
	struct linux_meter *lm = c->lm;
	if (!bsearch(&pid, lm->known, lm->nknown, sizeof(pid), cmp_pid))
		c->unknown++;
	ALLOC_GROW(lm->listed, lm->nlisted + 1, lm->listed_alloc);
	lm->listed[lm->nlisted++] = pid;
}

/* The known pids, sorted, rebuilt when the table changed. */
static void known_build(struct linux_meter *lm)
{
	if (lm->known_built && lm->known_gen == lm->tab.gen)
		return;
	size_t n = lm->tab.n + lm->tab.nforeign;
	ALLOC_GROW(lm->known, n ? n : 1, lm->known_alloc);
	for (size_t i = 0; i < lm->tab.n; i++)
		lm->known[i] = lm->tab.p[i]->pid;
	for (size_t i = 0; i < lm->tab.nforeign; i++)
		lm->known[lm->tab.n + i] = lm->tab.foreign[i];
	qsort(lm->known, n, sizeof(pid_t), cmp_pid);
	lm->nknown = n;
	lm->known_gen = lm->tab.gen;
	lm->known_built = true;
}

/* Each live process of the table the list lacks has left the cgroup (it
 * moved itself): it is counted on its own from then on (struct linux_proc's
 * outside), and its children are found only by walking. */
static size_t mark_outside(struct linux_meter *lm)
{
	size_t out = 0;
	if (lm->nlisted) /* an empty list may have no array */
		qsort(lm->listed, lm->nlisted, sizeof(pid_t), cmp_pid);
	for (size_t i = 0; i < lm->tab.n; i++) {
		struct linux_proc *p = entry(lm, i);
		bool in = lm->nlisted &&
			  bsearch(&p->super.pid, lm->listed, lm->nlisted, sizeof(pid_t), cmp_pid);
		if (!in && !p->outside && !p->super.zombie) {
			p->outside = true;
			p->outside_base = p->have_last ? p->last.rss_anon + p->last.rss_shmem : 0;
		}
		p->outside &= !in;
		out += p->outside;
	}
	return out;
}

/* Whether the tree may hold a process the table does not know, by the tree's
 * cgroup's process list (one read, whatever the tree's size, against two per
 * process for a walk): true when it lists a pid neither in the table nor
 * foreign, or lists fewer known pids than the table's live processes (one left
 * the cgroup: its children are found only by walking), or cannot be read. A
 * process is in the list from its fork on, its pid handed out just before (the
 * window after a move of the last pid, SELF_RELIST_NS, covers that gap as it
 * covers a parent's children file). Read every sample with the cgroup: it
 * also tells which tree processes left it (mark_outside). */
bool cgroup_lists_news(struct linux_meter *lm)
{
	known_build(lm);
	ssize_t len = memcg_procs(&lm->cg, lm->buf, sizeof(lm->buf));
	if (len < 0)
		return true;
	struct listed_ctx c = { lm, 0 };
	lm->nlisted = 0;
	linux_parse_pidlist(lm->buf, (size_t)len, note_listed, &c);
	size_t before = lm->outside;
	lm->outside = mark_outside(lm);
	return c.unknown || lm->outside > before;
}
