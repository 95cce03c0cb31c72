/* meter.c -- the macOS meter: phys footprint, interval-max peaks, one process listing a sample */
#include "darwin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

/*
 * Facts (docs/platforms.md, macOS): proc_pid_rusage(pid, RUSAGE_INFO_V4)
 * gives ri_phys_footprint (what Activity Monitor shows), ri_resident_size and
 * ri_interval_max_phys_footprint, exact, which proc_reset_footprint_interval
 * (private: found with dlsym) resets to the current footprint. The kernel
 * feature behind the interval maximum was only in development kernels before
 * macOS 13.3: there the reset fails with EINVAL and the field reads 0, so it
 * is tried once at start (a reset and a read of our own process) and the
 * meter falls back to sampled peaks, saying so in its footprint words.
 * There is no subreaper: the tree is the root's descendants plus its process
 * group, found in one process listing per sample (sysctl KERN_PROC_ALL; per
 * process proc_listchildpids only when that fails), and every pid seen is
 * remembered until it is gone. A pid reused by another process is told apart
 * by its start time. A zombie answers proc_pid_rusage from what it left at
 * its exit: its interval maximum counts for the window it exited in, never
 * for a later one.
 */

#define LIST_MAX 2048

struct darwin_meter {
	struct proctab tab;
	const struct darwin_api *api;
	pid_t self_pid;
	pid_t pgid;             /* the root's group when it has its own, else 0 */
	bool peaks;             /* the interval maximum works (tried at start) */
	bool warned_reset, warned_unreadable, warned_list;
	uint64_t departed_peak; /* interval max of processes gone since the reset */
	struct darwin_mapped *mapped; /* mapped.c's */
	struct darwin_pinfo *all; /* the last process listing */
	size_t nall, all_alloc;
	pid_t list[LIST_MAX];
};

static const char footprint_exact[] =
	"physical footprint of the process tree (ri_phys_footprint: private anonymous and "
	"compressed memory, IOKit/Metal buffers, page tables), as Activity Monitor shows";
static const char footprint_sampled[] =
	"physical footprint of the process tree (ri_phys_footprint: private anonymous and "
	"compressed memory, IOKit/Metal buffers, page tables), as Activity Monitor shows; "
	"stage peaks are sampled: this kernel keeps no footprint interval maximum "
	"(before macOS 13.3)";

static const char reader_words[] =
	"footprint read process by process (ri_phys_footprint of each process of the tree, summed)";

static const char mapped_words[] =
	"resident pages of the file-backed regions of the data files the tree maps (not "
	"programs, libraries or system files), a region of a file counted once across the "
	"tree; not in footprint: the kernel can drop them and read them back (majflt: pageins)";

static struct darwin_proc *entry(struct darwin_meter *mm, size_t i)
{
	return (struct darwin_proc *)mm->tab.p[i];
}

/* Adds pid to the tree unless known, ours, or foreign. A process we may not
 * read (another user's, setuid) stays in the table for its children, counted
 * as nothing, with one warning per run. */
static void add_pid(struct darwin_meter *mm, pid_t pid, bool from_self)
{
	struct darwin_usage u;
	if (pid <= 0 || pid == mm->self_pid || proctab_find(&mm->tab, pid) >= 0)
		return;
	if (from_self && proctab_is_foreign(&mm->tab, pid))
		return;
	bool unreadable = false;
	if (mm->api->pid_rusage(pid, &u)) {
		if (errno != EPERM && errno != EACCES)
			return; /* already gone */
		unreadable = true;
		if (!mm->warned_unreadable)
			warning("cannot read the memory of process %d (%s): it belongs to another "
				"user or is setuid; it counts as nothing", (int)pid, strerror(errno));
		mm->warned_unreadable = true;
	}
	struct darwin_proc *p = (struct darwin_proc *)proctab_add(&mm->tab, pid);
	p->unreadable = unreadable;
	p->start = unreadable ? 0 : u.start;
}

/* The pids a list call wrote: the buffer is zeroed first and read up to the
 * first 0, so a count of pids and a count of bytes read the same. */
static size_t list_len(struct darwin_meter *mm, int r)
{
	size_t n = r > 0 ? (size_t)r : 0;
	if (n > LIST_MAX)
		n = LIST_MAX;
	for (size_t i = 0; i < n; i++)
		if (mm->list[i] == 0)
			return i;
	return n;
}

static void add_listed(struct darwin_meter *mm, int (*fn)(pid_t, pid_t *, int), pid_t id,
		       bool from_self)
{
	memset(mm->list, 0, sizeof(mm->list));
	size_t n = list_len(mm, fn(id, mm->list, (int)sizeof(mm->list)));
	for (size_t i = 0; i < n; i++)
		add_pid(mm, mm->list[i], from_self);
}

/* Index in the last listing, or -1. */
static long listed(const struct darwin_meter *mm, pid_t pid)
{
	for (size_t i = 0; i < mm->nall; i++)
		if (mm->all[i].pid == pid)
			return (long)i;
	return -1;
}

/* One listing of every process: the tree's new members are the processes
 * whose parent is in the tree (or is us: orphans never come back to us, but
 * a child we did not start is foreign) and those of the root's group; a
 * child found adds its own children in the same pass (the table grows while
 * it is read). Returns 0, or -1 when the listing failed. */
static int discover(struct darwin_meter *mm)
{
	int n = mm->api->list_all ? mm->api->list_all(&mm->all, &mm->all_alloc) : -1;
	if (n < 0) {
		mm->nall = 0;
		return -1;
	}
	mm->nall = (size_t)n;
	for (bool grew = true; grew;) {
		size_t before = mm->tab.n;
		for (size_t i = 0; i < mm->nall; i++) {
			const struct darwin_pinfo *e = &mm->all[i];
			if (e->ppid == mm->self_pid)
				add_pid(mm, e->pid, true);
			else if (proctab_find(&mm->tab, e->ppid) >= 0 ||
				 (mm->pgid && e->pgid == mm->pgid))
				add_pid(mm, e->pid, false);
		}
		grew = mm->tab.n != before;
	}
	return 0;
}

/* The fallback: per tree process proc_listchildpids, and the group. */
static void discover_slowly(struct darwin_meter *mm)
{
	if (!mm->warned_list)
		warning("cannot list processes (sysctl KERN_PROC_ALL); listing each tree "
			"process's children instead");
	mm->warned_list = true;
	if (mm->pgid)
		add_listed(mm, mm->api->list_pgrp, mm->pgid, false);
	add_listed(mm, mm->api->list_children, mm->self_pid, true);
	for (size_t i = 0; i < mm->tab.n; i++)
		add_listed(mm, mm->api->list_children, mm->tab.p[i]->pid, false);
}

static bool zombie_now(struct darwin_meter *mm, pid_t pid)
{
	struct darwin_pinfo pi;
	long k = mm->nall ? listed(mm, pid) : -1;
	if (k >= 0)
		return mm->all[k].zombie;
	return !mm->api->pid_info(pid, &pi) && pi.zombie;
}

static void darwin_track(struct meter *m, pid_t root)
{
	struct darwin_meter *mm = m->priv;
	struct darwin_usage u;
	proctab_release(&mm->tab, NULL);
	mm->departed_peak = 0;
	darwin_mapped_reset(mm->mapped);
	struct darwin_proc *p = (struct darwin_proc *)proctab_add(&mm->tab, root);
	if (!mm->api->pid_rusage(root, &u))
		p->start = u.start;
	pid_t pg = mm->api->pgid_of(root);
	mm->pgid = (pg > 0 && pg != mm->api->own_pgrp()) ? pg : 0;

	/* The recorder's other children are not part of the tree. */
	memset(mm->list, 0, sizeof(mm->list));
	size_t n = list_len(mm, mm->api->list_children(mm->self_pid, mm->list,
						     (int)sizeof(mm->list)));
	for (size_t i = 0; i < n; i++)
		if (mm->list[i] != root)
			proctab_add_foreign(&mm->tab, mm->list[i]);
}

static void darwin_ignore(struct meter *m, pid_t pid)
{
	struct darwin_meter *mm = m->priv;
	long i = proctab_find(&mm->tab, pid);
	proctab_add_foreign(&mm->tab, pid);
	if (i > 0)
		proctab_remove(&mm->tab, (size_t)i, NULL);
}

static const pid_t *darwin_pids(struct meter *m, size_t *n)
{
	struct darwin_meter *mm = m->priv;
	return proctab_pids(&mm->tab, n);
}

/* Entry i's usage and state. Returns 0, or -1 when the process is gone or
 * its pid now names another process (the entry is then removed, its peak
 * kept for the window). */
static int refresh(struct darwin_meter *mm, size_t i, struct darwin_usage *u)
{
	struct darwin_proc *p = entry(mm, i);
	memset(u, 0, sizeof(*u));
	if (p->unreadable) {
		struct darwin_pinfo pi;
		if (mm->api->pid_info(p->super.pid, &pi) && errno == ESRCH) {
			proctab_remove(&mm->tab, i, NULL);
			return -1;
		}
		return 0;
	}
	if (mm->api->pid_rusage(p->super.pid, u) || (p->start && u->start != p->start)) {
		mm->departed_peak += p->super.hwm;
		darwin_mapped_departed(mm->mapped, p, i == 0);
		proctab_remove(&mm->tab, i, NULL);
		return -1;
	}
	p->resident = u->resident;
	if (u->pageins > p->pageins)
		p->pageins = u->pageins;
	p->super.zombie = zombie_now(mm, p->super.pid);
	if (!p->super.zombie)
		p->seen_alive = true;
	else if (!p->seen_alive)
		p->super.stale_exit = true; /* never seen alive: when it exited is unknown */
	/* A zombie's figures are those it left at its exit: they count for the
	 * window it exited in (its peak is kept), never for a later one. */
	if (p->super.stale_exit)
		p->super.hwm = 0;
	else
		p->super.hwm = mm->peaks ? u->interval_max : u->lifetime_max;
	return 0;
}

static int darwin_sample(struct meter *m, struct trace_sample *s)
{
	struct darwin_meter *mm = m->priv;
	struct darwin_usage u;
	struct darwin_swap xsw;
	size_t len = sizeof(xsw);
	int level;

	if (!mm->api->sysctl("vm.swapusage", &xsw, &len) && len == sizeof(xsw)) {
		s->swap_used = xsw.used;
		s->swap_total = xsw.total;
		s->fields |= SF_SWAP_USED | SF_SWAP_TOTAL;
	}
	len = sizeof(level);
	if (!mm->api->sysctl("kern.memorystatus_level", &level, &len)) {
		s->level = level;
		s->fields |= SF_LEVEL;
	}
	s->fields |= SF_FOOTPRINT | SF_RSS | SF_PROCS;
	if (!mm->tab.n)
		return -1;

	if (discover(mm))
		discover_slowly(mm);
	for (size_t i = 0; i < mm->tab.n;) {
		if (refresh(mm, i, &u))
			continue;
		if (!mm->tab.p[i]->zombie && !entry(mm, i)->unreadable) {
			s->procs++;
			s->footprint += u.footprint;
			s->rss += u.resident;
		}
		i++;
	}
	darwin_mapped_sample(mm->mapped, mm->api, &mm->tab, s);
	return s->procs ? 0 : -1;
}

static int darwin_system(struct meter *m, struct meter_system *sys)
{
	struct darwin_meter *mm = m->priv;
	struct darwin_swap xsw;
	int level;
	uint64_t memsize = 0;
	size_t len = sizeof(level), mlen = sizeof(memsize), slen = sizeof(xsw);
	if (mm->api->sysctl("kern.memorystatus_level", &level, &len) ||
	    mm->api->sysctl("hw.memsize", &memsize, &mlen) || !memsize)
		return error("cannot read kern.memorystatus_level / hw.memsize: %s",
			     strerror(errno));
	sys->avail_pct = level;
	sys->total_bytes = memsize;
	sys->avail_bytes = (uint64_t)((double)memsize * level / 100.0);
	if (!mm->api->sysctl("vm.swapusage", &xsw, &slen) && slen == sizeof(xsw)) {
		sys->has_swap = true;
		sys->swap_used = xsw.used;
		sys->swap_total = xsw.total;
	}
	return 0;
}

static int darwin_peak_reset(struct meter *m)
{
	struct darwin_meter *mm = m->priv;
	struct darwin_usage u;
	/* A last reading: it tells which processes are zombies now. */
	mm->nall = 0;
	for (size_t i = 0; i < mm->tab.n;) {
		if (refresh(mm, i, &u))
			continue;
		i++;
	}
	mm->departed_peak = 0;
	for (size_t i = 0; i < mm->tab.n; i++) {
		struct mproc *p = mm->tab.p[i];
		p->hwm = 0;
		if (p->zombie) {
			p->stale_exit = true; /* what it left belongs to an earlier window */
			continue;
		}
		if (entry(mm, i)->unreadable)
			continue;
		if (mm->api->reset_interval(p->pid) && errno != ESRCH && !mm->warned_reset) {
			warning("cannot reset the footprint peak of process %d: %s; its stage "
				"peaks are upper bounds", (int)p->pid, strerror(errno));
			mm->warned_reset = true;
		}
	}
	return mm->tab.n ? 0 : -1;
}

static int darwin_peak_read(struct meter *m, uint64_t *bytes)
{
	struct darwin_meter *mm = m->priv;
	struct darwin_usage u;
	uint64_t sum = 0;
	mm->nall = 0; /* zombie states afresh, not from the last sample's listing */
	for (size_t i = 0; i < mm->tab.n;) {
		if (refresh(mm, i, &u))
			continue;
		sum += mm->tab.p[i]->hwm;
		i++;
	}
	if (!mm->tab.n && !mm->departed_peak)
		return -1;
	*bytes = sum + mm->departed_peak;
	return 0;
}

static void darwin_free(struct meter *m)
{
	struct darwin_meter *mm = m->priv;
	if (!mm)
		return;
	proctab_release(&mm->tab, NULL);
	darwin_mapped_free(mm->mapped);
	free(mm->all);
	free(mm);
	m->priv = NULL;
}

static int darwin_mapped_file(struct meter *m, const char **path, uint64_t *size)
{
	struct darwin_meter *mm = m->priv;
	return darwin_mapped_next_file(mm->mapped, path, size);
}

static const struct meter_backend darwin_backend = {
	.track = darwin_track,
	.pids = darwin_pids,
	.sample = darwin_sample,
	.system = darwin_system,
	.peak_reset = darwin_peak_reset,
	.peak_read = darwin_peak_read,
	.ignore = darwin_ignore,
	.mapped_file = darwin_mapped_file,
	.free = darwin_free,
};

/* Whether the footprint interval maximum works here: reset our own, read it
 * back. Before macOS 13.3 the reset fails with EINVAL and the field reads 0. */
static bool interval_max_works(struct darwin_meter *mm)
{
	struct darwin_usage u;
	if (!mm->api->reset_interval || mm->api->reset_interval(mm->self_pid))
		return false;
	return !mm->api->pid_rusage(mm->self_pid, &u) && u.interval_max > 0;
}

int meter_darwin_init(struct meter *m, const struct darwin_api *api)
{
	struct darwin_meter *mm = xcalloc(1, sizeof(*mm));
	struct darwin_usage u;

	proctab_init(&mm->tab, sizeof(struct darwin_proc));
	mm->api = api;
	mm->mapped = darwin_mapped_new();
	mm->self_pid = api->self();
	m->priv = mm;
	m->be = &darwin_backend;
	if (api->pid_rusage(mm->self_pid, &u))
		return error("proc_pid_rusage(RUSAGE_INFO_V4) failed: %s (macOS 10.14 or later "
			     "is needed)", strerror(errno));
	mm->peaks = interval_max_works(mm);

	m->info.backend = "macos";
	m->info.footprint = mm->peaks ? footprint_exact : footprint_sampled;
	m->info.fields = SF_FOOTPRINT | SF_RSS | SF_SWAP_USED | SF_SWAP_TOTAL | SF_LEVEL |
			 SF_PROCS | SF_MAJFLT | (api->region ? SF_MAPPED : 0);
	m->info.mapped = api->region ? mapped_words : NULL;
	m->info.peak_metric = mm->peaks ? "footprint" : NULL;
	m->info.gpu = false;
	m->info.reader = SB_READER_MACOS;
	m->info.reader_words = reader_words;
	return 0;
}
