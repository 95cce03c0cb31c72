/* meter.c -- the Linux meter: /proc tree walk, RssAnon + RssShmem footprint (shared pages
 * once: smaps_rollup PSS where processes share), clear_refs peaks */
#include "linux.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "procfs.h"

/*
 * Cost model (docs/platforms.md, Linux): one pread of /proc/PID/status is
 * ~10 us, of /proc/PID/statm ~1-2 us, of /proc/meminfo ~8 us. A sample reads
 * statm and re-reads status only when statm moved (status_stands). Every file
 * the sampler reads each time is opened once and re-read with pread(fd, 0),
 * which the seq_file code regenerates. The fd of /proc/PID/status is bound to
 * the process, not to the number: after the process is reaped the read fails
 * with ESRCH, so a reused pid is never mistaken for the old one. Nothing is
 * allocated in steady state: buffers live in struct linux_meter, directories
 * are read with getdents64 on kept fds, and the tables only grow when the
 * tree does. Per sample: one pread of statm (and of status when it moved) and
 * one of children per process (and of each other thread's children file),
 * /proc/meminfo at most every 100 ms, a task/ directory listing only when a
 * thread count changed or every 100 ms.
 */

struct ppid_pair {
	pid_t pid, ppid;
};

struct linux_meter {
	struct proctab tab;
	struct linux_proc self; /* the recorder: orphans are re-parented to it */
	pid_t self_pid;
	int meminfo_fd;
	int loadavg_fd;         /* /proc/loadavg: the last pid handed out */
	long last_pid;          /* at the last sample, -1 = unknown */
	int64_t walk_until_ns;  /* samples walk the tree until then */
	int proc_fd;            /* /proc, for the scan fallback */
	bool scan;              /* no CONFIG_PROC_CHILDREN: scan /proc/PID/stat */
	bool peaks;             /* clear_refs works */
	bool warned_clear;
	size_t statm_fds;       /* statm descriptors open (STATM_FD_BUDGET) */
	uint64_t departed_hwm;  /* last VmHWM of processes gone since the reset that
				 * shared nothing */
	uint64_t shared_best;   /* since the reset, the highest sum of the tree's peaks
				 * (shared pages once) read while processes shared */
	uint64_t hwm_seen;      /* highest VmHWM read in the tree this run, and the
				 * recorder's own at meter_track (peak_exited) */
	int64_t now_ns;         /* when the current sample began */
	struct meminfo_fields mi; /* the last /proc/meminfo reading */
	int64_t mi_ns;          /* when it was taken, 0 = never */
	struct ppid_pair *pairs;
	size_t npairs, pairs_alloc;
	uint64_t root_start;    /* the root's start time at meter_track, 0: unknown */
	bool pss;               /* smaps_rollup has Pss_Anon (Linux 5.7+) */
	bool roll_all;          /* a sharing process left: read every live one */
	unsigned roll_gen;      /* rounds of smaps_rollup readings */
	int64_t roll_next_ns;   /* readings for changes wait until then (ROLL_COST_FACTOR) */
	unsigned long rollups;  /* smaps_rollup readings made (meter_linux_rollups) */
	char buf[16384];
	char dents[16384];
};

static const char footprint_words[] =
	"resident anonymous + shared memory of the process tree, each page once "
	"(RssAnon + RssShmem; proportional shares, smaps_rollup Pss_Anon + Pss_Shmem, "
	"for processes that share pages); swapped-out bytes in 'swapped'";

/* Children fds kept open for threads other than the main one, over the
 * whole tree; beyond it they are opened and closed on every walk. */
#define THREAD_FD_BUDGET 256

/* System figures change slowly and /proc/meminfo is the costliest file a
 * sample reads: samples reuse a reading this recent (meter_system, the
 * guard's, always reads afresh). */
#define MEMINFO_REUSE_NS (100 * 1000000LL)

/* A multi-threaded process's thread list is read again this often, or as
 * soon as its Threads: count differs from the threads whose children files
 * are kept open; in between those files are re-read without listing. */
#define RELIST_NS (100 * 1000000LL)

/* A process's status is re-read when its statm moved, or after this many
 * samples answered from the last reading (status_stands). */
#define STATUS_REUSE_MAX 10
/* Processes sampled through statm (its descriptor kept open); beyond, status
 * is read every sample (no more descriptors). */
#define STATM_FD_BUDGET 256
#define SELF_RELIST_NS (1000 * 1000000LL)

/* Sharing (share_update): smaps_rollup costs about 19 ms per resident GiB
 * (measured on 6.18; it walks the page tables under the mmap lock). Readings
 * made because a sharing process changed wait until ROLL_COST_FACTOR times
 * the last round's cost has passed since its end (at most 1/20 of a core);
 * those for a process that appeared or a sharing one that left do not wait.
 * A process shares when its excess is over SHARE_MIN_BYTES and over 1/32 of
 * its RssAnon + RssShmem (below, the counters' own error: per-CPU since 6.2). */
#define ROLL_COST_FACTOR 20
#define SHARE_MIN_BYTES (1024 * 1024ULL)

static void close_threads(struct linux_proc *p, bool all)
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

static void close_fds(struct linux_proc *p)
{
	close_threads(p, true);
	if (p->status_fd >= 0)
		close(p->status_fd);
	if (p->task_fd >= 0)
		close(p->task_fd);
	if (p->children_fd >= 0)
		close(p->children_fd);
	if (p->statm_fd >= 0)
		close(p->statm_fd);
	if (p->faults_fd >= 0)
		close(p->faults_fd);
	if (p->runtime_fd >= 0)
		close(p->runtime_fd);
	p->status_fd = p->task_fd = p->children_fd = p->statm_fd = -1;
	p->faults_fd = p->runtime_fd = -1;
}

static void close_proc(struct mproc *m)
{
	close_fds((struct linux_proc *)m);
}

static struct linux_proc *entry(struct linux_meter *lm, size_t i)
{
	return (struct linux_proc *)lm->tab.p[i];
}

static uint64_t sat_sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* pread at 0 into lm->buf; returns the length or -1 (errno set). */
static ssize_t reread(struct linux_meter *lm, int fd)
{
	ssize_t n;
	do
		n = pread(fd, lm->buf, sizeof(lm->buf) - 1, 0);
	while (n < 0 && errno == EINTR);
	return n;
}

static int open_proc_file(pid_t pid, const char *name, int flags)
{
	char path[128];
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	return open(path, flags | O_CLOEXEC);
}

/* ---- tree discovery ---------------------------------------------------- */

struct add_ctx {
	struct linux_meter *lm;
	bool from_self; /* children of the recorder: skip the ones it declared foreign */
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
		return; /* already gone */
	struct linux_proc *p = (struct linux_proc *)proctab_add(&lm->tab, pid);
	p->status_fd = fd;
	p->task_fd = p->children_fd = p->statm_fd = p->faults_fd = p->runtime_fd = -1;
	p->threads = 1;
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
static void discover_children(struct linux_meter *lm, long idx, bool from_self)
{
	struct add_ctx c = { lm, from_self };
	struct linux_proc *p = owner_of(lm, idx);

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
static void scan_parents(struct linux_meter *lm)
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
static void collect_recorder_children(pid_t pid, void *arg)
{
	struct linux_meter *lm = arg;
	if (pid != lm->tab.p[0]->pid && !born_after_root(lm, pid))
		proctab_add_foreign(&lm->tab, pid);
}

/* One thread of the recorder: its children now are not part of the tree. */
static void recorder_thread_children(pid_t tid, void *arg)
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

/* ---- the backend ------------------------------------------------------- */

static void linux_track(struct meter *m, pid_t root)
{
	struct linux_meter *lm = m->priv;
	proctab_release(&lm->tab, close_proc);
	lm->statm_fds = 0;
	lm->last_pid = -1;
	lm->departed_hwm = lm->shared_best = 0;
	/* The root's image before its exec was our forked copy: its high-water
	 * mark, at most ours now, is in the root's ru_maxrss (peak_exited). */
	struct rusage ru;
	lm->hwm_seen = !getrusage(RUSAGE_SELF, &ru) && ru.ru_maxrss > 0
			       ? (uint64_t)ru.ru_maxrss * 1024 : 0;
	struct linux_proc *p = (struct linux_proc *)proctab_add(&lm->tab, root);
	p->threads = 1;
	p->task_fd = p->children_fd = p->statm_fd = p->faults_fd = p->runtime_fd = -1;
	p->status_fd = open_proc_file(root, "status", O_RDONLY);
	struct pl_proc rp;
	lm->root_start = procfs_read_stat(lm->proc_fd, root, lm->buf, sizeof(lm->buf), &rp)
				 ? 0 : rp.start;

	/* The recorder's children now, except the root and what it made, are not ours. */
	if (lm->scan) {
		scan_parents(lm);
		for (size_t i = 0; i < lm->npairs; i++)
			if (lm->pairs[i].ppid == lm->self_pid)
				collect_recorder_children(lm->pairs[i].pid, lm);
		return;
	}
	lm->self.threads = 2; /* always walk every thread of the recorder */
	if (lm->self.task_fd < 0)
		lm->self.task_fd = open_proc_file(lm->self_pid, "task", O_RDONLY | O_DIRECTORY);
	if (lm->self.task_fd >= 0)
		procfs_each_number(lm->self.task_fd, lm->dents, sizeof(lm->dents),
				   recorder_thread_children, lm);
}

static void linux_ignore(struct meter *m, pid_t pid)
{
	struct linux_meter *lm = m->priv;
	long i = proctab_find(&lm->tab, pid);
	proctab_add_foreign(&lm->tab, pid);
	if (i > 0) {
		if (entry(lm, (size_t)i)->statm_fd >= 0)
			lm->statm_fds--;
		proctab_remove(&lm->tab, (size_t)i, close_proc);
	}
}

static const pid_t *linux_pids(struct meter *m, size_t *n)
{
	struct linux_meter *lm = m->priv;
	return proctab_pids(&lm->tab, n);
}

static int read_meminfo(struct linux_meter *lm, struct meminfo_fields *mi)
{
	ssize_t n = reread(lm, lm->meminfo_fd);
	if (n <= 0) {
		memset(mi, 0, sizeof(*mi));
		return -1;
	}
	linux_parse_meminfo(lm->buf, (size_t)n, mi);
	return 0;
}

/* Whether entry i's last status reading still stands: its statm (one pread,
 * about a sixth of status's cost) shows the same size, resident and shared
 * pages as when status was read, and that reading answered fewer than
 * STATUS_REUSE_MAX samples since. resident - shared = RssAnon and shared =
 * RssFile + RssShmem: unchanged, the footprint (RssAnon + RssShmem) is too,
 * unless file and shmem pages traded places exactly; pages swapped in or out
 * move resident (VmSwap follows). The bound catches the rest (swapped pages
 * freed, such a trade). Its thread count comes from its task/ directory.
 * On return *v holds the statm just read (*have_v). */
static bool status_stands(struct linux_meter *lm, struct linux_proc *p, uint64_t v[3],
			  bool *have_v)
{
	*have_v = false;
	if (p->statm_fd < 0) {
		if (lm->statm_fds >= STATM_FD_BUDGET || p->status_fd < 0)
			return false;
		p->statm_fd = open_proc_file(p->super.pid, "statm", O_RDONLY);
		if (p->statm_fd < 0)
			return false;
		lm->statm_fds++;
	}
	ssize_t n = reread(lm, p->statm_fd);
	*have_v = n > 0 && !linux_parse_statm(lm->buf, (size_t)n, v);
	bool moved = !*have_v || !p->have_last || memcmp(v, p->statm, sizeof(p->statm));
	p->dirty |= moved;
	if (moved || p->reused >= STATUS_REUSE_MAX)
		return false;
	if (p->task_fd < 0)
		p->task_fd = open_proc_file(p->super.pid, "task", O_RDONLY | O_DIRECTORY);
	struct stat sb;
	if (p->task_fd < 0 || fstat(p->task_fd, &sb) || sb.st_nlink < 3)
		return false;
	p->threads = (int)(sb.st_nlink - 2);
	return true;
}

/* Entry i's status fields into *st: re-read, or (fresh false, status_stands)
 * the last reading. Returns 0, or -1 when the process is gone (the entry is
 * then removed and its last VmHWM kept for peaks). Peak resets and reads ask
 * for fresh readings: VmHWM can rise and fall back between two samples. */
static int refresh(struct linux_meter *lm, size_t i, struct status_fields *st, bool fresh)
{
	struct linux_proc *p = entry(lm, i);
	uint64_t v[3];
	bool have_v = false;
	if (!fresh && status_stands(lm, p, v, &have_v)) {
		p->reused++;
		*st = p->last;
		return 0;
	}
	if (p->statm_fd < 0)
		p->dirty = true; /* no statm to tell */
	ssize_t n = p->status_fd >= 0 ? reread(lm, p->status_fd) : -1;
	if (n <= 0) {
		if (p->statm_fd >= 0)
			lm->statm_fds--;
		/* One that shared: its peak is in shared_best (the others take
		 * over what it shared, so its own figure would count it twice). */
		if (p->excess)
			lm->roll_all = true; /* its partners' shares grew */
		else
			lm->departed_hwm += p->super.hwm;
		proctab_remove(&lm->tab, i, close_proc);
		return -1;
	}
	linux_parse_status(lm->buf, (size_t)n, st);
	p->last = *st;
	p->reused = 0;
	p->have_last = have_v; /* a statm read just before: the next sample compares */
	if (have_v)
		memcpy(p->statm, v, sizeof(p->statm));
	if (st->have & ST_VM_HWM) {
		p->super.hwm = st->vm_hwm;
		if (st->vm_hwm > lm->hwm_seen)
			lm->hwm_seen = st->vm_hwm;
	}
	if (st->have & ST_THREADS)
		p->threads = st->threads;
	p->super.zombie = (st->have & ST_STATE) && (st->state == 'Z' || st->state == 'X');
	if (p->super.zombie && !p->hwm_read)
		p->super.stale_exit = true; /* never seen alive: when it exited is unknown */
	p->hwm_read |= (st->have & ST_VM_HWM) != 0;
	return 0;
}

/* ---- shared pages (smaps_rollup) ----------------------------------------- */

/* A counter of p from /proc/PID/NAME (the descriptor *fd kept from the first
 * use): stat's minflt + majflt, or the first number of the file; UINT64_MAX
 * when it cannot be read. */
static uint64_t read_counter(struct linux_meter *lm, struct linux_proc *p, int *fd,
			     const char *name)
{
	if (*fd < 0) {
		*fd = open_proc_file(p->super.pid, name, O_RDONLY);
		if (*fd < 0)
			return UINT64_MAX;
	}
	ssize_t n = reread(lm, *fd);
	if (n <= 0)
		return UINT64_MAX;
	lm->buf[n] = '\0';
	uint64_t v = 0;
	if (fd == &p->faults_fd)
		return linux_parse_stat_faults(lm->buf, (size_t)n, &v) ? UINT64_MAX : v;
	return strtoull(lm->buf, NULL, 10);
}

/* p's page faults, minflt + majflt of every thread (/proc/PID/stat). */
static uint64_t faults_of(struct linux_meter *lm, struct linux_proc *p)
{
	return read_counter(lm, p, &p->faults_fd, "stat");
}

/* A single-threaded p's run time (/proc/PID/schedstat, its main thread's: a
 * fifth of stat's cost); UINT64_MAX for several threads or unreadable. */
static uint64_t runtime_of(struct linux_meter *lm, struct linux_proc *p)
{
	return p->threads <= 1 ? read_counter(lm, p, &p->runtime_fd, "schedstat") : UINT64_MAX;
}

/* Whether p may have changed what it shares since its last smaps_rollup
 * reading: its statm moved (pages unmapped, released or swapped out), or it
 * faulted (a write to a copy-on-write page, a page mapped or swapped in: each
 * is a fault, and the first moves neither statm nor status). Running alone
 * changes nothing: a process that only polls or computes is not read again.
 * A single thread that has not run since its faults were last seen unchanged
 * cannot have faulted: its run time is read first, its faults only when it
 * moved. */
static bool changed_since_roll(struct linux_meter *lm, struct linux_proc *p)
{
	if (p->dirty)
		return true;
	uint64_t rt = runtime_of(lm, p);
	if (rt != UINT64_MAX && rt == p->runtime)
		return false;
	if (faults_of(lm, p) != p->faults)
		return true;
	p->runtime = rt;
	return false;
}

static bool shares(const struct linux_proc *p)
{
	return p->excess > SHARE_MIN_BYTES &&
	       p->excess > (p->last.rss_anon + p->last.rss_shmem) / 32;
}

/* One smaps_rollup reading of p: its excess (linux.h), 0 when it shares
 * less than the counters can tell; a process caught in its exit has no
 * pages to list and keeps its last excess. Returns whether it shares. */
static bool roll(struct linux_meter *lm, struct linux_proc *p)
{
	struct rollup_fields ru;
	p->roll_gen = lm->roll_gen;
	p->rolled = true;
	p->dirty = false;
	p->runtime = runtime_of(lm, p); /* before the faults: a later fault moves it */
	p->faults = faults_of(lm, p);
	lm->rollups++;
	int fd = open_proc_file(p->super.pid, "smaps_rollup", O_RDONLY);
	ssize_t n = fd >= 0 ? reread(lm, fd) : -1;
	if (fd >= 0)
		close(fd);
	if (n > 0)
		linux_parse_rollup(lm->buf, (size_t)n, &ru);
	if (n <= 0 || !(ru.have & RU_PSS_ANON))
		return p->excess != 0; /* exiting (no mm left): its last reading stands */
	p->excess = sat_sub(p->last.rss_anon + p->last.rss_shmem, ru.pss_anon + ru.pss_shmem);
	if (!shares(p))
		p->excess = 0;
	p->rss_excess = p->excess && (ru.have & (RU_RSS | RU_PSS)) == (RU_RSS | RU_PSS)
				? sat_sub(ru.rss, ru.pss) : p->excess;
	return p->excess != 0;
}

/* Gone or going: a zombie, or its last status had no Vm lines (its memory
 * released in its exit). */
static bool leaving(const struct linux_proc *p)
{
	return p->super.zombie || !(p->last.have & ST_VM_HWM);
}

/* p's part of the tree's peak: its VmHWM less what others also map; one
 * leaving keeps its last figure, unless it shared: the others' shares take
 * over those pages (its peak is in shared_best). */
static uint64_t peak_part(const struct linux_proc *p)
{
	if (p->excess && leaving(p))
		return 0;
	return sat_sub(p->super.hwm, p->rss_excess);
}

/* Whether a process that shares changed since its reading (changed_since_roll).
 * Stops at the first. */
static bool sharers_changed(struct linux_meter *lm)
{
	for (size_t i = 0; i < lm->tab.n; i++) {
		struct linux_proc *p = entry(lm, i);
		if (p->super.zombie || !p->excess)
			continue;
		if (changed_since_roll(lm, p))
			return true;
	}
	return false;
}

/* Keep every live process's excess true enough (docs/platforms.md, Linux):
 * with one live process nothing is shared inside the tree; a process first
 * seen is read, and when it shares (a fork not yet exec'd) every live one
 * is; when a sharing process left, every live one is; when one that shares
 * changed, those that share are, within the cost budget. */
static void share_update(struct linux_meter *lm, size_t live)
{
	if (!lm->pss)
		return;
	if (live < 2) {
		for (size_t i = 0; i < lm->tab.n; i++) {
			if (lm->tab.p[i]->zombie)
				continue; /* its excess says it shared (peak_part) */
			entry(lm, i)->excess = entry(lm, i)->rss_excess = 0;
			entry(lm, i)->rolled = false;
		}
		lm->roll_all = false;
		return;
	}
	int64_t t0 = mono_ns();
	bool all = lm->roll_all, any = false;
	lm->roll_gen++;
	for (size_t i = 0; i < lm->tab.n; i++) {
		struct linux_proc *p = entry(lm, i);
		if (!p->super.zombie && !p->rolled) {
			all |= roll(lm, p);
			any = true;
		}
	}
	bool changed = !all && t0 >= lm->roll_next_ns && sharers_changed(lm);
	if (all || changed) {
		for (size_t i = 0; i < lm->tab.n; i++) {
			struct linux_proc *p = entry(lm, i);
			if (!p->super.zombie && p->roll_gen != lm->roll_gen && (all || p->excess))
				roll(lm, p);
		}
		lm->roll_all = false;
		any = true;
	}
	if (any) {
		int64_t t1 = mono_ns();
		lm->roll_next_ns = t1 + ROLL_COST_FACTOR * (t1 - t0);
	}
}

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

static int linux_sample(struct meter *m, struct trace_sample *s)
{
	struct linux_meter *lm = m->priv;
	struct meminfo_fields mi;
	struct status_fields st;

	lm->now_ns = mono_ns();
	if (!lm->mi_ns || lm->now_ns - lm->mi_ns >= MEMINFO_REUSE_NS)
		lm->mi_ns = read_meminfo(lm, &lm->mi) ? 0 : lm->now_ns;
	mi = lm->mi;
	if (lm->mi_ns) {
		if ((mi.have & (MI_SWAP_TOTAL | MI_SWAP_FREE)) == (MI_SWAP_TOTAL | MI_SWAP_FREE)) {
			s->swap_total = mi.swap_total;
			s->swap_used = mi.swap_total > mi.swap_free ? mi.swap_total - mi.swap_free : 0;
			s->fields |= SF_SWAP_USED | SF_SWAP_TOTAL;
		}
		if ((mi.have & (MI_MEM_TOTAL | MI_MEM_AVAILABLE)) ==
			    (MI_MEM_TOTAL | MI_MEM_AVAILABLE) && mi.mem_total) {
			s->level = (double)mi.mem_available * 100.0 / (double)mi.mem_total;
			s->fields |= SF_LEVEL;
		}
	}
	s->fields |= SF_FOOTPRINT | SF_RSS | SF_SWAPPED | SF_PROCS;
	if (!lm->tab.n)
		return -1; /* never tracked */

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
	if (walk && lm->scan)
		scan_parents(lm);
	/* Orphans re-parented to the recorder (a subreaper) join the tree. */
	if (walk)
		discover_children(lm, -1, true);

	size_t live = 0;
	for (size_t i = 0; i < lm->tab.n;) {
		if (refresh(lm, i, &st, false))
			continue; /* removed: entry i is the next one now */
		if (!lm->tab.p[i]->zombie) {
			if (st.have & ST_VM_RSS)
				s->procs++;
			live++;
			s->rss += st.vm_rss;
			s->swapped += st.vm_swap;
			if (walk)
				discover_children(lm, (long)i, false);
		}
		i++;
	}
	share_update(lm, live);
	uint64_t peaks = lm->departed_hwm;
	bool sharing = false;
	for (size_t i = 0; i < lm->tab.n; i++) {
		struct linux_proc *p = entry(lm, i);
		sharing |= p->excess != 0 && !leaving(p);
		peaks += peak_part(p);
		if (!p->super.zombie)
			s->footprint += sat_sub(p->last.rss_anon + p->last.rss_shmem, p->excess);
	}
	if (sharing && peaks > lm->shared_best)
		lm->shared_best = peaks;
	return s->procs ? 0 : -1;
}

static int linux_system(struct meter *m, struct meter_system *sys)
{
	struct linux_meter *lm = m->priv;
	struct meminfo_fields mi;
	const unsigned need = MI_MEM_TOTAL | MI_MEM_AVAILABLE | MI_SWAP_TOTAL | MI_SWAP_FREE;
	if (read_meminfo(lm, &mi)) {
		lm->mi_ns = 0;
		return error("cannot read memory figures from /proc/meminfo");
	}
	lm->mi = mi;
	lm->mi_ns = mono_ns();
	if ((mi.have & need) != need || !mi.mem_total)
		return error("cannot read memory figures from /proc/meminfo");
	sys->total_bytes = mi.mem_total;
	sys->avail_bytes = mi.mem_available;
	sys->avail_pct = (double)mi.mem_available * 100.0 / (double)mi.mem_total;
	sys->swap_total = mi.swap_total;
	sys->swap_used = mi.swap_total > mi.swap_free ? mi.swap_total - mi.swap_free : 0;
	sys->has_swap = true;
	return 0;
}

/* "5" > /proc/PID/clear_refs: VmHWM := current RSS. Returns 0 or -errno. */
static int clear_refs(pid_t pid)
{
	int fd = open_proc_file(pid, "clear_refs", O_WRONLY);
	if (fd < 0)
		return -errno;
	ssize_t n;
	do
		n = write(fd, "5", 1);
	while (n < 0 && errno == EINTR);
	int rc = n == 1 ? 0 : -errno;
	close(fd);
	return rc;
}

static int linux_peak_reset(struct meter *m)
{
	struct linux_meter *lm = m->priv;
	struct status_fields st;
	/* A last reading before the reset (the marks up to now count for
	 * hwm_seen) that also tells which processes are zombies already. */
	for (size_t i = 0; i < lm->tab.n;) {
		if (refresh(lm, i, &st, true))
			continue;
		i++;
	}
	lm->departed_hwm = lm->shared_best = 0;
	for (size_t i = 0; i < lm->tab.n; i++) {
		struct mproc *p = lm->tab.p[i];
		p->hwm = 0;
		if (p->zombie) {
			p->stale_exit = true; /* its ru_maxrss is an earlier window's */
			continue;
		}
		int rc = clear_refs(p->pid);
		if (rc && rc != -ENOENT && rc != -ESRCH && !lm->warned_clear) {
			/* Its VmHWM then counts from its birth: an upper bound. */
			warning("cannot reset the peak of process %d (/proc/%d/clear_refs: %s); "
				"its stage peaks are upper bounds", (int)p->pid, (int)p->pid,
				strerror(-rc));
			lm->warned_clear = true;
		}
	}
	return lm->tab.n ? 0 : -1;
}

/* How long peak_read waits for a process caught in its exit (memory
 * released, not yet a zombie) to become one, 1 ms at a time. */
#define EXITING_WAIT_MS 20

static int linux_peak_read(struct meter *m, uint64_t *bytes)
{
	struct linux_meter *lm = m->priv;
	struct status_fields st;
	uint64_t sum;
	for (int tries = 0;; tries++) {
		bool exiting = false;
		sum = 0;
		for (size_t i = 0; i < lm->tab.n;) {
			if (refresh(lm, i, &st, true))
				continue;
			exiting |= !lm->tab.p[i]->zombie && entry(lm, i)->hwm_read &&
				   !(st.have & ST_VM_HWM);
			sum += peak_part(entry(lm, i));
			i++;
		}
		/* Such a process lost its VmHWM and cannot be reaped yet: once a
		 * zombie, the caller can reap it now, its ru_maxrss counting for
		 * this window (meter_peak_exited) rather than the next. */
		if (!exiting || tries >= EXITING_WAIT_MS)
			break;
		sleep_ns(1000000);
	}
	if (!lm->tab.n && !lm->departed_hwm && !lm->shared_best)
		return -1;
	*bytes = sum + lm->departed_hwm;
	if (lm->shared_best > *bytes)
		*bytes = lm->shared_best;
	return 0;
}

/* meter.h states the rule and why it is so strict. */
static int linux_peak_exited(struct meter *m, pid_t pid, uint64_t maxrss)
{
	struct linux_meter *lm = m->priv;
	long i = proctab_find(&lm->tab, pid);
	if (i < 0)
		return 0;
	struct mproc *p = lm->tab.p[i];
	if (p->stale_exit || maxrss <= lm->hwm_seen || maxrss <= p->hwm)
		return 0;
	p->hwm = maxrss; /* kept as its last figure when the entry goes */
	lm->hwm_seen = maxrss;
	return 1;
}

static void linux_free(struct meter *m)
{
	struct linux_meter *lm = m->priv;
	if (!lm)
		return;
	proctab_release(&lm->tab, close_proc);
	close_fds(&lm->self);
	if (lm->meminfo_fd >= 0)
		close(lm->meminfo_fd);
	if (lm->loadavg_fd >= 0)
		close(lm->loadavg_fd);
	if (lm->proc_fd >= 0)
		close(lm->proc_fd);
	free(lm->pairs);
	free(lm);
	m->priv = NULL;
}

static const struct meter_backend linux_backend = {
	.track = linux_track,
	.pids = linux_pids,
	.sample = linux_sample,
	.system = linux_system,
	.peak_reset = linux_peak_reset,
	.peak_read = linux_peak_read,
	.peak_exited = linux_peak_exited,
	.ignore = linux_ignore,
	.free = linux_free,
};

/* Test hook (meter_internal.h): force the /proc/PID/stat scan. */
void meter_linux_force_scan(struct meter *m)
{
	struct linux_meter *lm = m->priv;
	if (lm->proc_fd >= 0)
		lm->scan = true;
}

unsigned long meter_linux_rollups(const struct meter *m)
{
	return ((const struct linux_meter *)m->priv)->rollups;
}

/* Whether our own smaps_rollup has Pss_Anon (Linux 5.7+). */
static bool pss_works(struct linux_meter *lm)
{
	int fd = open_proc_file(lm->self_pid, "smaps_rollup", O_RDONLY);
	ssize_t n = fd >= 0 ? reread(lm, fd) : -1;
	if (fd >= 0)
		close(fd);
	struct rollup_fields ru;
	if (n <= 0)
		return false;
	linux_parse_rollup(lm->buf, (size_t)n, &ru);
	return (ru.have & RU_PSS_ANON) != 0;
}

int meter_platform_init(struct meter *m)
{
	struct linux_meter *lm = xcalloc(1, sizeof(*lm));
	char path[64];

	proctab_init(&lm->tab, sizeof(struct linux_proc));
	lm->self_pid = getpid();
	lm->self.super.pid = lm->self_pid;
	lm->self.status_fd = lm->self.task_fd = lm->self.children_fd = lm->self.statm_fd = -1;
	lm->self.faults_fd = lm->self.runtime_fd = -1;
	lm->self.threads = 2;
	lm->proc_fd = lm->loadavg_fd = -1;
	m->priv = lm;
	m->be = &linux_backend;

	lm->last_pid = -1;
	lm->loadavg_fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC); /* -1: walk every sample */
	lm->meminfo_fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	if (lm->meminfo_fd < 0)
		return error("cannot open /proc/meminfo: %s (is /proc mounted?)", strerror(errno));

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)lm->self_pid,
		 (int)lm->self_pid);
	if (access(path, R_OK)) {
		/* Kernel without CONFIG_PROC_CHILDREN: find parents by scanning. */
		lm->proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (lm->proc_fd < 0)
			return error("cannot open /proc: %s", strerror(errno));
		lm->scan = true;
	} else {
		lm->proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}

	/* Exact peaks need clear_refs mode 5 (Linux 4.0+); resetting our own
	 * high-water mark is harmless and tells us whether it works. */
	lm->peaks = clear_refs(lm->self_pid) == 0;
	lm->pss = pss_works(lm);

	m->info.backend = "linux";
	m->info.footprint = footprint_words;
	m->info.fields = SF_FOOTPRINT | SF_RSS | SF_SWAPPED | SF_SWAP_USED | SF_SWAP_TOTAL |
			 SF_LEVEL | SF_PROCS;
	m->info.peak_metric = lm->peaks ? "rss" : NULL;
	m->info.gpu = false;
	return 0;
}
